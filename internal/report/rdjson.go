package report

import (
	"strings"

	"github.com/whetstone-dev/whetstone/internal/review"
)

// rdjson is the Reviewdog Diagnostic Format's DiagnosticResult
// (github.com/reviewdog/reviewdog, proto/rdf/reviewdog.proto), written by
// hand: its Go model would bring protobuf into the binary for six structs.
type rdResult struct {
	Source      rdSource       `json:"source"`
	Severity    string         `json:"severity,omitempty"`
	Diagnostics []rdDiagnostic `json:"diagnostics"`
}

type rdSource struct {
	Name string `json:"name"`
	URL  string `json:"url,omitempty"`
}

type rdDiagnostic struct {
	Message  string     `json:"message"`
	Location rdLocation `json:"location"`
	Severity string     `json:"severity"`
	Source   rdSource   `json:"source"`
	Code     *rdCode    `json:"code,omitempty"`
}

type rdLocation struct {
	Path  string  `json:"path"`
	Range rdRange `json:"range"`
}

type rdRange struct {
	Start rdPosition `json:"start"`
	End   rdPosition `json:"end"`
}

type rdPosition struct {
	Line int `json:"line"`
}

type rdCode struct {
	Value string `json:"value"`
	URL   string `json:"url,omitempty"`
}

// rdSeverity maps a finding to reviewdog's severities: what blocks is an
// ERROR, other critical, high and medium findings are WARNINGs, the rest
// INFO.
func rdSeverity(f Finding) string {
	switch {
	case f.Blocking:
		return "ERROR"
	case level(f.Severity) == "note":
		return "INFO"
	}
	return "WARNING"
}

// RDJSON renders the open findings (those a reviewer should look at in the
// diff: not fixed, disproved, withdrawn or pre-existing) in reviewdog's
// rdjson format.
// Ranges are line-wise: start and end lines without columns.
func (r *Report) RDJSON() []byte {
	src := rdSource{Name: "whetstone", URL: InformationURI}
	out := rdResult{Source: src, Diagnostics: []rdDiagnostic{}}
	worst := ""
	for _, f := range r.Findings {
		if f.Disposition == Fixed || dismissed(f) {
			continue
		}
		msg := "[" + review.InlineMD(f.ID) + " " + review.InlineMD(f.Severity) + "] " + message(f)
		d := rdDiagnostic{Message: msg, Severity: rdSeverity(f), Source: src, Code: &rdCode{Value: ruleID(f)},
			Location: rdLocation{Path: f.File, Range: rdRange{Start: rdPosition{f.Line}, End: rdPosition{max(f.EndLine, f.Line)}}}}
		out.Diagnostics = append(out.Diagnostics, d)
		if worst == "" || rank(d.Severity) < rank(worst) {
			worst = d.Severity
		}
	}
	out.Severity = worst
	data, err := encode(out)
	if err != nil {
		panic(err) // plain data only
	}
	return data
}

// message is a finding's text for a reader that renders Markdown:
// reviewdog posts rdjson messages as pull-request comments, and SARIF
// messages reach the same comments through `reviewdog -f=sarif`. The
// title is escaped (review.EscapeMD: no link, image, HTML, heading or
// emphasis, an @mention in a code span); the description and the
// suggestion, which are prose and may hold code, go into fenced text
// blocks no line of theirs can close, so a "```suggestion" inside stays
// text (no "Commit suggestion" button), an image loads nothing and a
// mention pings no one.
func message(f Finding) string {
	parts := []string{review.EscapeMD(f.Title)}
	if f.Description != "" {
		parts = append(parts, strings.TrimSuffix(review.FenceMD(f.Description, "text"), "\n"))
	}
	if f.Suggestion != "" {
		parts = append(parts, "Suggestion:", strings.TrimSuffix(review.FenceMD(f.Suggestion, "text"), "\n"))
	}
	return strings.Join(parts, "\n\n")
}

func rank(severity string) int {
	return map[string]int{"ERROR": 0, "WARNING": 1, "INFO": 2}[severity]
}
