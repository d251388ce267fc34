package shell

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// These tests hold the commands that reach past what an agent may touch:
// the project itself when it lives under the temporary directory, files
// made by mktemp, and the harmless git reads that must stay allowed.

// TestProjectUnderTemp checks that a project under the temporary directory
// is judged by the project's rules: a read-only agent may not remove, move
// or write into it through the temporary directory. Each refused command is
// run in a fresh copy to show that it does harm the project.
func TestProjectUnderTemp(t *testing.T) {
	p := newProject(t)
	denied := []string{
		`rm -rf @ROOT@`, `rm -rf @ROOT@/`, `mv @ROOT@ @BASE@/moved`, `rm -rf @BASE@`, `cd @BASE@ && rm -rf proj`,
		`cd .. && mv proj gone`, `chmod -R 000 @BASE@`,
		// Inside the project: the fixer may, read-only agents may not.
		`rm -r @ROOT@/internal`, `mktemp -p @ROOT@`, `touch @ROOT@/x`, `echo x > @ROOT@/y`,
		`mkdir @ROOT@/new`, `rmdir @ROOT@/emptydir`, `cp main.go @BASE@/proj/z.go`,
	}
	const fixerMay = 7 // the last rows
	allowed := []string{`echo x > @BASE@/scratch.txt`, `mkdir -p @BASE@/a && touch @BASE@/a/b && rm -rf @BASE@/a`, `mktemp -p @BASE@`, `mktemp`}
	for _, mode := range []Mode{ReadOnly, Fixer} {
		pol := p.policy(mode)
		pol.TempDir = filepath.Dir(p.root)
		for i, cmd := range denied {
			if mode == Fixer && i >= len(denied)-fixerMay {
				continue
			}
			if r := Check(p.underTemp(cmd, p.root), pol); r == "" {
				t.Errorf("mode %d: Check(%q) allowed; want it denied", mode, cmd)
			}
		}
		for _, cmd := range allowed {
			if r := Check(p.underTemp(cmd, p.root), pol); r != "" {
				t.Errorf("mode %d: Check(%q) = %q; want it allowed", mode, cmd, r)
			}
		}
	}
	for _, cmd := range denied {
		base := realDir(t, t.TempDir())
		root := filepath.Join(base, "proj")
		if err := copyTree(p.root, root); err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, root)
		out, _ := p.runIn(root, p.underTemp(cmd, root))
		if _, err := os.Stat(root); err == nil {
			os.Chmod(base, 0o755)
			os.Chmod(root, 0o755)
			if len(changes(before, snapshot(t, root))) == 0 {
				t.Errorf("%q left the project as it was; output:\n%s", cmd, out)
			}
		}
		filepath.WalkDir(base, func(path string, d os.DirEntry, err error) error { // let t.TempDir clean up
			if d != nil && d.IsDir() {
				os.Chmod(path, 0o755)
			}
			return nil
		})
	}
}

// underTemp expands a command for a project at root whose parent is the
// temporary directory.
func (p *project) underTemp(cmd, root string) string {
	return p.expand(strings.NewReplacer("@ROOT@", root, "@BASE@", filepath.Dir(root)).Replace(cmd))
}

// TestMktemp checks that mktemp is judged by the directory it makes its
// file in, -p DIR and --tmpdir=DIR included. Each refused command is run to
// show that it does create a file in the project.
func TestMktemp(t *testing.T) {
	p := newProject(t)
	denied := []string{
		`mktemp -p .git/hooks`, `mktemp -p .`, `mktemp --tmpdir=.git/hooks`, `mktemp --tmpdir=scripts`,
		`mktemp -d -p internal`, `mktemp -p @ROOT@/.git`, `mktemp --tmpdir=. x.XXX`, `mktemp -p . -d`,
		`mktemp -u -p .git/hooks; mktemp -p .git/hooks post-XXX`, `mktemp -p .whetstone`, `mktemp x.XXX`,
	}
	for _, cmd := range denied {
		if r := Check(p.expand(cmd), p.policy(ReadOnly)); r == "" {
			t.Errorf("Check(%q) allowed; want it denied", cmd)
		}
		if strings.Contains(cmd, ".git") || strings.Contains(cmd, ".whetstone") {
			if r := Check(p.expand(cmd), p.policy(Fixer)); r == "" {
				t.Errorf("fixer: Check(%q) allowed; want it denied", cmd)
			}
		}
	}
	for _, cmd := range []string{`mktemp -p "$d"`, `mktemp --tmpdir="$d"`, `mktemp -p ~`, `mktemp -t -p . x.XXX`} {
		if r := Check(p.expand(cmd), p.policy(ReadOnly)); r == "" {
			t.Errorf("Check(%q) allowed; want it denied", cmd)
		}
	}
	for _, cmd := range []string{`mktemp`, `mktemp -d`, `mktemp -p @TMP@`, `mktemp --tmpdir=@TMP@ x.XXXX`, `mktemp -t x.XXX`, `mktemp --tmpdir`, `mktemp -p @TMP@ -t y.XXX`} {
		if r := Check(p.expand(cmd), p.policy(ReadOnly)); r != "" {
			t.Errorf("Check(%q) = %q; want it allowed", cmd, r)
		}
	}
	if err := os.MkdirAll(filepath.Join(p.root, ".whetstone"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := p.copyProject(t)
	for _, cmd := range denied {
		before := snapshot(t, dir)
		out, _ := p.runIn(dir, strings.ReplaceAll(p.expand(cmd), p.root, dir))
		if len(changes(before, snapshot(t, dir))) == 0 {
			t.Errorf("%q created nothing in the project; output:\n%s", cmd, out)
		}
	}
}

// TestHarmlessGit checks the git reads that print and change nothing: a
// bare git checkout (unless a post-checkout hook would run) and diff
// --output to standard output, error or /dev/null.
func TestHarmlessGit(t *testing.T) {
	p := newProject(t)
	allowed := []string{
		`git checkout`, `git diff --output=/dev/stdout HEAD~1`, `git diff --output=/dev/stderr`, `git diff --output=/dev/null`,
		`git log -p -1 --output=/dev/stdout`, `git show --output=/dev/null HEAD`, `cd internal && git checkout`,
	}
	pol := p.policy(ReadOnly)
	for _, cmd := range allowed {
		if r := Check(cmd, pol); r != "" {
			t.Errorf("Check(%q) = %q; want it allowed", cmd, r)
		}
	}
	p.runUnchanged(t, allowed)
	for _, cmd := range []string{
		`git checkout -- .`, `git checkout x`, `git checkout main`, `git checkout .`, `git checkout -b x`, `git checkout -f`,
		`git checkout HEAD -- main.go`, `git checkout "$x"`, `git diff --output=file`, `git diff --output=/dev/stdout.txt`,
		`git diff --output=/dev/stdout/../../tmp/x`, `git diff --output /dev/stdout`, `git diff --output=out --output=/dev/null`,
		`git diff --outp=/tmp/x`,
	} {
		if r := Check(cmd, pol); r == "" {
			t.Errorf("Check(%q) allowed; want it denied", cmd)
		}
	}
	if r := Check(`git checkout`, p.policy(Fixer)); r == "" {
		t.Errorf("fixer: Check(%q) allowed; want it denied: the fixer can write the hook first", `git checkout`)
	}
	// git runs a post-checkout hook even for a bare checkout: refused then.
	hook := filepath.Join(p.root, ".git", "hooks", "post-checkout")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\ntouch hook-ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := Check(`git checkout`, pol); !strings.Contains(r, "post-checkout") {
		t.Errorf("with a hook: Check(git checkout) = %q; want it denied for the hook", r)
	}
	dir := p.copyProject(t)
	p.runIn(dir, "git checkout")
	if _, err := os.Stat(filepath.Join(dir, "hook-ran")); err != nil {
		t.Errorf("git checkout did not run the post-checkout hook here: %v", err)
	}
}
