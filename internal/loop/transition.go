package loop

import (
	"fmt"
	"slices"
	"time"

	"github.com/whetstone-dev/whetstone/internal/review"
)

// outcome is what a finished review round found.
type outcome struct {
	blocking []string // ids of open blocking findings, sorted
	failed   []string // reviewers recorded as failed
}

func (o outcome) clean() bool { return len(o.blocking) == 0 && len(o.failed) == 0 }

// rule is one row of a transition table: the first row whose condition holds
// decides where the run goes.
type rule struct {
	name string
	when func(r *Run, o outcome, now time.Time) bool
	then func(r *Run, o outcome, now time.Time)
}

// afterReview is applied when the last report of a review round arrives
// (spec §2). Confirmation passes after a clean round do not count against
// max_iterations; a round with blocking findings on the last allowed
// iteration stops, since no review could verify another fix.
var afterReview = []rule{
	{"budget", overBudget, stopFor(Budget)},
	{"converged", func(r *Run, o outcome, _ time.Time) bool { return o.clean() && r.CleanStreak+1 >= r.cleanPasses() },
		func(r *Run, _ outcome, now time.Time) { r.CleanStreak++; r.finish(now) }},
	{"confirm", func(r *Run, o outcome, _ time.Time) bool { return o.clean() },
		func(r *Run, _ outcome, now time.Time) {
			r.CleanStreak++
			r.enter(Review, r.Iteration+1, now, "clean; confirmation pass")
		}},
	{"stalled", func(r *Run, o outcome, _ time.Time) bool {
		return r.Iteration > 1 && len(o.blocking) > 0 && slices.Equal(o.blocking, r.LastOpen)
	}, stopFor(Stalled)},
	{"max_iterations", func(r *Run, o outcome, _ time.Time) bool { return r.Iteration >= r.Settings.MaxIterations }, stopFor(MaxIterations)},
	{"nothing to fix", func(r *Run, o outcome, _ time.Time) bool { return len(o.blocking) == 0 },
		func(r *Run, o outcome, now time.Time) {
			r.enter(Review, r.Iteration+1, now, fmt.Sprintf("no blocking findings but %v failed; reviewing again", o.failed))
		}},
	{"validate", func(r *Run, _ outcome, _ time.Time) bool { return r.Settings.Depth == "deep" },
		func(r *Run, _ outcome, now time.Time) { r.enter(Validate, r.Iteration, now, "validating findings") }},
	{"fix", func(*Run, outcome, time.Time) bool { return true },
		func(r *Run, o outcome, now time.Time) {
			r.enter(Fix, r.Iteration, now, fmt.Sprintf("fixing %d findings", len(o.blocking)))
		}},
}

func stopFor(reason string) func(*Run, outcome, time.Time) {
	return func(r *Run, o outcome, now time.Time) {
		r.Stop(reason, fmt.Sprintf("%d blocking findings open", len(o.blocking)), now)
	}
}

func overBudget(r *Run, _ outcome, now time.Time) bool {
	s := r.Settings
	return (s.BudgetMinutes > 0 && now.Sub(r.Created) >= time.Duration(s.BudgetMinutes)*time.Minute) ||
		(s.BudgetTokens > 0 && r.Tokens >= s.BudgetTokens)
}

func (r *Run) cleanPasses() int {
	if r.Settings.Depth == "deep" {
		return 2
	}
	return 1
}

func apply(table []rule, r *Run, o outcome, now time.Time) string {
	for _, row := range table {
		if row.when(r, o, now) {
			row.then(r, o, now)
			return row.name
		}
	}
	return ""
}

func (r *Run) outcome() outcome {
	o := outcome{failed: r.Failed()}
	for _, e := range r.Findings {
		if e.Open() && e.Blocking {
			o.blocking = append(o.blocking, e.ID)
		}
	}
	slices.Sort(o.blocking)
	return o
}

// ConcludeReview merges a complete review round into the ledger and moves
// the run on. It returns the round's findings (for verdict.json) and the
// name of the rule that decided.
// d says which lines are in the change and how the fixer's edits moved the
// ledger's lines.
func (r *Run) ConcludeReview(reports []review.Report, d review.Diff, now time.Time) ([]review.Merged, string) {
	var round []review.Merged
	r.Findings, round = review.Merge(r.Findings, reports, r.Policy(), d)
	r.Rounds++
	o := r.outcome()
	if !o.clean() {
		r.CleanStreak = 0
	}
	rule := apply(afterReview, r, o, now)
	r.LastOpen, r.Claimed = o.blocking, nil
	return round, rule
}

// ConcludeValidation applies the validator's judgements: disproved findings
// stop blocking. A failed validator (nil report) changes nothing, so every
// finding is treated as confirmed.
func (r *Run) ConcludeValidation(v *review.ValidationReport, now time.Time) string {
	if v != nil {
		for _, c := range v.Results {
			if c.Status != "disproved" {
				continue
			}
			for i := range r.Findings {
				if r.Findings[i].ID == c.ID && r.Findings[i].Open() {
					r.Findings[i].Status, r.Findings[i].Blocking = review.StatusDisproved, false
				}
			}
		}
	}
	o := r.outcome()
	if len(o.blocking) == 0 {
		// Everything was disproved: the round counts as clean.
		return apply(afterReview[:3], r, o, now)
	}
	r.enter(Fix, r.Iteration, now, fmt.Sprintf("fixing %d validated findings", len(o.blocking)))
	return "fix"
}

// ConcludeFix records the fixer's claims and starts the next review round.
// A failed fixer (nil report) claims nothing; the reviewers will tell.
func (r *Run) ConcludeFix(f *review.FixReport, now time.Time) string {
	r.Claimed = nil
	if f != nil {
		for _, res := range f.Results {
			for i := range r.Findings {
				if r.Findings[i].ID == res.ID {
					r.Findings[i].Claim = res.Status
				}
			}
			if res.Status == "fixed" {
				r.Claimed = append(r.Claimed, res.ID)
			}
		}
	}
	if overBudget(r, outcome{}, now) {
		r.Stop(Budget, "", now)
		return "budget"
	}
	r.enter(Review, r.Iteration+1, now, fmt.Sprintf("fixer claimed %d fixes; reviewing again", len(r.Claimed)))
	return "review"
}
