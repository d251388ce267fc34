// Package notes keeps short text notes as files in one directory.
package notes

import (
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
	os.MkdirAll(s.Dir, 0o755)
	return os.WriteFile(s.path(name), []byte(text), 0o644)
}

// Lines returns the lines of a note.
func (s *Store) Lines(name string) ([]string, error) {
	b, err := os.ReadFile(s.path(name))
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n"), nil
}

// Tail returns the last n lines of a note.
func (s *Store) Tail(name string, n int) ([]string, error) {
	lines, err := s.Lines(name)
	if err != nil {
		return nil, err
	}
	if n >= len(lines) {
		return lines, nil
	}
	return lines[len(lines)-n-1:], nil
}

// Remove deletes a note.
func (s *Store) Remove(name string) error {
	return os.Remove(s.path(name))
}

// path is the file that holds the named note.
func (s *Store) path(name string) string {
	return filepath.Join(s.Dir, name+".txt")
}
