package scope

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/whetstone-dev/whetstone/internal/sandbox"
)

// fakeTools writes tools that log "start|end <unix time> <name>" lines to
// log around a sleep of the given seconds: tsc in node_modules/.bin, mypy
// and cargo on PATH (the caller's too, where the project's checkers are
// looked up), and staticcheck when asked. The project configures tsc, mypy
// and cargo clippy.
func fakeTools(t *testing.T, r *repo, sleep string, extra ...string) (log string) {
	t.Helper()
	bin := t.TempDir()
	log = filepath.Join(t.TempDir(), "log")
	script := func(name string) string {
		return "#!/bin/sh\necho \"start $(date +%s.%N) " + name + "\" >>" + log + "\nsleep " + sleep + "\necho \"end $(date +%s.%N) " + name + "\" >>" + log + "\n"
	}
	put := func(p, name string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(script(name)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	put(filepath.Join(r.dir, "node_modules/.bin/tsc"), "tsc")
	for _, name := range append([]string{"mypy", "cargo"}, extra...) {
		put(filepath.Join(bin, name), name)
	}
	path := bin + string(os.PathListSeparator) + os.Getenv("PATH")
	t.Setenv("PATH", path)
	t.Setenv(sandbox.CallerPath, path)
	r.write(".gitignore", "node_modules/\n")
	r.write("tsconfig.json", "{}\n")
	r.write("mypy.ini", "[mypy]\n")
	r.write("Cargo.toml", "[package]\nname = \"x\"\n")
	return log
}

// runs reads the fake tools' log: each tool's runs as [start, end] pairs,
// an unfinished run ending at +Inf.
func runs(t *testing.T, log string) map[string][][2]float64 {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	out := map[string][][2]float64{}
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		at, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		switch f[0] {
		case "start":
			out[f[2]] = append(out[f[2]], [2]float64{at, 1e300})
		case "end":
			out[f[2]][len(out[f[2]])-1][1] = at
		}
	}
	return out
}

func contained(argv []string) ([]string, string) { return argv, "" }

// TestChecksWithinBudget: a checker that takes 5 s does not hold the hook
// past the budget; it and the heavy checkers queued behind it are
// recorded as not finished, and the cheap git diff --check still ran.
func TestChecksWithinBudget(t *testing.T) {
	r := newRepo(t)
	log := fakeTools(t, r, "5")
	r.write("a.py", "x = 1\n")
	r.commit("base")
	r.write("a.py", "x = 2\n")
	start := time.Now()
	got := r.signals(Request{Contain: contained, Budget: 800 * time.Millisecond})
	if took := time.Since(start); took > 2500*time.Millisecond {
		t.Errorf("Detect took %v with a budget of 800ms", took)
	}
	for _, tool := range []string{"tsc", "mypy", "cargo clippy"} {
		if s := got[tool]; s.Status != "skipped" || !strings.HasPrefix(s.Output, "not finished: ran past the hook's 800ms budget") {
			t.Errorf("%s: %+v, want skipped as not finished", tool, s)
		}
	}
	if s := got["git diff --check"]; s.Status != "clean" {
		t.Errorf("git diff --check: %+v, want clean", s)
	}
	if n := len(runs(t, log)); n != 1 {
		t.Errorf("%d heavy checkers started, want 1 (the others wait for it): %v", n, runs(t, log))
	}
}

// TestHeavyChecksNeverOverlap: tsc, mypy and cargo clippy each run alone,
// one after another, and all finish without a budget.
func TestHeavyChecksNeverOverlap(t *testing.T) {
	r := newRepo(t)
	log := fakeTools(t, r, "0.3")
	r.write("a.py", "x = 1\n")
	r.commit("base")
	r.write("a.py", "x = 2\n")
	got := r.signals(Request{Contain: contained})
	for _, tool := range []string{"tsc", "mypy", "cargo clippy"} {
		if s := got[tool]; s.Status != "clean" {
			t.Errorf("%s: %+v, want clean", tool, s)
		}
	}
	var all [][2]float64
	for tool, rs := range runs(t, log) {
		if len(rs) != 1 || rs[0][1] > 1e299 {
			t.Errorf("%s ran %v, want once to the end", tool, rs)
		}
		all = append(all, rs...)
	}
	if len(all) != 3 {
		t.Fatalf("runs %v, want tsc, mypy and cargo", runs(t, log))
	}
	slices.SortFunc(all, func(a, b [2]float64) int { return int((a[0] - b[0]) * 1e9) })
	for i := 1; i < len(all); i++ {
		if all[i][0] < all[i-1][1] {
			t.Errorf("heavy checkers overlap: %v", runs(t, log))
		}
	}
}

// TestNextRerunsWhatTheFixTouched: after a fix of a .md file only, no Go
// check and no project checker runs again and their signals carry over;
// a fix of a .py file reruns mypy only of those; one of a .go file
// reruns the Go checks.
func TestNextRerunsWhatTheFixTouched(t *testing.T) {
	needGo(t)
	r := newRepo(t)
	log := fakeTools(t, r, "0", "staticcheck")
	r.write("go.mod", "module example.com/app\n\ngo 1.21\n")
	r.write("main.go", "package main\n\nfunc main() {}\n")
	r.write("README.md", "# app\n")
	r.write("a.py", "x = 1\n")
	r.commit("base")
	r.write("main.go", "package main\n\nfunc main() { println(1) }\n")
	r.write("a.py", "x = 2\n")
	prev, _ := r.detect(Request{Uncommitted: true, Checks: true, Contain: contained})
	count := func() map[string]int {
		n := map[string]int{}
		for tool, rs := range runs(t, log) {
			n[tool] = len(rs)
		}
		return n
	}
	if diff := cmp.Diff(map[string]int{"tsc": 1, "mypy": 1, "cargo": 1, "staticcheck": 1}, count()); diff != "" {
		t.Fatalf("runs at the start (-want +got):\n%s", diff)
	}
	next := func(want map[string]int) Context {
		t.Helper()
		c, _, _, err := Next(context.Background(), r.dir, prev, Request{Contain: contained})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, count()); diff != "" {
			t.Errorf("runs (-want +got):\n%s", diff)
		}
		return c
	}
	r.write("README.md", "# app\n\nDocumented.\n")
	c := next(map[string]int{"tsc": 1, "mypy": 1, "cargo": 1, "staticcheck": 1})
	for _, s := range prev.Signals {
		if s.Tool == "git diff --check" {
			continue
		}
		if i := slices.IndexFunc(c.Signals, func(n Signal) bool { return n.Tool == s.Tool }); i < 0 || !cmp.Equal(s, c.Signals[i]) {
			t.Errorf("%s after a .md fix: %+v, want it carried over: %+v", s.Tool, c.Signals, s)
		}
	}
	prev = c
	r.write("a.py", "x = 3\n")
	prev = next(map[string]int{"tsc": 1, "mypy": 2, "cargo": 1, "staticcheck": 1})
	r.write("main.go", "package main\n\nfunc main() { println(2) }\n")
	c = next(map[string]int{"tsc": 1, "mypy": 2, "cargo": 1, "staticcheck": 2})
	if i := slices.IndexFunc(c.Signals, func(s Signal) bool { return s.Tool == "go vet" }); i < 0 || c.Signals[i].Status != "clean" {
		t.Errorf("go vet after a .go fix: %+v", c.Signals)
	}
}

// TestStoppedGoCheckLeavesNoWork: go build stopped by the budget on a cold
// build cache is killed, and a killed go command leaves its $WORK
// directory behind; GOTMPDIR puts it where the checks remove it.
func TestStoppedGoCheckLeavesNoWork(t *testing.T) {
	needGo(t)
	// Not t.TempDir: the killed go command's compilers may still write
	// for a moment, and a failed clean-up would fail the test.
	tmp, err := os.MkdirTemp("", "whetstone-test-tmp-*")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	t.Setenv("TMPDIR", tmp)
	t.Setenv("GOCACHE", filepath.Join(tmp, "cache"))
	r := newRepo(t)
	r.write("go.mod", "module example.com/app\n\ngo 1.21\n")
	r.write("main.go", "package main\n\nimport \"net/http\"\n\nfunc main() { http.ListenAndServe(\":0\", nil) }\n")
	r.commit("base")
	r.write("main.go", "package main\n\nimport \"net/http\"\n\nfunc main() { _ = http.ListenAndServe(\":0\", nil) }\n")
	got := r.signals(Request{Budget: 500 * time.Millisecond})
	if s := got["go build"]; s.Status != "skipped" || !strings.HasPrefix(s.Output, "not finished") {
		t.Fatalf("go build on a cold cache within 500ms: %+v, want not finished", s)
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "*", "go-build*"))
	more, _ := filepath.Glob(filepath.Join(tmp, "go-build*"))
	if left = append(left, more...); len(left) > 0 {
		t.Errorf("the stopped go command left its work directory: %v", left)
	}
}
