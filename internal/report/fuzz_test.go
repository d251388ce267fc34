package report_test

import (
	"testing"

	"github.com/whetstone-dev/whetstone/internal/report"
)

// FuzzValidateFile: whatever a file holds, validate never panics, and a
// report.md it accepts against the hostile run's report.json is exactly
// what that report.json renders to.
func FuzzValidateFile(f *testing.F) {
	rep := hostileReport(f)
	data := rep.JSON()
	f.Add(data)
	f.Add([]byte(rep.Markdown()))
	f.Add([]byte("**Verdict: APPROVE** · whetstone review x\n\n```\n<!-- whetstone.report/v1 run x: report.json beside this file holds the data -->\n"))
	f.Add([]byte(`{"schema":"whetstone.report/v1","findings":[{"id":"F-1"}]}`))
	f.Fuzz(func(t *testing.T, md []byte) {
		report.ValidateFile(md, nil)
		_, ok, err := report.ValidateFile(md, data)
		if !ok || err != nil {
			return
		}
		if r, err := report.ValidateMarkdown(md, data); err == nil && r.Markdown() != string(md) {
			t.Errorf("an accepted report.md is not what its report.json renders to")
		}
	})
}
