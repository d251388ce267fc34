package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/whetstone-dev/whetstone/internal/loop"
	"github.com/whetstone-dev/whetstone/internal/review"
	"github.com/whetstone-dev/whetstone/internal/scope"
	"github.com/whetstone-dev/whetstone/internal/snapshot"
)

// Verdict is what a report needs of one round's verdict.json.
type Verdict struct {
	Iteration int               `json:"iteration"`
	Reviewers map[string]string `json:"reviewers"`
	Findings  []review.Merged   `json:"findings"`
	Verdict   string            `json:"verdict"`
	Decision  string            `json:"decision"`
	Tampered  []snapshot.Change `json:"tampered,omitempty"`
	Dropped   int               `json:"dropped,omitempty"`
}

// Iteration is what a run directory holds for one iteration, as read.
type Iteration struct {
	Verdict    *Verdict                  // iter-N/verdict.json, nil when absent
	Reviews    map[string]*review.Report // iter-N/<reviewer>.json by reviewer
	Fix        *review.FixReport         // iter-N/fix.json
	Validation *review.ValidationReport  // iter-N/validation.json
}

// Input is everything a report is made from.
type Input struct {
	Version     string // whetstone's
	Run         *loop.Run
	Change      scope.Context
	Iterations  []Iteration // index 0 is iteration 1
	Unavailable []string
	Code        Code      // links, excerpts and fix hunks; the zero Code shows none
	Now         time.Time // the report's time: the duration of an active run ends here
}

// Build makes the report of a run.
func Build(in Input) *Report {
	r := in.Run
	s := r.Settings
	rep := &Report{
		Schema: Schema, Generator: "whetstone " + in.Version, RunID: r.ID, Phase: string(r.Phase),
		StopReason: r.StopReason, Error: r.Error, Depth: s.Depth, Iterations: r.Iteration,
		Settings: Settings{MaxIterations: s.MaxIterations, ConfidenceThreshold: s.ConfidenceThreshold,
			FixSeverity: s.FixSeverity, BlockingSeverity: s.BlockingSeverity, PreExistingBlocks: s.PreExistingBlocks},
		Started: r.Created.UTC(), Reviewers: nonNil(slices.Clone(r.Roster)), Tampered: r.Tampered,
		Unavailable: in.Unavailable, Findings: []Finding{}, Skipped: []Skipped{}, Timeline: []Round{}, History: []Step{},
	}
	end := in.Now
	switch r.Phase {
	case loop.Done:
		rep.State = Done
	case loop.Stopped:
		rep.State = Stopped
	default:
		rep.State = InProgress
	}
	if rep.State != InProgress {
		rep.Verdict = r.Verdict
		end = r.Updated
		if n := len(r.History); n > 0 {
			end = r.History[n-1].At // the step that ended the run
		}
		rep.Finished = end.UTC()
	}
	rep.Duration = max(0, int(end.Sub(r.Created).Seconds()))
	if s.BudgetTokens > 0 || r.Tokens > 0 {
		tokens := r.Tokens
		rep.Tokens = &tokens
	}
	c := in.Change
	rep.Scope = Scope{Description: c.Description, Mode: c.Mode, Base: c.Base, BaseRef: c.BaseRef, Branch: c.Branch, Head: c.Head, Files: len(c.Files)}
	for _, f := range c.Files {
		if f.Triage == "skip" {
			rep.Skipped = append(rep.Skipped, Skipped{Path: f.Path, Reason: f.TriageReason})
		}
	}
	for _, h := range r.History {
		rep.History = append(rep.History, Step{At: h.At.UTC(), Iteration: h.Iteration, Phase: string(h.Phase), Note: h.Note})
	}
	rep.Findings = findings(r, in.Iterations)
	attachCode(rep.Findings, in.Code, c.Head)
	rep.Timeline = timeline(in.Iterations)
	rep.Counts = counts(rep.Findings)
	rep.Summary = summary(rep)
	return rep
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// findings joins the ledger with the details of each finding's latest
// sighting and what the fixer, the validator and the reviewers said of it.
func findings(r *loop.Run, iters []Iteration) []Finding {
	details := map[string]review.Finding{}
	fixer := map[string]*Claim{}
	validation := map[string]*Claim{}
	checks := map[string][]FixCheck{}
	for i, it := range iters {
		n := i + 1
		if it.Verdict != nil {
			for _, m := range it.Verdict.Findings {
				if _, ok := details[m.ID]; !ok || !m.Kept {
					details[m.ID] = m.Finding // a finding kept open by fix checks keeps the description it was raised with
				}
			}
		}
		if it.Fix != nil {
			for _, res := range it.Fix.Results {
				fixer[res.ID] = &Claim{Iteration: n, Status: res.Status, Note: res.Note}
			}
		}
		if it.Validation != nil {
			for _, res := range it.Validation.Results {
				validation[res.ID] = &Claim{Iteration: n, Status: res.Status, Note: res.Note}
			}
		}
		for _, name := range slices.Sorted(maps.Keys(it.Reviews)) {
			for _, fc := range it.Reviews[name].FixChecks {
				checks[fc.ID] = append(checks[fc.ID], FixCheck{Iteration: n, Reviewer: name, Status: fc.Status, Note: fc.Note})
			}
		}
	}
	s := r.Settings
	out := make([]Finding, 0, len(r.Findings))
	for _, e := range r.Findings {
		d := details[e.ID]
		f := Finding{ID: e.ID, Status: e.Status, Blocking: e.Open() && e.Blocking, PreExisting: e.PreExisting,
			Severity: e.Severity, Confidence: e.Confidence, Category: e.Category, Rule: e.Rule,
			File: e.File, Line: e.Line, EndLine: max(e.EndLine, e.Line), Title: e.Title,
			Description: d.Description, Evidence: d.Evidence, Suggestion: d.Suggestion,
			Reviewers: nonNil(slices.Clone(e.Reviewers)), FirstIteration: e.First, LastIteration: e.Last,
			Fixer: fixer[e.ID], FixChecks: checks[e.ID], Validation: validation[e.ID]}
		f.Disposition, f.Reason = dispose(f, s)
		out = append(out, f)
	}
	return out
}

// dispose says where a finding stands, and why it does not block.
func dispose(f Finding, s loop.Settings) (string, string) {
	switch {
	case f.Status == review.StatusDisproved:
		why := "the validator disproved it"
		if f.Validation != nil && f.Validation.Note != "" {
			why += ": " + f.Validation.Note
		}
		return Disproved, why
	case f.Status == review.StatusWithdrawn:
		return Withdrawn, withdrawal(f)
	case f.Status == review.StatusResolved && !disputed(f):
		return Fixed, ""
	case f.Blocking:
		return Blocking, ""
	case f.PreExisting:
		return PreExisting, fmt.Sprintf("pre-existing: its lines are more than %d lines away from every changed hunk, so the change did not introduce it", review.PreExistingMargin)
	case disputed(f):
		why := "the fixer " + f.Fixer.Status + " it"
		if f.Fixer.Note != "" {
			why += ": " + f.Fixer.Note
		}
		return Disputed, why
	case f.Confidence < s.ConfidenceThreshold:
		return BelowThreshold, fmt.Sprintf("confidence %d is below the threshold of %d", f.Confidence, s.ConfidenceThreshold)
	case f.Severity == "info":
		return Note, "info findings never block"
	case f.Category == review.TestsCategory:
		return Note, fmt.Sprintf("a tests finding (a missing or weak test) blocks only at the blocking severity (%s) or above", s.BlockingSeverity)
	case f.FirstIteration > 1:
		return Note, fmt.Sprintf("first raised in iteration %d below the blocking severity (%s)", f.FirstIteration, s.BlockingSeverity)
	case s.FixSeverity != "":
		return Note, fmt.Sprintf("below the fix severity (%s): in iteration 1 only a finding at %s or above starts a fix round", s.FixSeverity, s.FixSeverity)
	}
	return Note, "it does not meet the blocking rule"
}

// disputed reports whether the fixer's latest word on a finding is that it
// is wrong or must wait: such a finding is never reported as fixed.
func disputed(f Finding) bool {
	return f.Fixer != nil && (f.Fixer.Status == "disputed" || f.Fixer.Status == "deferred")
}

// withdrawal says who let a withdrawn finding go and why (the fix checks of
// the last round that checked it), then the fixer's word they accepted.
func withdrawal(f Finding) string {
	last := 0
	for _, c := range f.FixChecks {
		last = max(last, c.Iteration)
	}
	var parts []string
	for _, c := range f.FixChecks {
		if c.Iteration != last {
			continue
		}
		part := fmt.Sprintf("%s withdrew it in iteration %d", c.Reviewer, c.Iteration)
		if c.Status != review.CheckWithdrawn {
			part = fmt.Sprintf("%s answered %s in iteration %d", c.Reviewer, c.Status, c.Iteration)
		}
		if c.Note != "" {
			part += " (" + c.Note + ")"
		}
		parts = append(parts, part)
	}
	why := strings.Join(parts, "; ")
	if why == "" {
		why = "its reviewers withdrew it"
	}
	if f.Fixer != nil {
		why += ", accepting that the fixer " + f.Fixer.Status + " it"
		if f.Fixer.Note != "" {
			why += ": " + f.Fixer.Note
		}
	}
	return why
}

// timeline sums up each iteration that has a finished phase.
func timeline(iters []Iteration) []Round {
	out := []Round{}
	for i, it := range iters {
		if it.Verdict == nil && it.Fix == nil && it.Validation == nil {
			continue // a round still under way, or never finished
		}
		rd := Round{Iteration: i + 1, Reviewers: []AgentStatus{}}
		if v := it.Verdict; v != nil {
			for _, name := range slices.Sorted(maps.Keys(v.Reviewers)) {
				rd.Reviewers = append(rd.Reviewers, AgentStatus{Name: name, Status: v.Reviewers[name]})
			}
			rd.Findings, rd.Dropped, rd.Decision, rd.Tampered = len(v.Findings), v.Dropped, v.Decision, len(v.Tampered)
			if slices.Contains([]string{review.Approve, review.ApproveWithNotes, review.RequestChanges, review.Block}, v.Verdict) {
				rd.Verdict = v.Verdict // verdict.json is not sealed: only a verdict is taken for one
			}
			for _, m := range v.Findings {
				if m.New {
					rd.New++
				}
				if m.Blocking {
					rd.Blocking++
				}
			}
		}
		if it.Validation != nil {
			rd.Validation = map[string]int{}
			for _, res := range it.Validation.Results {
				rd.Validation[res.Status]++
			}
		}
		if it.Fix != nil {
			rd.Fix = map[string]int{}
			for _, res := range it.Fix.Results {
				rd.Fix[res.Status]++
			}
		}
		out = append(out, rd)
	}
	return out
}

func counts(fs []Finding) Counts {
	c := Counts{Open: map[string]int{}, All: map[string]int{}, Dispositions: map[string]int{}}
	for _, s := range review.Severities {
		c.Open[s], c.All[s] = 0, 0
	}
	for _, d := range dispositionOrder {
		c.Dispositions[d] = 0
	}
	for _, f := range fs {
		c.All[f.Severity]++
		if f.Status == review.StatusOpen || f.Status == review.StatusReopened {
			c.Open[f.Severity]++
		}
		c.Dispositions[f.Disposition]++
	}
	return c
}

// summary is the report's 3–6 line summary, in plain text.
func summary(r *Report) []string {
	var lines []string
	d := r.Counts.Dispositions
	switch r.State {
	case InProgress:
		lines = append(lines, fmt.Sprintf("In progress: iteration %d of at most %d, %s phase; no verdict yet.", r.Iterations, r.Settings.MaxIterations, r.Phase))
	case Done:
		lines = append(lines, fmt.Sprintf("%s: converged after %s.", r.Verdict, review.Plural(r.Iterations, "iteration")))
	default:
		verdict := cmp.Or(r.Verdict, "No verdict") // aborted or ended by an error
		lines = append(lines, fmt.Sprintf("%s: stopped (%s) at iteration %d.", verdict, r.StopReason, r.Iterations))
	}
	what := r.Scope.Description
	if what == "" {
		what = "the change"
	}
	files := review.Plural(r.Scope.Files, "file")
	if n := len(r.Skipped); n > 0 {
		files += fmt.Sprintf(", %d skipped by triage", n)
	}
	// Only a finished review round has reviewed anything.
	reviewed := slices.ContainsFunc(r.Timeline, func(rd Round) bool { return len(rd.Reviewers) > 0 })
	scope := fmt.Sprintf("%s: %s; %s depth, %s", what, files, r.Depth, review.Plural(len(r.Reviewers), "reviewer"))
	switch {
	case r.State == InProgress && !reviewed:
		lines = append(lines, fmt.Sprintf("Under review, no round finished yet: %s.", scope))
	case r.State == InProgress:
		lines = append(lines, fmt.Sprintf("Under review: %s.", scope))
	case !reviewed:
		lines = append(lines, fmt.Sprintf("Not reviewed: the run ended before a review round finished. The change: %s.", scope))
	default:
		lines = append(lines, fmt.Sprintf("Reviewed %s.", scope))
	}
	if len(r.Findings) == 0 {
		lines = append(lines, "No findings.")
	} else {
		var parts []string
		for _, k := range []struct{ key, words string }{{Blocking, "blocking"}, {Fixed, "fixed"}, {Disputed, "disputed"}, {Withdrawn, "withdrawn"}, {Note, ""},
			{BelowThreshold, "below the threshold"}, {PreExisting, "pre-existing"}, {Disproved, "disproved"}} {
			switch n := d[k.key]; {
			case n > 0 && k.key == Note:
				parts = append(parts, review.Plural(n, "note"))
			case n > 0:
				parts = append(parts, fmt.Sprintf("%d %s", n, k.words))
			}
		}
		lines = append(lines, fmt.Sprintf("%s: %s.", capitalize(review.Plural(len(r.Findings), "finding")), strings.Join(parts, ", ")))
	}
	if n := d[Blocking]; n > 0 {
		worst := ""
		for _, f := range r.Findings {
			if f.Disposition == Blocking && (worst == "" || review.SeverityRank(f.Severity) < review.SeverityRank(worst)) {
				worst = f.Severity
			}
		}
		lines = append(lines, fmt.Sprintf("Still blocking: %s (the most severe: %s).", review.Plural(n, "finding"), worst))
	}
	took := fmt.Sprintf("Took %s", (time.Duration(r.Duration) * time.Second).String())
	if r.Tokens != nil {
		took += fmt.Sprintf(" and %d tokens", *r.Tokens)
	}
	lines = append(lines, took+".")
	if len(r.Tampered) > 0 || r.Error != "" {
		lines = append(lines, "The run cannot approve: "+cmp.Or(r.Error, review.Plural(len(r.Tampered), "change")+" made during read-only phases")+".")
	}
	return lines[:min(len(lines), 6)]
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
