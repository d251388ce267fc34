package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		prompt  string
		want    Args
		wantErr string
	}{
		{"/whetstone:review", Args{}, ""},
		{"/whetstone:review src/foo.go the cache --depth=deep --max-iterations 3 --reviewers critic,whetstone:pedant,critic --restart",
			Args{Scope: "src/foo.go the cache", Depth: "deep", MaxIterations: 3, Reviewers: []string{"critic", "pedant"}, Restart: true}, ""},
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
	f, err := Load(dir)
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
	if diff := cmp.Diff([]string{"critic", "silent-failure-hunter", "database-reviewer"}, Roster(s, f, []string{"api-reviewer"})); diff != "" {
		t.Errorf("quick roster (-want +got):\n%s", diff)
	}
	s.Depth = "standard"
	if diff := cmp.Diff([]string{"critic", "pedant", "witness", "silent-failure-hunter", "api-reviewer", "database-reviewer"}, Roster(s, f, []string{"api-reviewer"})); diff != "" {
		t.Errorf("standard roster (-want +got):\n%s", diff)
	}
	os.WriteFile(filepath.Join(dir, FileName), []byte(`{"reviewers":{"nitpicker":true}}`), 0o644)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), `unknown reviewer "nitpicker"`) {
		t.Errorf("Load with an unknown reviewer: err = %v", err)
	}
}
