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

// ValidateMarkdown checks report.md: YAML frontmatter, then the report, and
// last one fenced json block holding a valid report.json — and the whole
// file must be exactly what that JSON renders to, so no section, heading,
// frontmatter value or verdict line can differ from the data. It returns
// the report the file holds.
func ValidateMarkdown(md []byte) (*Report, error) {
	text := string(md)
	if !strings.HasPrefix(text, "---\n") {
		return nil, errors.New("line 1: report.md starts with YAML frontmatter (a line \"---\")")
	}
	if _, _, ok := strings.Cut(text[4:], "\n---\n"); !ok {
		return nil, errors.New("the frontmatter is not closed by a line \"---\"")
	}
	data, err := lastJSONBlock(text)
	if err != nil {
		return nil, err
	}
	if err := ValidateJSON(data); err != nil {
		return nil, fmt.Errorf("the report data block is not a valid %s report:\n%w", Schema, err)
	}
	r, err := Decode(data)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(r.JSON(), data) {
		return nil, errors.New("the report data block is not in the form whetstone writes (re-indented or reordered?)")
	}
	want := r.Markdown()
	if want == text {
		return r, nil
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
			return nil, fmt.Errorf("line %d differs from what the report data renders to:\n  got:  %q\n  want: %q", i+1, g, w)
		}
	}
	return nil, errors.New("the file differs from what the report data renders to")
}

// lastJSONBlock returns the content of the file's last fenced block, which
// must be a json block ending the file.
func lastJSONBlock(text string) ([]byte, error) {
	body := strings.TrimSuffix(text, "\n")
	lines := strings.Split(body, "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "```") || strings.Trim(last, "`") != "" {
		return nil, errors.New("report.md does not end with a fenced json block")
	}
	for i := len(lines) - 2; i >= 0; i-- {
		if lines[i] == last+"json" {
			return []byte(strings.Join(lines[i+1:len(lines)-1], "\n") + "\n"), nil
		}
	}
	return nil, fmt.Errorf("report.md ends with a fence %q but no %q line opens it", last, last+"json")
}

// ValidateFile checks data when it is a run report: report.md (its
// frontmatter or its last block says so) or report.json (a JSON object whose schema is
// whetstone.report/v1). ok is false for anything else, left to the agent
// report validators; summary says what a valid report holds.
func ValidateFile(data []byte) (summary string, ok bool, err error) {
	var r *Report
	kind := "report.md"
	switch {
	case isReportMarkdown(data):
		r, err = ValidateMarkdown(data)
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
	return fmt.Sprintf("valid %s (%s): run %s, %s, %s", kind, Schema, r.RunID, verdict, review.Plural(len(r.Findings), "finding")), true, nil
}

// isReportMarkdown reports whether data looks like a report.md: it starts
// with the report's frontmatter, or ends with a report.json block.
func isReportMarkdown(data []byte) bool {
	if bytes.HasPrefix(data, []byte("---\nschema: \""+Schema+"\"\n")) {
		return true
	}
	block, err := lastJSONBlock(string(data))
	return err == nil && isReportJSON(block)
}

func isReportJSON(data []byte) bool {
	var head struct {
		Schema string `json:"schema"`
	}
	t := bytes.TrimSpace(data)
	return len(t) > 0 && t[0] == '{' && json.Unmarshal(t, &head) == nil && head.Schema == Schema
}
