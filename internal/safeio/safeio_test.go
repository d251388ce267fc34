package safeio

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestReadFileRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "sparse")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(2 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	link := filepath.Join(dir, "link")
	if err := os.Symlink(big, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path     string
		nofollow bool
		want     error
	}{
		{"/dev/zero", false, ErrNotRegular},
		{fifo, false, ErrNotRegular},
		{dir, false, ErrNotRegular},
		{big, false, ErrTooLarge},
		{link, true, ErrSymlink},
	} {
		start := time.Now()
		_, err := ReadFile(c.path, 1<<20, c.nofollow)
		if !errors.Is(err, c.want) {
			t.Errorf("ReadFile(%s) = %v, want %v", c.path, err, c.want)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("ReadFile(%s) took %s", c.path, d)
		}
	}
}

func TestReadOwnRefusesSymlinkedDirectories(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "state.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, ".whetstone")); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadOwn(root, filepath.Join(root, ".whetstone", "state.json"), 1<<20); !errors.Is(err, ErrSymlink) {
		t.Fatalf("ReadOwn through a symlinked directory: %v, want ErrSymlink", err)
	}
	if _, err := ReadIn(root, filepath.Join(root, ".whetstone", "state.json"), 1<<20); err == nil {
		t.Fatal("ReadIn followed a symlink out of the project")
	}
	inside := filepath.Join(root, "real.json")
	if err := os.WriteFile(inside, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(inside, filepath.Join(root, "whetstone.json")); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadIn(root, filepath.Join(root, "whetstone.json"), 1<<20); err != nil || string(data) != "{}" {
		t.Fatalf("ReadIn of a symlink inside the project = %q, %v", data, err)
	}
}
