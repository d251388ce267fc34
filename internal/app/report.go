package app

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/whetstone-dev/whetstone/internal/loop"
	"github.com/whetstone-dev/whetstone/internal/review"
	"github.com/whetstone-dev/whetstone/internal/scope"
)

// Verdict is verdict.json: one review round's merged findings and outcome.
type Verdict struct {
	Schema    string            `json:"schema"`
	Run       string            `json:"run_id"`
	Iteration int               `json:"iteration"`
	Reviewers map[string]string `json:"reviewers"` // reviewer → reported | failed
	Findings  []review.Merged   `json:"findings"`
	Blocking  []string          `json:"blocking"`
	Verdict   string            `json:"verdict"`
	Decision  string            `json:"decision"` // the transition rule that fired
	Next      loop.Phase        `json:"next_phase"`
}

func (a *App) writeVerdict(dir string, r *loop.Run, iteration int, statuses map[string]string, round []review.Merged, rule string) error {
	v := Verdict{Schema: review.SchemaVerdict, Run: r.ID, Iteration: iteration, Reviewers: statuses,
		Findings: round, Blocking: []string{}, Decision: rule, Next: r.Phase}
	v.Verdict = review.Approve
	for _, m := range round {
		if m.Status != review.StatusDisproved {
			v.Verdict = review.Worst(v.Verdict, review.Judge(m.Severity, m.Confidence, r.Settings.ConfidenceThreshold, m.Blocking, m.PreExisting))
		}
		if m.Blocking {
			v.Blocking = append(v.Blocking, m.ID)
		}
	}
	if v.Findings == nil {
		v.Findings = []review.Merged{}
	}
	return writeFile(filepath.Join(dir, "verdict.json"), marshal(v))
}

// maxAnalytics is where analytics.jsonl is rotated to analytics.jsonl.1.
const maxAnalytics = 1000

// analytics appends one record per review round. It never fails the hook:
// losing a statistics line must not stop a review.
func (a *App) analytics(proj Project, r *loop.Run, iteration int, round []review.Merged, rule string, now time.Time) {
	path := proj.dir("analytics.jsonl")
	if data, err := os.ReadFile(path); err == nil && bytes.Count(data, []byte("\n")) >= maxAnalytics {
		_ = os.Rename(path, path+".1")
	}
	blocking := 0
	for _, m := range round {
		if m.Blocking {
			blocking++
		}
	}
	line, _ := json.Marshal(map[string]any{
		"at": now.UTC().Format(time.RFC3339), "run_id": r.ID, "iteration": iteration, "depth": r.Settings.Depth,
		"reviewers": len(r.Roster), "findings": len(round), "blocking": blocking, "decision": rule, "phase": r.Phase,
	})
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintf(a.Log, "analytics: %v\n", err)
		return
	}
	defer f.Close()
	_, _ = f.Write(append(line, '\n'))
}

// finish writes a finished run's report.md and report.json.
func (a *App) finish(proj Project, r *loop.Run) error {
	dir := proj.runDir(r.ID)
	data := marshal(map[string]any{
		"schema": "whetstone.report/v1", "run_id": r.ID, "phase": r.Phase, "stop_reason": r.StopReason,
		"verdict": r.Verdict, "iterations": r.Iteration, "settings": r.Settings, "reviewers": r.Roster,
		"findings": r.Findings, "history": r.History,
	})
	if err := writeFile(filepath.Join(dir, "report.json"), data); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, "report.md"), []byte(Markdown(r, proj.Change(r.ID))))
}

// Change returns a run's context.json, or the zero Context when it cannot
// be read: a report is still worth writing without it.
func (p Project) Change(id string) scope.Context {
	c, _ := loadContext(p.runDir(id))
	return c
}

// Markdown renders a run as a human report: the verdict, what was reviewed
// (and what triage skipped), every finding, the history.
func Markdown(r *loop.Run, change scope.Context) string {
	var b strings.Builder
	w := bufio.NewWriter(&b)
	fmt.Fprintf(w, "# whetstone review %s\n\n", r.ID)
	fmt.Fprintf(w, "**Verdict: %s** — ", r.Verdict)
	if r.Phase == loop.Done {
		fmt.Fprintf(w, "converged after %d iteration(s).\n\n", r.Iteration)
	} else {
		fmt.Fprintf(w, "stopped (%s) at iteration %d.\n\n", r.StopReason, r.Iteration)
	}
	if r.Error != "" {
		fmt.Fprintf(w, "Error: %s\n\n", r.Error)
	}
	fmt.Fprintf(w, "Depth %s · reviewers: %s\n\n", r.Settings.Depth, strings.Join(r.Roster, ", "))
	if change.Description != "" {
		fmt.Fprintf(w, "Reviewed: %s; %d file(s).\n\n", change.Description, len(change.Files))
	}
	skipped := 0
	for _, f := range change.Files {
		if f.Triage == "skip" {
			fmt.Fprintf(w, "- skipped by triage: `%s` (%s)\n", f.Path, f.TriageReason)
			skipped++
		}
	}
	if skipped > 0 {
		w.WriteString("\n")
	}
	if len(r.Findings) == 0 {
		w.WriteString("No findings.\n")
	} else {
		w.WriteString("| id | status | severity | conf. | location | title | reviewers | fixer |\n|---|---|---|---|---|---|---|---|\n")
		for _, e := range r.Findings {
			status := e.Status
			if e.PreExisting {
				status += " (pre-existing)"
			}
			fmt.Fprintf(w, "| %s | %s | %s | %d | `%s:%d` | %s | %s | %s |\n", e.ID, status, e.Severity, e.Confidence,
				e.File, e.Line, strings.ReplaceAll(e.Title, "|", "\\|"), strings.Join(e.Reviewers, ", "), e.Claim)
		}
	}
	w.WriteString("\n## History\n\n")
	for _, s := range r.History {
		fmt.Fprintf(w, "- %s · iteration %d · %s: %s\n", s.At.UTC().Format(time.RFC3339), s.Iteration, s.Phase, s.Note)
	}
	w.Flush()
	return b.String()
}
