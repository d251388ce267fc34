package doctor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whetstone-dev/whetstone/internal/brief"
	"github.com/whetstone-dev/whetstone/internal/brief/brieftest"
)

// TestDoctorAgents: doctor checks the agent files of the registry, so a
// lens added as one source file (the fixture i18n-reviewer) is missing
// from a plugin until it is generated, and counted once it is.
func TestDoctorAgents(t *testing.T) {
	const repo = "../.."
	plugin := t.TempDir()
	files := []string{".claude-plugin/plugin.json", "hooks/hooks.json", "scripts/whetstone", "commands/review.md"}
	for _, a := range brief.Agents().All() {
		files = append(files, "agents/"+a.Name+".md")
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(repo, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(plugin, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(plugin, f), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	n := len(brief.Agents().All())
	if c := pluginCheck(plugin, brief.Agents()); c.Level != OK || !strings.Contains(c.Detail, fmt.Sprintf(", %d agents", n)) {
		t.Fatalf("the built-in registry: %s %s", c.Level, c.Detail)
	}
	reg := brieftest.Registry(t)
	c := pluginCheck(plugin, reg)
	if want := "missing agents/" + brieftest.Lens + ".md"; c.Level != Fail || c.Detail != want {
		t.Errorf("with the new lens, not generated: %s %q, want fail %q", c.Level, c.Detail, want)
	}
	b, err := reg.Render(brieftest.Lens)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(plugin, "agents", brieftest.Lens+".md"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if c := pluginCheck(plugin, reg); c.Level != OK || !strings.Contains(c.Detail, fmt.Sprintf(", %d agents", n+1)) {
		t.Errorf("with the new lens generated: %s %q, want ok, %d agents", c.Level, c.Detail, n+1)
	}
}
