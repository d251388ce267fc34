package whetstone

import (
	"encoding/json"
	"os"
	"regexp"
	"testing"
)

// TestPluginVersionMatchesBinary keeps .claude-plugin/plugin.json, the
// marketplace entry, package.json and the binary's version (the VERSION
// file) in step: Claude Code shows the first two, npm the third, the
// launcher runs only a binary of the last.
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
	for _, f := range []string{"package.json", ".claude-plugin/marketplace.json"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Version string `json:"version"`
			Plugins []struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"plugins"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, p := range m.Plugins {
			m.Version = p.Version
		}
		if m.Version != Version {
			t.Errorf("%s has version %q, VERSION is %q", f, m.Version, Version)
		}
	}
	if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(Version) {
		t.Errorf("VERSION %q is not MAJOR.MINOR.PATCH", Version)
	}
}
