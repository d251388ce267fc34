package codex

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/whetstone-dev/whetstone/internal/hook"
)

// captured reads a payload Codex 0.169.0 sent (testdata/codex), with
// agent_type set to agent when given (the captures' agent was "critic").
func captured(t *testing.T, name, agent string) hook.Payload {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "codex", name))
	if err != nil {
		t.Fatal(err)
	}
	if agent != "" {
		raw = []byte(strings.ReplaceAll(string(raw), `"critic"`, `"`+agent+`"`))
	}
	p, err := hook.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	Client{}.Normalise(&p)
	return p
}

// TestNormaliseCapturedPayloads: Codex's own payloads reach the gates in
// whetstone's words — a reviewer's apply_patch is an edit of the files it
// names, a spawn is a dispatch with the prompt the gate compares, a wait
// is a reading tool, and $whetstone-review is the review command.
func TestNormaliseCapturedPayloads(t *testing.T) {
	p := captured(t, "pre-tool-use-apply-patch-subagent.json", "whetstone-critic")
	if p.ToolName != "ApplyPatch" || p.AgentType != "whetstone:critic" || strings.Join(p.Paths, ",") != p.Cwd+"/subpatch.txt" {
		t.Errorf("apply_patch: tool %q agent %q paths %q", p.ToolName, p.AgentType, p.Paths)
	}
	p = captured(t, "pre-tool-use-bash-subagent.json", "whetstone-critic")
	if p.ToolName != "Bash" || p.ToolInput.Get("command").String() == "" || p.AgentID == "" {
		t.Errorf("shell: tool %q input %s agent id %q", p.ToolName, p.ToolInput.Raw, p.AgentID)
	}
	p = captured(t, "pre-tool-use-spawn-agent.json", "whetstone-critic")
	if p.ToolName != "Agent" || p.Dispatch != "whetstone:critic" || p.ToolInput.Get("prompt").String() != "SUBTASK review the change" {
		t.Errorf("spawn: tool %q dispatch %q input %s", p.ToolName, p.Dispatch, p.ToolInput.Raw)
	}
	if p = captured(t, "pre-tool-use-spawn-agent.json", ""); p.Dispatch != "critic" {
		t.Errorf("a spawn of another agent: dispatch %q, want it kept", p.Dispatch)
	}
	if p = captured(t, "pre-tool-use-wait-agent.json", ""); p.ToolName != "TaskOutput" {
		t.Errorf("wait_agent: tool %q", p.ToolName)
	}
	for prompt, want := range map[string]string{
		"$whetstone-review --depth quick": "/whetstone:review --depth quick",
		"$whetstone-review":               "/whetstone:review",
		"$whetstone:review src/":          "/whetstone:review src/",
		"$whetstone-reviewer":             "$whetstone-reviewer",
		"please $whetstone-review":        "please $whetstone-review",
	} {
		if got := command(prompt); got != want {
			t.Errorf("command(%q) = %q, want %q", prompt, got, want)
		}
	}
}

// TestPhraseDispatchLines: an instruction's dispatch lines become
// spawn_agent inputs whose message is the prompt the gate expects, and
// whetstone's names Codex's.
func TestPhraseDispatchLines(t *testing.T) {
	r := hook.Block("Dispatch this agent now.\nWHETSTONE-DISPATCH {\"subagent_type\":\"whetstone-critic\",\"description\":\"whetstone critic, iteration 1\",\"prompt\":\"whetstone review · run r1 · iteration 1 · reviewer critic\"}\nThen wait: whetstone checks the reports and gives the next step. Use /whetstone:review; whetstone:fixer edits.")
	Client{}.Phrase(r)
	for _, want := range []string{
		`WHETSTONE-DISPATCH {"agent_type":"whetstone-critic","message":"whetstone review · run r1 · iteration 1 · reviewer critic"}`,
		"call wait_agent", "$whetstone-review", "whetstone-fixer edits",
	} {
		if !strings.Contains(r.Reason, want) {
			t.Errorf("phrased answer lacks %q:\n%s", want, r.Reason)
		}
	}
}

// TestPatchHeadersAsCodexReadsThem: the gate judges every file a patch
// names as Codex applies it — a header after any Unicode space (Codex
// trims a header as Rust's trim does), a CRLF line, a Move to — and a
// relative path from the session's directory, not the project's root.
func TestPatchHeadersAsCodexReadsThem(t *testing.T) {
	patch := "*** Begin Patch\r\n*** Add File: ok.go\r\n+x\r\n" +
		"\f*** Add File: .git/hooks/pre-commit\n+x\n" +
		"\u00a0*** Update File: a.go\n*** Move to: ../out.go\n" +
		"\v*** Delete File: /abs/whetstone.json\n*** End Patch\n"
	input, _ := json.Marshal(map[string]string{"command": patch})
	raw, _ := json.Marshal(map[string]any{"session_id": "s", "cwd": "/proj/sub", "hook_event_name": "PreToolUse",
		"tool_name": "apply_patch", "tool_input": json.RawMessage(input)})
	p, err := hook.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	Client{}.Normalise(&p)
	want := []string{"/proj/sub/ok.go", "/proj/sub/.git/hooks/pre-commit", "/proj/sub/a.go", "/proj/sub/../out.go", "/abs/whetstone.json"}
	if !slices.Equal(p.Paths, want) {
		t.Errorf("paths %q, want %q", p.Paths, want)
	}
}
