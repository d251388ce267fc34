// Package review holds the reports agents hand back — reviewer, fixer and
// validator — with their extraction, validation and merging into findings.
package review

// Schema names of the reports whetstone accepts.
const (
	SchemaReview     = "whetstone.review/v1"
	SchemaFix        = "whetstone.fix/v1"
	SchemaValidation = "whetstone.validation/v1"
	SchemaVerdict    = "whetstone.verdict/v1"
)

// Severities from most to least severe.
var Severities = []string{"critical", "high", "medium", "low", "info"}

// SeverityRank orders severities: critical is 0, info is 4, unknown is 5.
func SeverityRank(s string) int {
	for i, v := range Severities {
		if v == s {
			return i
		}
	}
	return len(Severities)
}

// Finding is one problem a reviewer reports (spec §3).
type Finding struct {
	Severity    string `json:"severity"`
	Confidence  int    `json:"confidence"`
	Category    string `json:"category"`
	File        string `json:"file"`
	Line        int    `json:"line"`
	EndLine     int    `json:"end_line,omitempty"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Evidence    string `json:"evidence,omitempty"`
	Suggestion  string `json:"suggestion,omitempty"`
	Rule        string `json:"rule,omitempty"`
	Prior       string `json:"prior,omitempty"`
}

// FixCheck is a reviewer's word on a finding the fixer claimed to have fixed.
type FixCheck struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Note   string `json:"note,omitempty"`
}

// Report is a reviewer's final report (whetstone.review/v1).
type Report struct {
	Schema    string     `json:"schema"`
	Reviewer  string     `json:"reviewer"`
	Verdict   string     `json:"verdict"`
	Findings  []Finding  `json:"findings"`
	FixChecks []FixCheck `json:"fix_checks,omitempty"`
	// Dropped counts the findings cut to keep the MaxReportFindings most
	// severe; Normalised says, by JSON path of the report as sent, what
	// whetstone read differently from how it was written.
	Dropped    int      `json:"dropped,omitempty"`
	Normalised []string `json:"normalised,omitempty"`
}

// FixResult is the fixer's account of one finding.
type FixResult struct {
	ID     string   `json:"id"`
	Status string   `json:"status"`
	Note   string   `json:"note,omitempty"`
	Files  []string `json:"files,omitempty"`
}

// FixReport is the fixer's final report (whetstone.fix/v1).
type FixReport struct {
	Schema     string      `json:"schema"`
	Results    []FixResult `json:"results"`
	Normalised []string    `json:"normalised,omitempty"`
}

// Check is the validator's judgement of one finding.
type Check struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Note   string `json:"note,omitempty"`
}

// ValidationReport is the validator's final report (whetstone.validation/v1).
type ValidationReport struct {
	Schema     string   `json:"schema"`
	Results    []Check  `json:"results"`
	Normalised []string `json:"normalised,omitempty"`
}
