// Package state stores a file that many processes update at once: every
// update runs under a sidecar lock, and every write is a temp file, fsync and
// rename, so a reader sees the old content or the new one, never a mix. With
// a key, the file is sealed with a MAC (see Seal), so a file written by
// anything but whetstone is detected; and the store reads and writes only
// regular files of bounded size, never through a symlink below the project.
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

	"github.com/whetstone-dev/whetstone/internal/safeio"
)

// ErrLockTimeout is returned when another process holds the lock for longer
// than the store is willing to wait.
var ErrLockTimeout = errors.New("timed out waiting for the state lock")

// DefaultWait bounds how long an update waits for the lock. Hooks have a
// timeout of their own; this must stay well below it.
const DefaultWait = 20 * time.Second

// MaxState caps the size of a state file, read or written. State files are
// a few kilobytes; a larger one was not written by whetstone.
const MaxState = 8 << 20

// Store is one state file and its sidecar lock (Path + ".lock"). The lock is
// never the file that is renamed over, so it keeps its identity.
type Store struct {
	Path string
	Wait time.Duration // 0 means DefaultWait

	// Root is the project root. When set, no element of Path's directory
	// below Root may be a symlink, for reads and writes alike; and the MAC
	// binds the file to its path relative to Root (see Name).
	Root string
	// Key seals what is written and verifies what is read. A nil key stores
	// plain content, for tests of packages that do not care; the app always
	// sets one, and then needs Root too.
	Key Key
	// Kind is the kind of sealed file (KindState when empty).
	Kind string
	// Light skips the fsyncs of an update. The rename still replaces the
	// file atomically for every reader and against a crash of any process;
	// only a crash of the machine can lose the update, or on a file system
	// that does not order a rename after the data it names, leave a file
	// that no longer verifies. For bookkeeping whose loss is harmless.
	Light bool
}

// Name returns path relative to root with forward slashes, the name a
// sealed file's MAC binds it to: ".whetstone/runs/<id>/state.json". It does
// not change when the project is moved or reached through another path.
func Name(root, path string) (string, error) {
	rel, err := filepath.Rel(root, path)
	if err != nil || !safeio.Within(root, path) || rel == "." {
		return "", fmt.Errorf("%s is not a file under %s", path, root)
	}
	return filepath.ToSlash(rel), nil
}

// Read returns the current content without locking: renames are atomic, so
// the content is always one whole version. A missing file is fs.ErrNotExist.
// With a key, the content is verified and returned without its seal; a file
// that does not verify, or that is a symlink, not a regular file or over
// MaxState (none of which whetstone writes), is ErrTampered.
func (s Store) Read() ([]byte, error) {
	if err := s.checkDir(); err != nil {
		return nil, err
	}
	data, err := s.read()
	if err != nil {
		return nil, err
	}
	return s.open(data)
}

// Update reads the content under the lock, passes it to fn (nil when the file
// does not exist yet) and writes what fn returns. If fn returns an error or
// nil content, nothing is written. With a key, the old content is verified
// first (fn is not called and nothing is written when it is ErrTampered), fn
// sees it without its seal, and what fn returns, which must then be a JSON
// object, is sealed.
func (s Store) Update(fn func(old []byte) ([]byte, error)) error {
	return s.update(false, fn)
}

// Repair is Update without verification, for replacing a file that did not
// verify: it reads what is there (bounded; nil when it is missing, a
// symlink, not a regular file or too large, since none of those is content
// to keep), passes it to fn, and seals and writes what fn returns. A symlink
// or special file at Path is replaced, not followed.
func (s Store) Repair(fn func(old []byte) ([]byte, error)) error {
	return s.update(true, fn)
}

func (s Store) update(repair bool, fn func(old []byte) ([]byte, error)) error {
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	old, err := s.read()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		old = nil
	case repair && isForeign(err):
		old = nil
	case err != nil:
		return err
	case !repair:
		if old, err = s.open(old); err != nil {
			return err
		}
	}
	next, err := fn(old)
	if err != nil {
		return err
	}
	if next == nil {
		return nil
	}
	if next, err = s.seal(next); err != nil {
		return err
	}
	if len(next) > MaxState {
		return fmt.Errorf("write %s: %d bytes is over the cap of %d", s.Path, len(next), MaxState)
	}
	return replace(s.Path, next, s.createTemp, !s.Light)
}

// read reads Path as it is: regular, not a symlink, at most MaxState bytes.
// With a key, a file whetstone could not have written is ErrTampered too.
func (s Store) read() ([]byte, error) {
	data, err := safeio.ReadFile(s.Path, MaxState, true)
	if s.Key != nil && isForeign(err) {
		return nil, fmt.Errorf("read %s: %w: %w", s.Path, ErrTampered, err)
	}
	return data, err
}

func isForeign(err error) bool {
	return errors.Is(err, safeio.ErrSymlink) || errors.Is(err, safeio.ErrNotRegular) || errors.Is(err, safeio.ErrTooLarge)
}

func (s Store) name() (string, error) {
	if s.Root == "" {
		return "", fmt.Errorf("state store %s has a key but no project root to name it by", s.Path)
	}
	return Name(s.Root, s.Path)
}

func (s Store) kind() string {
	if s.Kind == "" {
		return KindState
	}
	return s.Kind
}

func (s Store) open(data []byte) ([]byte, error) {
	if s.Key == nil {
		return data, nil
	}
	name, err := s.name()
	if err != nil {
		return nil, err
	}
	return Open(s.Key, s.kind(), name, data)
}

func (s Store) seal(body []byte) ([]byte, error) {
	if s.Key == nil {
		return body, nil
	}
	name, err := s.name()
	if err != nil {
		return nil, err
	}
	if _, _, _, ok := splitObject(body); !ok {
		return nil, fmt.Errorf("write %s: only a JSON object can be sealed", s.Path)
	}
	return Seal(s.Key, s.kind(), name, body), nil
}

// checkDir refuses a directory reached through a symlink below Root.
func (s Store) checkDir() error {
	if s.Root == "" {
		return nil
	}
	return safeio.NoSymlinks(s.Root, filepath.Dir(s.Path))
}

func (s Store) lock() (func(), error) {
	if err := s.checkDir(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", filepath.Dir(s.Path), err)
	}
	return Lock(s.Path, s.Wait)
}

// Lock takes the sidecar lock of path (path + ".lock", created when
// missing, never through a symlink), waiting at most wait (0 means
// DefaultWait), and returns its release. The caller checks the directory.
func Lock(path string, wait time.Duration) (func(), error) {
	if wait == 0 {
		wait = DefaultWait
	}
	l := flock.New(path+".lock", flock.SetFlag(lockFlags))
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	ok, err := l.TryLockContext(ctx, 2*time.Millisecond)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if !ok {
		return nil, fmt.Errorf("%s: %w after %s", path, ErrLockTimeout, wait)
	}
	return func() { _ = l.Unlock() }, nil
}

// createTemp creates the one temp file of a locked update. Only one writer
// holds the lock, so the name can be fixed: a temp left by a writer killed
// before its rename is simply removed by the next one, which keeps the
// crash cleanup without listing the directory on every update.
func (s Store) createTemp(dir string) (*os.File, error) {
	name := filepath.Join(dir, "."+filepath.Base(s.Path)+".tmp-update")
	for try := 0; ; try++ {
		// O_EXCL: a fresh file, never an existing one or a symlink's target.
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if try == 0 && errors.Is(err, fs.ErrExist) {
			if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
			continue
		}
		return f, err
	}
}

// WriteFile replaces path atomically: the data goes to a fresh temp file in
// the same directory, is fsynced, and is renamed over path; the directory is
// fsynced too. On any error the old file is untouched and the temp removed.
// A symlink at path is replaced, not followed; for whetstone's own files,
// WriteOwn also refuses a symlinked directory.
func WriteFile(path string, data []byte) error {
	return replace(path, data, func(dir string) (*os.File, error) {
		return os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*") // O_EXCL
	}, true)
}

// WriteOwn is WriteFile for one of whetstone's own files under root: no
// element of its directory below root may be a symlink, so the write cannot
// be redirected out of the project.
func WriteOwn(root, path string, data []byte) error {
	if err := safeio.NoSymlinks(root, filepath.Dir(path)); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return WriteFile(path, data)
}

func replace(path string, data []byte, create func(dir string) (*os.File, error), durable bool) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return safeio.WriteAtomic(path, data, safeio.WriteOptions{Durable: durable, Temp: create})
}
