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
	BlockingSeverity    string // after iteration 1, new findings below it do not block
	PreExistingBlocks   bool   // whetstone.json "pre_existing_blocks"; off by default
}

// Blocks decides whether a finding keeps the loop going. prev is the
// finding's earlier sighting (nil for a finding never seen before), and
// preExisting says its lines touch no changed hunk.
//
//  1. A pre-existing finding never blocks (unless PreExistingBlocks).
//  2. A finding that blocked in an earlier iteration still blocks.
//  3. info, or confidence below the threshold, does not block.
//  4. In iteration 1 everything else blocks.
//  5. Later, only a finding at or above BlockingSeverity does: fresh
//     reviewers cannot move the goalposts with new minor findings.
func (p Policy) Blocks(f Finding, prev *Entry, preExisting bool) bool {
	switch {
	case preExisting && !p.PreExistingBlocks:
		return false
	case prev != nil && prev.Blocking:
		return true
	case f.Severity == "info" || f.Confidence < p.ConfidenceThreshold:
		return false
	case p.Iteration <= 1:
		return true
	default:
		return SeverityRank(f.Severity) <= SeverityRank(p.BlockingSeverity)
	}
}

// Rule states Policy.Blocks in words, with the given settings. Agent briefs,
// the skill, the command and every dispatch prompt carry this exact text
// (tests fail when one drifts), so what a model is told is what the binary
// does.
func Rule(threshold int, blockingSeverity string, preExistingBlocks bool) string {
	var b strings.Builder
	b.WriteString("What blocks (decided by whetstone, not by you): ")
	if preExistingBlocks {
		fmt.Fprintf(&b, "every finding is judged, including pre-existing ones (lines more than %d lines away from every changed hunk of the diff). ", PreExistingMargin)
	} else {
		fmt.Fprintf(&b, "a finding whose lines are all more than %d lines away from every changed hunk of the diff is pre-existing: recorded and reported, never blocking. ", PreExistingMargin)
	}
	fmt.Fprintf(&b, "Otherwise a finding blocks when it blocked in an earlier iteration, or when its confidence is at least %d and its severity is not info — "+
		"and, from iteration 2 on, for a finding not seen before, when its severity is %s. ", threshold, atLeast(blockingSeverity))
	b.WriteString("Everything else is recorded and reported as a note.")
	return b.String()
}

// DefaultRule is Rule with the default settings, as the static texts (agent
// briefs, the skill, the command) state it.
func DefaultRule() string { return Rule(80, "high", false) }

func atLeast(severity string) string {
	i := SeverityRank(severity)
	if i >= len(Severities) {
		return severity
	}
	if i == 0 {
		return "critical"
	}
	return strings.Join(Severities[:i+1], " or ")
}
