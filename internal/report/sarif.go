package report

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strings"

	"github.com/whetstone-dev/whetstone/internal/review"
)

// InformationURI is where the SARIF and rdjson outputs say whetstone lives.
const InformationURI = "https://github.com/whetstone-dev/whetstone"

// categoryHelp describes each finding category as a SARIF rule.
var categoryHelp = map[string]string{
	"correctness":     "Logic errors, wrong results, unhandled edge cases.",
	"security":        "Vulnerabilities and unsafe handling of untrusted input.",
	"concurrency":     "Races, deadlocks and unsafe sharing between goroutines, threads or processes.",
	"error-handling":  "Swallowed errors, bad fallbacks and missing error paths.",
	"performance":     "Needless work, unbounded growth and slow paths.",
	"api":             "Breaking or confusing interfaces and contracts.",
	"data":            "Schema, migration and data integrity problems.",
	"tests":           "Missing tests and tests that assert nothing.",
	"maintainability": "Naming, duplication and structure that make the code hard to change.",
	"docs":            "Documentation that is missing or says something the code does not do.",
}

// level maps a severity to a SARIF level.
func level(severity string) string {
	switch severity {
	case "critical", "high":
		return "error"
	case "medium":
		return "warning"
	}
	return "note"
}

// ruleID is a finding's SARIF rule: its category, refined by its rule key.
func ruleID(f Finding) string {
	if f.Rule != "" {
		return f.Category + "/" + f.Rule
	}
	return f.Category
}

// Fingerprint identifies a finding across runs for code scanning: the run's
// own id (F-0001) is stable within a run only, so the fingerprint hashes
// what the ledger matches findings on — rule, file and title.
func Fingerprint(f Finding) string {
	h := sha256.Sum256([]byte(ruleID(f) + "\x00" + f.File + "\x00" + strings.ToLower(strings.Join(strings.Fields(f.Title), " "))))
	return hex.EncodeToString(h[:16])
}

// uri is a project-relative path as a relative URI reference.
func uri(path string) string {
	u := (&url.URL{Path: path}).EscapedPath()
	if first, _, _ := strings.Cut(u, "/"); strings.Contains(first, ":") {
		u = "./" + u // "c:x" would read as a scheme
	}
	return u
}

// inSARIF reports whether a finding is a result: every finding except the
// fixed ones, which the code no longer has.
func inSARIF(f Finding) bool { return f.Disposition != Fixed }

// dismissed reports whether a finding was let go for a reason a diff tool
// shows as dismissal: SARIF gives it a suppression, rdjson leaves it out.
func dismissed(f Finding) bool {
	return f.Disposition == Disproved || f.Disposition == Withdrawn || f.Disposition == PreExisting
}

// The SARIF 2.1.0 objects whetstone writes (OASIS SARIF 2.1.0, checked in
// the tests against the official schema in testdata/schema/). Written by
// hand: the maintained Go model, github.com/owenrumney/go-sarif/v3, links a
// JSON Schema validator and net/http into the binary every hook runs
// (+7 MB, 9.5 → 16.5 MB; docs/reports.md).
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool       sarifTool      `json:"tool"`
		Results    []sarifResult  `json:"results"`
		Properties map[string]any `json:"properties,omitempty"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name            string      `json:"name"`
		Version         string      `json:"version,omitempty"`
		SemanticVersion string      `json:"semanticVersion,omitempty"`
		InformationURI  string      `json:"informationUri"`
		Rules           []sarifRule `json:"rules"`
	}
	sarifRule struct {
		ID               string         `json:"id"`
		Name             string         `json:"name"`
		ShortDescription sarifText      `json:"shortDescription"`
		FullDescription  *sarifText     `json:"fullDescription,omitempty"`
		Properties       map[string]any `json:"properties,omitempty"`
	}
	sarifText struct {
		Text string `json:"text"`
	}
	sarifResult struct {
		RuleID              string             `json:"ruleId"`
		RuleIndex           int                `json:"ruleIndex"`
		Level               string             `json:"level"`
		Message             sarifText          `json:"message"`
		Locations           []sarifLocation    `json:"locations"`
		PartialFingerprints map[string]string  `json:"partialFingerprints"`
		Suppressions        []sarifSuppression `json:"suppressions,omitempty"`
		Properties          map[string]any     `json:"properties"`
	}
	sarifLocation struct {
		PhysicalLocation sarifPhysical `json:"physicalLocation"`
	}
	sarifPhysical struct {
		ArtifactLocation sarifArtifact `json:"artifactLocation"`
		Region           sarifRegion   `json:"region"`
	}
	sarifArtifact struct {
		URI string `json:"uri"`
	}
	sarifRegion struct {
		StartLine int `json:"startLine"`
		EndLine   int `json:"endLine"`
	}
	sarifSuppression struct {
		Kind          string `json:"kind"`
		Status        string `json:"status"`
		Justification string `json:"justification"`
	}
)

// SARIF renders report.sarif: one run of the whetstone tool with one rule
// per category (or category/rule key) used, and one result per finding
// that is not fixed. Disproved, withdrawn and pre-existing findings are
// results with a suppression saying why, so code scanning shows them as
// dismissed.
func (r *Report) SARIF(version string) ([]byte, error) {
	run := sarifRun{Tool: sarifTool{Driver: sarifDriver{Name: "whetstone", Version: version, SemanticVersion: version,
		InformationURI: InformationURI, Rules: []sarifRule{}}}, Results: []sarifResult{},
		Properties: map[string]any{"run_id": r.RunID, "state": r.State}}
	if r.Verdict != "" {
		run.Properties["verdict"] = r.Verdict
	}
	rules := map[string]int{}
	for _, f := range r.Findings {
		if !inSARIF(f) {
			continue
		}
		id := ruleID(f)
		if _, ok := rules[id]; !ok {
			rules[id] = len(run.Tool.Driver.Rules)
			rule := sarifRule{ID: id, Name: f.Category, ShortDescription: sarifText{categoryHelp[f.Category]},
				Properties: map[string]any{"tags": []string{f.Category}}}
			if f.Rule != "" {
				rule.FullDescription = &sarifText{categoryHelp[f.Category] + " Rule key: " + review.EscapeMD(f.Rule) + "."}
			}
			run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, rule)
		}
		res := sarifResult{RuleID: id, RuleIndex: rules[id], Level: level(f.Severity), Message: sarifText{message(f)},
			Locations:           []sarifLocation{{sarifPhysical{sarifArtifact{uri(f.File)}, sarifRegion{f.Line, max(f.EndLine, f.Line)}}}},
			PartialFingerprints: map[string]string{"whetstoneFinding/v1": Fingerprint(f)},
			Properties: map[string]any{"id": f.ID, "severity": f.Severity, "confidence": f.Confidence, "disposition": f.Disposition,
				"blocking": f.Blocking, "reviewers": f.Reviewers, "tags": []string{f.Category}}}
		if dismissed(f) {
			res.Suppressions = []sarifSuppression{{Kind: "external", Status: "accepted", Justification: review.EscapeMD(f.Reason)}}
		}
		run.Results = append(run.Results, res)
	}
	return encode(sarifLog{Schema: "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json",
		Version: "2.1.0", Runs: []sarifRun{run}})
}
