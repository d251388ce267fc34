package opencode

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/whetstone-dev/whetstone/internal/brief"
)

const root = "../../.."

// TestOpenCodeFilesUpToDate fails when OpenCode's committed agents or
// command are not what the sources generate, or when an agent file has no
// source: OpenCode and Claude Code must never read different briefs.
func TestOpenCodeFilesUpToDate(t *testing.T) {
	const fix = "edit internal/brief/src or commands/review.md, not opencode/, then run `go run ./cmd/genagents` from the module root"
	for _, name := range brief.Names() {
		want, err := RenderAgent(brief.Agents(), name)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join("opencode", "agent", Prefix+name+".md")
		got, err := os.ReadFile(filepath.Join(root, file))
		if err != nil || string(got) != string(want) {
			t.Errorf("%s differs from its sources (-generated +committed) (%v):\n%s\n%s", file, err, cmp.Diff(string(want), string(got)), fix)
		}
	}
	files, _ := filepath.Glob(filepath.Join(root, "opencode", "agent", "*.md"))
	if len(files) != len(brief.Names()) {
		t.Errorf("opencode/agent holds %d files for %d agents; %s", len(files), len(brief.Names()), fix)
	}
	claude, err := os.ReadFile(filepath.Join(root, "commands", "review.md"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := RenderCommand(claude)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "opencode", "command", Command+".md"))
	if err != nil || string(got) != string(want) {
		t.Errorf("opencode/command/%s.md differs from commands/review.md (-generated +committed) (%v):\n%s\n%s", Command, err, cmp.Diff(string(want), string(got)), fix)
	}
	skill, err := RenderSkill(claude)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join("opencode", "skill", Command, "SKILL.md")
	if got, err := os.ReadFile(filepath.Join(root, file)); err != nil || string(got) != string(skill) {
		t.Errorf("%s differs from commands/review.md (-generated +committed) (%v):\n%s\n%s", file, err, cmp.Diff(string(skill), string(got)), fix)
	}
	for _, claudeWord := range []string{"Agent tool", "Agent call", "/whetstone:review", "run_in_background", "Stop hook"} {
		if strings.Contains(string(want), claudeWord) || strings.Contains(string(skill), claudeWord) {
			t.Errorf("OpenCode's command or skill still says %q", claudeWord)
		}
	}
	if strings.Contains(string(skill), "$ARGUMENTS") {
		t.Error("the skill speaks of arguments; a skill takes none")
	}
}

// TestOpenCodeSkillFrontmatter: OpenCode offers a skill to the model only
// with a name and a description, read as YAML: one plain line each, with
// no ": " that would end the value.
func TestOpenCodeSkillFrontmatter(t *testing.T) {
	claude, err := os.ReadFile(filepath.Join(root, "commands", "review.md"))
	if err != nil {
		t.Fatal(err)
	}
	skill, err := RenderSkill(claude)
	if err != nil {
		t.Fatal(err)
	}
	front, _, ok := strings.Cut(strings.TrimPrefix(string(skill), "---\n"), "\n---\n")
	if !ok || !strings.HasPrefix(string(skill), "---\n") {
		t.Fatalf("the skill has no frontmatter:\n%.300s", skill)
	}
	lines := strings.Split(front, "\n")
	if len(lines) != 2 || lines[0] != "name: "+Command || !strings.HasPrefix(lines[1], "description: ") {
		t.Fatalf("the skill's frontmatter is not exactly its name and description:\n%s", front)
	}
	desc := strings.TrimPrefix(lines[1], "description: ")
	if strings.Contains(desc, ": ") || strings.Contains(desc, " #") || strings.ContainsAny(desc[:1], "&*!|>'\"%@`{[") {
		t.Errorf("the description is not a plain YAML scalar: %q", desc)
	}
	for _, w := range []string{"review", "change", "whetstone"} {
		if !strings.Contains(desc, w) {
			t.Errorf("the description does not say %q: a model asked to review a change with whetstone would not pick it", w)
		}
	}
}

// TestOpenCodePermissions: a read-only agent may not edit; only agents with
// Bash may run commands.
func TestOpenCodePermissions(t *testing.T) {
	for _, name := range brief.Names() {
		a, err := brief.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		b, err := RenderAgent(brief.Agents(), name)
		if err != nil {
			t.Fatal(err)
		}
		edits := slices.Contains(a.Tools, "Edit")
		if strings.Contains(string(b), "  edit: allow") != edits {
			t.Errorf("%s: edit allowed = %v, want %v:\n%s", name, !edits, edits, b)
		}
		if strings.Contains(string(b), "  bash: allow") != slices.Contains(a.Tools, "Bash") {
			t.Errorf("%s: bash permission does not follow its tools %v", name, a.Tools)
		}
		if !strings.Contains(string(b), "\nmode: subagent\n") {
			t.Errorf("%s is not a subagent", name)
		}
	}
}
