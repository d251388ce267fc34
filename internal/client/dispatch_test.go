package client

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestCheckDispatch: each client's captured dispatch (testdata/) holds only
// its DispatchFields; any other field, and a listed one of another type,
// is named.
func TestCheckDispatch(t *testing.T) {
	for _, c := range []struct {
		client, fixture string
		extra           []string
	}{
		{"", "pretooluse-agent-foreground.json", []string{"resume", "model", "effort", "isolation", "unknown"}},
		{"", "pretooluse-agent-main.json", []string{"resume", "model"}},
		{"codex", "pre-tool-use-spawn-agent.json", []string{"fork_context", "fork_turns", "items", "prompt", "model", "unknown"}},
		{"opencode", "hook.tool.execute.before.task.root.json", []string{"task_id", "command", "model", "unknown"}},
	} {
		dir := map[string]string{"": "claude-code", "codex": "codex", "opencode": "opencode"}[c.client]
		raw, err := os.ReadFile("../../testdata/" + dir + "/" + c.fixture)
		if err != nil {
			t.Fatal(err)
		}
		var f map[string]any
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatal(err)
		}
		if pl, ok := f["payload"].(map[string]any); ok { // OpenCode's plugin sends output.args as tool_input
			args := pl["output"].(map[string]any)["args"]
			f = map[string]any{"session_id": "ses_1", "hook_event_name": "PreToolUse", "tool_name": pl["input"].(map[string]any)["tool"], "tool_input": args}
		}
		if c.client != "" {
			f["client"] = c.client
		}
		check := func(f map[string]any) string {
			t.Helper()
			data, _ := json.Marshal(f)
			p, err := Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			if p.ToolName != "Agent" {
				t.Fatalf("%s: tool %q is not the dispatch", c.fixture, p.ToolName)
			}
			return CheckDispatch(p)
		}
		if why := check(f); why != "" {
			t.Errorf("%s: the captured dispatch is refused: %s", c.fixture, why)
		}
		in := f["tool_input"].(map[string]any)
		for _, field := range c.extra {
			in[field] = "x"
			if why := check(f); !strings.Contains(why, `"`+field+`" is not among them`) {
				t.Errorf("%s with %q: %q", c.fixture, field, why)
			}
			delete(in, field)
		}
		for field := range mustParse(t, f).DispatchFields() {
			old := in[field]
			in[field] = map[string]any{"text": "more context"}
			if why := check(f); !strings.Contains(why, `"`+field+`" is not a `) {
				t.Errorf("%s with an object for %q: %q", c.fixture, field, why)
			}
			in[field] = old
			if old == nil {
				delete(in, field)
			}
		}
	}
}

func mustParse(t *testing.T, f map[string]any) Client {
	t.Helper()
	data, _ := json.Marshal(f)
	p, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return Of(p)
}
