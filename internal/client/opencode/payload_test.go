package opencode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/whetstone-dev/whetstone/internal/hook"
)

// openCodePayload builds, from a captured OpenCode tool.execute.before
// call (testdata/opencode, from OpenCode 1.18.33), the payload the plugin
// (opencode/whetstone.ts) sends: the tool's name and args as they are.
func openCodePayload(t *testing.T, fixture, agent string) hook.Payload {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "opencode", fixture))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Payload struct {
			Input struct {
				Tool      string `json:"tool"`
				SessionID string `json:"sessionID"`
			} `json:"input"`
			Output struct {
				Args json.RawMessage `json:"args"`
			} `json:"output"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	p := map[string]any{
		"hook_event_name": "PreToolUse", "session_id": "ses_root", "cwd": "/home/dev/project", "client": "opencode",
		"tool_name": f.Payload.Input.Tool, "tool_input": f.Payload.Output.Args,
		"opencode_session_id": f.Payload.Input.SessionID,
	}
	if agent != "" {
		p["agent_id"], p["agent_type"] = f.Payload.Input.SessionID, agent
	}
	b, _ := json.Marshal(p)
	return parse(t, b)
}

// parse decodes an OpenCode payload as the hook command does.
func parse(t *testing.T, raw []byte) hook.Payload {
	t.Helper()
	p, err := hook.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	Client{}.Normalise(&p)
	return p
}

func TestOpenCodePayloads(t *testing.T) {
	tests := []struct {
		fixture, agent string
		tool           string
		paths          []string
		agentType      string
	}{
		{"hook.tool.execute.before.apply_patch.root.json", "", "ApplyPatch", []string{"/home/dev/project/patched.txt"}, ""},
		{"hook.tool.execute.before.write.child.json", "whetstone-critic", "Write", []string{"/home/dev/project/sub.txt"}, "whetstone:critic"},
		{"hook.tool.execute.before.edit.child.json", "general", "Edit", []string{"/home/dev/project/sub.txt"}, "general"},
		{"hook.tool.execute.before.task.root.json", "", "Agent", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			p := openCodePayload(t, tt.fixture, tt.agent)
			if p.Client != "opencode" || p.ToolName != tt.tool || !slices.Equal(p.Paths, tt.paths) || p.AgentType != tt.agentType {
				t.Errorf("client %q, tool %q, paths %q, agent %q; want opencode, %q, %q, %q", p.Client, p.ToolName, p.Paths, p.AgentType, tt.tool, tt.paths, tt.agentType)
			}
		})
	}
	if got := openCodePayload(t, "hook.tool.execute.before.task.root.json", "").Dispatch; got != "general" {
		t.Errorf("Dispatch = %q, want general (not whetstone's)", got)
	}
}

func TestPatchPaths(t *testing.T) {
	patch := "*** Begin Patch\n*** Add File: new.txt\n+x\n*** Update File: a/old.go\n*** Move to: b/new.go\n@@\n-a\n+b\n" +
		"*** Delete File: gone.txt\r\n*** Update File: a/old.go\n@@\n-c\n+d\n*** End Patch"
	want := []string{"new.txt", "a/old.go", "b/new.go", "gone.txt"}
	if got := hook.PatchPaths(patch); !slices.Equal(got, want) {
		t.Errorf("PatchPaths = %q, want %q", got, want)
	}
	if got := hook.PatchPaths("+*** Add File: not-a-header.txt\n"); len(got) != 0 {
		t.Errorf("a content line was taken for a header: %q", got)
	}
	// OpenCode takes a header with no space after the colon; a gate that
	// missed it would check a.go and let .git/hooks/pre-commit through.
	tight := "*** Begin Patch\n*** Update File: a.go\n@@\n-a\n+b\n*** Add File:.git/hooks/pre-commit\n+x\n" +
		"*** Update File:\tb.go\n*** Move to:.whetstone/x\n@@\n-a\n+b\n  *** Delete File: c.go\n*** End Patch"
	want = []string{"a.go", ".git/hooks/pre-commit", "b.go", ".whetstone/x", "c.go"}
	if got := hook.PatchPaths(tight); !slices.Equal(got, want) {
		t.Errorf("PatchPaths of headers without a space = %q, want %q", got, want)
	}
}

func TestOpenCodeAgent(t *testing.T) {
	p := parse(t, []byte(`{"session_id":"ses_1","client":"opencode","tool_name":"task","tool_input":{"subagent_type":"whetstone-fixer"}}`))
	if p.ToolName != "Agent" || p.Dispatch != "whetstone:fixer" {
		t.Errorf("tool %q, subagent %q; want Agent, whetstone:fixer", p.ToolName, p.Dispatch)
	}
}
