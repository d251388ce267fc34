package app

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/whetstone-dev/whetstone/internal/loop"
	"github.com/whetstone-dev/whetstone/internal/review"
)

// BenchmarkAudit is what a concluded review round adds to the concluding
// hook: a rounds.md section and an analytics record, with analytics.jsonl
// one record short of full (the lines are counted under the lock, the
// costliest case short of a rotation), for a round of five reviewers and
// 50 merged findings.
func BenchmarkAudit(b *testing.B) {
	root := b.TempDir()
	proj := Project{Root: root}
	if err := os.MkdirAll(proj.runDir("sess-a-1"), 0o755); err != nil {
		b.Fatal(err)
	}
	a := &App{Now: time.Now, Getenv: func(string) string { return "" }, Log: io.Discard}
	names := []string{"critic", "pedant", "witness", "security-reviewer", "silent-failure-hunter"}
	t := roundTrace{iteration: 1, names: names, statuses: map[string]string{}, tokens: map[string]int{}, started: time.Now()}
	var round []review.Merged
	for i := range 50 {
		round = append(round, review.Merged{ID: fmt.Sprintf("F-%04d", i+1), Status: review.StatusOpen, New: true, Blocking: true,
			Reviewers: names[:2], Finding: review.Finding{Severity: "high", Confidence: 90, File: "internal/app/run.go", Line: 10 * i, Title: "A finding title of a typical length for a review"}})
	}
	for _, n := range names {
		t.statuses[n], t.tokens[n] = loop.Reported, 40000
	}
	r := &loop.Run{ID: "sess-a-1", Phase: loop.Fix, Settings: loop.Settings{Depth: "standard"}, Roster: names, Rounds: 1}
	e := &loop.Event{Round: round}
	line := bytes.Repeat([]byte("x"), 600)
	full := bytes.Repeat(append(line, '\n'), maxAnalyticsLines-1)
	path := proj.dir("analytics.jsonl")
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		if err := os.WriteFile(path, full, 0o644); err != nil {
			b.Fatal(err)
		}
		_ = os.Remove(filepath.Join(proj.runDir("sess-a-1"), "rounds.md"))
		b.StartTimer()
		a.audit(proj, r, t, e, "fix", time.Now())
	}
}
