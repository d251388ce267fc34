package report_test

import (
	"testing"

	"github.com/whetstone-dev/whetstone/internal/loop"
	"github.com/whetstone-dev/whetstone/internal/report"
	"github.com/whetstone-dev/whetstone/internal/review"
	"github.com/whetstone-dev/whetstone/internal/scope"
)

// TestWebRemote: origin's URL on GitHub or GitLab, https or ssh, gives the
// repository's web address; anything else gives none (no link is better
// than a wrong one).
func TestWebRemote(t *testing.T) {
	for remote, want := range map[string]string{
		"https://github.com/o/r.git":            "https://github.com/o/r",
		"https://github.com/o/r":                "https://github.com/o/r",
		"git@github.com:o/r.git":                "https://github.com/o/r",
		"ssh://git@github.com/o/r.git":          "https://github.com/o/r",
		"https://user:token@github.com/o/r.git": "https://github.com/o/r",
		"git@gitlab.com:group/sub/proj.git":     "https://gitlab.com/group/sub/proj",
		"https://gitlab.com/group/proj":         "https://gitlab.com/group/proj",
		"https://github.com/o/r/extra":          "",
		"https://example.org/o/r.git":           "",
		"https://github.com.evil.org/o/r.git":   "",
		"git@github.com:o/r)(x.git":             "",
		"https://github.com/o/..":               "",
		"/srv/git/r.git":                        "",
		"":                                      "",
	} {
		if got, ok := report.WebRemote(remote); got != want || ok != (want != "") {
			t.Errorf("WebRemote(%q) = %q, %v; want %q", remote, got, ok, want)
		}
	}
}

// TestCodeInTheReport: links name the head commit in each host's form, the
// excerpt is read where the fixer's edits moved the lines and is bounded,
// and a fixed finding carries the fixer's hunk touching its lines only.
func TestCodeInTheReport(t *testing.T) {
	const head = "0123456789abcdef0123456789abcdef01234567"
	s := loop.Settings{Depth: "standard", MaxIterations: 5, ConfidenceThreshold: 80, BlockingSeverity: "high"}
	e := func(id, status string, line, end int) review.Entry {
		return review.Entry{ID: id, Status: status, Severity: "high", Confidence: 90, Category: "correctness", File: "a b.go", Line: line, EndLine: end,
			Title: id, Reviewers: []string{"critic"}, Blocking: status != review.StatusResolved, First: 1, Last: 1}
	}
	r := &loop.Run{ID: "sess-k-1", Phase: loop.Stopped, StopReason: "max_iterations", Verdict: review.RequestChanges, Iteration: 2, Settings: s,
		Created: at, Updated: at, Findings: []review.Entry{e("F-0001", review.StatusOpen, 20, 40), e("F-0002", review.StatusResolved, 2, 0)}}
	fix := &review.FixReport{Results: []review.FixResult{{ID: "F-0002", Status: "fixed"}}}
	patch := "diff --git a/a b.go b/a b.go\n--- a/a b.go\n+++ b/a b.go\n@@ -1,3 +1,4 @@\n one\n-two\n+TWO\n+extra\n three\n@@ -50,2 +51,2 @@\n x\n-y\n+Y\n"
	var file []byte
	for i := 1; i <= 60; i++ {
		file = append(file, []byte("line "+string(rune('0'+i/10))+string(rune('0'+i%10))+"\n")...)
	}
	var read string
	code := report.Code{Web: "https://gitlab.com/g/p", Tree: 2, FixPatches: map[int][]byte{2: []byte(patch)},
		Read: func(path string) ([]byte, error) { read = path; return file, nil }}
	rep := report.Build(report.Input{Run: r, Change: scope.Context{Head: head}, Iterations: []report.Iteration{{Fix: fix}, {}}, Code: code, Now: at})
	open, fixed := rep.Findings[0], rep.Findings[1]
	if want := "https://gitlab.com/g/p/-/blob/" + head + "/a%20b.go#L20-40"; open.Link != want {
		t.Errorf("link = %q, want %q", open.Link, want)
	}
	if ex := open.Excerpt; read != "a b.go" || ex == nil || ex.Line != 21 || ex.EndLine != 41 ||
		ex.Text != "line 21\nline 22\nline 23\nline 24\nline 25\nline 26\nline 27\nline 28\n… 13 more lines\n" {
		t.Errorf("excerpt = %+v (read %q), want lines 21-41 (moved by one), eight shown", ex, read)
	}
	if want := "@@ -1,3 +1,4 @@\n one\n-two\n+TWO\n+extra\n three\n"; fixed.FixHunks != want || fixed.Excerpt != nil {
		t.Errorf("fix hunks = %q, excerpt %+v; want %q and none", fixed.FixHunks, fixed.Excerpt, want)
	}
	validReport(t, rep.JSON())
}
