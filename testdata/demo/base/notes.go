// Package notes keeps short text notes as files in one directory.
package notes

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Store keeps notes in Dir, one file per note.
type Store struct {
	Dir string
}

// Save writes a note, creating the store's directory when needed.
func (s *Store) Save(name, text string) error {
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", s.Dir, err)
	}
	return os.WriteFile(filepath.Join(s.Dir, name+".txt"), []byte(text), 0o644)
}

// Lines returns the lines of a note.
func (s *Store) Lines(name string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(s.Dir, name+".txt"))
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n"), nil
}
