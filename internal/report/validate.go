package report

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// SchemaJSON is docs/report-schema.json, the JSON Schema of report.json (a
// test keeps the two copies equal).
//
//go:embed report-schema.json
var SchemaJSON []byte

const schemaURL = "https://github.com/whetstone-dev/whetstone/blob/main/docs/report-schema.json"

var compiled = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(SchemaJSON))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(schemaURL)
})

// ValidateJSON checks report.json against docs/report-schema.json. The error
// lists every problem with its JSON path.
func ValidateJSON(data []byte) error {
	sch, err := compiled()
	if err != nil {
		return fmt.Errorf("the report schema does not compile: %w", err) // a bug: the schema is built in
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if err := sch.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return errors.New(strings.TrimSpace(problems(ve)))
		}
		return err
	}
	return nil
}

// problems lists a validation error's leaves as "$.path: message" lines.
func problems(ve *jsonschema.ValidationError) string {
	if len(ve.Causes) > 0 {
		var b strings.Builder
		for _, c := range ve.Causes {
			b.WriteString(problems(c))
		}
		return b.String()
	}
	path := "$"
	for _, p := range ve.InstanceLocation {
		path += "." + p
	}
	return fmt.Sprintf("- %s: %s\n", path, ve.ErrorKind.LocalizedString(message.NewPrinter(language.English)))
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

// ValidateFile checks data when it is a run report: report.md (it starts
// with frontmatter) or report.json (a JSON object whose schema is
// whetstone.report/v1). ok is false for anything else, left to the agent
// report validators; summary says what a valid report holds.
func ValidateFile(data []byte) (summary string, ok bool, err error) {
	var r *Report
	kind := "report.md"
	switch {
	case bytes.HasPrefix(data, []byte("---\n")):
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
	if verdict == "" {
		verdict = "no verdict yet"
	}
	return fmt.Sprintf("valid %s (%s): run %s, %s, %s", kind, Schema, r.RunID, verdict, plural(len(r.Findings), "finding")), true, nil
}

func isReportJSON(data []byte) bool {
	var head struct {
		Schema string `json:"schema"`
	}
	t := bytes.TrimSpace(data)
	return len(t) > 0 && t[0] == '{' && json.Unmarshal(t, &head) == nil && head.Schema == Schema
}
