// Package trust records which project configurations the user trusts: the
// sha256 of a project's whetstone.json, keyed by the project's root, in one
// file next to whetstone's key, outside every project and out of every
// agent's reach (the gates refuse the key's directory, the sandbox hides
// it). A setting that weakens containment applies only from a file whose
// exact content the user trusted, as direnv's `allow` and Codex's hook
// trust work: a changed file is untrusted again. docs/security.md.
package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/whetstone-dev/whetstone/internal/safeio"
)

// FileName is the trust file's name in the key's directory.
const FileName = "trust.json"

// maxFile caps the trust file.
const maxFile = 4 << 20

// Schema names the trust file's format.
const Schema = "whetstone.trust/v1"

// Entry is one trusted project configuration.
type Entry struct {
	Root     string    `json:"root"`               // the project's root, symlinks resolved
	SHA256   string    `json:"sha256"`             // of whetstone.json's exact bytes
	Rev      string    `json:"rev,omitempty"`      // the commit it was read from
	Settings []string  `json:"settings,omitempty"` // the weakening settings it enabled
	At       time.Time `json:"trusted_at"`
}

type file struct {
	Schema  string  `json:"schema"`
	Entries []Entry `json:"entries"`
}

// Store is the trust file.
type Store struct{ Path string }

// For returns the store next to the key at keyPath (state.KeyPath).
func For(keyPath string) Store {
	return Store{Path: filepath.Join(filepath.Dir(keyPath), FileName)}
}

// Sum is the hex sha256 of data, the identity of a trusted file.
func Sum(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// List returns the trusted configurations, in root order; a missing file
// is none.
func (s Store) List() ([]Entry, error) {
	data, err := safeio.ReadFile(s.Path, maxFile, true)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the trust file: %w", err)
	}
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("read the trust file %s: %w", s.Path, err)
	}
	if f.Schema != Schema {
		return nil, fmt.Errorf("read the trust file %s: schema %q, want %q", s.Path, f.Schema, Schema)
	}
	return f.Entries, nil
}

// Trusted reports whether root's whetstone.json with exactly data is
// trusted. A trust file that cannot be read trusts nothing.
func (s Store) Trusted(root string, data []byte) (bool, error) {
	entries, err := s.List()
	if err != nil {
		return false, err
	}
	sum := Sum(data)
	return slices.ContainsFunc(entries, func(e Entry) bool { return e.Root == Key(root) && e.SHA256 == sum }), nil
}

// Add trusts e, replacing what root trusted before: one file per project.
func (s Store) Add(e Entry) error {
	e.Root = Key(e.Root)
	return s.update(func(entries []Entry) []Entry {
		entries = slices.DeleteFunc(entries, func(o Entry) bool { return o.Root == e.Root })
		return append(entries, e)
	})
}

// Remove forgets root's trusted file and reports whether there was one.
func (s Store) Remove(root string) (bool, error) {
	found := false
	err := s.update(func(entries []Entry) []Entry {
		n := len(entries)
		entries = slices.DeleteFunc(entries, func(o Entry) bool { return o.Root == Key(root) })
		found = len(entries) < n
		return entries
	})
	return found, err
}

// update rewrites the trust file with fn's entries, atomically, in a
// private directory and as a private file.
func (s Store) update(fn func([]Entry) []Entry) error {
	entries, err := s.List()
	if err != nil {
		return err
	}
	entries = fn(entries)
	slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.Root, b.Root) })
	data, err := json.MarshalIndent(file{Schema: Schema, Entries: nonNil(entries)}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
		return fmt.Errorf("create the trust file's directory: %w", err)
	}
	return safeio.WriteAtomic(s.Path, append(data, '\n'), safeio.WriteOptions{Perm: 0o600, Durable: true})
}

// Key is how a project root is recorded: absolute, symlinks resolved when
// it exists, so one project has one key however it is reached.
func Key(root string) string {
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		return real
	}
	return filepath.Clean(root)
}

func nonNil(s []Entry) []Entry {
	if s == nil {
		return []Entry{}
	}
	return s
}
