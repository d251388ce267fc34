package snapshot

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/whetstone-dev/whetstone/internal/gitrun"
)

// TestWorkTreeAsOnDisk: attributes the work tree's .gitattributes add, a
// fixer's or an uncommitted change's, cannot make the snapshot record other
// bytes than the file's; those HEAD's .gitattributes set still apply.
func TestWorkTreeAsOnDisk(t *testing.T) {
	const evil = "package a\n\nfunc A() { /*$Id: */ println(\"evil\") /* $*/ }\n"
	for _, tc := range []struct {
		name, attrs, file, content string
		setup                      func(r *repo)
	}{
		{name: "ident", attrs: "*.go ident\n", file: "a.go", content: evil},
		{name: "ident in a subdirectory", attrs: "", file: "sub/a.go", content: evil, setup: func(r *repo) {
			r.write("sub/.gitattributes", "a.go ident\n")
		}},
		{name: "working-tree-encoding", attrs: "*.go working-tree-encoding=UTF-16LE\n", file: "a.go", content: "package a\n\nfunc A() { println(\"evil\") }\n"},
		{name: "clean filter", attrs: "*.go filter=tidy\n", file: "a.go", content: evil, setup: func(r *repo) {
			r.git("config", "filter.tidy.clean", "sed s/evil/good/")
		}},
		{name: "end of line", attrs: "*.go text eol=crlf\n", file: "a.go", content: "package a\r\n\r\nfunc A() { println(\"evil\") }\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			r.write(tc.file, "package a\n")
			r.write("keep.txt", "x\r\ny\r\n")
			r.commit("base")
			if tc.setup != nil {
				tc.setup(r)
			}
			if tc.attrs != "" {
				r.write(".gitattributes", tc.attrs)
			}
			r.write(tc.file, tc.content)
			before := r.state()
			tree, _, err := WorkTree(context.Background(), gitrun.Git{Dir: r.dir}, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := blob(t, r, tree, tc.file); got != tc.content {
				t.Errorf("recorded %q, on disk %q", got, tc.content)
			}
			if r.state() != before {
				t.Error("the snapshot changed the index or the work tree")
			}
			if left, _ := filepath.Glob(filepath.Join(r.dir, ".git", "whetstone-index-*")); len(left) > 0 {
				t.Errorf("temporary index left behind: %v", left)
			}
		})
	}
}

// blob returns the exact content of file in tree.
func blob(t *testing.T, r *repo, tree, file string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", r.dir, "cat-file", "blob", tree+":"+file).Output()
	if err != nil {
		t.Fatalf("read %s: %v", file, err)
	}
	return string(out)
}

// TestWorkTreeKeepsHeadConversions: the conversions HEAD's .gitattributes
// ask for still apply, also when the work tree changes .gitattributes
// elsewhere.
func TestWorkTreeKeepsHeadConversions(t *testing.T) {
	r := newRepo(t)
	r.write(".gitattributes", "*.txt text\n")
	r.write("docs/.gitattributes", "")
	r.commit("base")
	r.write("a.txt", "x\r\ny\r\n")
	r.write("docs/.gitattributes", "*.md ident\n")
	r.write("docs/b.md", "$Id: hidden $\n")
	tree, _, err := WorkTree(context.Background(), gitrun.Git{Dir: r.dir}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := blob(t, r, tree, "a.txt"); got != "x\ny\n" {
		t.Errorf("a.txt recorded as %q, want HEAD's end-of-line conversion", got)
	}
	if got := blob(t, r, tree, "docs/b.md"); got != "$Id: hidden $\n" {
		t.Errorf("docs/b.md recorded as %q, want the bytes on disk", got)
	}
}

// TestWorkTreeAsOnDiskSparse: an index entry with no file behind it
// (skip-worktree, as in a sparse checkout) is left as it is.
func TestWorkTreeAsOnDiskSparse(t *testing.T) {
	r := newRepo(t)
	r.write("away.go", "package a\n")
	r.write("a.go", "package a\n")
	r.commit("base")
	r.git("update-index", "--skip-worktree", "away.go")
	if err := os.Remove(filepath.Join(r.dir, "away.go")); err != nil {
		t.Fatal(err)
	}
	r.write(".gitattributes", "*.go ident\n")
	r.write("a.go", "package a /*$Id: x $*/\n")
	tree, _, err := WorkTree(context.Background(), gitrun.Git{Dir: r.dir}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := blob(t, r, tree, "away.go"); got != "package a\n" {
		t.Errorf("away.go recorded as %q", got)
	}
	if got := blob(t, r, tree, "a.go"); got != "package a /*$Id: x $*/\n" {
		t.Errorf("a.go recorded as %q", got)
	}
}

// TestWorkTreeAsOnDiskBelowTop: a project root below the top of the work
// tree, whose .gitattributes above it changed.
func TestWorkTreeAsOnDiskBelowTop(t *testing.T) {
	r := newRepo(t)
	r.write("svc/a.go", "package a\n")
	r.commit("base")
	r.write(".gitattributes", "*.go ident\n")
	const evil = "package a /*$Id: */ var X = 1 /*$*/\n"
	r.write("svc/a.go", evil)
	tree, _, err := WorkTree(context.Background(), gitrun.Git{Dir: filepath.Join(r.dir, "svc")}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := blob(t, r, tree, "svc/a.go"); got != evil {
		t.Errorf("svc/a.go recorded as %q, on disk %q", got, evil)
	}
}

// TestWorkTreeAsOnDiskIgnored: a .gitattributes the fixer also ignores
// (.gitignore) is read by git add but in no snapshot; it counts all the
// same.
func TestWorkTreeAsOnDiskIgnored(t *testing.T) {
	r := newRepo(t)
	r.write("a.go", "package a\n")
	r.write("build/.gitattributes", "*.go ident\n") // in an ignored directory: applies to nothing recorded
	r.commit("base")
	r.write(".gitignore", ".gitattributes\nbuild/\n")
	r.write(".gitattributes", "*.go ident\n")
	const evil = "package a /*$Id: */ var X = 1 /*$*/\n"
	r.write("a.go", evil)
	tree, _, err := WorkTree(context.Background(), gitrun.Git{Dir: r.dir}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := blob(t, r, tree, "a.go"); got != evil {
		t.Errorf("a.go recorded as %q, on disk %q", got, evil)
	}
}
