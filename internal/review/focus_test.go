package review

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMergeLeavesWhatTheRoundDidNotLookAt: an open note nobody raised
// again is resolved by a round that reviewed the whole change with one of
// its reviewers; left as it was (open, same last iteration) when its
// reviewers were not dispatched, or when the round reviewed only the
// fixer's work and nobody was asked about it. A blocking finding still
// needs a verdict, and a fix check still settles a note.
func TestMergeLeavesWhatTheRoundDidNotLookAt(t *testing.T) {
	note := f("a.go", 1, "maintainability", "info", "Odd name")
	ledger, _ := Merge(nil, []Report{{Reviewer: "pedant", Findings: []Finding{note}}, {Reviewer: "critic", Findings: []Finding{f("b.go", 9, "correctness", "high", "Wrong sum")}}}, policy1, Diff{})
	p := Policy{Iteration: 2, ConfidenceThreshold: 80, BlockingSeverity: "high"}
	critic := Report{Reviewer: "critic", FixChecks: []FixCheck{{ID: "F-0001", Status: CheckNotFixed}}}
	status := func(l []Entry, id string) (string, int) {
		for _, e := range l {
			if e.ID == id {
				return e.Status, e.Last
			}
		}
		return "", 0
	}
	tests := []struct {
		name    string
		reports []Report
		d       Diff
		want    string
	}{
		{"whole change, pedant dispatched", []Report{critic}, Diff{Reviewers: []string{"critic", "pedant"}}, StatusResolved},
		{"whole change, every reviewer (nil)", []Report{critic}, Diff{}, StatusResolved},
		{"pedant not dispatched", []Report{critic}, Diff{Reviewers: []string{"critic"}}, StatusOpen},
		{"fix only, pedant dispatched but not asked", []Report{critic, {Reviewer: "pedant"}}, Diff{Reviewers: []string{"critic", "pedant"}, FixOnly: true}, StatusOpen},
		{"fix only, pedant answered fixed", []Report{critic, {Reviewer: "pedant", FixChecks: []FixCheck{{ID: "F-0002", Status: CheckFixed}}}}, Diff{Reviewers: []string{"critic", "pedant"}, FixOnly: true}, StatusResolved},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := MergeRound(ledger, tt.reports, p, tt.d)
			got, last := status(res.Ledger, "F-0002")
			if got != tt.want {
				t.Errorf("the note is %s, want %s", got, tt.want)
			}
			if tt.want == StatusOpen && last != 1 {
				t.Errorf("the untouched note's last iteration is %d, want 1", last)
			}
			if b, _ := status(res.Ledger, "F-0001"); b != StatusOpen {
				t.Errorf("the blocking finding critic kept is %s", b)
			}
			var listed []string
			for _, m := range res.Findings {
				listed = append(listed, m.ID)
			}
			want := []string{"F-0001"}
			if tt.want == StatusOpen {
				want = append(want, "F-0002") // verdict.json lists every open finding
			}
			if diff := cmp.Diff(want, listed); diff != "" {
				t.Errorf("round findings (-want +got):\n%s", diff)
			}
		})
	}
}
