package scope

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeOwn is whetstone's install as a map: path → the content it writes.
type fakeOwn map[string]string

func (o fakeOwn) Names(p string) bool { _, ok := o[p]; return ok }
func (o fakeOwn) Wrote(p string, data []byte) bool {
	want, ok := o[p]
	return ok && want == string(data)
}

// TestOwnLeftOut: a change's file is left out, and listed in
// Context.Installed, only when every side of it that exists is a regular,
// non-executable file holding exactly what the install writes at its
// path; an edit, an executable bit, a rename from another path or content
// replacing the project's own keep it in the change.
func TestOwnLeftOut(t *testing.T) {
	own := fakeOwn{".client/a.md": "ours a\n", ".client/b.md": "ours b\n"}
	for _, tc := range []struct {
		name      string
		base      func(r *repo) // committed before the change
		change    func(r *repo)
		files     []string // in the change, besides main.go
		installed []string
	}{
		{"untracked as written", nil, func(r *repo) {
			r.write(".client/a.md", "ours a\n")
			r.write(".client/b.md", "ours b\n")
		}, nil, []string{".client/a.md", ".client/b.md"}},
		{"edited", nil, func(r *repo) {
			r.write(".client/a.md", "ours a\nexec(evil)\n")
			r.write(".client/b.md", "ours b\n")
		}, []string{".client/a.md"}, []string{".client/b.md"}},
		{"executable", nil, func(r *repo) {
			r.write(".client/a.md", "ours a\n")
			os.Chmod(filepath.Join(r.dir, ".client/a.md"), 0o755)
		}, []string{".client/a.md"}, nil},
		{"renamed from the project's file", func(r *repo) {
			r.write("docs/a.md", "ours a\n")
		}, func(r *repo) {
			os.Mkdir(filepath.Join(r.dir, ".client"), 0o755)
			r.git("mv", "docs/a.md", ".client/a.md")
		}, []string{".client/a.md"}, nil},
		{"the project's file replaced by the install's content", func(r *repo) {
			r.write(".client/a.md", "mine\n")
		}, func(r *repo) {
			r.write(".client/a.md", "ours a\n")
		}, []string{".client/a.md"}, nil},
		{"deleted as written", func(r *repo) {
			r.write(".client/a.md", "ours a\n")
		}, func(r *repo) {
			os.Remove(filepath.Join(r.dir, ".client/a.md"))
		}, nil, []string{".client/a.md"}},
		{"elsewhere", nil, func(r *repo) {
			r.write("sub/.client/a.md", "ours a\n")
		}, []string{"sub/.client/a.md"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			r.write("main.go", "package main\n")
			if tc.base != nil {
				tc.base(r)
			}
			r.commit("base")
			r.write("main.go", "package main\n\nfunc main() {}\n")
			tc.change(r)
			c, diff := r.detect(Request{Uncommitted: true, Own: own})
			want := slices.Sorted(slices.Values(append([]string{"main.go"}, tc.files...)))
			if d := cmp.Diff(want, paths(c)); d != "" {
				t.Errorf("files (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.installed, c.Installed); d != "" {
				t.Errorf("installed (-want +got):\n%s", d)
			}
			for _, p := range tc.installed {
				if strings.Contains(string(diff), p) {
					t.Errorf("diff.patch names %s:\n%s", p, diff)
				}
			}
		})
	}
}

// TestOwnNext: an installed file left out at the start is in the change
// once the fixer edits it, and no longer listed as installed.
func TestOwnNext(t *testing.T) {
	r := newRepo(t)
	r.write("main.go", "package main\n")
	r.commit("base")
	r.write("main.go", "package main\n\nfunc main() {}\n")
	r.write(".client/a.md", "ours a\n")
	c, _ := r.detect(Request{Uncommitted: true, Own: fakeOwn{".client/a.md": "ours a\n"}})
	if d := cmp.Diff([]string{".client/a.md"}, c.Installed); d != "" {
		t.Fatalf("installed (-want +got):\n%s", d)
	}
	r.write(".client/a.md", "ours a\nexec(evil)\n")
	next, _, _, err := Next(context.Background(), r.dir, c)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{".client/a.md", "main.go"}, paths(next)); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	if len(next.Installed) != 0 {
		t.Errorf("installed = %v, want none", next.Installed)
	}
}

// TestOwnDefaultBranch: on the default branch, uncommitted work that is
// only the install is no change: the last commit is reviewed.
func TestOwnDefaultBranch(t *testing.T) {
	r := newRepo(t)
	r.write("main.go", "package main\n")
	r.commit("base")
	r.write(".client/a.md", "ours a\n")
	c, _ := r.detect(Request{Own: fakeOwn{".client/a.md": "ours a\n"}})
	if c.Mode != ModeLastCommit {
		t.Errorf("mode %s, want %s", c.Mode, ModeLastCommit)
	}
	msg := r.detectErr(Request{Uncommitted: true, Own: fakeOwn{".client/a.md": "ours a\n"}})
	if want := "nothing to review: the only changes in uncommitted changes"; !strings.Contains(msg, want) {
		t.Errorf("error %q, want it to start %q", msg, want)
	}
}
