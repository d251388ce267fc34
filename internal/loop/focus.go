package loop

import (
	"fmt"
	"slices"
	"strings"

	"github.com/whetstone-dev/whetstone/internal/brief"
	"github.com/whetstone-dev/whetstone/internal/review"
	"github.com/whetstone-dev/whetstone/internal/scope"
)

// Regressions is the reviewer that reviews every fix for regressions: the
// critic is in every focused round its run's roster has it in.
const Regressions = "critic"

// FocusOn narrows the review round a fix just led to (docs/design.md,
// "Focused re-reviews"): it expects only the critic (every fix is reviewed
// for regressions), each reviewer with findings of its own to check
// (FixChecks), each reviewer whose lens has something in fix.patch
// (lenses, from scope.FixLenses), and each reviewer that failed in the
// last review round, which reviews the whole change (WholeChange): no
// change is approved that a reviewer of the roster never delivered on.
// Focus records why each one is expected.
// Any other round — the first, a confirmation pass after a clean round, a
// re-review after a failed reviewer — keeps the whole roster on the whole
// change, and so does a round FocusOn is never called for (fix.patch could
// not be read): FocusOn changes nothing then, nor once an agent started.
func (r *Run) FocusOn(lenses []scope.Specialist) {
	if !r.afterFix || r.Phase != Review || len(r.Agents) > 0 {
		return
	}
	r.afterFix = false
	lens := map[string]string{}
	for _, l := range lenses {
		if _, ok := lens[l.Name]; !ok {
			lens[l.Name] = l.Reason
		}
	}
	why := map[string]string{}
	var expected []string
	for _, name := range r.Roster {
		var reason string
		switch ids := r.FixChecks(name); {
		case slices.Contains(r.RoundFailed, name):
			reason = WholeChange
		case name == Regressions:
			reason = "reviews every fix for regressions"
		case len(ids) > 0:
			reason = "checks " + review.Plural(len(ids), "finding") + " it raised"
		case lens[name] != "":
			reason = "fix.patch: " + lens[name]
		default:
			continue
		}
		expected = append(expected, name)
		why[name] = review.ShortLine(reason, maxWhy)
	}
	if len(expected) == 0 {
		return // nobody to look: the whole roster does, rather than no one
	}
	r.Expected, r.Focus = expected, why
}

// maxWhy bounds the reason a focused round names for a reviewer.
const maxWhy = 160

// WholeChange is why a focused round expects a reviewer that failed in the
// last review round: it never delivered on the change, so it reviews all
// of it.
const WholeChange = "failed in the last round: reviews the whole change"

// focused reports whether name's task in this round is the fixer's work
// rather than the whole change.
func (r *Run) focused(name string) bool { return r.Focus != nil && r.Focus[name] != WholeChange }

// focusLine is what a focused round's instructions tell the orchestrator:
// how many of the reviewers look at the fixer's work, and that the others
// have nothing to look at.
func (r *Run) focusLine() string {
	if r.Focus == nil {
		return ""
	}
	skipped := len(r.Roster) - len(r.Expected)
	if skipped <= 0 {
		return "This round reviews the fixer's work (fix.patch).\n"
	}
	return fmt.Sprintf("This round reviews the fixer's work (fix.patch): %d of %d reviewers; the other %d have nothing of theirs in it and no finding to check, so do not dispatch them.\n",
		len(r.Expected), len(r.Roster), skipped)
}

// Runner is the reviewer whose lens is how it works (the commands it runs,
// its Bash rules): its task carries the whole lens in a focused round too.
const Runner = "witness"

// wholeLens reports whether name's task in a focused round carries its
// whole lens: the witness's always, and that of a reviewer dispatched for
// what its lens finds in fix.patch (a fresh agent that has only its lens
// to go by). The critic's job is named and a reviewer checking its own
// findings has them listed: their lens in one line does.
func (r *Run) wholeLens(name string) bool {
	return name == Runner || name != Regressions && len(r.FixChecks(name)) == 0
}

// focusedTask is the opening of a reviewer's task in a focused round: what
// to review (fix.patch, not the whole change again), the critic's
// regression job, why this reviewer was dispatched, its lens in one line
// (a's description) and what a new finding is in a focused round.
func (r *Run) focusedTask(b *strings.Builder, name, dir string, a brief.Agent) {
	fmt.Fprintf(b, "Review what the fixer changed, not the whole change again: %s/fix.patch (last reviewed tree → the fixer's). "+
		"%s/diff.patch and %s/context.json are context only.\n", dir, dir, r.Dir())
	switch {
	case name == Regressions:
		b.WriteString("Your job: find regressions — what fix.patch breaks or gets wrong (callers, edge cases, error paths, tests) — and check the findings you raised. " +
			"You are the generalist: outside correctness, report only what is `critical`; the rest belongs to the lens that owns it.\n")
	case len(r.FixChecks(name)) > 0: // FocusOn gives it this reason before a lens one
		b.WriteString("Your job: check the findings you raised (below); a new finding only in what fix.patch changes.\n")
	default:
		fmt.Fprintf(b, "Your job: review fix.patch through your lens (%s).\n", review.CleanLine(r.Focus[name]))
	}
	if focus := a.Focus(); focus != "" && !r.wholeLens(name) {
		fmt.Fprintf(b, "Your lens: %s. %s\n", focus, a.Bar())
	}
	b.WriteString(FocusedMethod + "\n")
}

// FocusedMethod is how a reviewer reviews the fixer's work; a review of the
// whole change has the longer method of brief.Agent.Method.
const FocusedMethod = "A new finding: a problem of your lens you verified on a line fix.patch changes or in code it newly breaks, with `evidence`; " +
	"not taste, speculation, refactors or what the intent states. The rest of the change was reviewed."
