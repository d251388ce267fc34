// Package state stores a file that many processes update at once: every
// update runs under a sidecar lock, and every write is a temp file, fsync and
// rename, so a reader sees the old content or the new one, never a mix.
package state

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
)

// ErrLockTimeout is returned when another process holds the lock for longer
// than the store is willing to wait.
var ErrLockTimeout = errors.New("timed out waiting for the state lock")

// DefaultWait bounds how long an update waits for the lock. Hooks have a
// timeout of their own; this must stay well below it.
const DefaultWait = 20 * time.Second

// Store is one state file and its sidecar lock (Path + ".lock"). The lock is
// never the file that is renamed over, so it keeps its identity.
type Store struct {
	Path string
	Wait time.Duration // 0 means DefaultWait
}

// Read returns the current content without locking: renames are atomic, so
// the content is always one whole version. A missing file is fs.ErrNotExist.
func (s Store) Read() ([]byte, error) {
	return os.ReadFile(s.Path)
}

// Update reads the content under the lock, passes it to fn (nil when the file
// does not exist yet) and writes what fn returns. If fn returns an error or
// nil content, nothing is written.
func (s Store) Update(fn func(old []byte) ([]byte, error)) error {
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	// A writer killed between creating its temp file and renaming it leaves
	// the temp behind; under the lock no other writer of Path is running.
	if stale, _ := filepath.Glob(filepath.Join(filepath.Dir(s.Path), "."+filepath.Base(s.Path)+".tmp-*")); len(stale) > 0 {
		for _, f := range stale {
			_ = os.Remove(f)
		}
	}
	old, err := os.ReadFile(s.Path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", s.Path, err)
	}
	next, err := fn(old)
	if err != nil {
		return err
	}
	if next == nil {
		return nil
	}
	return WriteFile(s.Path, next)
}

func (s Store) lock() (func(), error) {
	wait := s.Wait
	if wait == 0 {
		wait = DefaultWait
	}
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", filepath.Dir(s.Path), err)
	}
	l := flock.New(s.Path + ".lock")
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	ok, err := l.TryLockContext(ctx, 2*time.Millisecond)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("lock %s: %w", s.Path, err)
	}
	if !ok {
		return nil, fmt.Errorf("%s: %w after %s", s.Path, ErrLockTimeout, wait)
	}
	return func() { _ = l.Unlock() }, nil
}

// WriteFile replaces path atomically: the data goes to a temp file in the
// same directory, is fsynced, and is renamed over path; the directory is
// fsynced too. On any error the old file is untouched and the temp removed.
func WriteFile(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err = f.Chmod(0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("rename into %s: %w", path, err)
	}
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
