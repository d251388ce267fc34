package loop

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/whetstone-dev/whetstone/internal/review"
)

// EventKind names what happened to a run.
type EventKind string

// The events a run reacts to. internal/app only reports them; every way a
// run moves is a row of the table below.
const (
	ReviewDone     EventKind = "review_done"     // the last report of a review round arrived
	ValidationDone EventKind = "validation_done" // the validator reported (or failed)
	FixDone        EventKind = "fix_done"        // the fixer reported (or failed)
	Idle           EventKind = "idle"            // the orchestrator ended its turn while the run needs it
	Tick           EventKind = "tick"            // any hook of the run: the time budget is checked
	Abort          EventKind = "abort"           // the user aborted the run
	Fail           EventKind = "fail"            // the run cannot go on: forged state, a change that cannot be computed
)

// Event is one thing that happened, with what the table needs to decide.
type Event struct {
	Kind       EventKind
	Now        time.Time
	Detail     string                   // Abort, Fail: why, in words
	Reports    []review.Report          // ReviewDone: the round's valid reports
	Diff       review.Diff              // ReviewDone: the change's lines and how the fixer moved them
	Validation *review.ValidationReport // ValidationDone: nil when the validator failed
	Fix        *review.FixReport        // FixDone: nil when the fixer failed
	Limit      int                      // Idle: consecutive Stop blocks the client honours

	Round   []review.Merged // ReviewDone: the round's merged findings, for verdict.json
	Dropped int             // ReviewDone: findings past review.MaxRoundFindings, left out
}

// outcome is where the run's findings stand after an event was observed.
type outcome struct {
	blocking []string // ids of open blocking findings, sorted
	failed   []string // reviewers of the last review round recorded as failed
}

func (o outcome) clean() bool { return len(o.blocking) == 0 && len(o.failed) == 0 }

// row is one line of the transition table: in phase (any active phase when
// empty), on event, the first row whose condition holds decides.
type row struct {
	phase Phase
	on    EventKind
	name  string
	when  func(r *Run, e *Event, o outcome) bool
	then  func(r *Run, e *Event, o outcome)
}

// table is every way a run moves (spec §2). Confirmation passes after a
// clean round do not count against max_iterations; a round with blocking
// findings on the last allowed iteration stops, since no review could verify
// another fix. A round in which a reviewer failed is never clean, also after
// the validator disproved every finding (deep depth).
var table = []row{
	{"", Abort, Aborted, always, stop(Aborted)},
	{"", Fail, Error, always, stop(Error)},
	{"", Tick, Budget, overTime, stop(Budget)},
	{"", Idle, NoProgress, func(r *Run, e *Event, _ outcome) bool { return r.StopBlocks >= max(e.Limit, 1) },
		func(r *Run, e *Event, _ outcome) {
			r.Stop(NoProgress, fmt.Sprintf("the orchestrator ended its turn %d times without dispatching the agents whetstone asked for", r.StopBlocks+1), e.Now)
		}},
	{"", Idle, "remind", always, func(r *Run, _ *Event, _ outcome) { r.StopBlocks++ }},

	{Review, ReviewDone, Budget, overBudget, stopOpen(Budget)},
	{Review, ReviewDone, "converged", converged, finish},
	{Review, ReviewDone, "confirm", isClean, confirm},
	{Review, ReviewDone, Stalled, func(r *Run, e *Event, o outcome) bool {
		return r.Settings.Depth != "deep" && stalled(r, e, o)
	}, stopOpen(Stalled)},
	{Review, ReviewDone, MaxIterations, func(r *Run, _ *Event, _ outcome) bool { return r.Iteration >= r.Settings.MaxIterations }, stopOpen(MaxIterations)},
	{Review, ReviewDone, "nothing to fix", nothingToFix, reviewAgain},
	{Review, ReviewDone, "validate", func(r *Run, _ *Event, _ outcome) bool { return r.Settings.Depth == "deep" },
		func(r *Run, e *Event, _ outcome) { r.enter(Validate, r.Iteration, e.Now, "validating findings") }},
	{Review, ReviewDone, "fix", always, fix("fixing %s", "finding")},

	{Validate, ValidationDone, Budget, overBudget, stopOpen(Budget)},
	{Validate, ValidationDone, "converged", converged, finish},
	{Validate, ValidationDone, "confirm", isClean, confirm},
	{Validate, ValidationDone, Stalled, stalled, stopOpen(Stalled)},
	{Validate, ValidationDone, "nothing to fix", nothingToFix, reviewAgain},
	{Validate, ValidationDone, "fix", always, fix("fixing %s", "validated finding")},

	{Fix, FixDone, Budget, overBudget, stopOpen(Budget)},
	{Fix, FixDone, "review", always, func(r *Run, e *Event, _ outcome) {
		r.enter(Review, r.Iteration+1, e.Now, fmt.Sprintf("fixer claimed %s; reviewing again", review.Plural(len(r.Claimed), "fix")))
		r.afterFix = true // the caller narrows the round with what fix.patch holds (FocusOn)
	}},
}

func always(*Run, *Event, outcome) bool { return true }

// stalled: the same blocking findings as the round before, after a fix.
// At deep depth both sets are taken after validation, so the validator
// weighs a finding the fixer disputed and its reviewer kept (a disproved
// one goes) before a fixer/reviewer standoff stops the run.
func stalled(r *Run, _ *Event, o outcome) bool {
	return r.Iteration > 1 && len(o.blocking) > 0 && slices.Equal(o.blocking, r.LastOpen)
}

func isClean(_ *Run, _ *Event, o outcome) bool { return o.clean() }

func converged(r *Run, _ *Event, o outcome) bool {
	return o.clean() && r.CleanStreak+1 >= r.cleanPasses()
}

func nothingToFix(_ *Run, _ *Event, o outcome) bool { return len(o.blocking) == 0 }

func finish(r *Run, e *Event, _ outcome) { r.CleanStreak++; r.finish(e.Now) }

func confirm(r *Run, e *Event, _ outcome) {
	r.CleanStreak++
	r.enter(Review, r.Iteration+1, e.Now, "clean; confirmation pass")
}

func reviewAgain(r *Run, e *Event, o outcome) {
	r.enter(Review, r.Iteration+1, e.Now, fmt.Sprintf("no blocking findings, but %s failed; reviewing again", strings.Join(o.failed, ", ")))
}

func fix(note, one string) func(*Run, *Event, outcome) {
	return func(r *Run, e *Event, o outcome) {
		r.enter(Fix, r.Iteration, e.Now, fmt.Sprintf(note, review.Plural(len(o.blocking), one)))
	}
}

func stop(reason string) func(*Run, *Event, outcome) {
	return func(r *Run, e *Event, _ outcome) {
		detail := e.Detail
		if reason == Budget && detail == "" {
			detail = fmt.Sprintf("the time budget of %s ran out", review.Plural(r.Settings.BudgetMinutes, "minute"))
		}
		r.Stop(reason, detail, e.Now)
	}
}

func stopOpen(reason string) func(*Run, *Event, outcome) {
	return func(r *Run, e *Event, o outcome) {
		r.Stop(reason, review.Plural(len(o.blocking), "blocking finding")+" open", e.Now)
	}
}

// overTime reports whether the run's time budget is spent.
func overTime(r *Run, e *Event, _ outcome) bool { return r.OverTime(e.Now) }

// OverTime reports whether the run has a time budget and it is spent. Hooks
// call it on every event of an active run, so it is cheap.
func (r *Run) OverTime(now time.Time) bool {
	m := r.Settings.BudgetMinutes
	return m > 0 && now.Sub(r.Created) >= time.Duration(m)*time.Minute
}

func overBudget(r *Run, e *Event, o outcome) bool {
	return overTime(r, e, o) || (r.Settings.BudgetTokens > 0 && r.Tokens >= r.Settings.BudgetTokens)
}

func (r *Run) cleanPasses() int {
	if r.Settings.Depth == "deep" {
		return 2
	}
	return 1
}

// Apply feeds one event to an active run: it records what the event reports
// (merged findings, disproved findings, the fixer's claims), then the first
// matching row of the table moves the run. It returns the row's name, or ""
// when the run is finished or no row applies (the event changes nothing).
func (r *Run) Apply(e *Event) string {
	if !r.Active() {
		return ""
	}
	r.observe(e)
	if r.cold && (e.Kind == ReviewDone || e.Kind == ValidationDone || e.Kind == FixDone) {
		r.summarize()
	}
	o := r.outcome()
	for _, row := range table {
		if (row.phase == "" || row.phase == r.Phase) && row.on == e.Kind && row.when(r, e, o) {
			row.then(r, e, o)
			if (e.Kind == ReviewDone && r.Phase != Validate) || e.Kind == ValidationDone {
				r.LastOpen = o.blocking // the round's blocking findings, after validation at deep depth
			}
			return row.name
		}
	}
	return ""
}

// observe records what a phase's reports say, before the table decides.
func (r *Run) observe(e *Event) {
	switch {
	case e.Kind == ReviewDone && r.Phase == Review:
		// A focused round looked at the fixer's work and each reviewer's
		// own findings: what it did not look at is left as it was.
		e.Diff.Reviewers, e.Diff.FixOnly = r.Expected, r.Focus != nil
		round := review.MergeRound(r.Findings, e.Reports, r.Policy(), e.Diff)
		r.Findings, e.Round, e.Dropped = round.Ledger, round.Findings, round.Dropped
		r.Rounds++
		r.RoundFailed = r.Failed()
		r.Claimed, r.Recheck = nil, nil // this round gave its verdicts on them
		if !r.outcome().clean() {
			r.CleanStreak = 0
		}
	case e.Kind == ValidationDone && r.Phase == Validate && e.Validation != nil:
		for _, c := range e.Validation.Results {
			if c.Status != "disproved" {
				continue
			}
			for i := range r.Findings {
				if r.Findings[i].ID == c.ID && r.Findings[i].Open() {
					r.Findings[i].Status, r.Findings[i].Blocking = review.StatusDisproved, false
				}
			}
		}
	case e.Kind == FixDone && r.Phase == Fix:
		r.recordFix(e.Fix)
	}
}

// recordFix records the fixer's account (nil: it failed, claiming nothing):
// each finding's status and note, the fixes it claims, and what the next
// review round must give a verdict on — every finding it reported on and
// every open blocking one, so none is let go without its reviewers' word.
func (r *Run) recordFix(fix *review.FixReport) {
	r.Claimed, r.Recheck = nil, nil
	said := map[string]review.FixResult{}
	if fix != nil {
		for _, res := range fix.Results {
			said[res.ID] = res
		}
	}
	for i := range r.Findings {
		e := &r.Findings[i]
		res, ok := said[e.ID]
		if !ok && !(e.Open() && e.Blocking) {
			continue
		}
		e.Claim, e.ClaimNote = res.Status, review.ShortLine(res.Note, review.MaxClaimNote)
		r.Recheck = append(r.Recheck, e.ID)
		if res.Status == "fixed" {
			r.Claimed = append(r.Claimed, e.ID)
		}
	}
}

func (r *Run) outcome() outcome {
	return outcome{failed: r.RoundFailed, blocking: r.Digest.Blocking}
}
