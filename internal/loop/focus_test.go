package loop

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/whetstone-dev/whetstone/internal/brief"
	"github.com/whetstone-dev/whetstone/internal/review"
	"github.com/whetstone-dev/whetstone/internal/scope"
)

var focusRoster = []string{"critic", "pedant", "witness", "security-reviewer", "database-reviewer"}

func finding(reviewer, severity string, confidence, line int, title string) review.Report {
	return review.Report{Reviewer: reviewer, Verdict: "issues_found", Findings: []review.Finding{
		{Severity: severity, Confidence: confidence, Category: "maintainability", File: "a.go", Line: line, EndLine: line, Title: title, Description: "d"}}}
}

func cleanOf(name string) review.Report { return review.Report{Reviewer: name, Verdict: "clean"} }

// focusedRun is a run after iteration 1 (pedant's blocking F-0001, the
// witness's note F-0002 below the confidence threshold) and a fix of
// F-0001, narrowed with the lenses fix.patch calls for.
func focusedRun(t *testing.T, fixStatus string, lenses ...scope.Specialist) *Run {
	t.Helper()
	r := New("r-1", "s", settings("standard"), focusRoster, t0)
	reviewed(r, t0, cleanOf("critic"), finding("pedant", "medium", 90, 10, "misleading name"),
		finding("witness", "medium", 60, 40, "probe output unclear"), cleanOf("security-reviewer"), cleanOf("database-reviewer"))
	if r.Phase != Fix {
		t.Fatalf("after iteration 1: %s, want fix", r.Phase)
	}
	r.Apply(&Event{Kind: FixDone, Now: t0, Fix: &review.FixReport{Results: []review.FixResult{{ID: "F-0001", Status: fixStatus, Note: "renamed"}}}})
	if !cmp.Equal(r.Expected, focusRoster) {
		t.Fatalf("before FocusOn the round expects %v, want the roster", r.Expected)
	}
	r.FocusOn(lenses)
	return r
}

// TestFocusedRoundAfterAFix: in iteration 2 only the critic, the reviewer
// with a finding to check and the lens fix.patch calls for are dispatched;
// the gate refuses the others; their tasks name fix.patch, not the whole
// change, and the findings to check by id; the round joins when those
// three reported, and the witness's note, which nobody looked at, stays
// open as it was.
func TestFocusedRoundAfterAFix(t *testing.T) {
	r := focusedRun(t, "fixed", scope.Specialist{Name: "database-reviewer", Reason: "db/q.sql is a .sql file"}, scope.Specialist{Name: "performance-reviewer", Reason: "not in the roster"})
	if diff := cmp.Diff([]string{"critic", "pedant", "database-reviewer"}, r.Expected); diff != "" {
		t.Fatalf("expected (-want +got):\n%s", diff)
	}
	ins := r.Instructions(ClaudeCode)
	if n := strings.Count(ins, DispatchMarker); n != 3 || strings.Contains(ins, "whetstone:witness") || !strings.Contains(ins, "3 of 5 reviewers") {
		t.Errorf("instructions dispatch %d agents, want critic, pedant, database-reviewer:\n%s", n, ins)
	}
	if err := r.Dispatch("witness", r.Prompt("witness")); err == nil {
		t.Error("the gate lets the witness, who has nothing to look at, be dispatched")
	}
	if err := r.Dispatch("pedant", r.Prompt("pedant")); err != nil {
		t.Errorf("the gate refuses pedant: %v", err)
	}
	for _, name := range r.Expected {
		task := r.Task(name)
		for _, want := range []string{".whetstone/runs/r-1/iter-2/fix.patch", "not the whole change again"} {
			if !strings.Contains(task, want) {
				t.Errorf("%s's task lacks %q:\n%s", name, want, task)
			}
		}
	}
	if task := r.Task("pedant"); !strings.Contains(task, "one fix_checks entry each (fixed | not_fixed | partially_fixed | withdrawn): F-0001. ") || !strings.Contains(task, "check the findings you raised") {
		t.Errorf("pedant's task does not name its open finding F-0001:\n%s", task)
	}
	// What a focused task must hold for a real model: fix.patch, what a new
	// finding is, the findings to check with the fix-check rules its brief
	// no longer carries, and its lens: in one line for the critic and a
	// reviewer checking its findings (with the lens's evidence bar and what
	// is not its lens), whole for one dispatched for its lens
	// (database-reviewer here) and for the witness (its lens is how it runs
	// things); never the whole-change method.
	for _, name := range append(slices.Clone(r.Expected), "witness") {
		a, err := brief.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		task := r.Task(name)
		whole := name == "database-reviewer" || name == "witness"
		if !strings.Contains(task, FocusedMethod) || strings.Contains(task, "Your lens: "+a.Focus()+". "+a.Bar()+"\n") == whole ||
			!whole && !strings.Contains(a.Bar(), "Not yours") ||
			strings.Contains(task, "\n"+a.Lens+"\n") != whole || strings.Contains(task, "## How to review") {
			t.Errorf("%s's focused task lacks the focused method or its lens (whole: %v), or holds the whole-change method:\n%s", name, whole, task)
		}
	}
	if task := r.Task("pedant"); !strings.Contains(task, "withdrawn: you accept the fixer's dispute; note: what you checked; a missing entry sends the report back.") ||
		!strings.Contains(task, `Raise one still open again with "prior": "<id>", never as new`) || !strings.Contains(task, "iter-1/verdict.json") {
		t.Errorf("pedant's task lacks the fix-check rules or where its findings are:\n%s", task)
	}
	if task := r.Task("witness"); !strings.Contains(task, "## Your lens: does it build") {
		t.Errorf("the witness's focused task lacks its lens (its commands):\n%s", task)
	}
	if task := r.Task("critic"); !strings.Contains(task, "find regressions") || strings.Contains(task, "fix_checks entry") {
		t.Errorf("the critic's task does not name its regression job (or asks it about pedant's finding):\n%s", task)
	}
	if task := r.Task("database-reviewer"); !strings.Contains(task, "db/q.sql is a .sql file") {
		t.Errorf("database-reviewer's task does not say what of its lens is in fix.patch:\n%s", task)
	}
	// The join: the round concludes when the three expected reported.
	for i, name := range r.Expected {
		if !r.Register(name, "id-"+name) {
			t.Fatalf("%s cannot register", name)
		}
		if r.Complete() {
			t.Fatalf("complete after %d of 3 reports", i)
		}
		r.Accept(name)
	}
	if !r.Complete() {
		t.Fatal("not complete after the three expected reviewers reported")
	}
	pedant := cleanOf("pedant")
	pedant.FixChecks = []review.FixCheck{{ID: "F-0001", Status: review.CheckFixed}}
	if rule := reviewed(r, t0, cleanOf("critic"), pedant, cleanOf("database-reviewer")); rule != Converged {
		t.Fatalf("focused clean round: rule %q, want converged", rule)
	}
	note := r.Findings[1]
	if note.ID != "F-0002" || !note.Open() || note.Last != 1 || !cmp.Equal(note.Reviewers, []string{"witness"}) {
		t.Errorf("the undispatched witness's note was touched: %+v", note)
	}
	if r.Findings[0].Status != review.StatusResolved {
		t.Errorf("F-0001 = %s, want resolved", r.Findings[0].Status)
	}
	if r.Verdict != review.ApproveWithNotes {
		t.Errorf("verdict = %s, want APPROVE_WITH_NOTES (the witness's note is still open)", r.Verdict)
	}
}

// TestFocusedRoundStalls: the stall rule holds with a smaller round: the
// fixer disputes, pedant keeps its finding, the same blocking set twice.
func TestFocusedRoundStalls(t *testing.T) {
	r := focusedRun(t, "disputed")
	if diff := cmp.Diff([]string{"critic", "pedant"}, r.Expected); diff != "" {
		t.Fatalf("expected (-want +got):\n%s", diff)
	}
	pedant := cleanOf("pedant")
	pedant.FixChecks = []review.FixCheck{{ID: "F-0001", Status: review.CheckNotFixed}}
	if rule := reviewed(r, t0, cleanOf("critic"), pedant); rule != Stalled {
		t.Fatalf("rule %q, want stalled", rule)
	}
	if r.Verdict != review.RequestChanges {
		t.Errorf("verdict %s, want REQUEST_CHANGES", r.Verdict)
	}
}

// TestOnlyAfterAFixIsARoundFocused: the first round, a confirmation pass
// after a clean round and the re-review after a failed reviewer keep the
// whole roster on the whole change; so does a round whose agents started.
func TestOnlyAfterAFixIsARoundFocused(t *testing.T) {
	lens := []scope.Specialist{{Name: "critic", Reason: "x"}}
	r := New("r-1", "s", settings("deep"), []string{"critic", "pedant"}, t0)
	r.FocusOn(lens)
	if r.Focus != nil || len(r.Expected) != 2 {
		t.Errorf("iteration 1 focused: %v %v", r.Expected, r.Focus)
	}
	reviewed(r, t0, cleanOf("critic"), cleanOf("pedant"))
	if r.Iteration != 2 || r.Phase != Review {
		t.Fatalf("deep clean round: %s %d, want the confirmation pass", r.Phase, r.Iteration)
	}
	r.FocusOn(lens)
	if r.Focus != nil || len(r.Expected) != 2 || strings.Contains(r.Task("pedant"), "not the whole change again") {
		t.Errorf("confirmation pass focused: %v %v", r.Expected, r.Focus)
	}

	r = New("r-2", "s", settings("standard"), []string{"critic", "pedant"}, t0)
	for r.Reject("pedant") {
	}
	reviewed(r, t0, cleanOf("critic"))
	r.FocusOn(lens)
	if r.Iteration != 2 || r.Focus != nil || len(r.Expected) != 2 {
		t.Errorf("re-review after a failed reviewer: iteration %d, expected %v, focus %v", r.Iteration, r.Expected, r.Focus)
	}

	r = focusedRun(t, "fixed")
	r.FocusOn(lens) // a second call changes nothing
	if diff := cmp.Diff([]string{"critic", "pedant"}, r.Expected); diff != "" {
		t.Errorf("second FocusOn (-want +got):\n%s", diff)
	}
	r = New("r-3", "s", settings("standard"), focusRoster, t0)
	reviewed(r, t0, finding("pedant", "high", 90, 3, "bad"))
	r.Apply(&Event{Kind: FixDone, Now: t0, Fix: &review.FixReport{Results: []review.FixResult{{ID: "F-0001", Status: "fixed"}}}})
	r.Register("witness", "w1")
	r.FocusOn(nil)
	if len(r.Expected) != len(focusRoster) {
		t.Errorf("FocusOn after an agent started narrowed the round to %v", r.Expected)
	}
}

// TestFocusedRoundBringsBackAFailedReviewer: a reviewer that failed in
// the round before the fix never delivered on the change: the focused
// round expects it, on the whole change, so a clean focused round cannot
// approve what it never reviewed.
func TestFocusedRoundBringsBackAFailedReviewer(t *testing.T) {
	r := New("r-1", "s", settings("standard"), focusRoster, t0)
	for r.Reject("security-reviewer") {
	}
	reviewed(r, t0, cleanOf("critic"), finding("pedant", "medium", 90, 10, "misleading name"), cleanOf("witness"), cleanOf("database-reviewer"))
	r.Apply(&Event{Kind: FixDone, Now: t0, Fix: &review.FixReport{Results: []review.FixResult{{ID: "F-0001", Status: "fixed"}}}})
	r.FocusOn(nil)
	if diff := cmp.Diff([]string{"critic", "pedant", "security-reviewer"}, r.Expected); diff != "" {
		t.Fatalf("expected (-want +got):\n%s", diff)
	}
	if task := r.Task("security-reviewer"); strings.Contains(task, "not the whole change again") || !strings.Contains(task, "The change: .whetstone/runs/r-1/iter-2/diff.patch") {
		t.Errorf("the failed reviewer is not asked to review the whole change:\n%s", task)
	}
}

// TestWholeChangeTaskCarriesTheLens: every reviewer of the registry,
// reviewing the whole change, is given its whole lens and the review
// method in its task (its brief holds neither), and no text it reads
// points to a section its brief no longer has.
func TestWholeChangeTaskCarriesTheLens(t *testing.T) {
	roster := brief.Agents().Reviewers()
	r := New("r-1", "s", settings("deep"), roster, t0)
	for _, name := range roster {
		a, err := brief.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		task := r.Task(name)
		if a.Lens == "" || !strings.Contains(task, "\n"+a.Lens+"\n") || !strings.Contains(task, "\n"+strings.TrimSpace(a.Method)+"\n") || strings.Contains(task, FocusedMethod) {
			t.Errorf("%s's whole-change task lacks its lens or the review method:\n%s", name, task)
		}
		// The method moved out of the brief: a brief that still carried it
		// would cost its bytes in every round.
		for _, moved := range []string{"## How to review", "Stay in your lens", "You are the generalist", "`pre_existing`"} {
			if strings.Contains(a.Body, moved) {
				t.Errorf("%s's brief still carries the method (%q):\n%s", name, moved, a.Body)
			}
		}
	}
}
