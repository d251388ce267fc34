package loop

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/whetstone-dev/whetstone/internal/review"
)

var t0 = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

func settings(depth string) Settings {
	return Settings{Depth: depth, MaxIterations: 5, ConfidenceThreshold: 80, BlockingSeverity: "high"}
}

func bug(title string) review.Report {
	return review.Report{Reviewer: "critic", Verdict: "issues_found", Findings: []review.Finding{
		{Severity: "high", Confidence: 90, Category: "correctness", File: "a.go", Line: 1, EndLine: 1, Title: title, Description: "d"}}}
}

var clean = review.Report{Reviewer: "critic", Verdict: "clean"}

// path records the phases a run goes through.
func path(r *Run) []string {
	var out []string
	for _, s := range r.History {
		out = append(out, string(s.Phase))
	}
	return out
}

func TestDeepRunValidatesAndNeedsTwoCleanPasses(t *testing.T) {
	r := New("r-1", "s", settings("deep"), []string{"critic"}, t0)
	r.ConcludeReview([]review.Report{bug("wrong sum"), clean}, review.Diff{}, t0)
	if r.Phase != Validate {
		t.Fatalf("phase after findings at deep = %s, want validate", r.Phase)
	}
	r.ConcludeValidation(&review.ValidationReport{Results: []review.Check{{ID: "F-0001", Status: "confirmed"}}}, t0)
	r.ConcludeFix(&review.FixReport{Results: []review.FixResult{{ID: "F-0001", Status: "fixed"}}}, t0)
	if diff := cmp.Diff([]string{"F-0001"}, r.Claimed); diff != "" {
		t.Errorf("claimed (-want +got):\n%s", diff)
	}
	r.ConcludeReview([]review.Report{clean}, review.Diff{}, t0)
	if r.Phase != Review || r.Iteration != 3 {
		t.Fatalf("after one clean pass at deep: %s iteration %d, want review iteration 3", r.Phase, r.Iteration)
	}
	r.ConcludeReview([]review.Report{clean}, review.Diff{}, t0)
	want := []string{"review", "validate", "fix", "review", "review", "done"}
	if diff := cmp.Diff(want, path(r)); diff != "" {
		t.Errorf("phases (-want +got):\n%s", diff)
	}
	if r.Verdict != review.Approve {
		t.Errorf("verdict = %s, want APPROVE", r.Verdict)
	}
}

func TestValidatorDisprovingEverythingCountsAsClean(t *testing.T) {
	r := New("r-1", "s", settings("deep"), []string{"critic"}, t0)
	r.ConcludeReview([]review.Report{bug("wrong sum")}, review.Diff{}, t0)
	r.ConcludeValidation(&review.ValidationReport{Results: []review.Check{{ID: "F-0001", Status: "disproved"}}}, t0)
	if r.Phase != Review || r.CleanStreak != 1 {
		t.Fatalf("phase %s streak %d, want a confirmation review with streak 1", r.Phase, r.CleanStreak)
	}
	if r.Findings[0].Status != review.StatusDisproved {
		t.Errorf("F-0001 = %s, want disproved", r.Findings[0].Status)
	}
}

func TestFailedReviewerNeverCountsAsClean(t *testing.T) {
	r := New("r-1", "s", settings("standard"), []string{"critic", "pedant"}, t0)
	for i := 0; i <= MaxRejections; i++ {
		retry := r.Reject("pedant", "a1")
		if want := i < MaxRejections; retry != want {
			t.Fatalf("rejection %d: retry = %v, want %v", i+1, retry, want)
		}
	}
	r.Accept("critic", "a2")
	if !r.Complete() {
		t.Fatal("phase with one failed and one reported agent is not complete")
	}
	r.ConcludeReview([]review.Report{clean}, review.Diff{}, t0)
	if r.Phase != Review || r.Iteration != 2 || r.CleanStreak != 0 {
		t.Fatalf("got %s iteration %d streak %d; want a new review round, not DONE", r.Phase, r.Iteration, r.CleanStreak)
	}
}

func TestStopRules(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		rounds [][]review.Report
		reason string
	}{
		{"stalled", 5, [][]review.Report{{bug("wrong sum")}, {bug("wrong sum")}}, Stalled},
		{"max iterations", 2, [][]review.Report{{bug("wrong sum")}, {bug("nil map write in cache warmup")}}, MaxIterations},
		{"max iterations of 1 is review only", 1, [][]review.Report{{bug("wrong sum")}}, MaxIterations},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := settings("standard")
			s.MaxIterations = tt.max
			r := New("r-1", "s", s, []string{"critic"}, t0)
			for i, round := range tt.rounds {
				if i > 0 {
					r.ConcludeFix(&review.FixReport{}, t0)
				}
				r.ConcludeReview(round, review.Diff{}, t0)
			}
			if r.Phase != Stopped || r.StopReason != tt.reason || r.Verdict != review.RequestChanges {
				t.Errorf("got %s (%s) %s, want stopped (%s) REQUEST_CHANGES", r.Phase, r.StopReason, r.Verdict, tt.reason)
			}
		})
	}
}

func TestBudget(t *testing.T) {
	s := settings("standard")
	s.BudgetMinutes = 10
	r := New("r-1", "s", s, []string{"critic"}, t0)
	r.ConcludeReview([]review.Report{bug("wrong sum")}, review.Diff{}, t0.Add(11*time.Minute))
	if r.Phase != Stopped || r.StopReason != Budget {
		t.Errorf("got %s (%s), want stopped (budget)", r.Phase, r.StopReason)
	}
}

func TestDispatchAndOwnership(t *testing.T) {
	r := New("r-1", "s", settings("standard"), []string{"critic", "pedant"}, t0)
	r.StopBlocks = 3
	if err := r.Dispatch("critic"); err != nil || r.StopBlocks != 0 {
		t.Fatalf("Dispatch(critic) = %v, stop blocks %d; want nil, 0", err, r.StopBlocks)
	}
	if err := r.Dispatch("fixer"); err == nil {
		t.Error("Dispatch(fixer) in the review phase succeeded")
	}
	if !r.Owns("critic", "a1") {
		t.Error("first stop of a dispatched reviewer is not owned")
	}
	r.Reject("critic", "a1")
	if r.Owns("critic", "a2") || !r.Owns("critic", "a1") {
		t.Error("after a rejection only the same agent instance may report")
	}
	if err := r.Dispatch("critic"); err != nil || !r.Owns("critic", "a3") {
		t.Errorf("a re-dispatched reviewer's new instance is not owned (err %v)", err)
	}
	r.Accept("critic", "a3")
	if r.Owns("critic", "a1") || r.Dispatch("critic") == nil {
		t.Error("a reviewer that reported is still owned or dispatchable")
	}
}

func TestDecode(t *testing.T) {
	if _, err := Decode([]byte(`{"version":2,"run_id":"x","phase":"review"}`)); !errors.Is(err, ErrNewerVersion) {
		t.Errorf("newer version: err = %v, want ErrNewerVersion", err)
	}
	for _, bad := range []string{`{"version":1`, `{"version":1}`, `[]`, `{"version":"1"}`} {
		if _, err := Decode([]byte(bad)); err == nil || errors.Is(err, ErrNewerVersion) {
			t.Errorf("Decode(%s) err = %v, want a corrupt-state error", bad, err)
		}
	}
	r := New("r-1", "s", settings("quick"), []string{"critic"}, t0)
	data, _ := r.Encode(t0)
	back, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// TestPromptsStateTheRunsRuleAndTheChange: what every agent reads names the
// files that hold the change and states the blocking rule with this run's
// numbers; each reviewer is asked to check only the fixes of findings it
// raised; dispatch lines carry run_in_background as configured.
func TestPromptsStateTheRunsRuleAndTheChange(t *testing.T) {
	s := Settings{Depth: "standard", MaxIterations: 5, ConfidenceThreshold: 70, BlockingSeverity: "medium", PreExistingBlocks: true}
	r := New("r-1", "s", s, []string{"critic", "pedant"}, t0)
	rule := review.Rule(70, "medium", true)
	for _, name := range []string{"critic", "pedant"} {
		p := r.Prompt(name)
		for _, want := range []string{rule, ".whetstone/runs/r-1/iter-1/diff.patch", ".whetstone/runs/r-1/context.json", "none below confidence 70"} {
			if !strings.Contains(p, want) {
				t.Errorf("%s's prompt lacks %q:\n%s", name, want, p)
			}
		}
	}
	if !strings.Contains(r.Instructions(), `"run_in_background":false`) {
		t.Errorf("dispatch lines do not carry run_in_background false:\n%s", r.Instructions())
	}
	r.ConcludeReview([]review.Report{bug("wrong sum"), {Reviewer: "pedant", Verdict: "clean"}}, review.Diff{}, t0)
	for _, name := range []string{"fixer"} {
		if p := r.Prompt(name); !strings.Contains(p, rule) || !strings.Contains(p, "- F-0001 [high] a.go:1 wrong sum") {
			t.Errorf("fixer prompt:\n%s", p)
		}
	}
	r.ConcludeFix(&review.FixReport{Results: []review.FixResult{{ID: "F-0001", Status: "fixed"}}}, t0)
	critic, pedant := r.Prompt("critic"), r.Prompt("pedant")
	if !strings.Contains(critic, "one fix_checks entry each: F-0001.") || !strings.Contains(critic, "iter-2/fix.patch") {
		t.Errorf("critic, who raised F-0001, is not asked to check it:\n%s", critic)
	}
	if strings.Contains(pedant, "fix_checks entry") {
		t.Errorf("pedant raised nothing but is asked to check fixes:\n%s", pedant)
	}
	r.Settings.Background = true
	if !strings.Contains(r.Instructions(), `"run_in_background":true`) {
		t.Errorf("background dispatch not carried:\n%s", r.Instructions())
	}
}
