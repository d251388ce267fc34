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
		{"prose around", "I looked at a.go.\n\n" + obj + "\n\nThat is all.", obj, ""},
		{"braces in strings", `{"title":"use } and { carefully","x":"\"}"}`, `{"title":"use } and { carefully","x":"\"}"}`, ""},
		{"prose braces are not JSON", "call f{x} then " + obj, obj, ""},
		{"two objects", obj + "\n" + obj, "", "found 2 JSON objects"},
		{"two fenced blocks", "```json\n" + obj + "\n```\n```json\n" + obj + "\n```", "", "found 2 JSON objects"},
		{"none", "All good, nothing to report.", "", "no JSON object found"},
		{"truncated", "```json\n" + obj[:40], "", "incomplete (truncated?)"},
		{"syntax error", `{"schema": "x",}`, "", "invalid JSON at line 1"},
		{"too large", strings.Repeat(" ", MaxMessageBytes+1), "", "the limit is"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Extract(tt.msg)
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
