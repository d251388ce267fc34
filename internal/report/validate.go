package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/whetstone-dev/whetstone/internal/review"
)

// ValidateJSON checks report.json: exactly the fields of
// docs/report-schema.json (no unknown ones, every required one), with the
// values the schema allows. The binary checks it in Go: a JSON Schema
// library's start-up would cost every hook call milliseconds (see
// docs/reports.md); the tests check every report whetstone writes against
// the schema itself, and these checks against the same broken reports.
func ValidateJSON(data []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r Report
	if err := dec.Decode(&r); err != nil {
		return fmt.Errorf("- $: %v", err)
	}
	var ps []string
	bad := func(path, format string, args ...any) {
		ps = append(ps, fmt.Sprintf("- %s: %s", path, fmt.Sprintf(format, args...)))
	}
	for _, k := range []string{"schema", "generator", "run_id", "state", "phase", "depth", "iterations", "settings", "started", "duration_seconds",
		"tokens", "scope", "reviewers", "counts", "summary", "findings", "skipped_files", "timeline", "history"} {
		if _, ok := fields[k]; !ok {
			bad("$", "missing property %q", k)
		}
	}
	oneOf := func(path, got string, allowed ...string) {
		if !slices.Contains(allowed, got) {
			bad(path, "must be one of %s (got %q)", strings.Join(allowed, ", "), got)
		}
	}
	verdicts := []string{review.Approve, review.ApproveWithNotes, review.RequestChanges, review.Block}
	phases := []string{"review", "validate", "fix", "done", "stopped"}
	oneOf("$.schema", r.Schema, Schema)
	oneOf("$.state", r.State, InProgress, Done, Stopped)
	oneOf("$.phase", r.Phase, phases...)
	oneOf("$.depth", r.Depth, "quick", "standard", "deep")
	switch {
	case r.State == InProgress && (r.Verdict != "" || !r.Finished.IsZero()):
		bad("$", "a report of a run in progress has no verdict and no finished time")
	case r.State == Stopped && (r.StopReason == "aborted" || r.StopReason == "error"):
		if r.Verdict != "" {
			bad("$.verdict", "an aborted or failed run has no verdict (got %q)", r.Verdict)
		}
		if r.Finished.IsZero() {
			bad("$", "missing property \"finished\"")
		}
	case r.State != InProgress && r.State != "":
		oneOf("$.verdict", r.Verdict, verdicts...)
		if r.Finished.IsZero() {
			bad("$", "missing property \"finished\"")
		}
	}
	if r.State == Stopped {
		oneOf("$.stop_reason", r.StopReason, "max_iterations", "stalled", "budget", "no_progress", "aborted", "error")
	}
	if n := len(r.Summary); n < 3 || n > 6 {
		bad("$.summary", "must have 3 to 6 lines (got %d)", n)
	}
	if r.Iterations < 0 || r.Duration < 0 || (r.Tokens != nil && *r.Tokens < 0) {
		bad("$", "iterations, duration_seconds and tokens are never negative")
	}
	for i, f := range r.Findings {
		p := fmt.Sprintf("$.findings[%d]", i)
		if !isID(f.ID) {
			bad(p+".id", "must look like F-0001 (got %q)", f.ID)
		}
		oneOf(p+".disposition", f.Disposition, dispositionOrder...)
		oneOf(p+".status", f.Status, review.StatusOpen, review.StatusReopened, review.StatusResolved, review.StatusDisproved, review.StatusWithdrawn)
		switch {
		case f.Disposition == Fixed && disputed(f):
			bad(p+".disposition", "is fixed, but the fixer %s %s: a disputed or deferred finding is never reported as fixed", f.Fixer.Status, f.ID)
		case f.Disposition == Fixed && f.Status != review.StatusResolved:
			bad(p+".disposition", "is fixed, but %s's status is %q, not resolved", f.ID, f.Status)
		case (f.Disposition == Withdrawn) != (f.Status == review.StatusWithdrawn):
			bad(p+".disposition", "is %s with status %q: a finding is withdrawn exactly when its status is withdrawn", f.Disposition, f.Status)
		}
		oneOf(p+".severity", f.Severity, review.Severities...)
		oneOf(p+".category", f.Category, review.Categories...)
		if f.Confidence < 0 || f.Confidence > 100 {
			bad(p+".confidence", "must be 0 to 100 (got %d)", f.Confidence)
		}
		if f.Line < 1 || f.EndLine < 1 {
			bad(p+".line", "line and end_line must be at least 1")
		}
		if f.Line > math.MaxInt32 || f.EndLine > math.MaxInt32 {
			bad(p+".line", "line and end_line must be at most %d (got %d and %d)", math.MaxInt32, f.Line, f.EndLine)
		}
	}
	for i, rd := range r.Timeline {
		if rd.Verdict != "" {
			oneOf(fmt.Sprintf("$.timeline[%d].verdict", i), rd.Verdict, verdicts...)
		}
	}
	for i, h := range r.History {
		oneOf(fmt.Sprintf("$.history[%d].phase", i), h.Phase, phases...)
	}
	if ps != nil {
		return errors.New(strings.Join(ps, "\n"))
	}
	return nil
}

// isID reports whether s is a finding id, "F-" and four or more digits
// (no regexp: every hook process would pay for compiling it at start).
func isID(s string) bool {
	digits, ok := strings.CutPrefix(s, "F-")
	return ok && len(digits) >= 4 && strings.Trim(digits, "0123456789") == ""
}

// ValidateMarkdown checks report.md: it opens with the verdict line and
// ends with the marker naming the schema and the run. With data, the
// report.json beside it, it also checks that report.json is valid, names
// the same run, and renders to exactly this file, so no section, heading,
// verdict line or link can differ from the data; it then returns that
// report. Without data it returns a report holding only the run id and the
// verdict read from the file.
func ValidateMarkdown(md, data []byte) (*Report, error) {
	text := string(md)
	first, _, _ := strings.Cut(text, "\n")
	verdict, ok := verdictLine(first)
	if !ok {
		return nil, fmt.Errorf("line 1: report.md opens with the verdict line (\"**Verdict: …** · whetstone review …\" or \"**In progress** …\"), got %q", review.CleanLine(first))
	}
	id, ok := markerRun(text)
	if !ok {
		return nil, fmt.Errorf("report.md does not end with the line \"<!-- %s run …: report.json beside this file holds the data -->\"", Schema)
	}
	if data == nil {
		if err := fencesClosed(text); err != nil {
			return nil, err
		}
		return &Report{Schema: Schema, RunID: id, Verdict: verdict, State: map[bool]string{true: InProgress}[verdict == ""]}, nil
	}
	if err := ValidateJSON(data); err != nil {
		return nil, fmt.Errorf("the report.json beside it is not a valid %s report:\n%w", Schema, err)
	}
	r, err := Decode(data)
	if err != nil {
		return nil, err
	}
	want := r.Markdown()
	if want == text {
		return r, nil
	}
	if wantID, _ := markerRun(want); wantID != id {
		return nil, fmt.Errorf("report.md is run %s's report, report.json run %s's", id, r.RunID)
	}
	got, exp := strings.Split(text, "\n"), strings.Split(want, "\n")
	for i := range max(len(got), len(exp)) {
		g, w := "(end of file)", "(end of file)"
		if i < len(got) {
			g = got[i]
		}
		if i < len(exp) {
			w = exp[i]
		}
		if g != w {
			return nil, fmt.Errorf("line %d differs from what report.json renders to:\n  got:  %q\n  want: %q", i+1, g, w)
		}
	}
	return nil, errors.New("the file differs from what report.json renders to")
}

// verdictLine reads report.md's first line: the verdict, or "" for a run
// in progress or without a verdict ("—").
func verdictLine(line string) (string, bool) {
	if strings.HasPrefix(line, "**In progress** — ") {
		return "", true
	}
	v, ok := strings.CutPrefix(line, "**Verdict: ")
	v, _, found := strings.Cut(v, "** · whetstone review ")
	switch {
	case !ok || !found:
		return "", false
	case v == "—":
		return "", true
	case slices.Contains([]string{review.Approve, review.ApproveWithNotes, review.RequestChanges, review.Block}, v):
		return v, true
	}
	return "", false
}

// markerRun returns the run id of report.md's last line, the marker.
func markerRun(text string) (string, bool) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	last := lines[len(lines)-1]
	rest, ok := strings.CutPrefix(last, "<!-- "+Schema+" run ")
	if !ok {
		return "", false
	}
	id, ok := strings.CutSuffix(rest, ": report.json beside this file holds the data -->")
	return id, ok && id != "" && !strings.ContainsAny(id, " <>")
}

// fencesClosed checks that every fenced block of text is closed.
func fencesClosed(text string) error {
	fence := ""
	for n, line := range strings.Split(text, "\n") {
		switch {
		case fence != "" && line == fence:
			fence = ""
		case fence == "" && strings.HasPrefix(line, "```"):
			fence = line[:len(line)-len(strings.TrimLeft(line, "`"))]
			if strings.Contains(strings.TrimLeft(line, "`"), "`") {
				return fmt.Errorf("line %d opens a fence with a backtick in its info string", n+1)
			}
		}
	}
	if fence != "" {
		return errors.New("report.md ends inside a fenced block")
	}
	return nil
}

// ValidateFile checks data when it is a run report: report.md (it opens
// with the verdict line and ends with the report's marker) or report.json
// (a JSON object whose schema is whetstone.report/v1). sibling is the
// report.json found beside the file, or nil: a report.md is checked against
// it. ok is false for anything else, left to the agent report validators;
// summary says what a valid report holds.
func ValidateFile(data, sibling []byte) (summary string, ok bool, err error) {
	var r *Report
	kind := "report.md"
	switch {
	case isReportMarkdown(data):
		r, err = ValidateMarkdown(data, sibling)
	case isReportJSON(data):
		kind = "report.json"
		r, err = Decode(data)
	default:
		return "", false, nil
	}
	if err != nil {
		return "", true, fmt.Errorf("not a valid %s (%s):\n%w", kind, Schema, err)
	}
	verdict := r.Verdict
	switch {
	case verdict == "" && r.State == InProgress:
		verdict = "no verdict yet"
	case verdict == "":
		verdict = "stopped (" + r.StopReason + ") with no verdict"
	}
	if kind == "report.md" && sibling == nil {
		return fmt.Sprintf("valid %s (%s): run %s, %s; no report.json beside it, so only its form was checked", kind, Schema, r.RunID, verdict), true, nil
	}
	return fmt.Sprintf("valid %s (%s): run %s, %s, %s", kind, Schema, r.RunID, verdict, review.Plural(len(r.Findings), "finding")), true, nil
}

// isReportMarkdown reports whether data looks like a report.md: it opens
// with a verdict line or ends with the report's marker.
func isReportMarkdown(data []byte) bool {
	first, _, _ := strings.Cut(string(data), "\n")
	_, verdict := verdictLine(first)
	_, marker := markerRun(string(data))
	return verdict || marker
}

func isReportJSON(data []byte) bool {
	var head struct {
		Schema string `json:"schema"`
	}
	t := bytes.TrimSpace(data)
	return len(t) > 0 && t[0] == '{' && json.Unmarshal(t, &head) == nil && head.Schema == Schema
}
