package client

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/whetstone-dev/whetstone/internal/hook"
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

// FuzzCheckDispatch: whatever a dispatch's input holds, CheckDispatch does
// not panic, and an input it lets through holds only the client's fields,
// each of its type, read as JavaScript reads them (the last of a key).
func FuzzCheckDispatch(f *testing.F) {
	for _, seed := range []string{
		`{"subagent_type":"whetstone:critic","description":"d","prompt":"p","run_in_background":false}`,
		`{"agent_type":"whetstone-critic","message":"m"}`, `{"subagent_type":"x","resume":"a"}`, `{"prompt":{"a":1}}`, `[]`, `{`,
	} {
		for _, c := range []string{"", "codex", "opencode"} {
			f.Add(c, seed)
		}
	}
	f.Fuzz(func(t *testing.T, client, input string) {
		c, err := Lookup(client)
		if err != nil {
			return
		}
		raw := `{"session_id":"s1","tool_name":"Agent","client":` + strconv.Quote(c.Name()) + `,"tool_input":` + input + `}`
		p, err := Parse([]byte(raw))
		if err != nil || hook.CheckToolCall(p) != nil {
			return // refused before the dispatch gate
		}
		if CheckDispatch(p) != "" {
			return
		}
		var in map[string]any
		if json.Unmarshal([]byte(input), &in) != nil {
			t.Fatalf("let through an input that is not an object: %s", input)
		}
		for k, v := range in {
			want, ok := c.DispatchFields()[k]
			_, isString := v.(string)
			_, isBool := v.(bool)
			if !ok || want == "string" && !isString || want == "boolean" && !isBool {
				t.Fatalf("%s: let through %q: %v in %s", c.Name(), k, v, input)
			}
		}
	})
}
