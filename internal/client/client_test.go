package client

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/whetstone-dev/whetstone/internal/brief"
	"github.com/whetstone-dev/whetstone/internal/hook"
)

// TestGeneratedFilesUpToDate fails when a client's committed generated
// files are not what its Render makes of the sources, or when a folder
// of them holds a file Render does not make: every client reads the same
// briefs.
func TestGeneratedFilesUpToDate(t *testing.T) {
	const root = "../.."
	const fix = "edit internal/brief/src or commands/review.md, not the generated files, then run `go run ./cmd/genagents` from the module root"
	command, err := os.ReadFile(filepath.Join(root, "commands", "review.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range All() {
		files, err := c.Render(brief.Agents(), command)
		if err != nil {
			t.Fatalf("%s: %v", c.Name(), err)
		}
		if len(files) == 0 {
			t.Errorf("%s renders nothing", c.Name())
		}
		dirs := map[string]bool{}
		for rel, want := range files {
			dirs[filepath.Dir(rel)] = true
			got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
			if err != nil || string(got) != string(want) {
				t.Errorf("%s: %s differs from its sources (-generated +committed) (%v):\n%s\n%s", c.Name(), rel, err, cmp.Diff(string(want), string(got)), fix)
			}
		}
		for dir := range dirs {
			committed, _ := filepath.Glob(filepath.Join(root, dir, "*"))
			for _, f := range committed {
				if info, err := os.Stat(f); err != nil || info.IsDir() {
					continue
				}
				rel, _ := filepath.Rel(root, f)
				if _, ok := files[filepath.ToSlash(rel)]; !ok {
					t.Errorf("%s: %s is not generated from any source; delete it or add its source", c.Name(), rel)
				}
			}
		}
	}
}

// TestParse: a payload names its client, or none for the default; an
// unknown one is refused; each client's names are normalised only for it.
func TestParse(t *testing.T) {
	p, err := Parse([]byte(`{"session_id":"s1","tool_name":"Agent","tool_input":{"subagent_type":"whetstone-fixer","file_path":"/a"},"agent_type":"whetstone-critic"}`))
	if err != nil {
		t.Fatal(err)
	}
	// In the default client, whetstone-fixer is some other plugin's agent.
	if p.Client != Default().Name() || p.Dispatch != "whetstone-fixer" || p.AgentType != "whetstone-critic" || len(p.Paths) != 1 {
		t.Errorf("default payload: client %q, subagent %q, agent %q, paths %q", p.Client, p.Dispatch, p.AgentType, p.Paths)
	}
	for _, c := range All() {
		p, err := Parse([]byte(`{"session_id":"s1","client":"` + c.Name() + `","tool_name":"x"}`))
		if err != nil || Of(p) != c {
			t.Errorf("a payload of %s: client %v, %v", c.Name(), Of(p), err)
		}
	}
	if _, err := Parse([]byte(`{"session_id":"s1","client":"vscode"}`)); err == nil || !strings.Contains(err.Error(), `unknown client "vscode"`) {
		t.Errorf("an unknown client: %v", err)
	}
}

// TestNamesUnique: a client's name picks it.
func TestNamesUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range All() {
		if seen[c.Name()] || c.Name() == "" || c.Title() == "" {
			t.Errorf("client %q (%q) is unnamed or named twice", c.Name(), c.Title())
		}
		seen[c.Name()] = true
	}
}

// TestReadAsMarksThePayload: a payload read for a client that does not
// name itself (Codex's hooks pass --client=codex) is that client's, also
// for the peek that answers a payload which does not decode, and a payload
// naming another client as well is refused by the tool gate's duplicate
// check rather than judged as either.
func TestReadAsMarksThePayload(t *testing.T) {
	p, err := ReadAs(strings.NewReader(` {"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"spawn_agent","tool_input":{"agent_type":"whetstone-critic","message":"m"}}`), "codex")
	if err != nil {
		t.Fatal(err)
	}
	if p.Client != "codex" || p.ToolName != "Agent" || p.Dispatch != "whetstone:critic" {
		t.Errorf("client %q tool %q dispatch %q", p.Client, p.ToolName, p.Dispatch)
	}
	p, err = ReadAs(strings.NewReader(`{"session_id":"s2","tool_input":{"x":`), "codex")
	if err == nil {
		t.Fatal("a broken payload decoded")
	}
	if s, c := hook.Peek(p.Raw); s != "s2" || c != "codex" {
		t.Errorf("peek of a broken payload: session %q client %q", s, c)
	}
	p, err = ReadAs(strings.NewReader(`{"session_id":"s3","client":"opencode","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`), "codex")
	if err != nil {
		t.Fatal(err)
	}
	if hook.CheckToolCall(p) == nil {
		t.Error("a payload naming two clients passed the tool gate's check")
	}
	if _, err := ReadAs(strings.NewReader(`{"session_id":"s4"}`), "vim"); err == nil {
		t.Error("an unknown --client was taken")
	}
}
