package review

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValidateReview(t *testing.T) {
	root := t.TempDir()
	if err := os.Symlink("/etc", filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	finding := `{"severity":"high","confidence":90,"category":"correctness","file":"a.go","line":3,"title":"t","description":"d"}`
	tests := []struct {
		name string
		json string
		want []string
	}{
		{"valid", `{"schema":"whetstone.review/v1","reviewer":"critic","verdict":"issues_found","findings":[` + finding + `]}`, nil},
		{"clean with findings", `{"schema":"whetstone.review/v1","reviewer":"critic","verdict":"clean","findings":[` + finding + `]}`,
			[]string{`$.verdict: is "clean" but findings is not empty; use "issues_found" or drop the findings`}},
		{"issues without findings", `{"schema":"whetstone.review/v1","reviewer":"critic","verdict":"issues_found","findings":[]}`,
			[]string{`$.verdict: is "issues_found" but findings is empty; use "clean"`}},
		{"wrong reviewer and schema", `{"schema":"whetstone.fix/v1","reviewer":"pedant","verdict":"clean","findings":[]}`,
			[]string{`$.schema: must be "whetstone.review/v1" (got "whetstone.fix/v1")`, `$.reviewer: must be "critic", the name of this reviewer (got "pedant")`}},
		{"missing everything", `{}`, []string{"$.schema: is required", "$.reviewer: is required", "$.verdict: is required", "$.findings: is required (an array)"}},
		{"not an object", `[1]`, []string{"$: must be a JSON object"}},
		{"symlink out of the project", `{"schema":"whetstone.review/v1","reviewer":"critic","verdict":"issues_found","findings":[{"severity":"low","confidence":1,"category":"correctness","file":"escape/passwd","line":1,"title":"t","description":"d"}]}`,
			[]string{`$.findings[0].file: resolves outside the project (got "escape/passwd")`}},
		{"fractional numbers", `{"schema":"whetstone.review/v1","reviewer":"critic","verdict":"issues_found","findings":[{"severity":"low","confidence":9.5,"category":"correctness","file":"a.go","line":1e40,"title":"t","description":"d"}]}`,
			[]string{"$.findings[0].confidence: must be an integer (got 9.5)", "$.findings[0].line: must be an integer (got 1e40)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ps := ValidateReview([]byte(tt.json), Expect{Reviewer: "critic", Root: root})
			var got []string
			for _, p := range ps {
				got = append(got, p.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateFixRequiresEveryBlockingFinding(t *testing.T) {
	raw := `{"schema":"whetstone.fix/v1","results":[{"id":"F-0001","status":"fixed","files":["a.go"]},{"id":"F-0001","status":"deferred"},{"id":"F-0009","status":"fixed"}]}`
	_, ps := ValidateFix([]byte(raw), Expect{Required: []string{"F-0001", "F-0002"}, Known: map[string]bool{"F-0001": true, "F-0002": true}})
	var got []string
	for _, p := range ps {
		got = append(got, p.String())
	}
	want := []string{
		"$.results[1].id: F-0001 has more than one result",
		"$.results[2].id: F-0009 is not a finding of this run",
		"$.results: has no result for F-0002; every listed finding needs one",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}
