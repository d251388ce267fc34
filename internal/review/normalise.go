package review

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Form is forgiven, meaning is not (docs/design.md, "One finding
// vocabulary"): a deviation with one clear reading is normalised, written
// back into the decoded report and recorded; anything else is a Problem the
// agent is sent back with. Every normalisation runs before the plain-text
// checks, so no forgiven form lets hostile text through.

// canon folds a key or an enum value: lower case, without spaces, hyphens or
// underscores, so "Issues Found", "issues-found" and "ISSUES_FOUND" meet.
func canon(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '_':
			return -1
		}
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, strings.TrimSpace(s))
}

// Synonyms with one clear reading, by canon form. Levels of other scales
// (major, minor, warning, error, blocker, severe) are not here: each sits
// between two of ours depending on the tool that coined it, and the severity
// decides what blocks.
var (
	severitySynonyms = map[string]string{"informational": "info", "information": "info", "moderate": "medium"}
	categorySynonyms = map[string]string{
		"documentation": "docs", "doc": "docs", "test": "tests", "testing": "tests", "perf": "performance",
		"errors": "error-handling", "racecondition": "concurrency", "race": "concurrency",
	}
	// Key aliases of a finding, by canon form; a key differing from a known
	// key only in case or separators (endLine, Severity) is read as that key.
	findingAliases = map[string]string{
		"path": "file", "filename": "file", "filepath": "file",
		"linestart": "line", "startline": "line", "linenumber": "line",
		"lineend":        "end_line",
		"recommendation": "suggestion",
	}
)

// fold returns the allowed value s means, when s differs from it only in
// case and separators or is a listed synonym; ok is false for no reading.
func fold(s string, synonyms map[string]string, allowed ...string) (string, bool) {
	c := canon(s)
	for _, a := range allowed {
		if canon(a) == c {
			return a, true
		}
	}
	if a, ok := synonyms[c]; ok {
		return a, true
	}
	return "", false
}

// fix records a normalisation at path.
func (c *checker) fix(path, format string, args ...any) {
	c.fixes = append(c.fixes, path+": "+fmt.Sprintf(format, args...))
}

// quoted shows a value the model sent in a normalisation record: quoted
// (control and format characters escaped) and cut to a readable length.
func quoted(s string) string {
	if len(s) > 80 {
		s = cut(s, 80)
	}
	return strconv.Quote(s)
}

// cut shortens s to at most max bytes, ending in "…", on a rune boundary.
func cut(s string, max int) string {
	const ellipsis = "…"
	if len(s) <= max {
		return s
	}
	n := max - len(ellipsis)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.TrimRight(s[:n], " ") + ellipsis
}

// parseNumber reads v as a number: a JSON number or a string holding one
// ("42"); percent allows a trailing "%" on a string. fraction says the number
// was written with a decimal point or an exponent.
func parseNumber(v any, percent bool) (f float64, fraction, ok bool) {
	var s string
	switch v := v.(type) {
	case json.Number:
		s = string(v)
	case string:
		s = strings.TrimSpace(v)
		if percent {
			if t, found := strings.CutSuffix(s, "%"); found {
				f, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
				return f, false, err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
			}
		}
	default:
		return 0, false, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false, false
	}
	return f, strings.ContainsAny(s, ".eE"), true
}

// confidence reads a finding's confidence: an integer 0–100, the same as a
// string ("90", "90%") or with a zero fraction (90.0), or a fraction of one
// written as a decimal (0.85 is 85). 9.5 or "high" has no clear reading.
func (c *checker) confidence(o map[string]any, p string) (int, bool) {
	v, present := o["confidence"]
	if !present || v == nil {
		c.add(p+".confidence", "is required (an integer 0–100)")
		return 0, false
	}
	f, fraction, ok := parseNumber(v, true)
	n := int(math.Round(f))
	switch {
	case !ok:
		c.add(p+".confidence", "must be an integer 0–100 (got %s)", shown(v))
		return 0, false
	case fraction && f >= 0 && f <= 1:
		n = int(math.Round(f * 100))
	case f != math.Trunc(f) || f < 0 || f > 100:
		c.add(p+".confidence", "must be an integer 0–100 (got %s)", shown(v))
		return 0, false
	}
	c.setNumber(o, p, "confidence", v, n)
	return n, true
}

// maxLine is the largest line or column whetstone takes: the formats it
// writes (SARIF, rdjson, reviewdog) and the clients read lines as int32.
const maxLine = math.MaxInt32

// line reads a line number: a whole number ≥ 1 within int32, also as a
// string or with a zero fraction.
func (c *checker) line(o map[string]any, p, key string) (int, bool) {
	v := o[key]
	f, _, ok := parseNumber(v, false)
	if !ok || f != math.Trunc(f) {
		c.add(p+"."+key, "must be an integer (got %s)", shown(v))
		return 0, false
	}
	switch {
	case f > maxLine:
		c.add(p+"."+key, "must be at most %d (got %s): no file has that many lines", maxLine, shown(v))
		return 0, false
	case f < -maxLine:
		c.add(p+"."+key, "must be ≥ 1 (got %s)", shown(v))
		return 0, false
	}
	n := int(f)
	c.setNumber(o, p, key, v, n)
	return n, true
}

// setNumber writes n back as the canonical JSON integer, recording the
// normalisation when v was written otherwise.
func (c *checker) setNumber(o map[string]any, p, key string, v any, n int) {
	canonical := json.Number(strconv.Itoa(n))
	if v != canonical {
		c.fix(p+"."+key, "read %s as %d", shown(v), n)
	}
	o[key] = canonical
}

// shown is a JSON value as a problem or a record quotes it.
func shown(v any) string {
	switch v := v.(type) {
	case string:
		return quoted(v)
	case json.Number:
		return string(v)
	case nil:
		return "null"
	}
	b, _ := json.Marshal(v)
	return cut(string(b), 80)
}

// normID reads "f-3", "F3" or "F-3" as F-0003: one clear reading of an id.
func normID(s string) string {
	t := strings.ToUpper(strings.TrimSpace(s))
	digits, ok := strings.CutPrefix(t, "F-")
	if !ok {
		digits, ok = strings.CutPrefix(t, "F")
	}
	if !ok || digits == "" || len(digits) > 9 || strings.Trim(digits, "0123456789") != "" {
		return s
	}
	if len(digits) >= 4 {
		return "F-" + digits
	}
	n, _ := strconv.Atoi(digits)
	return fmt.Sprintf("F-%04d", n)
}

// location is where a file string points, once read.
type location struct {
	file      string // relative to the project root, slash-separated
	line, end int    // a line suffix ("a.go:42", "a.go:42-44", "a.go#L42"), 0 when none
}

// tooLarge reports whether a line suffix names a line or column above
// maxLine.
func tooLarge(s string) bool {
	for _, t := range strings.FieldsFunc(s, func(r rune) bool { return r < '0' || r > '9' }) {
		if n, err := strconv.ParseUint(t, 10, 64); err != nil || n > maxLine {
			return true
		}
	}
	return false
}

// projectPath reads a file a model named as a path relative to the project
// root, or explains why it has no such reading: absolute paths inside the
// project (also through a symlinked root: /tmp and /private/tmp), "./a.go",
// "file://", backslashes and a line suffix are forgiven; a path outside the
// project, into .git or to the root itself is not.
func (c *checker) projectPath(exp Expect, file string) (location, string) {
	var loc location
	name := strings.TrimPrefix(file, "file://")
	exists := func(rel string) bool {
		if exp.Root == "" || filepath.IsAbs(rel) {
			_, err := os.Lstat(rel)
			return err == nil
		}
		_, err := os.Lstat(filepath.Join(exp.Root, rel))
		return err == nil
	}
	if strings.Contains(name, `\`) && !exists(name) {
		name = strings.ReplaceAll(name, `\`, "/")
	}
	if filepath.IsAbs(name) || strings.HasPrefix(name, "/") {
		rel, ok := exp.inside(name)
		if !ok {
			return loc, fmt.Sprintf("is outside the project (got %s); name a file of the project, relative to its root", quoted(file))
		}
		name = rel
	}
	clean := tidy(name)
	// A line suffix is cut once, and only when what remains has none: the
	// stored form must read the same when checked again.
	if f, line, end := lineSuffix(clean); line > 0 && !exists(clean) {
		if _, again, _ := lineSuffix(tidy(f)); again == 0 {
			if tooLarge(clean[len(f):]) {
				return loc, fmt.Sprintf("names a line or column above %d (got %s); no file has that many lines", maxLine, quoted(file))
			}
			clean, loc.line, loc.end = tidy(f), line, end
		}
	}
	switch first, _, _ := strings.Cut(clean, "/"); {
	case len(first) == 2 && first[1] == ':' && (first[0]|0x20 >= 'a' && first[0]|0x20 <= 'z'):
		return loc, fmt.Sprintf("is a Windows path (got %s); name a file of the project, relative to its root", quoted(file))
	case clean == "..", first == "..":
		return loc, fmt.Sprintf("leaves the project (got %s); name a file of the project, relative to its root", quoted(file))
	case clean == ".":
		return loc, fmt.Sprintf("names the project root (got %s); name the file the finding is about", quoted(file))
	case strings.EqualFold(first, ".git"):
		return loc, fmt.Sprintf("is inside .git (got %s), which is not part of the change; name a file of the project", quoted(file))
	}
	if msg := c.outsideOnce(exp.Root, clean); msg != "" {
		return loc, msg
	}
	loc.file = clean
	return loc, ""
}

// tidy cleans a relative path until it is stable: cleaning "a /." exposes a
// space to trim.
func tidy(name string) string {
	for {
		next := filepath.ToSlash(filepath.Clean(strings.TrimSpace(name)))
		if next == name {
			return name
		}
		name = next
	}
}

// lineSuffix splits "a.go:42", "a.go:42:7", "a.go:42-44" and "a.go#L42-L44"
// into the file and its lines.
func lineSuffix(s string) (string, int, int) {
	num := func(t string) int {
		if t == "" || strings.Trim(t, "0123456789") != "" {
			return 0
		}
		n, err := strconv.Atoi(t)
		if errors.Is(err, strconv.ErrRange) {
			return math.MaxInt // a number too large: refused by its caller
		}
		if err != nil || n < 1 {
			return 0
		}
		return n
	}
	if i := strings.LastIndex(s, "#L"); i > 0 {
		a, b, _ := strings.Cut(s[i+2:], "-")
		if line := num(a); line > 0 {
			return s[:i], line, num(strings.TrimPrefix(b, "L"))
		}
	}
	i := strings.Index(s, ":")
	for i >= 0 && i+1 < len(s) && (s[i+1] < '0' || s[i+1] > '9') {
		j := strings.Index(s[i+1:], ":")
		if j < 0 {
			return s, 0, 0
		}
		i += 1 + j
	}
	if i <= 0 {
		return s, 0, 0
	}
	rest := s[i+1:]
	a, b, dash := strings.Cut(rest, "-")
	if !dash {
		a, b, _ = strings.Cut(rest, ":") // a column after the line
		if line := num(a); line > 0 && (b == "" || num(b) > 0) {
			return s[:i], line, 0
		}
		return s, 0, 0
	}
	if line, end := num(a), num(b); line > 0 && end > 0 {
		return s[:i], line, end
	}
	return s, 0, 0
}

// inside returns an absolute path's place relative to the project root, as
// given and with its symlinks resolved, or with the path's own symlinks
// resolved (the longest part that exists: a finding may name a deleted
// file). Where the path then really points is checked by outside.
func (exp Expect) inside(abs string) (string, bool) {
	if exp.Root == "" {
		return "", false
	}
	for _, root := range []string{exp.given, exp.Root} {
		if rel, ok := under(root, abs); ok && root != "" {
			return rel, true
		}
	}
	// At most maxMissing trailing parts may not exist (a deleted file's
	// directories): a hostile path of a thousand parts costs little.
	const maxMissing = 16
	dir, rest := filepath.Clean(abs), ""
	for range maxMissing {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return under(exp.Root, filepath.Join(real, rest))
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
	return "", false
}

func under(root, abs string) (string, bool) {
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

// mostSevere returns the indexes of the findings a report keeps, at most
// MaxReportFindings: the most severe first, then the most confident, then
// in the report's order. A finding whose severity has no reading ranks last.
func mostSevere(findings []any) []int {
	type ranked struct{ i, sev, conf int }
	rs := make([]ranked, len(findings))
	for i, v := range findings {
		rs[i] = ranked{i, len(Severities), -1}
		o, _ := v.(map[string]any)
		if s, ok := o["severity"].(string); ok {
			if sev, ok := fold(s, severitySynonyms, Severities...); ok {
				rs[i].sev = SeverityRank(sev)
			}
		}
		if f, fraction, ok := parseNumber(o["confidence"], true); ok {
			if fraction && f <= 1 {
				f *= 100
			}
			rs[i].conf = int(f)
		}
	}
	slices.SortStableFunc(rs, func(a, b ranked) int {
		if a.sev != b.sev {
			return a.sev - b.sev
		}
		return b.conf - a.conf
	})
	keep := make([]int, 0, min(len(rs), MaxReportFindings))
	for _, r := range rs[:min(len(rs), MaxReportFindings)] {
		keep = append(keep, r.i)
	}
	slices.Sort(keep)
	return keep
}
