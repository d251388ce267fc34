package whetstone

import (
	"encoding/json"
	"os"
	"regexp"
	"testing"
)

// TestPluginVersionMatchesBinary keeps .claude-plugin/plugin.json and the
// binary's version (the VERSION file) in step: Claude Code shows the former,
// the launcher caches builds by the latter.
func TestPluginVersionMatchesBinary(t *testing.T) {
	data, err := os.ReadFile(".claude-plugin/plugin.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("plugin.json: %v", err)
	}
	if m.Name != "whetstone" || m.Version != Version {
		t.Errorf("plugin.json name %q version %q; want whetstone %q (VERSION)", m.Name, m.Version, Version)
	}
	if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(Version) {
		t.Errorf("VERSION %q is not MAJOR.MINOR.PATCH", Version)
	}
}
