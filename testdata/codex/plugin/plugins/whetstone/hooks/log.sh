#!/bin/bash
exec /work/cxlab/hook.sh "$1-viaroot" /work/cxlab/t6
