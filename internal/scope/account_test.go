package scope

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// passThrough is a Contain that runs the checker as it is: the tests'
// checkers are scripts.
func passThrough(argv []string) ([]string, string) { return argv, "" }

// onlyTools sets PATH to a directory holding links to the named programs
// only, so that a test controls what is installed.
func onlyTools(t *testing.T, names ...string) {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		p, err := exec.LookPath(n)
		if err != nil {
			t.Skipf("%s not installed", n)
		}
		if err := os.Symlink(p, filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
}

// skips is the Output of every skipped signal by tool, and a line for
// every signal that is not "clean" or "skipped".
func skips(sig map[string]Signal) map[string]string {
	out := map[string]string{}
	for tool, s := range sig {
		switch s.Status {
		case "skipped":
			out[tool] = s.Output
		case "clean":
		default:
			out[tool] = s.Status + ": " + s.Output
		}
	}
	return out
}

// TestCheckersAccountedFor: a checker the project configures that cannot
// run is a skipped signal with why, never silence, so a reviewer can tell
// "clean" from "not run": ruff configured in pyproject.toml and not
// installed; eslint and tsc configured with no node_modules; a Go module
// with go absent, and with go but no staticcheck. A checker the project
// does not configure has no signal.
func TestCheckersAccountedFor(t *testing.T) {
	t.Run("python", func(t *testing.T) {
		r := newRepo(t)
		r.write("pyproject.toml", "[project]\nname = \"x\"\n\n[tool.ruff]\nline-length = 100\n")
		r.commit("base")
		r.write("app.py", "import os\n")
		t.Setenv("WHETSTONE_CALLER_PATH", t.TempDir())
		want := map[string]string{"ruff": "not run: the project configures ruff but ruff is not on PATH"}
		if d := cmp.Diff(want, skips(r.signals(Request{Contain: passThrough}))); d != "" {
			t.Errorf("signals that are not clean (-want +got):\n%s", d)
		}
	})
	t.Run("node", func(t *testing.T) {
		r := newRepo(t)
		r.write("package.json", `{"devDependencies":{"eslint":"9","typescript":"5"}}`)
		r.write("eslint.config.js", "export default [];\n")
		r.write("tsconfig.json", "{}\n")
		r.commit("base")
		r.write("src/a.ts", "export const a = 1;\n")
		want := map[string]string{
			"eslint": "not run: the project configures eslint but node_modules/.bin/eslint is missing (dependencies not installed)",
			"tsc":    "not run: the project configures tsc but node_modules/.bin/tsc is missing (dependencies not installed)",
		}
		if d := cmp.Diff(want, skips(r.signals(Request{Contain: passThrough}))); d != "" {
			t.Errorf("signals that are not clean (-want +got):\n%s", d)
		}
	})
	t.Run("go absent", func(t *testing.T) {
		r := newRepo(t)
		r.write("go.mod", "module example.com/m\n\ngo 1.21\n")
		r.write("main.go", "package main\n\nfunc main() {}\n")
		r.commit("base")
		r.write("main.go", "package main\n\nfunc main() { println() }\n")
		onlyTools(t, "git")
		const why = "not run: go is not on PATH"
		want := map[string]string{"go build": why, "go vet": why, "gofmt": why, "staticcheck": why}
		if d := cmp.Diff(want, skips(r.signals(Request{}))); d != "" {
			t.Errorf("signals that are not clean (-want +got):\n%s", d)
		}
	})
	t.Run("staticcheck absent", func(t *testing.T) {
		needGo(t)
		r := newRepo(t)
		r.write("go.mod", "module example.com/m\n\ngo 1.21\n")
		r.write("main.go", "package main\n\nfunc main() {}\n")
		r.commit("base")
		r.write("main.go", "package main\n\nfunc main() { println() }\n")
		onlyTools(t, "git", "go", "gofmt")
		want := map[string]string{"staticcheck": "not run: staticcheck is not on PATH"}
		if d := cmp.Diff(want, skips(r.signals(Request{}))); d != "" {
			t.Errorf("signals that are not clean (-want +got):\n%s", d)
		}
	})
	t.Run("nothing configured", func(t *testing.T) {
		r := newRepo(t)
		r.write("README", "r\n")
		r.commit("base")
		r.write("app.py", "import os\n")
		r.write("a.js", "let a;\n")
		got := r.signals(Request{Contain: passThrough})
		if len(got) != 1 || got["git diff --check"].Status != "clean" {
			t.Errorf("signals %+v, want git diff --check only", got)
		}
	})
}

// TestCheckersNotOnTheReviewedTree: in a staged review whose working tree
// holds more, the checkers that read the working tree do not run, and
// their signals say so; git diff --check compares the trees and runs.
func TestCheckersNotOnTheReviewedTree(t *testing.T) {
	r := newRepo(t)
	r.write(".gitignore", "node_modules/\n")
	r.write("eslint.config.js", "export default [];\n")
	r.write("node_modules/.bin/eslint", "#!/bin/sh\necho '[]'\n")
	if err := os.Chmod(filepath.Join(r.dir, "node_modules/.bin/eslint"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.commit("base")
	r.write("a.js", "let a = 1;\n")
	r.git("add", "a.js")
	r.write("a.js", "let a = 2;\n")
	ran := false
	c, _ := r.detect(Request{Staged: true, Checks: true, Contain: func(argv []string) ([]string, string) { ran = true; return argv, "" }})
	got := map[string]Signal{}
	for _, s := range c.Signals {
		got[s.Tool] = s
	}
	if d := cmp.Diff(map[string]string{"eslint": notReviewedTree}, skips(got)); d != "" || ran {
		t.Errorf("signals that are not clean (-want +got), eslint ran %v:\n%s", ran, d)
	}
	if got["git diff --check"].Status != "clean" {
		t.Errorf("git diff --check: %+v", got["git diff --check"])
	}
}

// TestESLintNewlineInName: eslint's finding in a changed file whose name
// holds a newline is a candidate on that file; eslint's JSON report is
// read as it is, not through "file:line: message" lines the name would
// break.
func TestESLintNewlineInName(t *testing.T) {
	r := newRepo(t)
	r.write(".gitignore", "node_modules/\n")
	r.write("eslint.config.js", "export default [];\n")
	// The JSON names the file as eslint does, absolute, with \n escaped.
	r.write("node_modules/.bin/eslint", `#!/bin/sh
printf '[{"filePath":"%s/src/a\\nb.js","messages":[{"ruleId":"no-undef","severity":2,"message":"bad is not\\ndefined.","line":1,"column":9}]}]\n' "$PWD"
exit 1
`)
	if err := os.Chmod(filepath.Join(r.dir, "node_modules/.bin/eslint"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.commit("base")
	r.write("src/a\nb.js", "let a = bad;\n")
	s := r.signals(Request{Contain: passThrough})["eslint"]
	want := []Candidate{{File: "src/a\nb.js", Line: 1, Message: "bad is not defined. [no-undef]"}}
	if d := cmp.Diff(want, s.Candidates); d != "" || s.Status != "candidates" {
		t.Errorf("eslint %s %q (-want +got):\n%s", s.Status, s.Output, d)
	}
}

// TestTooManyErrorsIsNoCandidate: the type checker's "too many errors"
// after its first ten says where it stopped, not what is wrong: it is no
// candidate, while the ten errors are.
func TestTooManyErrorsIsNoCandidate(t *testing.T) {
	needGo(t)
	r := newRepo(t)
	r.write("go.mod", "module example.com/m\n\ngo 1.21\n")
	r.write("main.go", "package main\n\nfunc main() {}\n")
	r.commit("base")
	var b strings.Builder
	b.WriteString("package main\n\nfunc main() {\n")
	for i := range 14 {
		b.WriteString("\t_ = undefined" + string(rune('a'+i)) + "\n")
	}
	b.WriteString("}\n")
	r.write("main.go", b.String())
	got := r.signals(Request{})
	for _, tool := range []string{"go build", "go vet"} {
		s := got[tool]
		if s.Status != "candidates" {
			t.Errorf("%s: %+v, want candidates", tool, s)
		}
		for _, c := range s.Candidates {
			if !strings.HasPrefix(c.Message, "undefined: ") {
				t.Errorf("%s: candidate %+v", tool, c)
			}
		}
	}
	if n := len(got["go build"].Candidates); n != 10 {
		t.Errorf("go build: %d candidates, want the type checker's 10", n)
	}
}
