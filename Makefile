# whetstone — `make demo` runs one full review loop offline; `make test` runs the fast tests, `make check` every test.
SHELL := /bin/sh
GO ?= go
CACHE ?= $(CURDIR)/.cache
export WHETSTONE_CACHE := $(CACHE)
VERSION := $(shell cat VERSION)

# CLAUDE_VERSION, OPENCODE_VERSION and CODEX_VERSION name the client versions the e2e
# suites and the demo run; "" is the pinned one (scripts/install-claude,
# scripts/install-opencode, scripts/install-codex), "latest" the newest on the npm
# registry (make e2e-latest).
CLAUDE_VERSION ?=
OPENCODE_VERSION ?=
CODEX_VERSION ?=

.PHONY: build dist pack test check unit fresh-cache e2e e2e-claude e2e-opencode e2e-codex e2e-latest fuzz bench bench-cost demo claude opencode ripgrep bwrap clean generate

build: bin/whetstone

# The launcher (scripts/whetstone) runs bin/whetstone only when the version in
# bin/whetstone.version, which is what the binary reports, is VERSION.
bin/whetstone: go.mod go.sum VERSION $(shell find cmd internal -name '*.go' -not -name '*_test.go' 2>/dev/null) version.go opencode.go codex.go $(shell find opencode codex -type f 2>/dev/null)
	CGO_ENABLED=0 $(GO) build -trimpath -tags urfave_cli_no_docs -o $@ ./cmd/whetstone
	./$@ version | sed 's/^whetstone //' >$@.version.tmp && mv -f $@.version.tmp $@.version

# dist cross-builds the release binaries, reproducibly, into
# dist/bin/<goos>-<goarch>/whetstone[.exe] with dist/SHA256SUMS.
dist:
	./scripts/dist

# pack makes the npm package dist/whetstone-<VERSION>.tgz, at once a Claude
# Code plugin and an OpenCode plugin, carrying the binaries of dist (its
# prepack step, scripts/pack, copies them into bin/<goos>-<goarch>/).
pack: dist
	npm pack --pack-destination dist

# claude installs the pinned Claude Code (2.1.332) into $(CACHE)/claude-2.1.332
# from the npm registry, once; scripts/install-claude prints the binary's path.
claude:
	@./scripts/install-claude $(CLAUDE_VERSION) >/dev/null

# bwrap installs bubblewrap when it is missing (root on Debian/Ubuntu), so
# that the sandbox tests run; elsewhere it prints a notice and they skip.
bwrap:
	@./scripts/install-bwrap

# test is the fast suite (a few minutes on two cores, no client installed):
# unit, testscript, race detector, fuzz seeds. e2e runs the three real
# clients; check runs both, and is what CI (.ci/run) runs.
test: unit

check: test fresh-cache e2e

e2e: e2e-claude e2e-opencode e2e-codex

# fresh-cache runs the tests whose fixture modules build offline (GOPROXY=off)
# with an empty module cache, as on a machine that never built Go before:
# each fixture carries the go.sum its check needs.
fresh-cache:
	d=$$(mktemp -d) && trap 'chmod -R u+w "$$d"; rm -rf "$$d"' EXIT && \
	GOMODCACHE="$$d" GOFLAGS=-modcacherw $(GO) test -count=1 -run '^(TestSignalsWorkspace|TestHooksLeaveTreeAlone)$$' ./internal/scope ./internal/app

# unit runs the Go tests (unit, testscript, concurrency, crash), the race
# detector, and a short fuzz pass over every decoder and validator. The
# testscript suite (cmd/whetstone) runs without the race detector: each of
# its steps is a new whetstone process, which -race slows several times over
# while watching no goroutine the in-process tests of internal/app do not.
unit: build bwrap ripgrep
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 20m $$($(GO) list ./... | grep -v '/cmd/whetstone$$')
	$(GO) test -count=1 -timeout 20m ./cmd/whetstone/
	$(GO) test -count=1 -run '^TestCheckLinear$$' ./internal/shell/
	$(MAKE) fuzz FUZZTIME=20000x FUZZMINIMIZETIME=1000x

# e2e-claude runs the end-to-end tests in the real Claude Code; it also checks
# the six release binaries and runs the package tests on the tarball
# (e2e/package_test.go).
e2e-claude: build pack
	WHETSTONE_DIST="$(CURDIR)/dist" $(GO) test -count=1 -run '^TestDistAllPlatforms$$' .
	c=$$(./scripts/install-claude $(CLAUDE_VERSION)) && ./scripts/validate-plugin "$$c" && \
	WHETSTONE_CLAUDE="$$c" WHETSTONE_PLUGIN="$(CURDIR)" WHETSTONE_PACKAGE="$(CURDIR)/dist/whetstone-$(VERSION).tgz" \
	$(GO) test -count=1 -timeout 30m ./e2e/

# opencode installs the pinned OpenCode (1.18.33) and @opencode-ai/plugin
# into $(CACHE)/opencode-1.18.33 from the npm registry, once; ripgrep puts rg on
# PATH (Debian's package), which OpenCode would otherwise download.
opencode:
	@./scripts/install-opencode $(OPENCODE_VERSION) >/dev/null

ripgrep:
	@./scripts/install-ripgrep

# e2e-opencode runs the end-to-end tests in the real OpenCode, one of them
# on the tarball of pack (which `make e2e` builds once, for e2e-claude too).
e2e-opencode: build ripgrep pack
	c=$$(./scripts/install-opencode $(OPENCODE_VERSION)) && \
	WHETSTONE_OPENCODE="$$c" WHETSTONE_OPENCODE_PLUGIN_PKG="$$(dirname "$$c")/../../@opencode-ai/plugin" \
	WHETSTONE_PACKAGE="$(CURDIR)/dist/whetstone-$(VERSION).tgz" \
	$(GO) test -count=1 -timeout 20m -run '^TestOpenCode' ./e2e/

# e2e-codex runs the end-to-end test in the real Codex CLI (0.169.0, from
# npm into $(CACHE)/codex-0.169.0 by scripts/install-codex, once), offline.
e2e-codex: build
	c=$$(./scripts/install-codex $(CODEX_VERSION)) && \
	WHETSTONE_CODEX="$$c" $(GO) test -count=1 -timeout 20m -run '^TestCodex' ./e2e/

# e2e-latest runs the three real-client suites against the newest Claude Code,
# OpenCode and Codex CLI on the npm registry instead of the pinned ones
# (docs/testing.md says when).
e2e-latest:
	$(MAKE) e2e CLAUDE_VERSION=latest OPENCODE_VERSION=latest CODEX_VERSION=latest

FUZZTIME ?= 5m
# Minimizing a new interesting input stops every worker, up to 60 s by
# default; make test's short pass bounds it (a failing input is kept either way).
FUZZMINIMIZETIME ?= 60s
fuzz:
	@for t in $$($(GO) test -list '^Fuzz' ./... 2>/dev/null | grep '^Fuzz' | sort -u); do \
		pkg=$$(grep -rl "func $$t(" --include='*_test.go' . | head -1 | xargs dirname); \
		echo "fuzz $$pkg $$t $(FUZZTIME)"; \
		$(GO) test -run='^$$' -fuzz="^$$t$$" -fuzztime=$(FUZZTIME) -fuzzminimizetime=$(FUZZMINIMIZETIME) "$$pkg" || exit 1; \
	done

bench: build
	./scripts/bench

# bench-cost prints only (h) of bench: what each iteration of the standard
# run on the demo change puts before models (docs/performance.md).
bench-cost:
	$(GO) test -count=1 -v -run '^TestStandardRunCost$$' ./internal/app | sed -n 's/^ *cost_test.go:[0-9]*: /  /p'

# CLIENT=opencode runs the demo in the pinned OpenCode instead, CLIENT=codex
# in the pinned Codex CLI.
CLIENT ?= claude
demo: build
ifeq ($(CLIENT),codex)
	c=$$(./scripts/install-codex $(CODEX_VERSION)) && WHETSTONE_PLUGIN="$(CURDIR)" $(GO) run ./cmd/demo -codex "$$c"
else ifeq ($(CLIENT),opencode)
	@./scripts/install-ripgrep
	c=$$(./scripts/install-opencode $(OPENCODE_VERSION)) && WHETSTONE_PLUGIN="$(CURDIR)" $(GO) run ./cmd/demo -opencode "$$c"
else
	c=$$(./scripts/install-claude $(CLAUDE_VERSION)) && WHETSTONE_CLAUDE="$$c" WHETSTONE_PLUGIN="$(CURDIR)" $(GO) run ./cmd/demo
endif

# generate rewrites agents/*.md and opencode/ (agents, command, skill) from
# internal/brief/src, the agent registry, and commands/review.md (a test
# fails when the committed files differ).
generate:
	$(GO) run ./cmd/genagents

# clean removes everything the Makefile creates: the binaries, the release
# directory, packed tarballs and the clients installed into $(CACHE).
clean:
	rm -rf bin dist whetstone-*.tgz $(CACHE)/claude-* $(CACHE)/opencode-* $(CACHE)/codex-*
	rmdir $(CACHE) 2>/dev/null || true
