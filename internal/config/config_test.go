package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/whetstone-dev/whetstone/internal/review"
	"github.com/whetstone-dev/whetstone/internal/scope"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		prompt  string
		want    Args
		wantErr string
	}{
		{"/whetstone:review", Args{}, ""},
		{"/whetstone:review src/foo.go 'lib/**/*.sql' --depth=deep --max-iterations 3 --reviewers critic,whetstone:pedant,critic --restart",
			Args{Paths: []string{"src/foo.go", "lib/**/*.sql"}, Depth: "deep", MaxIterations: 3, Reviewers: []string{"critic", "pedant"}, Restart: true}, ""},
		{"/whetstone:review --since origin/main --force api/", Args{Paths: []string{"api/"}, Since: "origin/main", Force: true}, ""},
		{"/whetstone:review --staged", Args{Staged: true}, ""},
		{"/whetstone:review --uncommitted", Args{Uncommitted: true}, ""},
		{"/whetstone:review --last-commit", Args{LastCommit: true}, ""},
		{"/whetstone:review --since", Args{}, "--since needs a value"},
		{"/whetstone:review --force=1", Args{}, "--force takes no value"},
		{"/whetstone:review --depth", Args{}, "--depth needs a value"},
		{"/whetstone:review --depth --restart", Args{}, "--depth needs a value"},
		{"/whetstone:review --max-iterations 0", Args{}, "from 1 to 50"},
		{"/whetstone:review --reviewers critic,ghost", Args{}, `unknown reviewer "ghost"`},
		{"/whetstone:review --restart=yes", Args{}, "--restart takes no value"},
		{"/whetstone:review --fast", Args{}, "unknown flag --fast"},
	}
	for _, tt := range tests {
		t.Run(tt.prompt, func(t *testing.T) {
			got, err := ParseArgs(tt.prompt)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestIsCommand(t *testing.T) {
	for prompt, want := range map[string]bool{
		"/whetstone:review": true, "  /whetstone:review --restart": true, "/whetstone:review\nplease": true,
		"/whetstone:reviewer": false, "please /whetstone:review": false, "/review": false,
	} {
		if got := IsCommand(prompt); got != want {
			t.Errorf("IsCommand(%q) = %v, want %v", prompt, got, want)
		}
	}
}

func TestResolveAndRoster(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, FileName), []byte(`{"depth":"quick","max_iterations":3,"confidence_threshold":70,"reviewers":{"security-reviewer":false,"database-reviewer":true},"budget":{"minutes":30}}`), 0o644)
	f, err := parseIn(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Resolve(f, Args{MaxIterations: 4})
	if err != nil {
		t.Fatal(err)
	}
	want := Defaults
	want.Depth, want.MaxIterations, want.ConfidenceThreshold, want.BudgetMinutes = "quick", 4, 70, 30
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"critic", "silent-failure-hunter", "database-reviewer"}, Roster(s, f, []scope.Specialist{{Name: "api-reviewer", Reason: "api/x.go"}})); diff != "" {
		t.Errorf("quick roster (-want +got):\n%s", diff)
	}
	s.Depth = "standard"
	if diff := cmp.Diff([]string{"critic", "pedant", "witness", "silent-failure-hunter", "api-reviewer", "database-reviewer"}, Roster(s, f, []scope.Specialist{{Name: "api-reviewer", Reason: "api/x.go"}})); diff != "" {
		t.Errorf("standard roster (-want +got):\n%s", diff)
	}
	for body, wantErr := range map[string]string{
		`{"reviewers":{"nitpicker":true}}`:     `unknown reviewer "nitpicker"`,
		`{"specialists":{"critic":["x/**"]}}`:  `unknown specialist "critic"`,
		`{"triage":["api-reviewer:gateway/"]}`: "cannot unmarshal array",
		`{"max_files":-1}`:                     "must not be negative",
		`{"max_untracked_bytes":0}`:            "max_untracked_bytes must be a positive number",
		`{"triage":{"skipp":["x"]}}`:           `unknown field "skipp"`,
		`{"sandbox":"required"}`:               `sandbox must be "auto", "if-available" or "off" (got "required")`,
	} {
		os.WriteFile(filepath.Join(dir, FileName), []byte(body), 0o644)
		if _, err := parseIn(dir); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("Parse(%s): err = %v, want %q", body, err, wantErr)
		}
	}
	os.WriteFile(filepath.Join(dir, FileName), []byte(`{"triage":{"skip":["gen/**"],"deep":["billing/**"]},"specialists":{"api-reviewer":["gateway/**"]},"max_files":7,"checks":false,"pre_existing_blocks":true,"background":true,"max_untracked_bytes":1048576,"checks_network":true}`), 0o644)
	f, err = parseIn(dir)
	if err != nil {
		t.Fatal(err)
	}
	req := ScopeRequest(f, Args{Paths: []string{"gateway/"}, Since: "v1", Force: true})
	if req.Checks || req.MaxFiles != 7 || req.MaxUntracked != 1<<20 || !req.Network || req.Since != "v1" || !req.Force || req.Skip[0] != "gen/**" || req.Deep[0] != "billing/**" || req.Specialists["api-reviewer"][0] != "gateway/**" {
		t.Errorf("ScopeRequest = %+v", req)
	}
	if s, _ := Resolve(f, Args{}); !s.PreExistingBlocks || !s.Background || s.MaxUntrackedBytes != 1<<20 {
		t.Errorf("settings = %+v, want pre_existing_blocks and background", s)
	}
	for _, v := range []string{"auto", "if-available", "off"} {
		os.WriteFile(filepath.Join(dir, FileName), []byte(`{"sandbox":"`+v+`"}`), 0o644)
		if f, err := parseIn(dir); err != nil || f.Sandbox != v {
			t.Errorf("Parse with sandbox %q: %+v, %v", v, f.Sandbox, err)
		}
	}
	os.WriteFile(filepath.Join(dir, FileName), []byte(`{"reviewers":{"nitpicker":true}}`), 0o644)
	if _, err := parseIn(dir); err == nil || !strings.Contains(err.Error(), `unknown reviewer "nitpicker"`) {
		t.Errorf("Parse with an unknown reviewer: err = %v", err)
	}
}

// TestSeverityBars: fix_severity (iteration 1) and blocking_severity (later
// iterations) from whetstone.json; the one not set follows the other, and
// a blocking_severity below fix_severity is an error that names both.
func TestSeverityBars(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ body, fix, blocking, err string }{
		{`{}`, "medium", "high", ""},
		{`{"fix_severity":"low"}`, "low", "high", ""},
		{`{"fix_severity":"high"}`, "high", "high", ""},
		{`{"fix_severity":"critical"}`, "critical", "critical", ""}, // blocking follows it up
		{`{"blocking_severity":"medium"}`, "medium", "medium", ""},
		{`{"blocking_severity":"low"}`, "low", "low", ""}, // fix follows it down: the rule before fix_severity existed
		{`{"blocking_severity":"info"}`, "low", "info", ""},
		{`{"fix_severity":"low","blocking_severity":"critical"}`, "low", "critical", ""},
		{`{"fix_severity":"high","blocking_severity":"medium"}`, "", "", `blocking_severity "medium" is below fix_severity "high"`},
		{`{"fix_severity":"info"}`, "", "", `fix_severity must be one of critical, high, medium, low (got "info")`},
		{`{"fix_severity":"Medium"}`, "", "", `fix_severity must be one of critical, high, medium, low (got "Medium")`},
		{`{"blocking_severity":"urgent"}`, "", "", `blocking_severity must be one of critical, high, medium, low, info (got "urgent")`},
	} {
		os.WriteFile(filepath.Join(dir, FileName), []byte(tt.body), 0o644)
		f, err := parseIn(dir)
		if err != nil {
			t.Fatalf("Parse(%s): %v", tt.body, err)
		}
		s, err := Resolve(f, Args{})
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Resolve(%s): err = %v, want %q", tt.body, err, tt.err)
			}
			continue
		}
		if err != nil || s.FixSeverity != tt.fix || s.BlockingSeverity != tt.blocking {
			t.Errorf("Resolve(%s) = fix %q, blocking %q, %v; want %q, %q", tt.body, s.FixSeverity, s.BlockingSeverity, err, tt.fix, tt.blocking)
		}
	}
}

// TestDefaultsAreTheDefaultRule: the rule the user's guide states
// (review.DefaultRule) is the one a run without whetstone.json applies.
func TestDefaultsAreTheDefaultRule(t *testing.T) {
	got := review.Policy{ConfidenceThreshold: Defaults.ConfidenceThreshold, FixSeverity: Defaults.FixSeverity,
		BlockingSeverity: Defaults.BlockingSeverity, PreExistingBlocks: Defaults.PreExistingBlocks}
	if diff := cmp.Diff(review.DefaultPolicy, got); diff != "" {
		t.Errorf("config.Defaults do not match review.DefaultPolicy (-want +got):\n%s", diff)
	}
}
