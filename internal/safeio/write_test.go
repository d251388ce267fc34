package safeio

import (
	"cmp"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteAtomic: the file is replaced whole with its mode, a symlink at
// the path is replaced and its target untouched, and a write that fails
// leaves the old file and no temp behind.
func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	for _, o := range []WriteOptions{{}, {Durable: true, Perm: 0o600}} {
		if err := WriteAtomic(path, []byte("new"), o); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(path); string(b) != "new" {
			t.Errorf("content %q", b)
		}
		info, _ := os.Stat(path)
		if want := cmp.Or(o.Perm, 0o644); info.Mode().Perm() != want {
			t.Errorf("mode %v with %+v", info.Mode().Perm(), o)
		}
	}
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(link, []byte("x"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the symlink's target was written: %q", b)
	}
	if info, _ := os.Lstat(link); info.Mode()&os.ModeSymlink != 0 {
		t.Error("the symlink is still there")
	}
	// A directory cannot be renamed over: the write fails and leaves nothing.
	sub := filepath.Join(dir, "sub")
	os.MkdirAll(filepath.Join(sub, "child"), 0o755)
	if err := WriteAtomic(sub, []byte("x"), WriteOptions{}); err == nil {
		t.Error("replaced a directory")
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 4 { // f, target, link, sub
		t.Errorf("left %v", names)
	}
}
