package shell

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fuzzPolicy returns policies over a small project and a protected key.
func fuzzPolicy(tb testing.TB) (ro, fixer Policy, key string) {
	dir, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	root, tmp := filepath.Join(dir, "proj"), filepath.Join(dir, "tmp")
	key = filepath.Join(dir, "state", "whetstone", "key")
	for _, d := range []string{root, tmp, filepath.Dir(key)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	ro = Policy{Mode: ReadOnly, Root: root, TempDir: tmp, Protected: []string{key, filepath.Dir(key)}}
	fixer = ro
	fixer.Mode = Fixer
	return ro, fixer, key
}

// FuzzCheck checks that Check never panics, never lets a command naming the
// key through, and allows the fixer whatever it allows read-only agents.
func FuzzCheck(f *testing.F) {
	for _, row := range writeShaped {
		f.Add(row.cmd)
	}
	for _, cmd := range readOnly {
		f.Add(cmd)
	}
	ro, fixer, key := fuzzPolicy(f)
	f.Fuzz(func(t *testing.T, cmd string) {
		r := Check(cmd, ro)
		if r == "" && strings.Contains(strings.ToLower(cmd), strings.ToLower(key)) {
			t.Errorf("Check(%q) allowed a command naming the key", cmd)
		}
		if r == "" {
			if rf := Check(cmd, fixer); rf != "" {
				t.Errorf("Check(%q) allowed read-only agents but not the fixer: %s", cmd, rf)
			}
		}
	})
}

// TestReadOnlyAllowedToFixer checks that the fixer may run whatever
// reviewers may.
func TestReadOnlyAllowedToFixer(t *testing.T) {
	p := newProject(t)
	pol := p.policy(Fixer)
	for _, cmd := range readOnly {
		if r := Check(p.expand(cmd), pol); r != "" {
			t.Errorf("fixer: Check(%q) = %q; want it allowed", cmd, r)
		}
	}
}

// TestCheckLinear checks that the work Check does grows linearly with the
// command, for shapes that could make a careless walk quadratic or blow the
// parser's stack: long pipelines and lists, many words, deep nesting.
func TestCheckLinear(t *testing.T) {
	if raceEnabled {
		t.Skip("timing under the race detector says nothing; make unit runs this test without it")
	}
	ro, _, _ := fuzzPolicy(t)
	shapes := map[string]func(n int) string{
		"pipeline":   func(n int) string { return strings.Repeat("true|", n/5) + "true" },
		"and-list":   func(n int) string { return strings.Repeat("true && ", n/8) + "true" },
		"words":      func(n int) string { return "echo " + strings.Repeat("a ", n/2) },
		"arithmetic": func(n int) string { return "i=1; echo $((" + strings.Repeat("i+", n/2) + "1))" },
		"substitute": func(n int) string { return "echo " + strings.Repeat("$(true) ", n/8) },
		"nested":     func(n int) string { return strings.Repeat("$(", n/3) + "true" + strings.Repeat(")", n/3) },
		"nested-if": func(n int) string {
			return strings.Repeat("if true; then ", n/19) + "true" + strings.Repeat("; fi", n/19)
		},
		"braces":      func(n int) string { return "echo " + strings.Repeat("{a,b}", n/5) },
		"inline":      func(n int) string { return strings.Repeat("eval ", n/5) + "true" },
		"bash-c":      func(n int) string { return "bash -c '" + strings.Repeat("true; ", n/6) + "'" },
		"redirects":   func(n int) string { return "true" + strings.Repeat(" >/dev/null", n/11) },
		"cd-and-git":  func(n int) string { return strings.Repeat("cd . && git status; ", n/20) },
		"long-word":   func(n int) string { return "echo " + strings.Repeat("x", n) },
		"quoted-word": func(n int) string { return "echo \"" + strings.Repeat("$x", n/2) + "\"" },
	}
	for name, shape := range shapes {
		small, big := shape(100<<10), shape(1<<20)
		ts := timeCheck(small, ro)
		tb := timeCheck(big, ro)
		t.Logf("%s: %v %v", name, ts, tb)
		if tb > 5*time.Second {
			t.Errorf("%s: Check on %d bytes took %v", name, len(big), tb)
		}
		// Linear is 10 times; quadratic would be 100. A loaded machine
		// has been seen at 35.
		if ratio := float64(tb) / float64(max(ts, time.Millisecond)); ratio > 45 {
			t.Errorf("%s: 10 times the input took %.0f times as long (%v, %v)", name, ratio, ts, tb)
		}
	}
}

// timeCheck is the fastest of three runs of Check, so that a busy machine
// does not make a linear walk look quadratic.
func timeCheck(cmd string, p Policy) time.Duration {
	best := time.Duration(1<<63 - 1)
	for range 3 {
		start := time.Now()
		Check(cmd, p)
		best = min(best, time.Since(start))
	}
	return best
}
