package scope

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPathCheckerReachesContainByItsPath: a checker found on PATH (ruff)
// reaches Contain as the absolute path found here, so the sandbox runs
// that program or says why it cannot, instead of searching its own PATH;
// the signal still names the command as the project configures it.
func TestPathCheckerReachesContainByItsPath(t *testing.T) {
	tools := t.TempDir()
	ruff := filepath.Join(tools, "ruff")
	if err := os.WriteFile(ruff, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", tools+string(os.PathListSeparator)+os.Getenv("PATH"))
	r := newRepo(t)
	r.write("ruff.toml", "\n")
	r.commit("base")
	r.write("a.py", "import os\n")
	var got []string
	contain := func(argv []string) ([]string, string) {
		if filepath.Base(argv[len(argv)-1]) == "a.py" {
			got = argv
		}
		return argv, ""
	}
	c, _ := r.detect(Request{Uncommitted: true, Checks: true, Contain: contain})
	if len(got) == 0 || got[0] != ruff {
		t.Fatalf("Contain got %q, want ruff as %s", got, ruff)
	}
	for _, s := range c.Signals {
		if s.Tool == "ruff" && (s.Command != "ruff check --no-cache -- a.py" || s.Status != "clean") {
			t.Errorf("ruff's signal: %+v", s)
		}
	}
}

// TestVenvCheckerFromTheCallerPath: a ruff in the project's activated
// virtualenv is on the caller's PATH (sandbox.CallerPath), not on
// whetstone's own (internal/toolpath dropped it); it is found there and
// goes to Contain, which runs it in the sandbox. A configured checker that
// is nowhere is a skipped signal that says so, not silence.
func TestVenvCheckerFromTheCallerPath(t *testing.T) {
	r := newRepo(t)
	r.write("ruff.toml", "\n")
	r.commit("base")
	r.write("a.py", "import os\n")
	venv := filepath.Join(r.dir, ".venv", "bin")
	if err := os.MkdirAll(venv, 0o755); err != nil {
		t.Fatal(err)
	}
	ruff := filepath.Join(venv, "ruff")
	if err := os.WriteFile(ruff, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.write(".gitignore", ".venv/\n")
	var got []string
	contain := func(argv []string) ([]string, string) {
		if filepath.Base(argv[len(argv)-1]) == "a.py" {
			got = argv
		}
		return argv, ""
	}
	t.Setenv("WHETSTONE_CALLER_PATH", venv+string(os.PathListSeparator)+os.Getenv("PATH"))
	r.detect(Request{Uncommitted: true, Checks: true, Contain: contain})
	if len(got) == 0 || got[0] != ruff {
		t.Errorf("Contain got %q, want the virtualenv's ruff %s", got, ruff)
	}

	t.Setenv("WHETSTONE_CALLER_PATH", "/nonexistent")
	got = nil
	c, _ := r.detect(Request{Uncommitted: true, Checks: true, Contain: contain})
	found := false
	for _, s := range c.Signals {
		if s.Tool == "ruff" {
			found = true
			if s.Status != "skipped" || s.Output != "not run: the project configures ruff but ruff is not on PATH" {
				t.Errorf("ruff's signal without ruff: %+v", s)
			}
		}
	}
	if !found || got != nil {
		t.Errorf("without ruff: a signal %v, Contain called with %q; want a skipped signal and no call", found, got)
	}
}
