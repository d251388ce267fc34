package review

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func f(file string, line int, category, severity, title string) Finding {
	return Finding{Severity: severity, Confidence: 90, Category: category, File: file, Line: line, EndLine: line, Title: title, Description: "d"}
}

type seen struct {
	ID, Status string
	Blocking   bool
	Reviewers  []string
}

func summary(round []Merged) []seen {
	var out []seen
	for _, m := range round {
		out = append(out, seen{m.ID, m.Status, m.Blocking, m.Reviewers})
	}
	return out
}

func TestMergeFoldsDuplicatesAcrossReviewers(t *testing.T) {
	reports := []Report{
		{Reviewer: "silent-failure-hunter", Findings: []Finding{f("a.go", 11, "correctness", "medium", "Loop skips the last element of xs")}},
		{Reviewer: "critic", Findings: []Finding{
			f("a.go", 10, "correctness", "high", "Sum skips the last element"),
			f("a.go", 10, "security", "high", "Sum skips the last element"),    // other category: not a duplicate
			f("b.go", 10, "correctness", "high", "Sum skips the last element"), // other file
		}},
		{Reviewer: "pedant", Findings: []Finding{f("a.go", 40, "correctness", "low", "Sum skips the last element")}}, // far away
	}
	_, round := Merge(nil, reports, Policy{Iteration: 1, ConfidenceThreshold: 80, BlockingSeverity: "high"})
	want := []seen{
		{"F-0001", "open", true, []string{"critic", "silent-failure-hunter"}},
		{"F-0002", "open", true, []string{"critic"}},
		{"F-0003", "open", true, []string{"critic"}},
		{"F-0004", "open", true, []string{"pedant"}},
	}
	if diff := cmp.Diff(want, summary(round)); diff != "" {
		t.Errorf("round (-want +got):\n%s", diff)
	}
	if round[0].Severity != "high" {
		t.Errorf("merged finding keeps the most severe report, got %s", round[0].Severity)
	}
}

func TestMergeIdentityAcrossIterations(t *testing.T) {
	p := Policy{ConfidenceThreshold: 80, BlockingSeverity: "high"}
	a := f("a.go", 10, "correctness", "high", "Sum skips the last element")
	b := f("b.go", 3, "error-handling", "medium", "Error from Close is dropped")

	p.Iteration = 1
	ledger, round := Merge(nil, []Report{{Reviewer: "critic", Findings: []Finding{a, b}}}, p)
	if diff := cmp.Diff([]seen{{"F-0001", "open", true, []string{"critic"}}, {"F-0002", "open", true, []string{"critic"}}}, summary(round)); diff != "" {
		t.Fatalf("iteration 1 (-want +got):\n%s", diff)
	}

	// Iteration 2: a moved a few lines and was reworded (same identity); b is gone.
	p.Iteration = 2
	moved := f("a.go", 14, "correctness", "high", "Sum still skips the last element")
	ledger, round = Merge(ledger, []Report{{Reviewer: "critic", Findings: []Finding{moved}}}, p)
	if diff := cmp.Diff([]seen{{"F-0001", "open", true, []string{"critic"}}}, summary(round)); diff != "" {
		t.Fatalf("iteration 2 (-want +got):\n%s", diff)
	}
	if ledger[1].Status != StatusResolved {
		t.Fatalf("F-0002 status = %s, want resolved", ledger[1].Status)
	}

	// Iteration 3: b comes back (reopened, keeps its id); a new low finding
	// does not block (convergence rule); a re-raise by prior id matches
	// whatever the wording.
	p.Iteration = 3
	late := f("c.go", 1, "naming", "low", "Vague name")
	renamed := f("a.go", 90, "correctness", "high", "Completely different words")
	renamed.Prior = "F-0001"
	_, round = Merge(ledger, []Report{{Reviewer: "pedant", Findings: []Finding{b, late}}, {Reviewer: "critic", Findings: []Finding{renamed}}}, p)
	want := []seen{
		{"F-0001", "open", true, []string{"critic"}},
		{"F-0002", "reopened", true, []string{"pedant"}},
		{"F-0003", "open", false, []string{"pedant"}},
	}
	if diff := cmp.Diff(want, summary(round)); diff != "" {
		t.Errorf("iteration 3 (-want +got):\n%s", diff)
	}
}

func TestMergeFixCheckKeepsFindingOpen(t *testing.T) {
	p := Policy{Iteration: 1, ConfidenceThreshold: 80, BlockingSeverity: "high"}
	ledger, _ := Merge(nil, []Report{{Reviewer: "critic", Findings: []Finding{f("a.go", 1, "correctness", "medium", "Wrong")}}}, p)
	p.Iteration = 2
	ledger, round := Merge(ledger, []Report{{Reviewer: "critic", FixChecks: []FixCheck{{ID: "F-0001", Status: "not_fixed"}}}}, p)
	if diff := cmp.Diff([]seen{{"F-0001", "open", true, []string{"critic"}}}, summary(round)); diff != "" {
		t.Errorf("round (-want +got):\n%s", diff)
	}
	if !ledger[0].Open() {
		t.Errorf("F-0001 = %s, want open", ledger[0].Status)
	}
}

func TestPolicyBlocks(t *testing.T) {
	tests := []struct {
		name      string
		iteration int
		f         Finding
		isNew     bool
		want      bool
	}{
		{"confident medium, iteration 1", 1, Finding{Severity: "medium", Confidence: 80}, true, true},
		{"below confidence threshold", 1, Finding{Severity: "critical", Confidence: 79}, true, false},
		{"info never blocks", 1, Finding{Severity: "info", Confidence: 100}, true, false},
		{"new medium after iteration 1", 2, Finding{Severity: "medium", Confidence: 95}, true, false},
		{"known medium after iteration 1", 2, Finding{Severity: "medium", Confidence: 95}, false, true},
		{"new high after iteration 1", 3, Finding{Severity: "high", Confidence: 95}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Policy{Iteration: tt.iteration, ConfidenceThreshold: 80, BlockingSeverity: "high"}
			if got := p.Blocks(tt.f, tt.isNew); got != tt.want {
				t.Errorf("Blocks = %v, want %v", got, tt.want)
			}
		})
	}
}
