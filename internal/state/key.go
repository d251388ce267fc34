package state

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/whetstone-dev/whetstone/internal/safeio"
)

// Key is the per-user MAC key that seals state files and reports.
type Key []byte

// KeySize is the length of a key in bytes.
const KeySize = 32

// KeyPath returns where the key lives: $WHETSTONE_STATE_DIR/key when that is
// set; on Windows %LocalAppData%\whetstone\key; elsewhere (macOS included)
// $XDG_STATE_HOME/whetstone/key, or ~/.local/state/whetstone/key when
// XDG_STATE_HOME is unset or relative, as the XDG spec asks. The key must be
// outside every project, where the agents under review do not write, so a
// relative WHETSTONE_STATE_DIR (which would be relative to the project a hook
// runs in) is an error. getenv is os.Getenv or a test's own.
func KeyPath(getenv func(string) string) (string, error) {
	if dir := getenv("WHETSTONE_STATE_DIR"); dir != "" {
		if !filepath.IsAbs(dir) {
			return "", fmt.Errorf("WHETSTONE_STATE_DIR=%s is not an absolute path", dir)
		}
		return filepath.Join(dir, "key"), nil
	}
	if runtime.GOOS == "windows" {
		dir := getenv("LocalAppData")
		if dir == "" || !filepath.IsAbs(dir) {
			return "", errors.New("cannot place whetstone's key: %LocalAppData% is not set; set WHETSTONE_STATE_DIR")
		}
		return filepath.Join(dir, "whetstone", "key"), nil
	}
	if dir := getenv("XDG_STATE_HOME"); dir != "" && filepath.IsAbs(dir) {
		return filepath.Join(dir, "whetstone", "key"), nil
	}
	home := getenv("HOME")
	if home == "" || !filepath.IsAbs(home) {
		return "", errors.New("cannot place whetstone's key: HOME is not set; set WHETSTONE_STATE_DIR")
	}
	return filepath.Join(home, ".local", "state", "whetstone", "key"), nil
}

// LoadKey reads the key at path, creating it on first use: KeySize random
// bytes in a file of mode 0600, in a directory created with mode 0700. Any
// number of processes may call it at once on a fresh directory: each writes
// a complete candidate under a temp name and links it to path, link fails
// for all but the first, and everyone then reads path, so all get the same
// key and nobody ever reads a partial one. A key file that is a symlink, not
// a regular file, of the wrong size, or readable or writable by anyone but
// its owner is an error that says so; whetstone never repairs a key (a new
// one would break every sealed run), the user deletes it.
func LoadKey(path string) (Key, error) {
	key, err := readKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if err := createKey(path); err != nil {
		return nil, err
	}
	return readKey(path)
}

func readKey(path string) (Key, error) {
	bad := func(what string) error {
		return fmt.Errorf("whetstone's key %s %s; delete it and whetstone creates a new one (runs sealed with the old key will then stop as changed outside whetstone)", path, what)
	}
	f, err := safeio.Open(path, true)
	switch {
	case errors.Is(err, safeio.ErrSymlink):
		return nil, bad("is a symlink")
	case errors.Is(err, safeio.ErrNotRegular):
		return nil, bad("is not a regular file")
	case err != nil:
		return nil, fmt.Errorf("read whetstone's key: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read whetstone's key: %w", err)
	}
	if msg := notPrivate(info); msg != "" {
		return nil, bad(msg)
	}
	if info.Size() != KeySize {
		return nil, bad(fmt.Sprintf("has %d bytes, not %d", info.Size(), KeySize))
	}
	key := make(Key, KeySize)
	if _, err := io.ReadFull(f, key); err != nil {
		return nil, fmt.Errorf("read whetstone's key %s: %w", path, err)
	}
	return key, nil
}

// createKey links a complete new key to path unless one is already there.
func createKey(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create whetstone's key directory: %w", err)
	}
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return fmt.Errorf("create whetstone's key: %w", err)
	}
	f, err := os.CreateTemp(dir, ".key.tmp-*") // mode 0600
	if err != nil {
		return fmt.Errorf("create whetstone's key: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.Write(key)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("create whetstone's key: %w", err)
	}
	// Unlike rename, link never replaces: the first key linked is the key.
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create whetstone's key %s: %w", path, err)
	}
	safeio.SyncDir(dir)
	return nil
}
