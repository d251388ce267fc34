package shell

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLocalProgram: a command word PATH finds, before the system's, in a
// directory an agent could write into (the project, the temporary
// directory, a relative or empty entry, an entry that is a link into the
// project) is the project's code; a builtin, or a program found first in
// a system directory, is not.
func TestLocalProgram(t *testing.T) {
	p := newProject(t)
	prog := func(dir, name string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	venv := filepath.Join(p.root, ".venv", "bin")
	prog(venv, "cat")
	prog(venv, "echo")
	prog(venv, "grep")
	prog(filepath.Join(p.root, "node_modules", ".bin"), "rg")
	prog(filepath.Join(p.tmp, "bin"), "sed")
	prog(p.root, "head")
	if err := os.WriteFile(filepath.Join(venv, "tail"), []byte("not a program\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(filepath.Dir(p.root), "linked-bin")
	if err := os.Symlink(venv, linked); err != nil {
		t.Fatal(err)
	}
	system := os.Getenv("PATH")
	for _, tc := range []struct {
		path, cmd, local string
	}{
		{venv + ":" + system, "cat go.mod", filepath.Join(venv, "cat")},
		{venv + ":" + system, "grep -n x go.mod | cat", filepath.Join(venv, "grep")},
		{venv + ":" + system, "echo hi", ""},      // a builtin
		{venv + ":" + system, "tail go.mod", ""},  // not executable
		{venv + ":" + system, "wc -l go.mod", ""}, // not there
		{system + ":" + venv, "cat go.mod", ""},   // the system's first
		{p.root + "/node_modules/.bin:" + system, "rg -n x go.mod", filepath.Join(p.root, "node_modules", ".bin", "rg")},
		{p.tmp + "/bin:" + system, "sed -n 1p go.mod", filepath.Join(p.tmp, "bin", "sed")},
		{linked + ":" + system, "cat go.mod", filepath.Join(linked, "cat")},
		{".venv/bin:" + system, "cat go.mod", filepath.Join(p.root, ".venv", "bin", "cat")},
		{":" + system, "head go.mod", filepath.Join(p.root, "head")},
		{system + ":", "head go.mod", ""}, // the system's head first
		{venv + ":" + system, "env cat go.mod", filepath.Join(venv, "cat")},
		{venv + ":" + system, "timeout 5 cat go.mod", filepath.Join(venv, "cat")},
		{venv + ":" + system, "git ls-files | xargs grep -n x", filepath.Join(venv, "grep")},
		{venv + ":" + system, "bash -c 'cat go.mod'", filepath.Join(venv, "cat")},
		{".venv/bin:" + system, "cd internal && cat x/x.go", ""}, // internal/.venv/bin holds no cat
		{"", "cat go.mod", ""},
	} {
		pol := p.policy(ReadOnly)
		pol.Path = tc.path
		v := Judge(tc.cmd, pol)
		if v.Reason != "" {
			t.Errorf("PATH=%s %q refused: %s", tc.path, tc.cmd, v.Reason)
		}
		if v.Local != tc.local {
			t.Errorf("PATH=%s %q: Local = %q, want %q", tc.path, tc.cmd, v.Local, tc.local)
		}
		if tc.local != "" && v.LocalName != filepath.Base(tc.local) {
			t.Errorf("PATH=%s %q: LocalName = %q", tc.path, tc.cmd, v.LocalName)
		}
	}
	// A relative entry after a cd whetstone cannot follow could be
	// anywhere.
	pol := p.policy(ReadOnly)
	pol.Path = "bin:" + system
	if v := Judge(`cd "$(git rev-parse --show-toplevel)" && cat go.mod`, pol); v.Reason == "" && !strings.HasSuffix(v.Local, "bin/cat") {
		t.Errorf("a relative PATH entry in an unknown directory: Local = %q, want bin/cat", v.Local)
	}
}

// TestWalks: the parts of a line that walk trees, and those that follow
// the links they meet.
func TestWalks(t *testing.T) {
	p := newProject(t)
	for _, tc := range []struct{ cmd, walks, follows string }{
		{"grep -rn x .", "grep -rn x .", ""},
		{"grep -n x go.mod && grep -R x internal", "grep -R x internal", "grep -R x internal"},
		{"grep -d recurse x internal", "grep -d recurse x internal", ""},
		{"rg x", "rg x", ""},
		{"rg --follow x internal", "rg --follow x internal", "rg --follow x internal"},
		{"find . -name '*.go'", "find . -name '*.go'", ""},
		{"find -L . -name '*.go'", "find -L . -name '*.go'", "find -L . -name '*.go'"},
		{"find . -follow -type f", "find . -follow -type f", "find . -follow -type f"},
		{"diff -r internal emptydir", "diff -r internal emptydir", "diff -r internal emptydir"},
		{"diff -r --no-dereference internal emptydir", "diff -r --no-dereference internal emptydir", ""},
		{"diff go.mod main.go", "", ""},
		{"du -sh .", "du -sh .", ""},
		{"du -L .", "du -L .", "du -L ."},
		{"ls -la internal", "", ""},
		{"ls -R internal", "ls -R internal", ""},
		{"ls -lRL internal", "ls -lRL internal", "ls -lRL internal"},
		{"tree", "tree", ""},
		{"tree -l internal", "tree -l internal", "tree -l internal"},
		{"cp -rL internal @TMP@/x", "cp -rL internal @TMP@/x", "cp -rL internal @TMP@/x"},
		{"cat go.mod", "", ""},
		{"git grep -n x", "", ""},
	} {
		cmd := p.expand(tc.cmd)
		v := Judge(cmd, p.policy(ReadOnly))
		if v.Reason != "" {
			t.Errorf("%q refused: %s", cmd, v.Reason)
			continue
		}
		if v.Walks != p.expand(tc.walks) || v.Follows != p.expand(tc.follows) {
			t.Errorf("%q: Walks, Follows = %q, %q; want %q, %q", cmd, v.Walks, v.Follows, p.expand(tc.walks), p.expand(tc.follows))
		}
	}
}

// TestCheckLinks: with Policy.CheckLinks, a part that follows links is
// refused when a link in its tree leads to the key, its directory or a
// directory holding it, however many links away, when a link in the
// project leads out of it, and when its tree cannot be seen whole; a tree
// whose links stay in the project passes.
func TestCheckLinks(t *testing.T) {
	p := newProject(t)
	keyDir := filepath.Dir(p.key)
	for _, l := range []struct{ link, target string }{
		{"docs/kd", keyDir},
		{"docs2/home", filepath.Dir(filepath.Dir(filepath.Dir(keyDir)))}, // the home directory
		{"docs3/hop", "../docs4"}, // inside the project, to a tree that links out
		{"docs4/k", p.key},
		{"docs5/x", "../internal"},         // harmless
		{"docs5/loop", "."},                // a cycle
		{"docs6/gone", "/nonexistent/dir"}, // out, and not there (yet)
		{"docs7/share", "/usr/share"},      // out, far from the key
	} {
		path := filepath.Join(p.root, l.link)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(l.target, path); err != nil {
			t.Fatal(err)
		}
	}
	pol := p.policy(ReadOnly)
	pol.CheckLinks = true
	for _, tc := range []struct{ cmd, want string }{
		{"grep -R x docs", "the link docs/kd leads to whetstone's key"},
		{"rg -L x docs2", "the link docs2/home leads to whetstone's key"},
		{"find -L docs3", "the link docs4/k leads to whetstone's key"},
		{"grep -R x docs5", ""},
		{"grep -r x docs", ""}, // follows no link it meets
		{"diff -r docs5 internal", ""},
		{"grep -R x docs6", "the link docs6/gone leads out of the project, to /nonexistent/dir"},
		{"rg -L x docs7", "the link docs7/share leads out of the project, to /usr/share"},
		{"grep -r x docs7", ""}, // follows no link it meets
		{"grep -R x nothere", "does not exist yet"},
		{"git ls-files | xargs grep -R x", "which leads to it"},
		{"grep -R x @TMP@", ""},
	} {
		got := Check(p.expand(tc.cmd), pol)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%q: %q, want a reason containing %q", tc.cmd, got, tc.want)
		}
	}
}
