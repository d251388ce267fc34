package loop

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/whetstone-dev/whetstone/internal/review"
)

// This file is the whole loop: the events a run reacts to, the table of
// rows that move it, the effects each row declares, and the rules that
// judge a run when a row ends it. Nothing outside this file sets a run's
// phase, iteration, stop reason or verdict (TestOnlyTheTableMovesARun).

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

// Rule names a row of the table. A row that stops the run names it by its
// stop reason; verdict.json's "decision" and the audit record's "status"
// say which row moved the run after a review round.
type Rule string

// The rows' names.
const (
	NoRule            Rule = ""               // no row fired: the event changed nothing
	RuleAborted       Rule = Aborted          // stop: the user aborted
	RuleError         Rule = Error            // stop: the run cannot go on
	RuleBudget        Rule = Budget           // stop: the time or token budget is spent
	RuleNoProgress    Rule = NoProgress       // stop: the orchestrator keeps ending its turn
	RuleStalled       Rule = Stalled          // stop: the same blocking findings after a fix
	RuleMaxIterations Rule = MaxIterations    // stop: blocking findings on the last allowed iteration
	Remind            Rule = "remind"         // block the orchestrator's Stop and tell it again
	Converged         Rule = "converged"      // done: clean, with enough clean passes
	Confirm           Rule = "confirm"        // clean: a confirmation pass
	NothingToFix      Rule = "nothing to fix" // nothing blocks, but a reviewer failed: review again
	ToValidate        Rule = "validate"       // deep depth: the validator weighs the findings
	ToFix             Rule = "fix"            // the fixer fixes the blocking findings
	ToReview          Rule = "review"         // the fixer reported: review its work
)

// Effect is one thing a row does besides moving the run. Apply does the
// run's own (counting, judging); internal/app carries out the rest, in the
// order listed, from the Outcome alone: it never compares the run before
// and after to guess what happened.
type Effect uint16

// The effects a row may declare.
const (
	CountClean   Effect = 1 << iota // the round was clean: it counts towards the clean passes (CleanStreak)
	WriteVerdict                    // app: write the round's verdict.json and audit record
	StartRound                      // a new review iteration; app computes its change (scope.Next), a failure stops the run as error
	Focus                           // the new round follows a fix: app narrows it to what fix.patch holds (FocusOn)
	KeepBaseline                    // app: the project just compared with the ended phase's baseline is the new phase's (recorded afresh when there is none, or a restore changed it)
	TakeBaseline                    // app: record the project afresh as the new phase begins
	Judge                           // the run ends with a verdict (judge); without it, it has none (NoVerdict)
	WriteReport                     // app: the run ended; write report.json, report.md and report.sarif
	CountBlock                      // the Stop is blocked once more (StopBlocks); app blocks it with the instructions
)

// Outcome is what Apply did: the row that fired, where it moved the run
// and the effects it declares.
type Outcome struct {
	Rule    Rule   // NoRule when no row fired
	Next    Phase  // the phase the row moved the run to; "" when it stays
	Effects Effect // what the caller must carry out
}

// Fired reports whether a row moved the run.
func (o Outcome) Fired() bool { return o.Rule != NoRule }

// Has reports whether the row declares the effect.
func (o Outcome) Has(e Effect) bool { return o.Effects&e != 0 }

// anyPhase matches a row in every active phase.
const anyPhase Phase = ""

// row is one line of the transition table: in phase, on event, the first
// row whose condition holds fires. It moves the run to next (stays when
// ""), into the next iteration with StartRound; note is the history step's
// note, or for a stop the detail after its reason.
type row struct {
	phase   Phase
	on      EventKind
	rule    Rule
	when    func(r *Run, e *Event, o outcome) bool
	next    Phase
	effects Effect
	note    func(r *Run, e *Event, o outcome) string
}

// table is every way a run moves (spec §2). Confirmation passes after a
// clean round do not count against max_iterations; a round with blocking
// findings on the last allowed iteration stops, since no review could verify
// another fix. A round in which a reviewer failed is never clean, also after
// the validator disproved every finding (deep depth). Entering review,
// validate or fix expects that phase's agents (enter): the roster (narrowed
// by Focus), the validator, the fixer.
var table = []row{
	// Columns: in phase, on event, the row's name, its condition; the
	// phase it moves to; its effects; the history step's note.

	// Any active phase.
	{anyPhase, Abort, RuleAborted, always, Stopped, WriteReport, detail},
	{anyPhase, Fail, RuleError, always, Stopped, WriteReport, detail},
	{anyPhase, Tick, RuleBudget, overTime, Stopped, Judge | WriteReport, timeSpent},
	{anyPhase, Idle, RuleNoProgress, blockedOut, Stopped, Judge | WriteReport, noProgress},
	{anyPhase, Idle, Remind, always, anyPhase, CountBlock, nil},

	// A review round's last report arrived.
	{Review, ReviewDone, RuleBudget, overBudget, Stopped, WriteVerdict | Judge | WriteReport, open},
	{Review, ReviewDone, Converged, converged, Done, CountClean | WriteVerdict | Judge | WriteReport, nil},
	{Review, ReviewDone, Confirm, isClean, Review, CountClean | WriteVerdict | StartRound | KeepBaseline, says("clean; confirmation pass")},
	{Review, ReviewDone, RuleStalled, stalledShallow, Stopped, WriteVerdict | Judge | WriteReport, open},
	{Review, ReviewDone, RuleMaxIterations, lastIteration, Stopped, WriteVerdict | Judge | WriteReport, open},
	{Review, ReviewDone, NothingToFix, nothingToFix, Review, WriteVerdict | StartRound | KeepBaseline, failedAgain},
	{Review, ReviewDone, ToValidate, deep, Validate, WriteVerdict | KeepBaseline, says("validating findings")},
	{Review, ReviewDone, ToFix, always, Fix, WriteVerdict | KeepBaseline, fixing("finding")},

	// The validator reported or failed (deep depth).
	{Validate, ValidationDone, RuleBudget, overBudget, Stopped, Judge | WriteReport, open},
	{Validate, ValidationDone, Converged, converged, Done, CountClean | Judge | WriteReport, nil},
	{Validate, ValidationDone, Confirm, isClean, Review, CountClean | StartRound | KeepBaseline, says("clean; confirmation pass")},
	{Validate, ValidationDone, RuleStalled, stalled, Stopped, Judge | WriteReport, open},
	{Validate, ValidationDone, NothingToFix, nothingToFix, Review, StartRound | KeepBaseline, failedAgain},
	{Validate, ValidationDone, ToFix, always, Fix, KeepBaseline, fixing("validated finding")},

	// The fixer reported or failed.
	{Fix, FixDone, RuleBudget, overBudget, Stopped, Judge | WriteReport, open},
	{Fix, FixDone, ToReview, always, Review, StartRound | Focus | TakeBaseline, claimed},
}

// Conditions.

func always(*Run, *Event, outcome) bool { return true }

// stalled: the same blocking findings as the round before, after a fix.
// At deep depth both sets are taken after validation, so the validator
// weighs a finding the fixer disputed and its reviewer kept (a disproved
// one goes) before a fixer/reviewer standoff stops the run.
func stalled(r *Run, _ *Event, o outcome) bool {
	return r.Iteration > 1 && len(o.blocking) > 0 && slices.Equal(o.blocking, r.LastOpen)
}

func stalledShallow(r *Run, e *Event, o outcome) bool { return !deep(r, e, o) && stalled(r, e, o) }

func deep(r *Run, _ *Event, _ outcome) bool { return r.Settings.Depth == "deep" }

func isClean(_ *Run, _ *Event, o outcome) bool { return o.clean() }

func converged(r *Run, _ *Event, o outcome) bool {
	return o.clean() && r.CleanStreak+1 >= r.cleanPasses()
}

func nothingToFix(_ *Run, _ *Event, o outcome) bool { return len(o.blocking) == 0 }

func lastIteration(r *Run, _ *Event, _ outcome) bool { return r.Iteration >= r.Settings.MaxIterations }

// blockedOut: the orchestrator ended its turn as often as the client lets
// a Stop be blocked, without dispatching what whetstone asked for.
func blockedOut(r *Run, e *Event, _ outcome) bool { return r.StopBlocks >= max(e.Limit, 1) }

// overTime reports whether the run's time budget is spent.
func overTime(r *Run, e *Event, _ outcome) bool { return r.OverTime(e.Now) }

func overBudget(r *Run, e *Event, o outcome) bool {
	return overTime(r, e, o) || (r.Settings.BudgetTokens > 0 && r.Tokens >= r.Settings.BudgetTokens)
}

// OverTime reports whether the run has a time budget and it is spent.
func (r *Run) OverTime(now time.Time) bool {
	return TimeSpent(r.Settings.BudgetMinutes, r.Created, now)
}

// TimeSpent is the time budget rule: a budget of minutes (none when 0)
// started at created is spent at now. Every hook of an active run asks it,
// on the fast path from state.json's fields without decoding it.
func TimeSpent(minutes int, created, now time.Time) bool {
	return minutes > 0 && now.Sub(created) >= time.Duration(minutes)*time.Minute
}

func (r *Run) cleanPasses() int {
	if r.Settings.Depth == "deep" {
		return 2
	}
	return 1
}

// Notes.

func says(note string) func(*Run, *Event, outcome) string {
	return func(*Run, *Event, outcome) string { return note }
}

func detail(_ *Run, e *Event, _ outcome) string { return e.Detail }

func timeSpent(r *Run, e *Event, _ outcome) string {
	if e.Detail != "" {
		return e.Detail
	}
	return fmt.Sprintf("the time budget of %s ran out", review.Plural(r.Settings.BudgetMinutes, "minute"))
}

func noProgress(r *Run, _ *Event, _ outcome) string {
	return fmt.Sprintf("the orchestrator ended its turn %d times without dispatching the agents whetstone asked for", r.StopBlocks+1)
}

func open(_ *Run, _ *Event, o outcome) string {
	return review.Plural(len(o.blocking), "blocking finding") + " open"
}

func failedAgain(_ *Run, _ *Event, o outcome) string {
	return fmt.Sprintf("no blocking findings, but %s failed; reviewing again", strings.Join(o.failed, ", "))
}

func fixing(one string) func(*Run, *Event, outcome) string {
	return func(_ *Run, _ *Event, o outcome) string { return "fixing " + review.Plural(len(o.blocking), one) }
}

func claimed(r *Run, _ *Event, _ outcome) string {
	return fmt.Sprintf("fixer claimed %s; reviewing again", review.Plural(len(r.Claimed), "fix"))
}

// outcome is where the run's findings stand after an event was observed.
type outcome struct {
	blocking []string // ids of open blocking findings, sorted
	failed   []string // reviewers of the last review round recorded as failed
}

func (o outcome) clean() bool { return len(o.blocking) == 0 && len(o.failed) == 0 }

func (r *Run) outcome() outcome {
	return outcome{failed: r.RoundFailed, blocking: r.Digest.Blocking}
}

// Apply feeds one event to an active run: it records what the event reports
// (merged findings, disproved findings, the fixer's claims), then the first
// matching row of the table moves the run. The Outcome names the row and
// the effects the caller carries out; it is zero when the run is finished
// or no row applies (the event changes nothing).
func (r *Run) Apply(e *Event) Outcome {
	if !r.Active() {
		return Outcome{}
	}
	r.observe(e)
	if r.cold && (e.Kind == ReviewDone || e.Kind == ValidationDone || e.Kind == FixDone) {
		r.summarize()
	}
	o := r.outcome()
	for _, w := range table {
		if (w.phase == anyPhase || w.phase == r.Phase) && w.on == e.Kind && w.when(r, e, o) {
			r.fire(w, e, o)
			if (e.Kind == ReviewDone && w.next != Validate) || e.Kind == ValidationDone {
				r.LastOpen = o.blocking // the round's blocking findings, after validation at deep depth
			}
			return Outcome{Rule: w.rule, Next: w.next, Effects: w.effects}
		}
	}
	return Outcome{}
}

// fire moves the run as row w declares.
func (r *Run) fire(w row, e *Event, o outcome) {
	if w.effects&CountClean != 0 {
		r.CleanStreak++
	}
	if w.effects&CountBlock != 0 {
		r.StopBlocks++
	}
	var note string
	if w.note != nil {
		note = w.note(r, e, o)
	}
	iteration := r.Iteration
	if w.effects&StartRound != 0 {
		iteration++
	}
	switch w.next {
	case anyPhase:
		return
	case Done, Stopped:
		r.Verdict = ""
		if w.effects&Judge != 0 {
			r.Verdict = r.judge()
		}
	}
	switch w.next {
	case Done:
		note = "converged: " + r.Verdict
	case Stopped:
		r.StopReason = string(w.rule)
		if note != "" && w.rule == RuleError {
			r.Error = note
		}
		// The step's phase says "stopped"; its note says why, once.
		if note != "" {
			note = string(w.rule) + " (" + note + ")"
		} else {
			note = string(w.rule)
		}
	}
	r.enter(w.next, iteration, e.Now, note)
	r.afterFix = w.effects&Focus != 0 // the caller narrows the round with what fix.patch holds (FocusOn)
}

// judge is the verdict of a run a row ends with Judge: the worst over its
// open findings, except that nothing approves a change no review round has
// seen whole. A run stopped before its first round, a reviewer that never
// delivered a valid report (in this phase or the last review round), or a
// read-only phase that changed the project (Tampered) forces
// REQUEST_CHANGES. A run aborted or ended by an error is not judged at all
// (its rows have no Judge; VerdictText shows NoVerdict): nobody judged the
// change to the end, and counting it as REQUEST_CHANGES would say
// reviewers asked for changes they never saw.
func (r *Run) judge() string {
	verdict := r.Digest.Verdict
	if verdict == "" {
		verdict = review.Approve
	}
	if (verdict == review.Approve || verdict == review.ApproveWithNotes) && (r.Rounds == 0 || len(r.Failed()) > 0 || len(r.RoundFailed) > 0 || len(r.Tampered) > 0) {
		verdict = review.RequestChanges
	}
	return verdict
}

// unjudged clears the verdict an earlier build stored for a run a row ended
// without Judge (those builds stored REQUEST_CHANGES for aborted and error
// runs), so that a state reads by today's table.
func (r *Run) unjudged() {
	if r.Phase != Stopped {
		return
	}
	for _, w := range table {
		if w.next == Stopped && string(w.rule) == r.StopReason && w.effects&Judge != 0 {
			return
		}
	}
	r.Verdict = ""
}

// enter begins phase p of the given iteration: a new phase expects its own
// agents (the roster, the validator, the fixer) and forgets the last one's
// instances, focus and baseline; the end of a run records when it ended.
func (r *Run) enter(p Phase, iteration int, now time.Time, note string) {
	r.Phase, r.Iteration = p, iteration
	r.Agents = map[string]*Agent{}
	r.Instances = nil
	r.Baseline = nil
	r.Focus, r.afterFix = nil, false
	switch p {
	case Review:
		r.Expected = slices.Clone(r.Roster)
	case Validate:
		r.Expected = []string{"validator"}
	case Fix:
		r.Expected = []string{"fixer"}
	default:
		r.Expected = nil
		r.Finished = now
	}
	r.History = append(r.History, Step{At: now, Iteration: iteration, Phase: p, Note: note})
}

// Unverified is the record that replaces a state nobody can vouch for,
// stopped as error by the Fail row: nothing of found (the state as it
// could be decoded, or nil) is trusted but what names the run, since its
// findings, phase and verdict may be forged.
func Unverified(id string, found *Run, why string, now time.Time) (*Run, Outcome) {
	r := &Run{Version: Version, ID: id, Phase: Review, Created: now, Agents: map[string]*Agent{}}
	if found != nil && found.ID == id {
		r.Session, r.Iteration, r.Settings, r.Roster, r.Created = found.Session, found.Iteration, found.Settings, found.Roster, found.Created
	}
	out := r.Apply(&Event{Kind: Fail, Now: now, Detail: why})
	return r, out
}

// observe records what a phase's reports say, before the table decides.
func (r *Run) observe(e *Event) {
	switch {
	case e.Kind == ReviewDone && r.Phase == Review:
		// A focused round looked at the fixer's work and each reviewer's
		// own findings: what it did not look at is left as it was.
		e.Diff.Reviewers, e.Diff.FixOnly = r.Expected, r.Focus != nil
		round := review.MergeRoundOwned(r.Findings, e.Reports, r.Policy(), e.Diff)
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
