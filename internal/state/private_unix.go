//go:build unix

package state

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// lockFlags opens the sidecar lock without following a symlink put in its
// place and without blocking on a FIFO.
const lockFlags = os.O_CREATE | os.O_RDONLY | syscall.O_NOFOLLOW | syscall.O_NONBLOCK | syscall.O_CLOEXEC

// notPrivate says what is wrong when a key file could be read or replaced
// by anyone but the user running whetstone, or "" when nothing is.
func notPrivate(info fs.FileInfo) string {
	if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Sprintf("belongs to user %d, not to you (%d)", st.Uid, os.Geteuid())
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Sprintf("is accessible to group or others (mode %04o, want 0600)", perm)
	}
	return ""
}
