//go:build unix

package safeio

import (
	"errors"
	"os"
	"syscall"
)

// openFlags opens for reading without blocking on a FIFO, and without
// following a final symlink when nofollow is set.
func openFlags(nofollow bool) int {
	flags := os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_CLOEXEC
	if nofollow {
		flags |= syscall.O_NOFOLLOW
	}
	return flags
}

func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }
