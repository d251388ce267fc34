package gitrun

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCapped: past Max a strict writer fails (which stops the command), a
// lossy one keeps the first Max bytes and goes on.
func TestCapped(t *testing.T) {
	strict := &Capped{Max: 4}
	if n, err := strict.Write([]byte("abcdefgh")); n != 0 || !errors.Is(err, ErrTooLarge) || !strict.Over || strict.Buf.String() != "abcd" {
		t.Errorf("strict: n %d, err %v, over %v, kept %q", n, err, strict.Over, strict.Buf.String())
	}
	lossy := &Capped{Max: 4, Lossy: true}
	for _, s := range []string{"ab", "cdef", "gh"} {
		if n, err := lossy.Write([]byte(s)); n != len(s) || err != nil {
			t.Errorf("lossy write %q: n %d, err %v", s, n, err)
		}
	}
	if lossy.Over || lossy.Buf.String() != "abcd" {
		t.Errorf("lossy: over %v, kept %q", lossy.Over, lossy.Buf.String())
	}
}

// newRepo is a repository with one commit holding small.txt and big.txt,
// in a home where git reads no configuration of the machine's.
func newRepo(t *testing.T) Git {
	t.Helper()
	home := t.TempDir()
	for k, v := range map[string]string{"HOME": home, "XDG_CONFIG_HOME": home, "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_CONFIG_GLOBAL": filepath.Join(home, "gitconfig"), "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
		"GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com"} {
		t.Setenv(k, v)
	}
	g := Git{Dir: t.TempDir()}
	ctx := context.Background()
	if _, err := g.Run(ctx, "init", "-q"); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"small.txt": "hi\n", "big.txt": strings.Repeat("x", 1000)} {
		if err := os.WriteFile(filepath.Join(g.Dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := g.Run(ctx, "add", "-A"); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Run(ctx, "commit", "-q", "-m", "base"); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestHeads: each blob's first n bytes, a missing one skipped, in one
// stream.
func TestHeads(t *testing.T) {
	g := newRepo(t)
	ctx := context.Background()
	got := map[string]string{}
	missing := strings.Repeat("0", 39) + "1"
	err := g.Heads(ctx, []string{"HEAD:big.txt", missing, "HEAD:small.txt"}, 8, func(blob string, head []byte) {
		got[blob] = string(head)
	})
	if err != nil {
		t.Fatal(err)
	}
	big, _ := g.Str(ctx, "rev-parse", "HEAD:big.txt")
	small, _ := g.Str(ctx, "rev-parse", "HEAD:small.txt")
	if d := cmp.Diff(map[string]string{big: "xxxxxxxx", small: "hi\n"}, got); d != "" {
		t.Errorf("heads (-want +got):\n%s", d)
	}
}

// TestRunFailure: a failing command's error carries git's first line of
// standard error; Str drops the final newline.
func TestRunFailure(t *testing.T) {
	g := newRepo(t)
	ctx := context.Background()
	_, err := g.Run(ctx, "rev-parse", "--verify", "no-such-ref")
	if err == nil || !strings.Contains(err.Error(), "git rev-parse: exit status") || !strings.Contains(err.Error(), "fatal:") {
		t.Errorf("error = %v, want git's message", err)
	}
	out, err := g.Str(ctx, "rev-parse", "--abbrev-ref", "HEAD")
	if err != nil || strings.HasSuffix(out, "\n") || out == "" {
		t.Errorf("Str = %q, %v", out, err)
	}
}

// TestNoRepositoryProgram: a repository's configuration cannot make git run
// a program (fsmonitor, hooks), and With adds environment to every command.
func TestNoRepositoryProgram(t *testing.T) {
	g := newRepo(t)
	ctx := context.Background()
	marker := filepath.Join(t.TempDir(), "ran")
	script := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	hooks := filepath.Join(g.Dir, ".git", "hooks")
	for _, h := range []string{"post-index-change", "pre-commit", "post-commit"} {
		if err := os.WriteFile(filepath.Join(hooks, h), []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := g.Run(ctx, "config", "core.fsmonitor", script); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(t.TempDir(), "index")
	tg := g.With("GIT_INDEX_FILE=" + index)
	if _, err := tg.Run(ctx, "add", "-A"); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Run(ctx, "status", "--porcelain"); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Run(ctx, "commit", "-q", "--allow-empty", "-m", "again"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a program the repository configured ran")
	}
	if data, err := os.ReadFile(index); err != nil || !bytes.HasPrefix(data, []byte("DIRC")) {
		t.Errorf("With's GIT_INDEX_FILE was not used: %v", err)
	}
	if len(g.Env) != 0 {
		t.Errorf("With changed the original: %v", g.Env)
	}
}

// TestResolve: object names in order, "" for one that does not exist.
func TestResolve(t *testing.T) {
	g := newRepo(t)
	ctx := context.Background()
	small, _ := g.Str(ctx, "rev-parse", "HEAD:small.txt")
	got, err := g.Resolve(ctx, []string{"HEAD:nothing", "HEAD:small.txt", "HEAD:a b/c"})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"", small, ""}, got); d != "" {
		t.Errorf("Resolve (-want +got):\n%s", d)
	}
}

// TestShown: a Shown git reads neither the user's attributes file nor the
// system's; the repository's still count (the diff's flags overrule them),
// and With keeps it Shown.
func TestShown(t *testing.T) {
	g := newRepo(t)
	ctx := context.Background()
	global := filepath.Join(t.TempDir(), "attributes")
	if err := os.WriteFile(global, []byte("*.txt -diff\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Run(ctx, "config", "core.attributesFile", global); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(g.Dir, ".gitattributes"), []byte("big.txt linguist-generated\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	attrs := func(g Git) string {
		out, err := g.Str(ctx, "check-attr", "diff", "linguist-generated", "--", "small.txt", "big.txt")
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := attrs(g); !strings.Contains(got, "small.txt: diff: unset") {
		t.Fatalf("the user's attributes file does not apply to plain git:\n%s", got)
	}
	want := "small.txt: diff: unspecified\nsmall.txt: linguist-generated: unspecified\nbig.txt: diff: unspecified\nbig.txt: linguist-generated: set"
	if got := attrs(g.Shown().With("X=1")); got != want {
		t.Errorf("Shown's attributes:\n%s\nwant\n%s", got, want)
	}
}

// TestRunObjects: an object in a run's directory (.git/whetstone-objects-*)
// is read by every command of this package, in the work tree, a
// subdirectory of it and a linked worktree, never by the user's git; a
// directory whose name holds the list separator is quoted.
func TestRunObjects(t *testing.T) {
	g := newRepo(t)
	ctx := context.Background()
	if err := os.MkdirAll(filepath.Join(g.Dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	wt := filepath.Join(t.TempDir(), "wt")
	if _, err := g.Run(ctx, "worktree", "add", "-q", wt); err != nil {
		t.Fatal(err)
	}
	write := func(gitDir, owner, content string) string {
		t.Helper()
		own := filepath.Join(gitDir, ObjectsPrefix+owner)
		if err := os.MkdirAll(own, 0o755); err != nil {
			t.Fatal(err)
		}
		id, err := g.With("GIT_OBJECT_DIRECTORY="+own, "GIT_ALTERNATE_OBJECT_DIRECTORIES="+filepath.Join(g.Dir, ".git", "objects")).
			RunInput(ctx, strings.NewReader(content), "hash-object", "-w", "--stdin")
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(id))
	}
	main := write(filepath.Join(g.Dir, ".git"), "run-1", "in the main work tree's run\n")
	colon := write(filepath.Join(g.Dir, ".git"), "run:2", "in a run whose directory has a colon\n")
	linked := write(GitDir(wt), "run-3", "in the linked worktree's run\n")
	for _, c := range []struct {
		dir string
		ids []string
	}{{g.Dir, []string{main, colon}}, {filepath.Join(g.Dir, "sub"), []string{main, colon}}, {wt, []string{linked}}} {
		for _, id := range c.ids {
			if _, err := (Git{Dir: c.dir}).Run(ctx, "cat-file", "-e", id); err != nil {
				t.Errorf("in %s, %s: %v", c.dir, id, err)
			}
			cmd := exec.Command("git", "-C", c.dir, "cat-file", "-e", id)
			if cmd.Run() == nil {
				t.Errorf("the user's git reads %s in %s", id, c.dir)
			}
		}
	}
	if got := GitDir(wt); !strings.HasPrefix(got, filepath.Join(g.Dir, ".git", "worktrees")) {
		t.Errorf("GitDir(linked worktree) = %s", got)
	}
}
