package review

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
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

var policy1 = Policy{Iteration: 1, ConfidenceThreshold: 80, BlockingSeverity: "high"}

func TestMergeFoldsDuplicatesAcrossReviewersAndCategories(t *testing.T) {
	reports := []Report{
		{Reviewer: "silent-failure-hunter", Findings: []Finding{f("a.go", 11, "error-handling", "medium", "Loop skips the last element of xs")}},
		{Reviewer: "critic", Findings: []Finding{
			f("a.go", 10, "correctness", "high", "Sum skips the last element"),
			f("b.go", 10, "correctness", "high", "Sum skips the last element"), // other file
		}},
		{Reviewer: "pedant", Findings: []Finding{f("a.go", 40, "maintainability", "low", "Sum skips the last element")}}, // far away
	}
	_, round := Merge(nil, reports, policy1, Diff{})
	want := []seen{ // ids most severe first, then by file and line
		{"F-0001", "open", true, []string{"critic", "silent-failure-hunter"}},
		{"F-0002", "open", true, []string{"critic"}},
		{"F-0003", "open", true, []string{"pedant"}},
	}
	if diff := cmp.Diff(want, summary(round)); diff != "" {
		t.Errorf("round (-want +got):\n%s", diff)
	}
	if round[0].Severity != "high" || round[0].Category != "correctness" {
		t.Errorf("merged finding keeps the most severe report, got %s %s", round[0].Severity, round[0].Category)
	}
}

// TestMergeBugSpeaksForItsMissingTest: the same bug filed as a missing test
// (tests, medium: a note on its own) and as a bug (correctness, medium) is
// one finding that blocks, whichever report came first or was surer.
func TestMergeBugSpeaksForItsMissingTest(t *testing.T) {
	missing := f("a.go", 10, "tests", "medium", "Sum skips the last element")
	missing.Confidence = 99
	bug := f("a.go", 10, "correctness", "medium", "Sum skips the last element")
	for _, order := range [][]Report{
		{{Reviewer: "pedant", Findings: []Finding{missing}}, {Reviewer: "critic", Findings: []Finding{bug}}},
		{{Reviewer: "critic", Findings: []Finding{bug}}, {Reviewer: "pedant", Findings: []Finding{missing}}},
	} {
		_, round := Merge(nil, order, DefaultPolicy, Diff{})
		if len(round) != 1 || !round[0].Blocking || round[0].Category != "correctness" {
			t.Errorf("round = %+v, want one blocking correctness finding", round)
		}
	}
}

// TestMergeIdentityTable: which pairs of sightings in one round are one
// finding, and which stay two.
func TestMergeIdentityTable(t *testing.T) {
	withRule := func(x Finding, rule string) Finding { x.Rule = rule; return x }
	withPrior := func(x Finding, prior string) Finding { x.Prior = prior; return x }
	span := func(x Finding, end int) Finding { x.EndLine = end; return x }
	tests := []struct {
		name string
		a, b Finding
		same bool
	}{
		{"same bug, two lenses, two wordings", f("a.go", 6, "correctness", "high", "Sum skips the first element"),
			f("a.go", 6, "tests", "medium", "Loop in Sum starts at index 1, skipping xs[0]"), true},
		{"same bug, near lines, reworded", f("a.go", 6, "correctness", "high", "Off-by-one: loop skips first element"),
			f("a.go", 8, "maintainability", "low", "Loop skips the first element"), true},
		{"same rule key, near lines", withRule(f("a.go", 20, "security", "high", "Query built from input"), "sql-injection"),
			withRule(f("a.go", 22, "data", "high", "Unparameterised statement"), "sql-injection"), true},
		{"same prior anywhere", withPrior(f("a.go", 5, "correctness", "high", "Still wrong"), "F-0003"),
			withPrior(f("b.go", 90, "tests", "low", "Regression"), "F-0003"), true},
		{"overlapping range, some shared words", span(f("a.go", 10, "concurrency", "high", "Map written without the lock"), 20),
			f("a.go", 15, "correctness", "high", "Concurrent write to the map without lock"), true},
		{"two bugs on adjacent lines", f("a.go", 10, "correctness", "high", "Nil pointer dereference of cfg"),
			f("a.go", 11, "error-handling", "high", "Error from Close is dropped"), false},
		{"two bugs on one line", f("a.go", 10, "security", "high", "Path traversal through the name parameter"),
			f("a.go", 10, "performance", "medium", "Regexp compiled on every request"), false},
		{"same words, far apart", f("a.go", 10, "correctness", "high", "Error from Close is dropped"),
			f("a.go", 30, "correctness", "high", "Error from Close is dropped"), false},
		{"same words, other file", f("a.go", 10, "correctness", "high", "Error from Close is dropped"),
			f("b.go", 10, "correctness", "high", "Error from Close is dropped"), false},
		{"different rule keys, dissimilar titles", withRule(f("a.go", 10, "security", "high", "Secret logged"), "secret-in-log"),
			withRule(f("a.go", 11, "security", "high", "Token compared in variable time"), "timing-compare"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, round := Merge(nil, []Report{{Reviewer: "one", Findings: []Finding{tt.a}}, {Reviewer: "two", Findings: []Finding{tt.b}}}, policy1, Diff{})
			if got := len(round) == 1; got != tt.same {
				t.Errorf("one finding = %v, want %v; round: %v", got, tt.same, summary(round))
			}
		})
	}
}

func TestMergeIdentityAcrossIterations(t *testing.T) {
	p := Policy{ConfidenceThreshold: 80, BlockingSeverity: "high"}
	a := f("a.go", 10, "correctness", "high", "Sum skips the last element")
	b := f("b.go", 3, "error-handling", "medium", "Error from Close is dropped")

	p.Iteration = 1
	ledger, round := Merge(nil, []Report{{Reviewer: "critic", Findings: []Finding{a, b}}}, p, Diff{})
	if diff := cmp.Diff([]seen{{"F-0001", "open", true, []string{"critic"}}, {"F-0002", "open", true, []string{"critic"}}}, summary(round)); diff != "" {
		t.Fatalf("iteration 1 (-want +got):\n%s", diff)
	}

	// Iteration 2: a moved a few lines, was reworded and re-filed under
	// another category by another reviewer (same identity); b is gone and
	// its reviewer says its fix holds.
	p.Iteration = 2
	moved := f("a.go", 14, "tests", "high", "Sum still skips the last element")
	fixedB := Report{Reviewer: "critic", FixChecks: []FixCheck{{ID: "F-0002", Status: CheckFixed}}}
	ledger, round = Merge(ledger, []Report{{Reviewer: "pedant", Findings: []Finding{moved}}, fixedB}, p, Diff{})
	if diff := cmp.Diff([]seen{{"F-0001", "open", true, []string{"pedant"}}}, summary(round)); diff != "" {
		t.Fatalf("iteration 2 (-want +got):\n%s", diff)
	}
	if ledger[1].Status != StatusResolved {
		t.Fatalf("F-0002 status = %s, want resolved", ledger[1].Status)
	}

	// Iteration 3: b comes back (reopened, keeps its id and its blocking);
	// a new low finding does not block (convergence rule); a re-raise by
	// prior id matches whatever the wording.
	p.Iteration = 3
	late := f("c.go", 1, "maintainability", "low", "Vague name")
	renamed := f("a.go", 90, "correctness", "high", "Completely different words")
	renamed.Prior = "F-0001"
	ledger, round = Merge(ledger, []Report{{Reviewer: "pedant", Findings: []Finding{b, late}}, {Reviewer: "critic", Findings: []Finding{renamed}}}, p, Diff{})
	if ledger[1].Reopens != 1 || ledger[0].Reopens != 0 {
		t.Errorf("reopens: F-0001 %d, F-0002 %d; want 0 and 1 (stats' reopen rate counts them)", ledger[0].Reopens, ledger[1].Reopens)
	}
	// Fixed again, then back again: each return counts.
	p.Iteration = 4
	ledger, _ = Merge(ledger, []Report{fixedB, {Reviewer: "critic", FixChecks: []FixCheck{{ID: "F-0001", Status: CheckFixed}}}}, p, Diff{})
	p.Iteration = 5
	if ledger, _ = Merge(ledger, []Report{{Reviewer: "pedant", Findings: []Finding{b}}}, p, Diff{}); ledger[1].Reopens != 2 {
		t.Errorf("F-0002 reopens = %d after coming back twice, want 2", ledger[1].Reopens)
	}
	want := []seen{
		{"F-0001", "open", true, []string{"critic"}},
		{"F-0002", "reopened", true, []string{"pedant"}},
		{"F-0003", "open", false, []string{"pedant"}},
	}
	if diff := cmp.Diff(want, summary(round)); diff != "" {
		t.Errorf("iteration 3 (-want +got):\n%s", diff)
	}
}

// TestMergeFollowsMovedLines: the fixer inserted 40 lines above a finding;
// with the fix's line map the re-raise is recognised even by its rule alone.
func TestMergeFollowsMovedLines(t *testing.T) {
	x := f("a.go", 10, "correctness", "high", "Total overflows int32")
	x.Rule = "integer-overflow"
	ledger, _ := Merge(nil, []Report{{Reviewer: "critic", Findings: []Finding{x}}}, policy1, Diff{})
	again := f("a.go", 50, "data", "high", "Sum wraps around on large inputs")
	again.Rule = "integer-overflow"
	shift := func(file string, line int) (string, int) { return file, line + 40 }
	p := Policy{Iteration: 2, ConfidenceThreshold: 80, BlockingSeverity: "high"}
	_, round := Merge(ledger, []Report{{Reviewer: "witness", Findings: []Finding{again}}}, p, Diff{Moved: shift})
	if len(round) != 1 || round[0].ID != "F-0001" || round[0].New {
		t.Errorf("round = %+v, want F-0001 seen again", summary(round))
	}
}

func TestMergePreExisting(t *testing.T) {
	touches := func(file string, line, end int) bool { return file == "a.go" && line <= 13 && end >= 7 } // hunk 10, margin 3
	reports := []Report{{Reviewer: "critic", Findings: []Finding{
		f("a.go", 12, "correctness", "high", "In the change"),
		f("a.go", 40, "correctness", "critical", "Untouched code"),
		f("b.go", 1, "security", "high", "Another untouched file"),
	}}}
	ledger, round := Merge(nil, reports, policy1, Diff{Touches: touches})
	got := map[string][2]bool{}
	for _, m := range round {
		got[m.Title] = [2]bool{m.PreExisting, m.Blocking}
	}
	want := map[string][2]bool{"In the change": {false, true}, "Untouched code": {true, false}, "Another untouched file": {true, false}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(pre_existing, blocking) (-want +got):\n%s", diff)
	}
	p := policy1
	p.PreExistingBlocks = true
	_, round = Merge(nil, reports, p, Diff{Touches: touches})
	for _, m := range round {
		if !m.Blocking {
			t.Errorf("with pre_existing_blocks, %q does not block", m.Title)
		}
	}
	for _, e := range ledger {
		if e.PreExisting == (e.Title == "In the change") || e.PreExisting == e.Blocking {
			t.Errorf("ledger entry: %+v", e)
		}
	}
}

func TestMergeFixCheckKeepsFindingOpen(t *testing.T) {
	ledger, _ := Merge(nil, []Report{{Reviewer: "critic", Findings: []Finding{f("a.go", 1, "correctness", "medium", "Wrong")}}}, policy1, Diff{})
	p := Policy{Iteration: 2, ConfidenceThreshold: 80, BlockingSeverity: "high"}
	ledger, round := Merge(ledger, []Report{{Reviewer: "critic", FixChecks: []FixCheck{{ID: "F-0001", Status: "not_fixed"}}}}, p, Diff{})
	if diff := cmp.Diff([]seen{{"F-0001", "open", true, []string{"critic"}}}, summary(round)); diff != "" {
		t.Errorf("round (-want +got):\n%s", diff)
	}
	if !ledger[0].Open() {
		t.Errorf("F-0001 = %s, want open", ledger[0].Status)
	}
}

// TestMergeFixCheckVerdicts: an open finding nobody raised again goes only
// by its reviewers' word. A blocking one is resolved by fixed, withdrawn by
// withdrawn, and stays open and blocking on not_fixed, partially_fixed or
// no answer at all; any not_fixed outweighs another reviewer's fixed. A
// non-blocking one without an answer is resolved as before.
func TestMergeFixCheckVerdicts(t *testing.T) {
	two := []Report{{Reviewer: "critic", Findings: []Finding{f("a.go", 1, "correctness", "high", "Wrong total")}},
		{Reviewer: "pedant", Findings: []Finding{f("a.go", 1, "correctness", "high", "Total is wrong")}}}
	blocking, _ := Merge(nil, two, policy1, Diff{})
	note, _ := Merge(nil, []Report{{Reviewer: "critic", Findings: []Finding{f("a.go", 1, "correctness", "info", "Wrong total")}}}, policy1, Diff{})
	if !blocking[0].Blocking || note[0].Blocking || !slices.Equal(blocking[0].Reviewers, []string{"critic", "pedant"}) {
		t.Fatalf("setup: %+v %+v", blocking[0], note[0])
	}
	p := Policy{Iteration: 2, ConfidenceThreshold: 80, BlockingSeverity: "high"}
	tests := []struct {
		name   string
		ledger []Entry
		checks map[string]string // reviewer → answer
		want   string
		who    []string // the reviewers the still-open finding lists
	}{
		{"blocking, fixed", blocking, map[string]string{"critic": CheckFixed}, StatusResolved, nil},
		{"blocking, withdrawn", blocking, map[string]string{"critic": CheckWithdrawn, "pedant": CheckWithdrawn}, StatusWithdrawn, nil},
		{"blocking, one fixed, one withdrawn", blocking, map[string]string{"critic": CheckFixed, "pedant": CheckWithdrawn}, StatusWithdrawn, nil},
		{"blocking, not_fixed", blocking, map[string]string{"critic": CheckNotFixed}, StatusOpen, []string{"critic"}},
		{"blocking, partially_fixed", blocking, map[string]string{"pedant": CheckPartiallyFixed}, StatusOpen, []string{"pedant"}},
		{"blocking, fixed against not_fixed", blocking, map[string]string{"critic": CheckFixed, "pedant": CheckNotFixed}, StatusOpen, []string{"pedant"}},
		{"blocking, withdrawn against not_fixed", blocking, map[string]string{"critic": CheckWithdrawn, "pedant": CheckNotFixed}, StatusOpen, []string{"pedant"}},
		{"blocking, no answer", blocking, nil, StatusOpen, []string{"critic", "pedant"}},
		{"note, no answer", note, nil, StatusResolved, nil},
		{"note, withdrawn", note, map[string]string{"critic": CheckWithdrawn}, StatusWithdrawn, nil},
		{"note, not_fixed", note, map[string]string{"critic": CheckNotFixed}, StatusOpen, []string{"critic"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reports []Report
			for _, name := range slices.Sorted(maps.Keys(tt.checks)) {
				reports = append(reports, Report{Reviewer: name, FixChecks: []FixCheck{{ID: "F-0001", Status: tt.checks[name]}}})
			}
			ledger, round := Merge(tt.ledger, reports, p, Diff{})
			if ledger[0].Status != tt.want {
				t.Errorf("status = %s, want %s", ledger[0].Status, tt.want)
			}
			if tt.want != StatusOpen {
				if len(round) != 0 {
					t.Errorf("round lists %v, want nothing", summary(round))
				}
				return
			}
			want := []seen{{"F-0001", StatusOpen, tt.ledger[0].Blocking, tt.who}}
			if diff := cmp.Diff(want, summary(round)); diff != "" {
				t.Errorf("round (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("raised again outweighs withdrawn", func(t *testing.T) {
		again := Report{Reviewer: "critic", Findings: []Finding{f("a.go", 1, "correctness", "high", "Wrong total")},
			FixChecks: []FixCheck{{ID: "F-0001", Status: CheckWithdrawn}}}
		if ledger, _ := Merge(blocking, []Report{again}, p, Diff{}); ledger[0].Status != StatusOpen || !ledger[0].Blocking {
			t.Errorf("F-0001 = %s (blocking %v), want open and blocking", ledger[0].Status, ledger[0].Blocking)
		}
	})
	t.Run("withdrawn, raised again, is reopened", func(t *testing.T) {
		ledger, _ := Merge(blocking, []Report{{Reviewer: "critic", FixChecks: []FixCheck{{ID: "F-0001", Status: CheckWithdrawn}}}}, p, Diff{})
		p3 := p
		p3.Iteration = 3
		ledger, _ = Merge(ledger, two[:1], p3, Diff{})
		if ledger[0].Status != StatusReopened || ledger[0].Reopens != 1 || !ledger[0].Blocking {
			t.Errorf("F-0001 = %+v, want reopened and blocking", ledger[0])
		}
	})
}

func TestPolicyBlocks(t *testing.T) {
	blocked, notBlocked := &Entry{Blocking: true}, &Entry{Blocking: false}
	tests := []struct {
		name        string
		iteration   int
		f           Finding
		prev        *Entry
		preExisting bool
		want        bool
	}{
		{"confident medium, iteration 1", 1, Finding{Severity: "medium", Confidence: 80}, nil, false, true},
		{"confident low, iteration 1: a note, no fix round", 1, Finding{Severity: "low", Confidence: 100}, nil, false, false},
		{"below confidence threshold", 1, Finding{Severity: "critical", Confidence: 79}, nil, false, false},
		{"info never blocks", 1, Finding{Severity: "info", Confidence: 100}, nil, false, false},
		{"pre-existing critical", 1, Finding{Severity: "critical", Confidence: 100}, nil, true, false},
		{"missing test at medium, iteration 1: a note", 1, Finding{Severity: "medium", Confidence: 95, Category: "tests", Rule: "missing-test"}, nil, false, false},
		{"tests finding at high, iteration 1: a broken tested contract", 1, Finding{Severity: "high", Confidence: 95, Category: "tests"}, nil, false, true},
		{"correctness medium with a missing-test rule key still blocks: category decides", 1, Finding{Severity: "medium", Confidence: 95, Category: "correctness", Rule: "missing-test"}, nil, false, true},
		{"new medium after iteration 1", 2, Finding{Severity: "medium", Confidence: 95}, nil, false, false},
		{"known blocking medium after iteration 1", 2, Finding{Severity: "medium", Confidence: 95}, blocked, false, true},
		{"known blocking, re-raised less confident", 2, Finding{Severity: "medium", Confidence: 50}, blocked, false, true},
		{"known non-blocking medium stays a note", 3, Finding{Severity: "medium", Confidence: 95}, notBlocked, false, false},
		{"known note escalated to high", 3, Finding{Severity: "high", Confidence: 95}, notBlocked, false, true},
		{"iteration-1 low escalated to medium in iteration 2 stays a note", 2, Finding{Severity: "medium", Confidence: 95}, notBlocked, false, false},
		{"new high after iteration 1", 3, Finding{Severity: "high", Confidence: 95}, nil, false, true},
		{"known blocking, now pre-existing", 2, Finding{Severity: "high", Confidence: 95}, blocked, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := DefaultPolicy
			p.Iteration = tt.iteration
			if got := p.Blocks(tt.f, tt.prev, tt.preExisting); got != tt.want {
				t.Errorf("Blocks = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestPolicyBars: fix_severity low is the rule before the setting existed
// (and a run's state without it); a stricter bar lets more through as notes.
func TestPolicyBars(t *testing.T) {
	low := Finding{Severity: "low", Confidence: 90}
	medium := Finding{Severity: "medium", Confidence: 90}
	tests := Finding{Severity: "medium", Confidence: 90, Category: "tests"}
	for _, tt := range []struct {
		p                  Policy
		low, medium, tests bool
	}{
		{Policy{Iteration: 1, ConfidenceThreshold: 80, BlockingSeverity: "high"}, true, true, false},
		{Policy{Iteration: 1, ConfidenceThreshold: 80, FixSeverity: "low", BlockingSeverity: "high"}, true, true, false},
		{Policy{Iteration: 1, ConfidenceThreshold: 80, FixSeverity: "low", BlockingSeverity: "medium"}, true, true, true},
		{Policy{Iteration: 1, ConfidenceThreshold: 80, FixSeverity: "high", BlockingSeverity: "high"}, false, false, false},
	} {
		got := []bool{tt.p.Blocks(low, nil, false), tt.p.Blocks(medium, nil, false), tt.p.Blocks(tests, nil, false)}
		if want := []bool{tt.low, tt.medium, tt.tests}; !slices.Equal(got, want) {
			t.Errorf("%+v: low, medium, tests block = %v, want %v", tt.p, got, want)
		}
	}
}

// TestRuleWords: the rule in words follows the settings it states.
func TestRuleWords(t *testing.T) {
	for _, tt := range []struct {
		p    Policy
		want []string
	}{
		{DefaultPolicy, []string{"confidence is 80+ and its severity medium or above in iteration 1, high or above from iteration 2 on", "category tests (a missing or weak test), only at high or above", "is pre-existing, never blocking"}},
		{Policy{ConfidenceThreshold: 70, FixSeverity: "medium", BlockingSeverity: "medium", PreExistingBlocks: true}, []string{"is 70+ and its severity medium or above;", "only at medium or above", "findings are judged alike, pre-existing ones (", "included. A finding blocks if"}},
		{Policy{ConfidenceThreshold: 80, BlockingSeverity: "critical"}, []string{"low or above in iteration 1, critical from iteration 2 on"}},
		{Policy{ConfidenceThreshold: 80, FixSeverity: "low", BlockingSeverity: "info"}, []string{"its severity low or above;"}},
	} {
		got := tt.p.Rule()
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%+v: Rule() does not say %q:\n%s", tt.p, w, got)
			}
		}
	}
}

// bugs are distinct problems, each with the wordings different reviewers
// give it. Lines are far apart or titles unrelated, so each is one finding.
var bugs = []struct {
	file    string
	line    int
	rule    string
	titles  []string
	sev     string
	lensCat []string
}{
	{"calc.go", 6, "off-by-one", []string{"Sum skips the first element", "Loop skips xs[0], the first element", "Off-by-one: first element of xs skipped"}, "high", []string{"correctness", "tests", "data"}},
	{"calc.go", 7, "", []string{"Error from Close is dropped", "Close error silently dropped", "Dropped error from Close"}, "medium", []string{"error-handling", "correctness", "maintainability"}},
	{"calc.go", 40, "sql-injection", []string{"Query concatenates user input", "User input concatenated into SQL query", "SQL query built by string concatenation of input"}, "critical", []string{"security", "data", "correctness"}},
	{"store/db.go", 12, "", []string{"Mutex not held while map is written", "Map written without holding the mutex", "Concurrent map write without the mutex"}, "high", []string{"concurrency", "correctness", "performance"}},
}

// sightingsOf reports every bug through every lens, shifted by shift lines.
func sightingsOf(shift int, rng *rand.Rand) []Report {
	byReviewer := map[string][]Finding{}
	lenses := []string{"critic", "pedant", "witness"}
	for _, b := range bugs {
		for i, title := range b.titles {
			x := f(b.file, b.line+shift+rng.IntN(3)-1, b.lensCat[i], b.sev, title)
			x.Line = max(x.Line, 1)
			x.EndLine = x.Line
			if rng.IntN(2) == 0 {
				x.Rule = b.rule
			}
			byReviewer[lenses[i]] = append(byReviewer[lenses[i]], x)
		}
	}
	var reports []Report
	for name, fs := range byReviewer {
		rng.Shuffle(len(fs), func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
		reports = append(reports, Report{Reviewer: name, Findings: fs})
	}
	rng.Shuffle(len(reports), func(i, j int) { reports[i], reports[j] = reports[j], reports[i] })
	return reports
}

// TestMergeIdentityProperties: reordering reports and findings, renaming
// categories and shifting lines by a few never split one bug into two ids,
// and never fold two bugs into one, in one round or across rounds.
func TestMergeIdentityProperties(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		ledger, round := Merge(nil, sightingsOf(0, rng), policy1, Diff{})
		if len(round) != len(bugs) {
			t.Fatalf("seed %d: iteration 1 has %d findings, want %d: %v", seed, len(round), len(bugs), titles(round))
		}
		ids := idsByTitle(round)
		p := Policy{Iteration: 2, ConfidenceThreshold: 80, BlockingSeverity: "high"}
		_, round2 := Merge(ledger, sightingsOf(rng.IntN(5)-2, rng), p, Diff{})
		if len(round2) != len(bugs) {
			t.Fatalf("seed %d: iteration 2 has %d findings, want %d: %v", seed, len(round2), len(bugs), titles(round2))
		}
		for _, m := range round2 {
			if m.New {
				t.Fatalf("seed %d: iteration 2 finding %q got a new id %s", seed, m.Title, m.ID)
			}
		}
		if got := idsByTitle(round2); len(got) != len(ids) {
			t.Fatalf("seed %d: ids %v then %v", seed, ids, got)
		}
	}
}

func titles(round []Merged) []string {
	var out []string
	for _, m := range round {
		out = append(out, fmt.Sprintf("%s %s:%d %q %v", m.ID, m.File, m.Line, m.Title, m.Reviewers))
	}
	return out
}

func idsByTitle(round []Merged) []string {
	var out []string
	for _, m := range round {
		out = append(out, m.ID)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestMergeOrderIndependent: the same reports in any order give the same
// round and ledger.
func TestMergeOrderIndependent(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	base := sightingsOf(0, rng)
	wantLedger, wantRound := Merge(nil, base, policy1, Diff{})
	for range 100 {
		shuffled := make([]Report, len(base))
		for i, r := range base {
			r.Findings = slices.Clone(r.Findings)
			rng.Shuffle(len(r.Findings), func(i, j int) { r.Findings[i], r.Findings[j] = r.Findings[j], r.Findings[i] })
			shuffled[i] = r
		}
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		gotLedger, gotRound := Merge(nil, shuffled, policy1, Diff{})
		if diff := cmp.Diff(wantRound, gotRound); diff != "" {
			t.Fatalf("round depends on order (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(wantLedger, gotLedger); diff != "" {
			t.Fatalf("ledger depends on order (-want +got):\n%s", diff)
		}
	}
}

// TestMergeStallsUnderRenamedCategory: a finding re-raised in the next
// round under another category and rule keeps its id, so the stall rule
// (same open blocking ids twice) can see it.
func TestMergeStallsUnderRenamedCategory(t *testing.T) {
	a := f("a.go", 6, "correctness", "high", "Sum skips the first element")
	ledger, r1 := Merge(nil, []Report{{Reviewer: "critic", Findings: []Finding{a}}}, policy1, Diff{})
	b := f("a.go", 6, "data", "high", "First element of xs is skipped by Sum")
	p := Policy{Iteration: 2, ConfidenceThreshold: 80, BlockingSeverity: "high"}
	_, r2 := Merge(ledger, []Report{{Reviewer: "critic", Findings: []Finding{b}}}, p, Diff{})
	if diff := cmp.Diff(summary(r1), summary(r2)); diff != "" {
		t.Errorf("re-raise under another category changed identity (-r1 +r2):\n%s", diff)
	}
}

// liftRoundCap lets a test merge rounds larger than MaxRoundFindings.
func liftRoundCap(tb testing.TB) {
	old := roundCap
	roundCap = 1 << 30
	tb.Cleanup(func() { roundCap = old })
}

// oneFileRound is reviewers reports of perReport findings each, all in one
// file: every reviewer reports the same problems (at the same lines, in its
// own long wording), so each problem is one merged finding of reviewers
// sightings. shift moves every line, as a fixer's edits would.
func oneFileRound(reviewers, perReport, shift int) []Report {
	var reports []Report
	for r := range reviewers {
		var fs []Finding
		for i := range perReport {
			fs = append(fs, f("big.go", 1+i*7+shift, Categories[(i+r)%len(Categories)], Severities[i%len(Severities)],
				fmt.Sprintf("Problem number %d in the request handler, seen by reviewer %d, with a rather long title about many things at once", i, r)))
		}
		reports = append(reports, Report{Reviewer: fmt.Sprint("r", r), Findings: fs})
	}
	return reports
}

func BenchmarkMergeOneFile10x500(b *testing.B) {
	liftRoundCap(b)
	reports := oneFileRound(10, 500, 0)
	for b.Loop() {
		Merge(nil, reports, policy1, Diff{})
	}
}

// BenchmarkMergeOneFile10x500Again is the next round of the same findings,
// matched against the 500 entries of the ledger.
func BenchmarkMergeOneFile10x500Again(b *testing.B) {
	liftRoundCap(b)
	ledger, _ := Merge(nil, oneFileRound(10, 500, 0), policy1, Diff{})
	reports := oneFileRound(10, 500, 2)
	p := Policy{Iteration: 2, ConfidenceThreshold: 80, BlockingSeverity: "high"}
	for b.Loop() {
		Merge(ledger, reports, p, Diff{})
	}
}

// TestMergeRoundCap: a round of more than MaxRoundFindings findings keeps
// the most severe, then the most confident, and counts the rest; an earlier
// finding raised again past the cap is neither recorded nor resolved.
func TestMergeRoundCap(t *testing.T) {
	var reports []Report
	for r := range 12 {
		var fs []Finding
		for i := range 10 {
			n := r*10 + i
			x := f(fmt.Sprintf("f%03d.go", n), 1, "correctness", Severities[n%4], fmt.Sprintf("Problem %d", n))
			x.Confidence = 80 + n%17
			fs = append(fs, x)
		}
		reports = append(reports, Report{Reviewer: fmt.Sprint("r", r), Findings: fs})
	}
	res := MergeRound(nil, reports, policy1, Diff{})
	if len(res.Findings) != MaxRoundFindings || res.Dropped != 20 || len(res.Ledger) != MaxRoundFindings {
		t.Fatalf("%d findings, %d dropped, ledger %d; want %d, 20, %d", len(res.Findings), res.Dropped, len(res.Ledger), MaxRoundFindings, MaxRoundFindings)
	}
	kept := map[string]bool{}
	lowest := 100
	for _, m := range res.Findings {
		kept[m.Title] = true
		if m.Severity == "low" {
			lowest = min(lowest, m.Confidence)
		}
	}
	for _, r := range reports {
		for _, x := range r.Findings {
			if kept[x.Title] {
				continue
			}
			if x.Severity != "low" || x.Confidence > lowest {
				t.Errorf("dropped %q (%s, %d) but kept a low finding of confidence %d", x.Title, x.Severity, x.Confidence, lowest)
			}
		}
	}

	// Next round: the same findings plus 15 critical ones push some of the
	// recorded low findings past the cap. They stay open, unresolved.
	extra := Report{Reviewer: "extra"}
	for i := range 15 {
		extra.Findings = append(extra.Findings, f(fmt.Sprintf("new%02d.go", i), 1, "security", "critical", fmt.Sprintf("Injection %d", i)))
	}
	p := Policy{Iteration: 2, ConfidenceThreshold: 80, BlockingSeverity: "high"}
	res2 := MergeRound(res.Ledger, append(reports, extra), p, Diff{})
	if res2.Dropped != 35 || len(res2.Findings) != MaxRoundFindings {
		t.Fatalf("round 2: %d findings, %d dropped; want %d, 35", len(res2.Findings), res2.Dropped, MaxRoundFindings)
	}
	for _, e := range res2.Ledger {
		if !e.Open() {
			t.Errorf("%s %q is %s; a finding raised again past the cap stays as it was", e.ID, e.Title, e.Status)
		}
	}
	if len(res2.Ledger) != MaxRoundFindings+15 {
		t.Errorf("ledger has %d entries, want %d", len(res2.Ledger), MaxRoundFindings+15)
	}
}

// TestMergeComparisonsGrowLinearly counts the pairs a merge compares (its
// cost) instead of timing it: ten times the findings in one file cost about
// ten times the comparisons, never a quadratic number, whether the findings
// are spread over the file, piled on one line, or span all of it, and
// whether the ledger is empty or holds the previous round.
func TestMergeComparisonsGrowLinearly(t *testing.T) {
	if testing.Short() {
		t.Skip("merges rounds of 5000 findings")
	}
	liftRoundCap(t)
	var compared int
	testHookCompared = func(n int) { compared = n }
	t.Cleanup(func() { testHookCompared = nil })
	pile := func(reviewers, perReport, span int) []Report {
		reports := oneFileRound(reviewers, perReport, 0)
		for _, r := range reports {
			for i := range r.Findings {
				r.Findings[i].Line, r.Findings[i].EndLine = 1, span
			}
		}
		return reports
	}
	p2 := Policy{Iteration: 2, ConfidenceThreshold: 80, BlockingSeverity: "high"}
	for _, c := range []struct {
		name  string
		round func(perReport int) []Report
	}{
		{"spread over the file", func(n int) []Report { return oneFileRound(10, n, 0) }},
		{"piled on one line", func(n int) []Report { return pile(10, n, 1) }},
		{"spanning the whole file", func(n int) []Report { return pile(10, n, 1_000_000) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			cost := map[int][2]int{}
			for _, perReport := range []int{50, 500} {
				ledger, round := Merge(nil, c.round(perReport), policy1, Diff{})
				first := compared
				_, again := Merge(ledger, c.round(perReport), p2, Diff{})
				cost[perReport] = [2]int{first, compared}
				sightings := 10 * perReport
				if first > 50*sightings || compared > 50*sightings {
					t.Errorf("%d findings: %d then %d comparisons, more than 50 per finding", sightings, first, compared)
				}
				for _, m := range again {
					if m.New {
						t.Errorf("%d findings: round 2 gave %s %q a new id; round 1 had %d findings", sightings, m.ID, m.Title, len(round))
						break
					}
				}
			}
			for i := range 2 {
				if small, large := cost[50][i], cost[500][i]; large > 15*max(small, 1) {
					t.Errorf("round %d: 500 findings cost %d comparisons, 5000 cost %d: not linear", i+1, small, large)
				}
			}
			t.Logf("comparisons for 500 and 5000 findings: %v", cost)
		})
	}
}

// TestMergeOrderIndependentPileUp: when more findings pile up on the same
// lines than a sighting is compared with, the result still does not depend
// on the order reports and findings came in.
func TestMergeOrderIndependentPileUp(t *testing.T) {
	liftRoundCap(t)
	rng := rand.New(rand.NewPCG(3, 4))
	var vocab []string
	for i := range 300 {
		vocab = append(vocab, fmt.Sprintf("word%c%c", 'a'+i%26, 'a'+i/26))
	}
	var base []Report
	for r := range 6 {
		var fs []Finding
		for range 40 {
			title := vocab[rng.IntN(len(vocab))] + " " + vocab[rng.IntN(len(vocab))] + " " + vocab[rng.IntN(len(vocab))]
			fs = append(fs, f("pile.go", 1+rng.IntN(3), "correctness", Severities[rng.IntN(4)], title))
		}
		base = append(base, Report{Reviewer: fmt.Sprint("r", r), Findings: fs})
	}
	wantLedger, wantRound := Merge(nil, base, policy1, Diff{})
	p2 := Policy{Iteration: 2, ConfidenceThreshold: 80, BlockingSeverity: "high"}
	_, wantAgain := Merge(wantLedger, base, p2, Diff{})
	for range 20 {
		shuffled := make([]Report, len(base))
		for i, r := range base {
			r.Findings = slices.Clone(r.Findings)
			rng.Shuffle(len(r.Findings), func(i, j int) { r.Findings[i], r.Findings[j] = r.Findings[j], r.Findings[i] })
			shuffled[i] = r
		}
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		ledger, round := Merge(nil, shuffled, policy1, Diff{})
		if diff := cmp.Diff(wantRound, round); diff != "" {
			t.Fatalf("round depends on order (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(wantLedger, ledger); diff != "" {
			t.Fatalf("ledger depends on order (-want +got):\n%s", diff)
		}
		if _, again := Merge(wantLedger, shuffled, p2, Diff{}); !cmp.Equal(wantAgain, again) {
			t.Fatalf("next round depends on order:\n%s", cmp.Diff(wantAgain, again))
		}
	}
	if len(wantRound) < 5 {
		t.Errorf("the pile-up merged into %d findings; the test needs several", len(wantRound))
	}
}

// TestMergeRoundOwnedSame: merging in the ledger's own memory, with room
// for the new findings or without, gives what MergeRound gives, across
// rounds that move lines, reopen, resolve and add findings; MergeRound
// leaves the ledger it is given as it was.
func TestMergeRoundOwnedSame(t *testing.T) {
	for seed := range uint64(60) {
		rng := rand.New(rand.NewPCG(seed, 11))
		ledger := MergeRound(nil, sightingsOf(0, rng), policy1, Diff{}).Ledger
		for it := 2; it <= 4; it++ {
			p := Policy{Iteration: it, ConfidenceThreshold: 80, BlockingSeverity: "high"}
			reports := sightingsOf(rng.IntN(5)-2, rng)
			if it == 3 {
				reports = reports[:1] // the others' findings are resolved
			}
			d := Diff{Moved: func(file string, line int) (string, int) { return file, line + it }}
			before := slices.Clone(ledger)
			want := MergeRound(ledger, reports, p, d)
			if diff := cmp.Diff(before, ledger); diff != "" {
				t.Fatalf("seed %d: MergeRound changed its ledger (-before +after):\n%s", seed, diff)
			}
			roomy := make([]Entry, len(ledger), len(ledger)+MaxRoundFindings)
			copy(roomy, ledger)
			for _, owned := range [][]Entry{slices.Clone(ledger), roomy} {
				got := MergeRoundOwned(owned, reports, p, d)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("seed %d, iteration %d, capacity %d: owned merge differs (-want +got):\n%s", seed, it, cap(owned), diff)
				}
				if cap(owned) > len(owned) && len(owned) > 0 && &got.Ledger[0] != &owned[0] {
					t.Fatalf("seed %d: the ledger was copied although it had room", seed)
				}
			}
			ledger = want.Ledger
		}
	}
}

// TestTitleWithoutWords: a finding whose later title has no words ("🔥🔥",
// "???": validation allows them) keeps its earlier wording, and the rounds
// after it merge (the ledger index once indexed a wordless title's first
// word, and every later merge of the run panicked).
func TestTitleWithoutWords(t *testing.T) {
	first := f("parse.go", 10, "correctness", "high", "nil deref in parser")
	first.Rule = "nil-deref"
	again := first
	again.Title = "🔥🔥"
	ledger := MergeRound(nil, []Report{{Reviewer: "critic", Findings: []Finding{first}}}, policy1, Diff{}).Ledger
	for it, title := range []string{"🔥🔥", "???", "nil deref in parser"} {
		p := Policy{Iteration: it + 2, ConfidenceThreshold: 80, BlockingSeverity: "high"}
		again.Title = title
		ledger = MergeRoundOwned(ledger, []Report{{Reviewer: "critic", Findings: []Finding{again}}}, p, Diff{}).Ledger
		if len(ledger) != 1 {
			t.Fatalf("iteration %d: a re-titled finding became %d entries", it+2, len(ledger))
		}
	}
}
