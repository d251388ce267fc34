package codex

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pinned is the native codex scripts/install-codex installed, on PATH as
// "codex"; the test skips without it.
func pinned(t *testing.T) {
	t.Helper()
	cache := os.Getenv("WHETSTONE_CACHE")
	if cache == "" {
		cache = filepath.Join("..", "..", "..", ".cache")
	}
	bin, err := NativeBinary(cache, Version)
	if err != nil {
		t.Skip(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("the Codex CLI %s is not installed (%v): run scripts/install-codex", Version, err)
	}
	dir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(dir, "codex")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// TestTrustAsksCodex: doctor's trust check asks the real Codex (its
// app-server's hooks/list): right after the install every whetstone hook
// is untrusted, which Codex would skip silently; once config.toml trusts
// each at its current hash, there is nothing to report.
func TestTrustAsksCodex(t *testing.T) {
	pinned(t)
	home, project := t.TempDir(), t.TempDir()
	getenv := func(k string) string {
		if k == "CODEX_HOME" {
			return home
		}
		return os.Getenv(k)
	}
	if _, err := Install(home, "/opt/whetstone/whetstone"); err != nil {
		t.Fatal(err)
	}
	problem, fix, ok := Client{}.Trust(context.Background(), home, project, getenv)
	if !ok || !strings.Contains(problem, "Codex skips 6 of whetstone's 6 hooks") || !strings.Contains(fix, "/hooks") {
		t.Fatalf("fresh install: %q, %q, %v", problem, fix, ok)
	}
	hooks, err := listHooks(context.Background(), "codex", home, project)
	if err != nil {
		t.Fatal(err)
	}
	var config strings.Builder
	for _, h := range hooks {
		fmt.Fprintf(&config, "[hooks.state.%s]\ntrusted_hash = %s\n", tomlString(h.Key), tomlString(h.CurrentHash))
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if problem, _, ok := (Client{}).Trust(context.Background(), home, project, getenv); !ok || problem != "" {
		t.Errorf("trusted hooks: %q, %v", problem, ok)
	}
}
