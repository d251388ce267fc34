package scope

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadTreeFile: a report quotes a file of a reviewed snapshot, also
// when the project is a subdirectory of the repository, bounded; a path
// not in the snapshot is an error; origin's URL is read as git has it.
func TestReadTreeFile(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.org"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "a.go"), []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("add", "-A")
	run("commit", "-q", "-m", "base")
	root := filepath.Join(dir, "sub")
	if err := os.WriteFile(filepath.Join(root, "a.go"), []byte("package a\n\nfunc A() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c, _, err := Detect(ctx, root, Request{})
	if err != nil {
		t.Fatal(err)
	}
	data, truncated, err := ReadTreeFile(ctx, root, c.Tree, "a.go", 1<<10)
	if err != nil || truncated || string(data) != "package a\n\nfunc A() {}\n" {
		t.Fatalf("ReadTreeFile = %q, %v, %v; want the snapshot's a.go", data, truncated, err)
	}
	if data, truncated, err = ReadTreeFile(ctx, root, c.Tree, "a.go", 4); err != nil || !truncated || string(data) != "pack" {
		t.Errorf("bounded to 4 bytes: %q, %v, %v", data, truncated, err)
	}
	if _, _, err := ReadTreeFile(ctx, root, c.Tree, "b.go", 1<<10); err == nil || !strings.Contains(err.Error(), "b.go is not in tree") {
		t.Errorf("a missing file: %v", err)
	}
	if _, err := OriginURL(ctx, root); err == nil {
		t.Error("OriginURL without an origin gave no error")
	}
	run("remote", "add", "origin", "git@github.com:o/r.git")
	if url, err := OriginURL(ctx, root); err != nil || url != "git@github.com:o/r.git" {
		t.Errorf("OriginURL = %q, %v", url, err)
	}
}
