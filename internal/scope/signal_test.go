package scope

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// signals is Detect's signals by tool, for an uncommitted change with the
// checks on; r.detect fails the test when the work tree or index changed.
func (r *repo) signals(req Request) map[string]Signal {
	r.t.Helper()
	req.Uncommitted, req.Checks = true, true
	c, _ := r.detect(req)
	got := map[string]Signal{}
	for _, s := range c.Signals {
		got[s.Tool] = s
	}
	return got
}

// goSum returns whetstone's own go.sum lines of module mod, whose files the
// module cache holds because this test builds with them.
func goSum(t *testing.T, mod string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for line := range strings.Lines(string(data)) {
		if strings.HasPrefix(line, mod+" ") {
			out.WriteString(line)
		}
	}
	return out.String()
}

func needGo(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not installed")
	}
}

// A tracked go.work whose module depends on a module from the cache: the
// build must go through the workspace (main imports the other module) and
// leave no go.work.sum behind, which `go build` writes next to go.work.
func TestSignalsWorkspace(t *testing.T) {
	needGo(t)
	r := newRepo(t)
	r.write("go.work", "go 1.21\n\nuse (\n\t.\n\t./lib\n)\n")
	r.write("go.mod", "module example.com/app\n\ngo 1.21\n")
	r.write("main.go", "package main\n\nimport \"example.com/lib\"\n\nfunc main() { lib.Same() }\n")
	r.write("lib/go.mod", "module example.com/lib\n\ngo 1.21\n\nrequire github.com/google/go-cmp v0.7.0\n")
	r.write("lib/lib.go", "package lib\n\nimport \"github.com/google/go-cmp/cmp\"\n\nfunc Same() bool { return cmp.Equal(1, 1) }\n")
	// The checksums, so that GOPROXY=off needs no checksum database a
	// machine only has after other Go builds (a fresh module cache).
	r.write("lib/go.sum", goSum(t, "github.com/google/go-cmp"))
	r.commit("base")
	r.write("main.go", "package main\n\nimport \"example.com/lib\"\n\nfunc main() { _ = lib.Same() }\n")
	got := r.signals(Request{})
	for _, tool := range []string{"go build", "go vet"} {
		if s := got[tool]; s.Status != "clean" {
			t.Errorf("%s: %+v, want clean (the workspace resolves example.com/lib)", tool, s)
		}
	}
	if _, err := os.Stat(filepath.Join(r.dir, "go.work.sum")); err == nil {
		t.Error("the checks wrote go.work.sum into the work tree")
	}
	// A relative replace in go.work means the same in the copy.
	r.write("go.work", "go 1.21\n\nuse .\n\nreplace example.com/lib => ./lib\n")
	r.write("go.mod", "module example.com/app\n\ngo 1.21\n\nrequire example.com/lib v0.0.0\n")
	r.write("go.sum", goSum(t, "github.com/google/go-cmp"))
	r.commit("replace")
	r.write("main.go", "package main\n\nimport \"example.com/lib\"\n\nfunc main() { lib.Same() }\n")
	if s := r.signals(Request{})["go build"]; s.Status != "clean" {
		t.Errorf("go build with a replace in go.work: %+v", s)
	}
}

// A dependency the module cache lacks is a one-line skip, not a download
// (and not a 20 s timeout on a slow network).
func TestSignalsOffline(t *testing.T) {
	needGo(t)
	r := newRepo(t)
	r.write("go.mod", "module example.com/app\n\ngo 1.21\n\nrequire example.invalid/nothere v1.0.0\n")
	r.write("go.sum", "example.invalid/nothere v1.0.0 h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n"+
		"example.invalid/nothere v1.0.0/go.mod h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n")
	r.write("main.go", "package main\n\nfunc main() {}\n")
	r.commit("base")
	r.write("main.go", "package main\n\nimport _ \"example.invalid/nothere\"\n\nfunc main() {}\n")
	got := r.signals(Request{})
	for _, tool := range []string{"go build", "go vet"} {
		if s := got[tool]; s.Status != "skipped" || s.Output != offline || len(s.Candidates) > 0 {
			t.Errorf("%s: %+v, want skipped with %q", tool, s, offline)
		}
	}
}

// A changed file whose name looks like a flag is a file to gofmt, not a
// flag: `gofmt -l -cpuprofile=victim.go` would write victim.go.
func TestSignalsFlagNamedFile(t *testing.T) {
	needGo(t)
	r := newRepo(t)
	r.write("go.mod", "module example.com/app\n\ngo 1.21\n")
	r.write("main.go", "package main\n\nfunc main() {}\n")
	const victim = "package main\n\n// victim.go must survive the signals.\nfunc v() {}\n"
	r.write("victim.go", victim)
	r.commit("base")
	// Flag-shaped names for each tool's flags: gofmt's -cpuprofile, and
	// git's --output (git diff --check gets every changed path).
	r.write("-cpuprofile=victim.go", "package main\n\nfunc  f() {}\n")
	r.write("--output=victim.go", "package main\n\nfunc g() {}\n")
	got := r.signals(Request{})
	if b, err := os.ReadFile(filepath.Join(r.dir, "victim.go")); err != nil || string(b) != victim {
		t.Fatalf("a tool took a file name for a flag and wrote victim.go (%v):\n%s", err, b)
	}
	if s := got["gofmt"]; s.Status != "candidates" || s.Candidates[0].File != "-cpuprofile=victim.go" {
		t.Errorf("gofmt: %+v", s)
	}
}

// TestSignalsRunAgainOnTheFix: go vet's finding in the first round is gone
// from the second round's context once the fixer fixed it; the reviewers of
// the fix read the tool output of the tree they review.
func TestSignalsRunAgainOnTheFix(t *testing.T) {
	needGo(t)
	r := newRepo(t)
	r.write("go.mod", "module example.com/app\n\ngo 1.21\n")
	r.write("main.go", "package main\n\nfunc main() {}\n")
	r.commit("base")
	r.write("main.go", "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Printf(\"%d\\n\", \"x\") }\n")
	prev, _ := r.detect(Request{Uncommitted: true, Checks: true})
	vet := func(c Context) Signal {
		for _, s := range c.Signals {
			if s.Tool == "go vet" {
				return s
			}
		}
		t.Fatalf("no go vet signal in %+v", c.Signals)
		return Signal{}
	}
	if s := vet(prev); s.Status == "clean" {
		t.Fatalf("iteration 1: go vet is clean on a Printf with the wrong verb: %+v", s)
	}
	r.write("main.go", "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Printf(\"%s\\n\", \"x\") }\n")
	next, _, _, err := Next(context.Background(), r.dir, prev)
	if err != nil {
		t.Fatal(err)
	}
	if s := vet(next); s.Status != "clean" {
		t.Errorf("iteration 2: go vet %+v, want clean after the fix", s)
	}

	// Without checks at the start, none later either.
	r.write("main.go", "package main\n\nfunc main() { println(1) }\n")
	prev, _ = r.detect(Request{Uncommitted: true})
	if next, _, _, err = Next(context.Background(), r.dir, prev); err != nil || len(next.Signals) != 0 {
		t.Errorf("Next without checks: signals %+v, err %v", next.Signals, err)
	}
}

// TestProjectCheckers: a project that configures tsc and eslint (both in
// its node_modules) gets their signals, each run through Contain, on the
// start's tree and again on the fixer's; the changed files follow "--";
// tsc's "file(line,col)" is read as a candidate. Without a sandbox they
// are skipped, saying why.
func TestProjectCheckers(t *testing.T) {
	r := newRepo(t)
	r.write(".gitignore", "node_modules/\n")
	r.write("tsconfig.json", "{}\n")
	r.write("eslint.config.js", "export default [];\n")
	r.write("package.json", `{"scripts":{"test":"node --test"}}`)
	r.write("src/a.ts", "export const a = 1;\n")
	// The fake tools complain while src/a.ts says "bad".
	r.write("node_modules/.bin/tsc", "#!/bin/sh\ngrep -q bad src/a.ts || exit 0\necho \"src/a.ts(1,14): error TS2322: Type 'string' is not assignable to type 'number'.\"\nexit 2\n")
	r.write("node_modules/.bin/eslint", `#!/bin/sh
echo "args: $*" >&2
grep -q bad src/a.ts || { echo "[]"; exit 0; }
echo "[{\"filePath\":\"$PWD/src/a.ts\",\"messages\":[{\"ruleId\":\"no-undef\",\"severity\":2,\"message\":\"'bad' is not defined.\",\"line\":1,\"column\":26}]}]"
exit 1
`)
	for _, f := range []string{"tsc", "eslint"} {
		if err := os.Chmod(filepath.Join(r.dir, "node_modules/.bin", f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r.commit("base")
	r.write("src/a.ts", "export const a: number = bad;\n")
	var ran [][]string
	contain := func(argv []string) ([]string, string) {
		ran = append(ran, argv)
		return argv, ""
	}
	prev, _ := r.detect(Request{Uncommitted: true, Checks: true, Contain: contain})
	got := map[string]Signal{}
	for _, s := range prev.Signals {
		got[s.Tool] = s
	}
	if s := got["tsc"]; s.Status != "candidates" || len(s.Candidates) != 1 || s.Candidates[0] != (Candidate{File: "src/a.ts", Line: 1, Message: "error TS2322: Type 'string' is not assignable to type 'number'."}) {
		t.Errorf("tsc: %+v", s)
	}
	if s := got["eslint"]; s.Status != "candidates" || len(s.Candidates) != 1 || s.Candidates[0].File != "src/a.ts" || s.Command != "node_modules/.bin/eslint --format json -- src/a.ts" || s.Candidates[0].Message != "'bad' is not defined. [no-undef]" {
		t.Errorf("eslint: %+v", s)
	}
	if len(ran) != 2 {
		t.Errorf("Contain ran %q, want tsc and eslint", ran)
	}
	r.write("src/a.ts", "export const a: number = 2;\n")
	next, _, _, err := Next(context.Background(), r.dir, prev, Request{Contain: contain})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range next.Signals {
		if (s.Tool == "tsc" || s.Tool == "eslint") && s.Status != "clean" {
			t.Errorf("iteration 2: %s %+v, want clean after the fix", s.Tool, s)
		}
	}
	if len(ran) != 4 {
		t.Errorf("the checkers did not run again on the fixer's tree: %q", ran)
	}

	r.write("src/a.ts", "export const a: number = bad;\n")
	none := func([]string) ([]string, string) { return nil, "no sandbox here" }
	c, _ := r.detect(Request{Uncommitted: true, Checks: true, Contain: none})
	skipped := 0
	for _, s := range c.Signals {
		if s.Tool == "tsc" || s.Tool == "eslint" {
			if s.Status != "skipped" || s.Output != "not run: no sandbox here" {
				t.Errorf("without a sandbox: %+v, want skipped with why", s)
			}
			skipped++
		}
	}
	if skipped != 2 {
		t.Errorf("without a sandbox: %+v, want tsc and eslint skipped", c.Signals)
	}
}
