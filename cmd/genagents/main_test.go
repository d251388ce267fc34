package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/whetstone-dev/whetstone/internal/brief"
	"github.com/whetstone-dev/whetstone/internal/brief/brieftest"
	"github.com/whetstone-dev/whetstone/internal/client/opencode"
)

// frontmatterKeys are the top-level keys of a generated file's frontmatter.
func frontmatterKeys(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	head, _, ok := strings.Cut(strings.TrimPrefix(string(b), "---\n"), "\n---\n")
	if !ok || !strings.HasPrefix(string(b), "---\n") {
		t.Fatalf("%s has no frontmatter", file)
	}
	var keys []string
	for line := range strings.SplitSeq(head, "\n") {
		if k, _, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(k, " ") {
			keys = append(keys, k)
		}
	}
	return keys
}

// TestNewLens: one source file more (the fixture i18n-reviewer) gives an
// agent file for each client, and every generated agent's frontmatter holds
// only the keys its client reads, never the registry's order, depths or
// triggers.
func TestNewLens(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "commands"), 0o755); err != nil {
		t.Fatal(err)
	}
	review, err := os.ReadFile(filepath.Join("..", "..", "commands", "review.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "commands", "review.md"), review, 0o644); err != nil {
		t.Fatal(err)
	}
	reg := brieftest.Registry(t)
	if err := generate(root, reg); err != nil {
		t.Fatal(err)
	}
	claude, _ := filepath.Glob(filepath.Join(root, "agents", "*.md"))
	ocFiles, _ := filepath.Glob(filepath.Join(root, "opencode", "agent", "*.md"))
	if n := len(brief.Agents().All()) + 1; len(claude) != n || len(ocFiles) != n {
		t.Errorf("%d Claude Code and %d OpenCode agent files, want %d each", len(claude), len(ocFiles), n)
	}
	lens := brieftest.Lens
	for _, f := range []string{filepath.Join(root, "agents", lens+".md"), filepath.Join(root, "opencode", "agent", opencode.Prefix+lens+".md")} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("the new lens was not generated: %v", err)
		}
		if !strings.Contains(string(b), "\n# whetstone:"+lens+"\n") || !strings.Contains(string(b), "translation reviewer") || !strings.Contains(string(b), "a whetstone reviewer with one lens") {
			t.Errorf("%s is not the lens's brief:\n%.400s", f, b)
		}
	}
	// The lens itself goes to the reviewer's task (loop.Run.Task), not its brief.
	if a, err := reg.Load(lens); err != nil || !strings.HasPrefix(a.Lens, "## Your lens: translations") {
		t.Errorf("the new reviewer's lens: %.60q, %v", a.Lens, err)
	}
	for _, f := range claude {
		if diff := cmp.Diff([]string{"name", "description", "tools", "model"}, frontmatterKeys(t, f)); diff != "" {
			t.Errorf("%s frontmatter keys (-want +got):\n%s", f, diff)
		}
	}
	for _, f := range ocFiles {
		if diff := cmp.Diff([]string{"description", "mode", "permission"}, frontmatterKeys(t, f)); diff != "" {
			t.Errorf("%s frontmatter keys (-want +got):\n%s", f, diff)
		}
	}
	// The committed files are the built-in registry's, unchanged by the
	// fixture: regenerating them from it changes nothing.
	for _, a := range brief.Agents().All() {
		want, err := os.ReadFile(filepath.Join("..", "..", "agents", a.Name+".md"))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(filepath.Join(root, "agents", a.Name+".md"))
		if !slices.Equal(got, want) {
			t.Errorf("agents/%s.md generated with the fixture differs from the committed one", a.Name)
		}
	}
}
