package inspect_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/whetstone-dev/whetstone/internal/inspect"
)

// fixtureAt is the first run's creation time.
var fixtureAt = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

// TestStatsRunsLatestFirst: stats lists what each run cost, the latest ten
// newest first, and says how many it left out; a run whose tokens were not
// counted says so rather than 0.
func TestStatsRunsLatestFirst(t *testing.T) {
	st := inspect.Stats{Schema: inspect.StatsSchema, Runs: 12}
	for i := range 12 {
		r := inspect.RunStats{ID: fmt.Sprintf("sess-%02d-1", i), Created: fixtureAt.Add(time.Duration(i) * time.Hour), Phase: "done",
			Verdict: "APPROVE", Iterations: 2, Seconds: 90}
		if i%2 == 0 {
			tokens := 1000 * (i + 1)
			r.Tokens = &tokens
		}
		st.PerRun = append(st.PerRun, r)
	}
	text := st.Text(false)
	_, runs, ok := strings.Cut(text, "\nRuns (the latest 10 of 12)\n")
	if !ok {
		t.Fatalf("no runs section:\n%s", text)
	}
	lines := strings.Split(strings.TrimSuffix(runs, "\n"), "\n")
	if len(lines) != 11 || !strings.HasPrefix(lines[1], "  sess-11-1  2026-11-20 21:00  DONE APPROVE") || !strings.HasPrefix(lines[10], "  sess-02-1 ") {
		t.Fatalf("runs section: want a header and sess-11-1 down to sess-02-1:\n%s", runs)
	}
	if !strings.HasSuffix(lines[1], "not counted") || !strings.HasSuffix(lines[2], " 11.0k") {
		t.Errorf("tokens: %q, %q; want not counted and 11.0k", lines[1], lines[2])
	}
}
