package review

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits on what one report may hold; hostile or runaway output is refused
// with a problem instead of being stored.
const (
	MaxTitleLen    = 300
	MaxTextLen     = 20000
	MaxFilesPerFix = 200
)

// Problem is one thing wrong with a report, located by its JSON path.
type Problem struct {
	Path string
	Msg  string
}

func (p Problem) String() string { return p.Path + ": " + p.Msg }

// Problems is every problem found in one report.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = "- " + p.String()
	}
	return strings.Join(lines, "\n")
}

// Expect is what the hook knows about the report it is validating.
type Expect struct {
	Reviewer string          // the reviewer's short name, e.g. "critic"
	Root     string          // project root; finding files must stay inside it
	Required []string        // ids that must have a result (fixer, validator)
	Known    map[string]bool // ids that exist in the run; nil accepts any well-formed id
	// FixChecks are the ids this reviewer must give a verdict on: the open
	// findings it raised that the fixer reported on (fixed, disputed,
	// deferred, not_fixed) or that still block.
	FixChecks []string
	// Threshold is the run's confidence threshold: a finding below it is
	// kept as a note, never blocking (spec §3), and the normalisation says so.
	Threshold int
	given     string // Root as given, before resolved: a model may name either
}

// resolved returns exp with Root's symlinks resolved once, not per finding.
func (exp Expect) resolved() Expect {
	exp.given = exp.Root
	if exp.Root != "" {
		if real, err := filepath.EvalSymlinks(exp.Root); err == nil {
			exp.Root = real
		}
	}
	return exp
}

// isID reports whether s is a finding id: "F-" and four or more digits.
// Not a regexp: every hook process would pay for compiling it at start-up.
func isID(s string) bool {
	digits, ok := strings.CutPrefix(s, "F-")
	if !ok || len(digits) < 4 {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// checker walks a decoded JSON value and collects problems with their paths.
type checker struct {
	ps      Problems
	fixes   []string          // the normalisations made, "path: what"
	outside map[string]string // outside's answer by file: ten findings often name one file
}

// outsideOnce is outside, resolving the symlinks of each distinct file once.
func (c *checker) outsideOnce(root, file string) string {
	if msg, ok := c.outside[file]; ok {
		return msg
	}
	if c.outside == nil {
		c.outside = map[string]string{}
	}
	msg := outside(root, file)
	c.outside[file] = msg
	return msg
}

func (c *checker) add(path, format string, args ...any) {
	c.ps = append(c.ps, Problem{path, fmt.Sprintf(format, args...)})
}

func decode(raw []byte) (map[string]any, Problems) {
	// encoding/json would turn invalid UTF-8 into U+FFFD and accept it.
	if !utf8.Valid(raw) {
		return nil, Problems{{"$", fmt.Sprintf("is not valid UTF-8 (at byte %d); a report is UTF-8 text", invalidAt(raw))}}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, Problems{{"$", "invalid JSON: " + err.Error()}}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, Problems{{"$", "has more after the JSON object; a report is one JSON object"}}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, Problems{{"$", "must be a JSON object"}}
	}
	return obj, nil
}

// exact moves a key that differs from a known key only in case or
// separators (Severity, endLine), or is a finding key's alias (path,
// line_end), onto the known key, so every later check reads one key. Two
// keys for one field have no clear reading; other unknown keys are ignored.
func (c *checker) exact(obj map[string]any, path string, known ...string) {
	keys := slices.Sorted(maps.Keys(obj))
	for _, k := range keys {
		if slices.Contains(known, k) {
			continue
		}
		want, ok := fold(k, nil, known...)
		if a, alias := findingAliases[canon(k)]; !ok && alias && slices.Contains(known, a) {
			want, ok = a, true
		}
		if !ok {
			continue
		}
		if _, taken := obj[want]; taken {
			c.add(path+"."+k, "is a second %q key; keep one", want)
			continue
		}
		obj[want] = obj[k]
		delete(obj, k)
		c.fix(path+"."+k, "read as %q", want)
	}
}

// field is a checked object's string value, "" when absent.
func field(o map[string]any, key string) string {
	s, _ := o[key].(string)
	return s
}

// number is a checked object's integer value, 0 when absent.
func number(o map[string]any, key string) int {
	n, _ := o[key].(json.Number)
	i, _ := n.Int64()
	return int(i)
}

// invalidAt returns the offset of the first byte of b that is not UTF-8.
func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// str checks a one-line string: no line break, tab or other character that
// hides or disguises text. A string with such a character reads as "" to the
// checks that follow, which then add no second problem about it.
func (c *checker) str(obj map[string]any, path, key string, required bool, max int) string {
	return c.text(obj, path, key, required, max, false)
}

// text checks a string; multiline allows line feeds and tabs in it.
func (c *checker) text(obj map[string]any, path, key string, required bool, max int, multiline bool) string {
	v, ok := obj[key]
	if !ok || v == nil {
		if required {
			c.add(path+"."+key, "is required")
		}
		return ""
	}
	s, ok := v.(string)
	if !ok {
		c.add(path+"."+key, "must be a string")
		return ""
	}
	if t := strings.TrimSpace(s); !multiline && t != s {
		// A title's trailing newline is form; a line break inside one is not.
		s, obj[key] = t, t
		c.fix(path+"."+key, "trimmed the white space around it")
	}
	if required && strings.TrimSpace(s) == "" {
		c.add(path+"."+key, "must not be empty")
	}
	if len(s) > max {
		c.add(path+"."+key, "is %d characters; the limit is %d", len(s), max)
	}
	if msg := textProblem(s, multiline); msg != "" {
		c.add(path+"."+key, "%s", msg)
		return ""
	}
	return s
}

// enum reads one of allowed, forgiving case and separators ("Fixed", "not
// fixed"); synonyms may add other words with one clear reading.
func (c *checker) enum(obj map[string]any, path, key string, allowed ...string) string {
	return c.enumOf(obj, path, key, nil, allowed...)
}

func (c *checker) enumOf(obj map[string]any, path, key string, synonyms map[string]string, allowed ...string) string {
	s := c.str(obj, path, key, true, MaxTitleLen)
	if s == "" || slices.Contains(allowed, s) {
		return s
	}
	want, ok := fold(s, synonyms, allowed...)
	if !ok {
		c.add(path+"."+key, "must be one of %s (got %q)", strings.Join(allowed, ", "), s)
		return s
	}
	obj[key] = want
	c.fix(path+"."+key, "read %s as %q", quoted(s), want)
	return want
}

func (c *checker) array(obj map[string]any, path, key string, required bool) []any {
	v, ok := obj[key]
	if !ok || v == nil {
		if required {
			c.add(path+"."+key, "is required (an array)")
		}
		return nil
	}
	a, ok := v.([]any)
	if !ok {
		c.add(path+"."+key, "must be an array")
	}
	return a
}

func (c *checker) object(v any, path string) map[string]any {
	o, ok := v.(map[string]any)
	if !ok {
		c.add(path, "must be an object")
	}
	return o
}

// schema is known from the agent that sent the report: a missing, misspelt
// or other schema is set to want. A string with hidden characters is still
// refused, as everywhere.
func (c *checker) schema(obj map[string]any, want string) {
	v, present := obj["schema"]
	if v == want {
		return
	}
	if s, ok := v.(string); ok {
		if msg := textProblem(s, false); msg != "" {
			c.add("$.schema", "%s", msg)
			return
		}
	}
	obj["schema"] = want
	was := "missing"
	if present {
		was = shown(v)
	}
	c.fix("$.schema", "set to %q (was %s)", want, was)
}

func (c *checker) id(obj map[string]any, path string, exp Expect) string {
	id := c.str(obj, path, "id", true, 32)
	if id == "" {
		return ""
	}
	if n := normID(id); n != id && isID(n) {
		c.fix(path+".id", "read %s as %q", quoted(id), n)
		id, obj["id"] = n, n
	}
	if !isID(id) {
		c.add(path+".id", "must look like F-0001 (got %q)", id)
	} else if exp.Known != nil && !exp.Known[id] {
		c.add(path+".id", "%s is not a finding of this run", id)
	}
	return id
}

// ValidateReview checks a reviewer report against spec §3, normalising
// what has one clear reading (normalise.go) and recording each
// normalisation in the report.
func ValidateReview(raw []byte, exp Expect) (Report, Problems) {
	obj, ps := decode(raw)
	if ps != nil {
		return Report{}, ps
	}
	exp = exp.resolved()
	var c checker
	c.exact(obj, "$", "schema", "reviewer", "verdict", "findings", "fix_checks")
	c.schema(obj, SchemaReview)
	c.known(obj, "reviewer", exp.Reviewer, 64)
	verdict, findings := c.verdict(obj)
	keep := mostSevere(findings)
	if dropped := len(findings) - len(keep); dropped > 0 {
		c.fix("$.findings", "held %d findings; kept the %d most severe, dropped %d", len(findings), len(keep), dropped)
	}
	for _, i := range keep {
		c.finding(findings[i], fmt.Sprintf("$.findings[%d]", i), exp)
	}
	checks := c.array(obj, "$", "fix_checks", false)
	seen := map[string]bool{}
	for i, fc := range checks {
		p := fmt.Sprintf("$.fix_checks[%d]", i)
		if o := c.object(fc, p); o != nil {
			c.exact(o, p, "id", "status", "note")
			id := c.id(o, p, exp)
			if seen[id] && id != "" {
				c.add(p+".id", "%s has more than one entry", id)
			}
			seen[id] = true
			c.enum(o, p, "status", CheckStatuses...)
			c.text(o, p, "note", false, MaxTextLen, true)
		}
	}
	for _, id := range exp.FixChecks {
		if !seen[id] {
			c.add("$.fix_checks", "has no entry for %s; check what the fixer did with this finding you raised and add {\"id\": %q, \"status\": \"fixed\" | \"not_fixed\" | \"partially_fixed\" | \"withdrawn\", \"note\": …}", id, id)
		}
	}
	if c.ps != nil {
		return Report{}, c.ps
	}
	// The report is built from the value already decoded, checked and
	// normalised in place: one JSON pass per report.
	r := Report{Schema: SchemaReview, Reviewer: field(obj, "reviewer"), Verdict: verdict, Findings: make([]Finding, 0, len(keep)),
		Dropped: len(findings) - len(keep), Normalised: c.fixes}
	for _, i := range keep {
		o := findings[i].(map[string]any)
		f := Finding{Severity: field(o, "severity"), Confidence: number(o, "confidence"), Category: field(o, "category"),
			File: field(o, "file"), Line: number(o, "line"), EndLine: number(o, "end_line"),
			Title: field(o, "title"), Description: field(o, "description"), Evidence: field(o, "evidence"),
			Suggestion: field(o, "suggestion"), Rule: field(o, "rule"), Prior: field(o, "prior")}
		if f.EndLine == 0 {
			f.EndLine = f.Line
		}
		r.Findings = append(r.Findings, f)
	}
	for _, v := range checks {
		o := v.(map[string]any)
		r.FixChecks = append(r.FixChecks, FixCheck{ID: field(o, "id"), Status: field(o, "status"), Note: field(o, "note")})
	}
	slices.SortStableFunc(r.Findings, func(a, b Finding) int { return SeverityRank(a.Severity) - SeverityRank(b.Severity) })
	return r, nil
}

// known sets a field the hook knows from the agent (its schema, its name)
// when the report leaves it out or says something else. want "" (whetstone
// validate: no agent) requires the field instead. A string with hidden
// characters is refused, as everywhere.
func (c *checker) known(obj map[string]any, key, want string, max int) {
	if want == "" {
		c.str(obj, "$", key, true, max)
		return
	}
	v, present := obj[key]
	if v == want {
		return
	}
	if s, ok := v.(string); ok {
		if msg := textProblem(s, false); msg != "" {
			c.add("$."+key, "%s", msg)
			return
		}
	}
	obj[key] = want
	was := "missing"
	if present {
		was = shown(v)
	}
	c.fix("$."+key, "set to %q (was %s)", want, was)
}

// verdict reads the report's verdict and findings. Either one is derived
// from the other when missing: no findings and a clean verdict are one
// reading. A clean verdict with findings, or issues_found with none, has two.
func (c *checker) verdict(obj map[string]any) (string, []any) {
	_, listed := obj["findings"]
	listed = listed && obj["findings"] != nil
	findings := c.array(obj, "$", "findings", false)
	var verdict string
	if v, ok := obj["verdict"]; ok && v != nil {
		verdict = c.enum(obj, "$", "verdict", "clean", "issues_found")
	} else if listed {
		verdict = map[bool]string{true: "clean", false: "issues_found"}[len(findings) == 0]
		c.fix("$.verdict", "set to %q (was missing), from the findings", verdict)
	} else {
		c.add("$.verdict", "is required")
	}
	switch {
	case !listed && verdict == "clean":
		was := "missing"
		if _, present := obj["findings"]; present {
			was = "null"
		}
		findings = []any{}
		c.fix("$.findings", "set to [] (was %s), as the verdict is clean", was)
	case !listed:
		c.add("$.findings", "is required (an array)")
	case verdict == "clean" && len(findings) > 0:
		c.add("$.verdict", `is "clean" but findings is not empty; use "issues_found" or drop the findings`)
	case verdict == "issues_found" && len(findings) == 0:
		c.add("$.verdict", `is "issues_found" but findings is empty; use "clean"`)
	}
	return verdict, findings
}

func (c *checker) finding(v any, p string, exp Expect) {
	o := c.object(v, p)
	if o == nil {
		return
	}
	c.exact(o, p, "severity", "confidence", "category", "file", "line", "end_line", "title", "description", "evidence", "suggestion", "rule", "prior")
	c.enumOf(o, p, "severity", severitySynonyms, Severities...)
	if n, ok := c.confidence(o, p); ok && n < exp.Threshold {
		c.fix(p+".confidence", "%d is below the confidence threshold %d: kept as a note, never blocking", n, exp.Threshold)
	}
	if cat := c.str(o, p, "category", true, 64); cat != "" && !slices.Contains(Categories, cat) {
		if want, ok := fold(cat, categorySynonyms, Categories...); ok {
			o["category"] = want
			c.fix(p+".category", "read %s as %q", quoted(cat), want)
		} else {
			c.add(p+".category", "must be one of %s (got %q); refine with \"rule\", not with a new category", strings.Join(Categories, ", "), cat)
		}
	}
	c.location(o, p, exp)
	if t, ok := o["title"].(string); ok && len(strings.TrimSpace(t)) > MaxTitleLen {
		o["title"] = cut(strings.TrimSpace(t), MaxTitleLen)
		c.fix(p+".title", "cut to %d characters from %d", MaxTitleLen, len(t))
	}
	c.str(o, p, "title", true, MaxTitleLen)
	c.text(o, p, "description", true, MaxTextLen, true)
	for _, k := range []string{"evidence", "suggestion"} {
		c.text(o, p, k, false, MaxTextLen, true)
	}
	c.str(o, p, "rule", false, 128)
	if prior := c.str(o, p, "prior", false, 32); prior != "" {
		if n := normID(prior); n != prior && isID(n) {
			o["prior"] = n
			c.fix(p+".prior", "read %s as %q", quoted(prior), n)
		} else if !isID(prior) {
			c.add(p+".prior", "must look like F-0001 (got %q)", prior)
		}
	}
}

// location reads a finding's file and lines. A line suffix on the file
// ("a.go:42") stands for a missing line; one that disagrees with the line
// given has two readings.
func (c *checker) location(o map[string]any, p string, exp Expect) {
	var loc location
	if file := c.str(o, p, "file", true, 4096); file != "" {
		var msg string
		if loc, msg = c.projectPath(exp, file); msg != "" {
			c.add(p+".file", "%s", msg)
		} else if loc.file != file {
			o["file"] = loc.file
			c.fix(p+".file", "read %s as %q", quoted(file), loc.file)
		}
	}
	line, okLine := 0, false
	if o["line"] != nil {
		line, okLine = c.line(o, p, "line")
	}
	switch {
	case loc.line > 0 && (o["line"] == nil || okLine && line == 0):
		line, okLine = loc.line, true
		o["line"] = json.Number(strconv.Itoa(line))
		c.fix(p+".line", "set to %d, from the file", line)
		if loc.end > 0 && o["end_line"] == nil {
			o["end_line"] = json.Number(strconv.Itoa(loc.end))
		}
	case o["line"] == nil:
		c.add(p+".line", "is required: the line the finding is about (the first line of the file for a finding about all of it)")
	case okLine && loc.line > 0 && line != loc.line:
		c.add(p+".line", "is %d but the file names line %d; give one line", line, loc.line)
	case okLine && line < 1:
		c.add(p+".line", "must be ≥ 1 (got %d): the line the finding is about (the first line of the file for a finding about all of it)", line)
	}
	if o["end_line"] == nil {
		return
	}
	end, ok := c.line(o, p, "end_line")
	switch {
	case ok && end == 0:
		delete(o, "end_line")
		c.fix(p+".end_line", "0 read as no end line")
	case ok && okLine && end < line:
		c.add(p+".end_line", "must be ≥ line (%d), got %d", line, end)
	}
}

// outside explains why a finding's file is not a path inside the project, or
// returns "" when it is.
func outside(root, file string) string {
	if filepath.IsAbs(file) || strings.HasPrefix(file, "/") {
		return fmt.Sprintf("must be relative to the project root (got %q)", file)
	}
	clean := filepath.Clean(file)
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return fmt.Sprintf("leaves the project (got %q)", file)
	}
	if root == "" {
		return ""
	}
	// A symlink inside the project may still point out of it. root has its
	// own symlinks resolved already (Expect.resolved).
	real, err := filepath.EvalSymlinks(filepath.Join(root, clean))
	if err != nil {
		return "" // a finding may name a deleted file
	}
	if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(os.PathSeparator)) {
		return fmt.Sprintf("resolves outside the project (got %q)", file)
	}
	return ""
}

// ValidateFix checks a fixer report against spec §4. The report is built
// from the checked value: the JSON is decoded once.
func ValidateFix(raw []byte, exp Expect) (FixReport, Problems) {
	obj, ps := decode(raw)
	if ps != nil {
		return FixReport{}, ps
	}
	exp = exp.resolved()
	var c checker
	c.exact(obj, "$", "schema", "results")
	c.schema(obj, SchemaFix)
	r := FixReport{Schema: SchemaFix, Results: []FixResult{}}
	seen := map[string]bool{}
	for i, v := range c.array(obj, "$", "results", true) {
		p := fmt.Sprintf("$.results[%d]", i)
		o := c.object(v, p)
		if o == nil {
			continue
		}
		c.exact(o, p, "id", "status", "note", "files")
		id := c.id(o, p, exp)
		if seen[id] && id != "" {
			c.add(p+".id", "%s has more than one result", id)
		}
		seen[id] = true
		res := FixResult{ID: id, Status: c.enum(o, p, "status", "fixed", "not_fixed", "disputed", "deferred")}
		res.Note = c.text(o, p, "note", false, MaxTextLen, true)
		files := c.array(o, p, "files", false)
		if len(files) > MaxFilesPerFix {
			c.add(p+".files", "lists %d files; the limit is %d", len(files), MaxFilesPerFix)
		}
		for j, f := range files {
			s, ok := f.(string)
			fp := fmt.Sprintf("%s.files[%d]", p, j)
			if !ok {
				c.add(fp, "must be a string")
			} else if msg := textProblem(strings.TrimSpace(s), false); msg != "" {
				c.add(fp, "%s", msg)
			} else if loc, msg := c.projectPath(exp, strings.TrimSpace(s)); msg != "" {
				c.add(fp, "%s", msg)
			} else if loc.file != s {
				c.fix(fp, "read %s as %q", quoted(s), loc.file)
				s = loc.file
			}
			res.Files = append(res.Files, s)
		}
		r.Results = append(r.Results, res)
	}
	c.missing(exp.Required, seen)
	if c.ps != nil {
		return FixReport{}, c.ps
	}
	r.Normalised = c.fixes
	return r, nil
}

func (c *checker) missing(required []string, seen map[string]bool) {
	for _, id := range required {
		if !seen[id] {
			c.add("$.results", "has no result for %s; every listed finding needs one", id)
		}
	}
}

// ValidateValidation checks a validator report (docs/design.md), decoding
// it once.
func ValidateValidation(raw []byte, exp Expect) (ValidationReport, Problems) {
	obj, ps := decode(raw)
	if ps != nil {
		return ValidationReport{}, ps
	}
	var c checker
	c.exact(obj, "$", "schema", "results")
	c.schema(obj, SchemaValidation)
	r := ValidationReport{Schema: SchemaValidation, Results: []Check{}}
	seen := map[string]bool{}
	for i, v := range c.array(obj, "$", "results", true) {
		p := fmt.Sprintf("$.results[%d]", i)
		if o := c.object(v, p); o != nil {
			c.exact(o, p, "id", "status", "note")
			check := Check{ID: c.id(o, p, exp)}
			seen[check.ID] = true
			check.Status = c.enum(o, p, "status", "confirmed", "disproved", "uncertain")
			check.Note = c.text(o, p, "note", false, MaxTextLen, true)
			r.Results = append(r.Results, check)
		}
	}
	c.missing(exp.Required, seen)
	if c.ps != nil {
		return ValidationReport{}, c.ps
	}
	r.Normalised = c.fixes
	return r, nil
}

// SchemaOf returns the "schema" field of a JSON object, or "".
func SchemaOf(raw []byte) string {
	var v struct {
		Schema string `json:"schema"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	return v.Schema
}
