package review

import (
	"fmt"
	"strings"
)

// Categories is the closed finding vocabulary every reviewer shares (spec
// §3). A lens refines a category with a rule key, never with a new category,
// so the same bug found through two lenses is recognisably one finding.
var Categories = []string{
	"correctness", "security", "concurrency", "error-handling", "performance",
	"api", "data", "tests", "maintainability", "docs",
}

// MaxReportFindings caps the findings of one reviewer report: the most
// severe first, so a round stays readable and a runaway model cannot flood
// the fixer.
const MaxReportFindings = 10

// PreExistingMargin is how many lines around a changed hunk still count as
// the change: a finding further away from every hunk is pre-existing.
const PreExistingMargin = 3

// Policy is what decides whether a finding blocks (spec §5). It is the one
// definition of the rule; Rule renders it for every text a model reads.
type Policy struct {
	Iteration           int
	ConfidenceThreshold int    // findings below it never block on their own
	FixSeverity         string // in iteration 1, findings below it do not block ("": low, as before the setting existed)
	BlockingSeverity    string // after iteration 1 new findings below it, and tests findings below it always, do not block
	PreExistingBlocks   bool   // whetstone.json "pre_existing_blocks"; off by default
}

// TestsCategory is the category of a missing or weak test. Such a finding
// is held to BlockingSeverity from iteration 1: a missing test is a note
// unless the change breaks a tested contract, which the witness (a failing
// test) or the critic (a broken contract) reports as what it is.
const TestsCategory = "tests"

// Blocks decides whether a finding keeps the loop going. prev is the
// finding's earlier sighting (nil for a finding never seen before), and
// preExisting says its lines touch no changed hunk.
//
//  1. A pre-existing finding never blocks (unless PreExistingBlocks).
//  2. A finding that blocked in an earlier iteration still blocks.
//  3. info, or confidence below the threshold, does not block.
//  4. A tests finding blocks only at or above BlockingSeverity.
//  5. In iteration 1, a finding at or above FixSeverity blocks: low
//     remarks never start a fix round.
//  6. Later, only a finding at or above BlockingSeverity does: fresh
//     reviewers cannot move the goalposts with new minor findings.
func (p Policy) Blocks(f Finding, prev *Entry, preExisting bool) bool {
	switch {
	case preExisting && !p.PreExistingBlocks:
		return false
	case prev != nil && prev.Blocking:
		return true
	case f.Severity == "info" || f.Confidence < p.ConfidenceThreshold:
		return false
	case p.Iteration <= 1 && f.Category != TestsCategory:
		return atOrAbove(f.Severity, p.fixSeverity())
	default:
		return atOrAbove(f.Severity, p.BlockingSeverity)
	}
}

// fixSeverity is FixSeverity, low when unset: a run an older whetstone
// started (its state has no fix_severity) keeps its iteration-1 bar.
func (p Policy) fixSeverity() string {
	if p.FixSeverity == "" {
		return "low"
	}
	return p.FixSeverity
}

func atOrAbove(severity, bar string) bool { return SeverityRank(severity) <= SeverityRank(bar) }

// Rule states Policy.Blocks in words, with the policy's settings (its
// Iteration aside). Every agent's task carries this exact text with its
// run's settings, and the user's guide with the defaults (tests fail when
// one drifts), so what a model is told is what the binary does.
func (p Policy) Rule() string {
	var b strings.Builder
	b.WriteString("What blocks (decided by whetstone, not by you): ")
	if p.PreExistingBlocks {
		fmt.Fprintf(&b, "findings are judged alike, pre-existing ones (all lines more than %d lines from every changed hunk) included. ", PreExistingMargin)
	} else {
		fmt.Fprintf(&b, "a finding whose lines all lie more than %d lines from every changed hunk is pre-existing, never blocking. ", PreExistingMargin)
	}
	fix, later := atLeast(p.fixSeverity()), atLeast(p.BlockingSeverity)
	severity := fix + " in iteration 1, " + later + " from iteration 2 on (for a finding not seen before)"
	if fix == later {
		severity = fix
	}
	lead := "Otherwise a"
	if p.PreExistingBlocks {
		lead = "A"
	}
	fmt.Fprintf(&b, "%s finding blocks if it blocked before, or if its confidence is %d+ and its severity %s; ", lead, p.ConfidenceThreshold, severity)
	fmt.Fprintf(&b, "of category %s (a missing or weak test), only at %s. ", TestsCategory, later)
	b.WriteString("The rest are notes, reported.")
	return b.String()
}

// DefaultPolicy is the policy with the default settings (whetstone.json
// without a key, as config.Defaults holds them).
var DefaultPolicy = Policy{ConfidenceThreshold: 80, FixSeverity: "medium", BlockingSeverity: "high"}

// DefaultRule is the rule with the default settings, as the static texts
// (the user's guide) state it.
func DefaultRule() string { return DefaultPolicy.Rule() }

// atLeast names a severity bar in words: "medium or above". info never
// blocks, so an info bar reads as low.
func atLeast(severity string) string {
	switch severity {
	case "critical":
		return "critical"
	case "info":
		severity = "low"
	}
	return severity + " or above"
}
