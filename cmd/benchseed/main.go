// Command benchseed gives scripts/bench a run with history: in the project
// in the working directory, the session's run is driven through review
// rounds of 5 reviewers × 40 new blocking findings each (the report cap is
// the validator's, which seeding does not call) and fix phases, until the
// ledger holds at least -entries findings, and is left in the fix phase.
// With -runs it also creates that many finished old runs (copies of a
// small one) for the O(1) checks.
//
//	benchseed -session S -entries N [-runs K]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/client"
	"github.com/whetstone-dev/whetstone/internal/loop"
	"github.com/whetstone-dev/whetstone/internal/review"
)

func main() {
	session := flag.String("session", "", "the session that owns the run")
	entries := flag.Int("entries", 40, "ledger entries to reach")
	runs := flag.Int("runs", 0, "old runs to add")
	flag.Parse()
	if err := seed(*session, *entries, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "benchseed:", err)
		os.Exit(1)
	}
}

func seed(session string, entries, runs int) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	a := &app.App{Now: time.Now, Getenv: os.Getenv, Log: os.Stderr}
	proj, err := a.Open(wd)
	if err != nil {
		return err
	}
	p, err := client.Parse(fmt.Appendf(nil, `{"session_id":%q,"hook_event_name":"UserPromptSubmit","cwd":%q,"prompt":"/whetstone:review --reviewers critic,pedant,witness,security-reviewer,silent-failure-hunter"}`, session, wd))
	if err != nil {
		return err
	}
	if _, err := a.Hook("user-prompt-submit", p); err != nil {
		return err
	}
	id := proj.RunOf(session)
	for round := 0; ; round++ {
		r, err := a.Update(proj, id, func(r *loop.Run) error {
			if err := proj.LoadCold(r); err != nil {
				return err
			}
			if r.Phase == loop.Fix {
				r.Apply(&loop.Event{Kind: loop.FixDone, Now: time.Now(), Fix: &review.FixReport{}})
			}
			r.Apply(&loop.Event{Kind: loop.ReviewDone, Now: time.Now(), Reports: reports(round)})
			return nil
		})
		if err != nil {
			return err
		}
		if r.Phase != loop.Fix {
			return fmt.Errorf("round %d left the run in %s (%s)", round, r.Phase, r.StopReason)
		}
		if len(r.Findings) >= entries {
			fmt.Printf("%s: iteration %d, %d ledger entries\n", id, r.Iteration, len(r.Findings))
			break
		}
	}
	return oldRuns(proj, id, runs)
}

// reports is one round: five reviewers, 40 findings each, all new.
func reports(round int) []review.Report {
	var out []review.Report
	for k, name := range []string{"critic", "pedant", "witness", "security-reviewer", "silent-failure-hunter"} {
		rep := review.Report{Reviewer: name, Verdict: "issues_found"}
		for j := 0; j < 40; j++ {
			rep.Findings = append(rep.Findings, review.Finding{Severity: "high", Confidence: 90, Category: "correctness",
				File: fmt.Sprintf("internal/pkg%d/file%02d.go", round, k*8+j%8), Line: 10 + 30*j, EndLine: 12 + 30*j,
				Title:       fmt.Sprintf("round %d %s distinct problem number %d in handling of input", round, name, j),
				Description: "What is wrong and why it matters.", Evidence: "the code", Suggestion: "fix it"})
		}
		out = append(out, rep)
	}
	return out
}

// oldRuns copies the seeded run's directory n times as finished runs of
// other sessions, so scans would show in the timings.
func oldRuns(proj app.Project, id string, n int) error {
	if n == 0 {
		return nil
	}
	src := filepath.Join(proj.Root, ".whetstone", "runs", id, "state.json")
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		dir := filepath.Join(proj.Root, ".whetstone", "runs", fmt.Sprintf("0ld%05d-1", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		// A copied state does not verify under its new name: whatever
		// reads it pays the read, which is what a scan would cost.
		if err := os.WriteFile(filepath.Join(dir, "state.json"), data, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("%d old runs\n", n)
	return nil
}
