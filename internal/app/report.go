package app

import (
	"bufio"
	"fmt"
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
	// Tampered lists what changed in the project during the round, which no
	// read-only agent may do; a run with such changes cannot approve.
	Tampered []scope.Change `json:"tampered,omitempty"`
	// Dropped counts the round's findings past review.MaxRoundFindings,
	// the least severe, which were left out.
	Dropped int `json:"dropped,omitempty"`
}

func (a *App) writeVerdict(dir string, r *loop.Run, iteration int, statuses map[string]string, e *loop.Event, rule string, tampered []scope.Change) error {
	round := e.Round
	v := Verdict{Schema: review.SchemaVerdict, Run: r.ID, Iteration: iteration, Reviewers: statuses,
		Findings: round, Blocking: []string{}, Decision: rule, Next: r.Phase, Tampered: tampered, Dropped: e.Dropped}
	v.Verdict = review.Approve
	for _, m := range round {
		if m.Status != review.StatusDisproved {
			v.Verdict = review.Worst(v.Verdict, review.Judge(m.Severity, m.Confidence, r.Settings.ConfidenceThreshold, m.Blocking, m.PreExisting))
		}
		if m.Blocking {
			v.Blocking = append(v.Blocking, m.ID)
		}
	}
	if len(tampered) > 0 && (v.Verdict == review.Approve || v.Verdict == review.ApproveWithNotes) {
		v.Verdict = review.RequestChanges
	}
	if v.Findings == nil {
		v.Findings = []review.Merged{}
	}
	return writeFile(filepath.Join(dir, "verdict.json"), marshal(v))
}

// finish writes a finished run's report.md and report.json.
func (a *App) finish(proj Project, r *loop.Run) error {
	if err := proj.LoadCold(r); err != nil {
		// The report is still written, from what the state says.
		fmt.Fprintf(a.Log, "run %s: report without its ledger: %v\n", r.ID, err)
	}
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
// (and what triage skipped), every finding, the history. Every text it did
// not write itself — titles and files from reviewers, paths and branch names
// from the repository, notes — goes through review.InlineMD, EscapeMD or
// CodeMD: it renders as itself and never starts a line, so it cannot pass
// for a heading, a verdict, a list item, a link, HTML or a table row.
func Markdown(r *loop.Run, change scope.Context) string {
	var b strings.Builder
	w := bufio.NewWriter(&b)
	md := review.InlineMD
	fmt.Fprintf(w, "# whetstone review %s\n\n", md(r.ID))
	fmt.Fprintf(w, "**Verdict: %s** — ", md(r.Verdict))
	if r.Phase == loop.Done {
		fmt.Fprintf(w, "converged after %d iteration(s).\n\n", r.Iteration)
	} else {
		fmt.Fprintf(w, "stopped (%s) at iteration %d.\n\n", md(r.StopReason), r.Iteration)
	}
	if r.Error != "" {
		fmt.Fprintf(w, "Error: %s\n\n", review.EscapeMD(r.Error))
	}
	fmt.Fprintf(w, "Depth %s · reviewers: %s\n\n", md(r.Settings.Depth), mdList(r.Roster))
	if change.Description != "" {
		fmt.Fprintf(w, "Reviewed: %s; %d file(s).\n\n", review.EscapeMD(change.Description), len(change.Files))
	}
	skipped := 0
	for _, f := range change.Files {
		if f.Triage == "skip" {
			fmt.Fprintf(w, "- skipped by triage: %s (%s)\n", review.CodeMD(f.Path), md(f.TriageReason))
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
			fmt.Fprintf(w, "| %s | %s | %s | %d | %s | %s | %s | %s |\n", md(e.ID), md(status), md(e.Severity), e.Confidence,
				mdCell(review.CodeMD(fmt.Sprintf("%s:%d", e.File, e.Line))), md(e.Title), mdList(e.Reviewers), md(e.Claim))
		}
	}
	w.WriteString("\n## History\n\n")
	for _, s := range r.History {
		fmt.Fprintf(w, "- %s · iteration %d · %s: %s\n", s.At.UTC().Format(time.RFC3339), s.Iteration, md(string(s.Phase)), review.EscapeMD(s.Note))
	}
	w.Flush()
	return b.String()
}

// mdList lists names for Markdown, each made safe.
func mdList(list []string) string {
	out := make([]string, len(list))
	for i, n := range list {
		out[i] = review.InlineMD(n)
	}
	return strings.Join(out, ", ")
}

// mdCell makes a code span safe in a table cell: GitHub splits a row at every
// unescaped "|" before it parses spans, and un-escapes "\|" inside them.
func mdCell(code string) string { return strings.ReplaceAll(code, "|", `\|`) }
