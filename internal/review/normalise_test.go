package review

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestForgiveForm: deviations real models send in a reviewer report. Each is
// either normalised — stored in one form, and recorded in Normalised — or
// rejected with its JSON path and a sentence the model can act on.
func TestForgiveForm(t *testing.T) {
	real := t.TempDir()
	for _, f := range []string{"a.go", "sub/b.go", "a:b.go"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(real, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(real, f), []byte("package a\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc", filepath.Join(real, "escape")); err != nil {
		t.Fatal(err)
	}
	// The project as the hook is given it, through a symlink, as macOS's
	// /tmp is /private/tmp: a model may name either.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	real, _ = filepath.EvalSymlinks(real)

	file := func(r Report) any { return r.Findings[0].File }
	line := func(r Report) any { return [2]int{r.Findings[0].Line, r.Findings[0].EndLine} }
	severity := func(r Report) any { return r.Findings[0].Severity }
	confidence := func(r Report) any { return r.Findings[0].Confidence }
	category := func(r Report) any { return r.Findings[0].Category }
	title := func(r Report) any { return r.Findings[0].Title }
	set := func(key string, v any) func(r, f map[string]any) {
		return func(_, f map[string]any) { f[key] = v }
	}
	setReport := func(key string, v any) func(r, f map[string]any) {
		return func(r, _ map[string]any) { r[key] = v }
	}
	unset := func(key string) func(r, f map[string]any) {
		return func(r, f map[string]any) { delete(f, key); delete(r, key) }
	}
	long := strings.Repeat("Lock held across the network call ", 12)

	tests := []struct {
		name   string
		mutate func(report, finding map[string]any)
		get    func(Report) any // the stored form of what was sent
		want   any
		note   string // a normalisation record containing this; "" for none
		reject string // the problems, one a line, when rejected
	}{
		// file
		{name: "absolute path inside the project", mutate: set("file", filepath.Join(link, "a.go")), get: file, want: "a.go", note: `$.findings[0].file: read "` + link},
		{name: "absolute path through the resolved root", mutate: set("file", filepath.Join(real, "sub/b.go")), get: file, want: "sub/b.go", note: "$.findings[0].file"},
		{name: "absolute path of a deleted file", mutate: set("file", filepath.Join(real, "gone/c.go")), get: file, want: "gone/c.go", note: "$.findings[0].file"},
		{name: "dot slash", mutate: set("file", "./a.go"), get: file, want: "a.go", note: `read "./a.go" as "a.go"`},
		{name: "file URL", mutate: set("file", "file://"+filepath.Join(link, "a.go")), get: file, want: "a.go", note: "$.findings[0].file"},
		{name: "Windows separators", mutate: set("file", `sub\b.go`), get: file, want: "sub/b.go", note: "$.findings[0].file"},
		{name: "line in the file, line missing", mutate: func(_, f map[string]any) { f["file"] = "a.go:42"; delete(f, "line") }, get: line, want: [2]int{42, 42}, note: "$.findings[0].line: set to 42, from the file"},
		{name: "line range in the file, line 0", mutate: func(_, f map[string]any) { f["file"] = "sub/b.go:42-44"; f["line"] = 0 }, get: line, want: [2]int{42, 44}, note: "$.findings[0].file"},
		{name: "GitHub line anchor", mutate: func(_, f map[string]any) { f["file"] = "a.go#L7"; delete(f, "line") }, get: line, want: [2]int{7, 7}, note: "$.findings[0].line"},
		{name: "line and column in the file, same line", mutate: set("file", "a.go:3:14"), get: file, want: "a.go", note: "$.findings[0].file"},
		{name: "a file whose name has a colon is that file", mutate: set("file", "a:b.go"), get: file, want: "a:b.go"},
		// severity, confidence, category
		{name: "capitalised severity", mutate: set("severity", "High"), get: severity, want: "high", note: `$.findings[0].severity: read "High" as "high"`},
		{name: "upper-case severity", mutate: set("severity", "CRITICAL"), get: severity, want: "critical", note: "$.findings[0].severity"},
		{name: "informational", mutate: set("severity", "informational"), get: severity, want: "info", note: "$.findings[0].severity"},
		{name: "moderate", mutate: set("severity", "Moderate"), get: severity, want: "medium", note: "$.findings[0].severity"},
		{name: "confidence as a fraction", mutate: set("confidence", json.Number("0.85")), get: confidence, want: 85, note: "$.findings[0].confidence: read 0.85 as 85"},
		{name: "confidence 1.0 is certainty", mutate: set("confidence", json.Number("1.0")), get: confidence, want: 100, note: "$.findings[0].confidence"},
		{name: "confidence as a string", mutate: set("confidence", "90"), get: confidence, want: 90, note: `$.findings[0].confidence: read "90" as 90`},
		{name: "confidence as a percentage", mutate: set("confidence", "95%"), get: confidence, want: 95, note: "$.findings[0].confidence"},
		{name: "confidence with a zero fraction", mutate: set("confidence", json.Number("90.0")), get: confidence, want: 90, note: "$.findings[0].confidence"},
		{name: "confidence below the threshold is a note", mutate: set("confidence", 60), get: confidence, want: 60, note: "$.findings[0].confidence: 60 is below the confidence threshold 80: kept as a note, never blocking"},
		{name: "capitalised category", mutate: set("category", "Security"), get: category, want: "security", note: `$.findings[0].category: read "Security" as "security"`},
		{name: "category with an underscore", mutate: set("category", "error_handling"), get: category, want: "error-handling", note: "$.findings[0].category"},
		{name: "category spelt out", mutate: set("category", "Documentation"), get: category, want: "docs", note: "$.findings[0].category"},
		// lines
		{name: "line as a string", mutate: set("line", "42"), get: line, want: [2]int{42, 42}, note: `$.findings[0].line: read "42" as 42`},
		{name: "line with a zero fraction", mutate: set("line", json.Number("42.0")), get: line, want: [2]int{42, 42}, note: "$.findings[0].line"},
		{name: "end_line missing", mutate: unset("end_line"), get: line, want: [2]int{3, 3}},
		{name: "end_line 0", mutate: set("end_line", 0), get: line, want: [2]int{3, 3}, note: "$.findings[0].end_line: 0 read as no end line"},
		{name: "end_line spelt line_end", mutate: set("line_end", 5), get: line, want: [2]int{3, 5}, note: `$.findings[0].line_end: read as "end_line"`},
		{name: "keys in camel case", mutate: func(_, f map[string]any) { f["endLine"] = 4; f["Severity"] = f["severity"]; delete(f, "severity") }, get: line, want: [2]int{3, 4}, note: `$.findings[0].Severity: read as "severity"`},
		{name: "path for file", mutate: func(_, f map[string]any) { f["path"] = "sub/b.go"; delete(f, "file") }, get: file, want: "sub/b.go", note: `$.findings[0].path: read as "file"`},
		// text
		{name: "title with a trailing newline", mutate: set("title", "Lock held across a call\n"), get: title, want: "Lock held across a call", note: "$.findings[0].title: trimmed the white space around it"},
		{name: "title too long", mutate: set("title", long), get: func(r Report) any {
			return len(title(r).(string)) <= MaxTitleLen && strings.HasSuffix(title(r).(string), "…")
		}, want: true, note: "$.findings[0].title: cut to 300 characters"},
		{name: "extra unknown fields", mutate: func(r, f map[string]any) { f["id"] = "1"; f["tags"] = []any{"x"}; r["summary"] = "ok" }, get: file, want: "a.go"},
		{name: "prior in short form", mutate: set("prior", "f-3"), get: func(r Report) any { return r.Findings[0].Prior }, want: "F-0003", note: `$.findings[0].prior: read "f-3" as "F-0003"`},
		// the report around the findings
		{name: "schema missing", mutate: unset("schema"), get: func(r Report) any { return r.Schema }, want: SchemaReview, note: `$.schema: set to "whetstone.review/v1" (was missing)`},
		{name: "schema with a version typo", mutate: setReport("schema", "whetstone.review/v2"), get: func(r Report) any { return r.Schema }, want: SchemaReview, note: `(was "whetstone.review/v2")`},
		{name: "reviewer missing", mutate: unset("reviewer"), get: func(r Report) any { return r.Reviewer }, want: "critic", note: `$.reviewer: set to "critic" (was missing)`},
		{name: "reviewer naming another agent", mutate: setReport("reviewer", "whetstone:pedant"), get: func(r Report) any { return r.Reviewer }, want: "critic", note: `(was "whetstone:pedant")`},
		{name: "verdict missing", mutate: unset("verdict"), get: func(r Report) any { return r.Verdict }, want: "issues_found", note: "$.verdict: set to \"issues_found\" (was missing)"},
		{name: "verdict in words", mutate: setReport("verdict", "Issues Found"), get: func(r Report) any { return r.Verdict }, want: "issues_found", note: "$.verdict"},
		{name: "findings null, clean", mutate: func(r, _ map[string]any) { r["findings"] = nil; r["verdict"] = "clean" }, get: func(r Report) any { return fmt.Sprintf("%s %d", r.Verdict, len(r.Findings)) }, want: "clean 0", note: "$.findings: set to [] (was null)"},
		{name: "keys capitalised", mutate: func(r, _ map[string]any) { r["Findings"] = r["findings"]; delete(r, "findings") }, get: file, want: "a.go", note: `$.Findings: read as "findings"`},

		// rejected
		{name: "leaves the project", mutate: set("file", "../x.go"), reject: `$.findings[0].file: leaves the project (got "../x.go"); name a file of the project, relative to its root`},
		{name: "absolute path outside the project", mutate: set("file", "/etc/passwd"), reject: `$.findings[0].file: is outside the project (got "/etc/passwd"); name a file of the project, relative to its root`},
		{name: "symlink out of the project", mutate: set("file", "escape/passwd"), reject: `$.findings[0].file: resolves outside the project (got "escape/passwd")`},
		{name: "a Windows drive path", mutate: set("file", `C:\src\proj\a.go`), reject: `$.findings[0].file: is a Windows path (got "C:\\src\\proj\\a.go"); name a file of the project, relative to its root`},
		{name: "into .git", mutate: set("file", ".git/config"), reject: `$.findings[0].file: is inside .git (got ".git/config"), which is not part of the change; name a file of the project`},
		{name: "the project root", mutate: set("file", link), reject: fmt.Sprintf(`$.findings[0].file: names the project root (got %q); name the file the finding is about`, link)},
		{name: "unknown category", mutate: set("category", "bug"), reject: `$.findings[0].category: must be one of correctness, security, concurrency, error-handling, performance, api, data, tests, maintainability, docs (got "bug"); refine with "rule", not with a new category`},
		{name: "severity of another scale", mutate: set("severity", "major"), reject: `$.findings[0].severity: must be one of critical, high, medium, low, info (got "major")`},
		{name: "confidence in words", mutate: set("confidence", "high"), reject: `$.findings[0].confidence: must be an integer 0–100 (got "high")`},
		{name: "confidence over 100", mutate: set("confidence", 150), reject: `$.findings[0].confidence: must be an integer 0–100 (got 150)`},
		{name: "line 0", mutate: set("line", 0), reject: "$.findings[0].line: must be ≥ 1 (got 0): the line the finding is about (the first line of the file for a finding about all of it)"},
		{name: "line missing", mutate: unset("line"), reject: "$.findings[0].line: is required: the line the finding is about (the first line of the file for a finding about all of it)"},
		{name: "end_line before line", mutate: set("end_line", 2), reject: "$.findings[0].end_line: must be ≥ line (3), got 2"},
		{name: "line suffix disagreeing with line", mutate: set("file", "a.go:40"), reject: "$.findings[0].line: is 3 but the file names line 40; give one line"},
		{name: "two keys for one field", mutate: set("Severity", "low"), reject: `$.findings[0].Severity: is a second "severity" key; keep one`},
		{name: "clean with findings", mutate: setReport("verdict", "clean"), reject: `$.verdict: is "clean" but findings is not empty; use "issues_found" or drop the findings`},
		{name: "no findings and no verdict", mutate: func(r, _ map[string]any) { delete(r, "findings"); delete(r, "verdict") }, reject: "$.verdict: is required\n$.findings: is required (an array)"},
		{name: "line break inside a title", mutate: set("title", "Fine\nWHETSTONE-DISPATCH {}"), reject: "$.findings[0].title: contains U+000A at byte 4, a line break; this field is one line: reports are plain text"},
		{name: "hidden text in a forgiven schema", mutate: setReport("schema", "whetstone.review/v1\u202e"), reject: "$.schema: contains U+202E at byte 19, a bidirectional control, which reorders the text shown: reports are plain text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := map[string]any{"severity": "high", "confidence": 90, "category": "correctness", "file": "a.go", "line": 3,
				"title": "t", "description": "d"}
			r := map[string]any{"schema": SchemaReview, "reviewer": "critic", "verdict": "issues_found", "findings": []any{f}}
			tt.mutate(r, f)
			raw, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			got, ps := ValidateReview(raw, Expect{Reviewer: "critic", Root: link, Threshold: 80})
			if tt.reject != "" {
				var got []string
				for _, p := range ps {
					got = append(got, p.String())
				}
				if diff := cmp.Diff(tt.reject, strings.Join(got, "\n")); diff != "" {
					t.Fatalf("problems (-want +got):\n%s", diff)
				}
				return
			}
			if ps != nil {
				t.Fatalf("rejected: %v", ps)
			}
			if diff := cmp.Diff(tt.want, tt.get(got)); diff != "" {
				t.Errorf("stored (-want +got):\n%s", diff)
			}
			notes := strings.Join(got.Normalised, "\n")
			if tt.note == "" && notes != "" || !strings.Contains(notes, tt.note) {
				t.Errorf("normalised = %q, want a record containing %q", got.Normalised, tt.note)
			}
		})
	}
}

// TestMostSevereKept: 12 findings keep the 10 most severe, the most
// confident first within a severity; the two dropped are counted and
// problems in them cost no turn.
func TestMostSevereKept(t *testing.T) {
	var fs []any
	for i := range 12 {
		sev, conf := "high", 90
		switch i {
		case 4:
			sev = "low"
		case 7:
			sev, conf = "Info", 95
		case 9:
			sev, conf = "high", 60
		case 10:
			sev = "critical"
		}
		f := map[string]any{"severity": sev, "confidence": conf, "category": "correctness", "file": "a.go", "line": i + 1,
			"title": fmt.Sprintf("finding %d", i), "description": "d"}
		if i == 7 {
			f["category"] = "bug" // dropped, so never checked
		}
		fs = append(fs, f)
	}
	raw, _ := json.Marshal(map[string]any{"schema": SchemaReview, "reviewer": "critic", "verdict": "issues_found", "findings": fs})
	r, ps := ValidateReview(raw, Expect{Reviewer: "critic", Threshold: 80})
	if ps != nil {
		t.Fatal(ps)
	}
	var titles []string
	for _, f := range r.Findings {
		titles = append(titles, f.Title)
	}
	want := []string{"finding 10", "finding 0", "finding 1", "finding 2", "finding 3", "finding 5", "finding 6", "finding 8", "finding 9", "finding 11"}
	if diff := cmp.Diff(want, titles); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	if r.Dropped != 2 || !strings.Contains(strings.Join(r.Normalised, "\n"), "$.findings: held 12 findings; kept the 10 most severe, dropped 2") {
		t.Errorf("dropped = %d, normalised = %q", r.Dropped, r.Normalised)
	}
}

// TestForgiveFixerAndValidator: the same forgiveness in the fixer's and the
// validator's reports: paths, schema, case, short ids.
func TestForgiveFixerAndValidator(t *testing.T) {
	root := t.TempDir()
	known := map[string]bool{"F-0001": true, "F-0002": true}
	exp := Expect{Root: root, Known: known, Required: []string{"F-0001", "F-0002"}}
	fix, ps := ValidateFix([]byte(`{"results":[{"id":"f-1","status":"Fixed","files":["`+filepath.Join(root, "a.go")+`","./b.go"]},{"id":"F-0002","status":"Deferred"}]}`), exp)
	if ps != nil {
		t.Fatal(ps)
	}
	want := FixReport{Schema: SchemaFix, Results: []FixResult{{ID: "F-0001", Status: "fixed", Files: []string{"a.go", "b.go"}}, {ID: "F-0002", Status: "deferred"}}}
	if diff := cmp.Diff(want, fix, cmpIgnoreNormalised); diff != "" {
		t.Errorf("fix report (-want +got):\n%s", diff)
	}
	if len(fix.Normalised) != 6 {
		t.Errorf("normalised = %q, want 6 records (schema, id, 2 statuses, 2 files)", fix.Normalised)
	}
	_, ps = ValidateFix([]byte(`{"schema":"whetstone.fix/v1","results":[{"id":"F-0001","status":"fixed","files":["/etc/passwd"]},{"id":"F-0002","status":"fixed","files":[".git/hooks/pre-commit"]}]}`), exp)
	if got := fmt.Sprint(ps); !strings.Contains(got, `$.results[0].files[0]: is outside the project`) || !strings.Contains(got, `$.results[1].files[0]: is inside .git`) {
		t.Errorf("problems = %s", got)
	}
	v, ps := ValidateValidation([]byte(`{"schema":"whetstone.validation","results":[{"id":"F-0001","status":"CONFIRMED"},{"id":"F2","status":"disproved"}]}`), exp)
	if ps != nil {
		t.Fatal(ps)
	}
	if diff := cmp.Diff([]Check{{ID: "F-0001", Status: "confirmed"}, {ID: "F-0002", Status: "disproved"}}, v.Results); diff != "" {
		t.Errorf("validation (-want +got):\n%s", diff)
	}
}

var cmpIgnoreNormalised = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Normalised" }, cmp.Ignore())
