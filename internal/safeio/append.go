package safeio

import (
	"os"
)

// OpenAppend opens path for appending, creating it (mode 0o644) when
// missing. Like Open it never blocks on a FIFO and refuses what is not a
// regular file, and a symlink as the last element is refused: an append to
// one of whetstone's files can neither hang a hook nor write outside the
// project. Records shorter than a page, each written with one Write, do not
// interleave with other processes' appends.
func OpenAppend(path string) (*os.File, error) {
	// openFlags is O_RDONLY (zero) plus the per-system guards.
	return openRegular(path, openFlags(true)|os.O_WRONLY|os.O_APPEND|os.O_CREATE, true)
}
