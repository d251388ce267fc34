package review

import (
	"strings"
	"testing"
)

func TestExtract(t *testing.T) {
	obj := `{"schema":"whetstone.review/v1","reviewer":"critic","verdict":"clean","findings":[]}`
	tests := []struct {
		name    string
		msg     string
		want    string
		wantErr string
	}{
		{"bare", obj, obj, ""},
		{"fenced", "```json\n" + obj + "\n```", obj, ""},
		{"fenced, tildes and JSON tag", "~~~~ JSON\n" + obj + "\n~~~~\n", obj, ""},
		{"prose around", "I looked at a.go.\n\n" + obj + "\n\nThat is all.", obj, ""},
		{"braces in strings", `{"schema":"x","title":"use } and { carefully","x":"\"}"}`, `{"schema":"x","title":"use } and { carefully","x":"\"}"}`, ""},
		{"prose braces are not JSON", "call f{x} then " + obj, obj, ""},
		{"Go braces in prose before a fence", "The handler builds map[string]int{} and struct{}{} values; a lone { opens the if.\n\n```json\n" + obj + "\n```", obj, ""},
		{"Go braces in prose, bare report", "The `if err != nil {` branch returns map[string]int{}.\n" + obj + "\nDone {", obj, ""},
		{"Go code block then the report", "```go\nfunc f() map[string]int { return map[string]int{\"a\": 1} }\n```\n\n```json\n" + obj + "\n```", obj, ""},
		{"last fenced json block wins", "Draft:\n```json\n{\"schema\":\"draft\"}\n```\nFinal:\n```json\n" + obj + "\n```", obj, ""},
		{"json objects without schema are prose", `{"a":1} and {"b":2} then ` + obj, obj, ""},
		{"the same report twice is one", obj + "\n" + obj, obj, ""},
		{"two different bare reports", obj + "\n" + strings.Replace(obj, "critic", "pedant", 1), "", "found 2 JSON objects"},
		{"an example block after the report", "```json\n" + obj + "\n```\nFor instance:\n```json\n{\"a\": 1}\n```", obj, ""},
		{"a truncated last block is not skipped", "```json\n" + obj + "\n```\n```json\n" + obj[:40], "", "incomplete (truncated?)"},
		{"an unlabelled fence", "Report:\n```\n" + obj + "\n```", obj, ""},
		{"no schema key, bare", `Done: {"reviewer":"critic","verdict":"clean","findings":[]}`, `{"reviewer":"critic","verdict":"clean","findings":[]}`, ""},
		{"none", "All good, nothing to report.", "", "no JSON report found"},
		{"fenced non-object", "```json\n[1,2]\n```", "", "must hold one JSON object"},
		{"truncated fence", "```json\n" + obj[:40], "", "incomplete (truncated?)"},
		{"truncated bare", "Report: " + obj[:40], "", "incomplete (truncated?)"},
		{"syntax error in fence", "```json\n{\"schema\": \"x\",}\n```", "", "invalid JSON at line 1"},
		{"syntax error bare", `{"schema": "x",}`, "", "invalid JSON at line 1"},
		{"too large", strings.Repeat(" ", MaxMessageBytes+1), "", "the limit is"},
		{"hostile nesting is bounded", strings.Repeat(`{"a":`, 100000), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Extract(tt.msg)
			if tt.wantErr == "" && tt.want == "" {
				if err == nil {
					t.Fatalf("Extract = %q, want an error", got)
				}
				return
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Extract error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("Extract = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
