package toolpath

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestClean(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	link := filepath.Join(outside, "venv-link")
	if err := os.Symlink(filepath.Join(root, ".venv", "bin"), link); err != nil {
		t.Fatal(err)
	}
	path := strings.Join([]string{
		filepath.Join(root, ".venv", "bin"), // an activated virtualenv
		"",                                  // the working directory
		"node_modules/.bin",                 // relative: wherever the hook runs
		root,                                // the root itself
		link,                                // a link outside that leads in
		filepath.Join(root, "sub", "..", "..", "x"), // leaves the root once cleaned
		"/usr/bin",
		outside,
	}, string(os.PathListSeparator))
	tmp := t.TempDir()
	path += string(os.PathListSeparator) + filepath.Join(tmp, "bin") // where any agent may write
	kept, dropped := Clean(path, root, tmp)
	want := strings.Join([]string{filepath.Join(root, "sub", "..", "..", "x"), "/usr/bin", outside}, string(os.PathListSeparator))
	if kept != want {
		t.Errorf("kept %q, want %q", kept, want)
	}
	if len(dropped) != 6 || !slices.Contains(dropped, link) || dropped[5] != filepath.Join(tmp, "bin") {
		t.Errorf("dropped %q, want the virtualenv, the empty and relative entries, the root, the link and the temporary directory's", dropped)
	}
}

// A repository's .venv/bin/git never runs once PATH is cleaned: exec's own
// lookup, as every exec.Command of whetstone uses, finds the system's.
func TestCleanedPathFindsTheSystemGit(t *testing.T) {
	system, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	root := t.TempDir()
	bin := filepath.Join(root, ".venv", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	kept, _ := Clean(bin+string(os.PathListSeparator)+filepath.Dir(system), root)
	t.Setenv("PATH", kept)
	got, err := exec.LookPath("git")
	if err != nil || got != system {
		t.Errorf("git found at %q (%v), want %q", got, err, system)
	}
}
