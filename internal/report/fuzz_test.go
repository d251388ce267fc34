package report_test

import (
	"testing"

	"github.com/whetstone-dev/whetstone/internal/report"
)

// FuzzValidateFile: whatever a file holds, validate never panics, and a
// report.md it accepts is exactly what its own data renders to.
func FuzzValidateFile(f *testing.F) {
	rep := hostileReport(f)
	f.Add(rep.JSON())
	f.Add([]byte(rep.Markdown()))
	f.Add([]byte("---\nschema: \"whetstone.report/v1\"\n---\n```json\n{}\n```\n"))
	f.Add([]byte(`{"schema":"whetstone.report/v1","findings":[{"id":"F-1"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, ok, err := report.ValidateFile(data)
		if !ok || err != nil {
			return
		}
		if r, err := report.ValidateMarkdown(data); err == nil && r.Markdown() != string(data) {
			t.Errorf("an accepted report.md is not what its data renders to")
		}
	})
}
