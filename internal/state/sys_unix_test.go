//go:build unix

package state_test

import (
	"os/signal"
	"syscall"
)

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }

// limitFileSize makes writes past limit bytes fail with EFBIG, as on a full
// disk, instead of killing the process. It cannot be undone: call it in a
// child process.
func limitFileSize(limit uint64) error {
	signal.Ignore(syscall.SIGXFSZ)
	return syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: limit, Max: limit})
}
