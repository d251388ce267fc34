package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strings"

	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"
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
		return sarif.LevelError
	case "medium":
		return sarif.LevelWarning
	}
	return sarif.LevelNote
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

// SARIF renders report.sarif: one run of the whetstone tool with one rule
// per category (or category/rule key) used, and one result per finding
// that is not fixed. Disproved and pre-existing findings are results with
// a suppression saying why, so code scanning shows them as dismissed.
func (r *Report) SARIF(version string) ([]byte, error) {
	log := sarif.NewReport()
	run := sarif.NewRunWithInformationURI("whetstone", InformationURI)
	run.Tool.Driver.WithSemanticVersion(version).WithVersion(version)
	props := sarif.NewPropertyBag().Add("run_id", r.RunID).Add("state", r.State)
	if r.Verdict != "" {
		props.Add("verdict", r.Verdict)
	}
	run.WithProperties(props)
	for _, f := range r.Findings {
		if !inSARIF(f) {
			continue
		}
		id := ruleID(f)
		if run.GetRuleIndex(id) < 0 {
			rule := run.AddRule(id).WithName(f.Category).
				WithShortDescription(sarif.NewMultiformatMessageString().WithText(categoryHelp[f.Category])).
				WithProperties(sarif.NewPropertyBag().WithTags([]string{f.Category}))
			if f.Rule != "" {
				rule.WithFullDescription(sarif.NewMultiformatMessageString().WithText(categoryHelp[f.Category] + " Rule key: " + f.Rule + "."))
			}
		}
		text := f.Title
		if f.Description != "" {
			text += "\n\n" + f.Description
		}
		if f.Suggestion != "" {
			text += "\n\nSuggestion: " + f.Suggestion
		}
		res := run.CreateResultForRule(id).WithLevel(level(f.Severity)).WithMessage(sarif.NewTextMessage(text)).
			WithPartialFingerprints(map[string]string{"whetstoneFinding/v1": Fingerprint(f)}).
			WithProperties(sarif.NewPropertyBag().Add("id", f.ID).Add("severity", f.Severity).Add("confidence", f.Confidence).
				Add("disposition", f.Disposition).Add("blocking", f.Blocking).Add("reviewers", f.Reviewers).WithTags([]string{f.Category}))
		res.AddLocation(sarif.NewLocationWithPhysicalLocation(sarif.NewPhysicalLocation().
			WithArtifactLocation(sarif.NewSimpleArtifactLocation(uri(f.File))).
			WithRegion(sarif.NewSimpleRegion(f.Line, max(f.EndLine, f.Line)))))
		if f.Disposition == Disproved || f.Disposition == PreExisting {
			res.AddSuppression(sarif.NewSuppression().WithKind("external").WithStatus("accepted").WithJustification(f.Reason))
		}
	}
	log.AddRun(run)
	var b bytes.Buffer
	if err := log.PrettyWrite(&b); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return escapeInvisible(b.Bytes()), nil
}
