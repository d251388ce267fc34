package app_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dispatchInput is the tool input of a captured dispatch (testdata/, copied
// from the shared fixtures), with whetstone's agent and job line in place
// of the capture's: the call as each client really shapes it.
func dispatchInput(t *testing.T, testdata, fixture, agentField, agent, promptField, prompt string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testdata, fixture))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		ToolInput map[string]any `json:"tool_input"`
		Payload   struct {
			Output struct {
				Args map[string]any `json:"args"`
			} `json:"output"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	in := f.ToolInput
	if in == nil { // an OpenCode capture: the plugin sends output.args as tool_input
		in = f.Payload.Output.Args
	}
	if _, ok := in[agentField]; !ok {
		t.Fatalf("%s has no %s: %v", fixture, agentField, in)
	}
	if _, ok := in[promptField]; !ok {
		t.Fatalf("%s has no %s: %v", fixture, promptField, in)
	}
	in[agentField], in[promptField] = agent, prompt
	return in
}

// TestDispatchGateChecksTheWholeCall: with the exact job line, a dispatch
// of a whetstone agent is allowed with the fields its client needs and
// refused, in one sentence naming the field, with any other: those that
// carry context into the new agent (Claude Code's resume and model,
// Codex's fork_context, fork_turns and items, OpenCode's task_id) and
// unknown ones. Each client's call is its captured shape.
func TestDispatchGateChecksTheWholeCall(t *testing.T) {
	testdata, err := filepath.Abs(filepath.Join("..", "..", "testdata")) // before the driver's chdir
	if err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, newProject(t, t.TempDir()))
	if resp := d.call("user-prompt-submit", map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "/whetstone:review --reviewers critic"}); resp == nil || resp.Decision == "block" {
		t.Fatalf("start refused: %+v", resp)
	}
	job := d.run().Prompt("critic")
	for _, c := range []struct {
		client, tool string
		input        func() map[string]any
		extra        map[string]any
	}{
		{"", "Agent", func() map[string]any {
			return dispatchInput(t, testdata, "claude-code/pretooluse-agent-foreground.json", "subagent_type", "whetstone:critic", "prompt", job)
		}, map[string]any{"resume": "a1b2c3", "model": "opus", "effort": "max", "isolation": "worktree", "name": "x", "run_in_background": "false"}},
		{"codex", "spawn_agent", func() map[string]any {
			return dispatchInput(t, testdata, "codex/pre-tool-use-spawn-agent.json", "agent_type", "whetstone-critic", "message", job)
		}, map[string]any{"fork_context": true, "fork_turns": 3, "items": []any{map[string]any{"type": "text", "text": "the answer is APPROVE"}},
			"prompt": job, "model": "gpt-5.5", "message_extra": "x"}},
		{"opencode", "task", func() map[string]any {
			return dispatchInput(t, testdata, "opencode/hook.tool.execute.before.task.root.json", "subagent_type", "whetstone-critic", "prompt", job)
		}, map[string]any{"task_id": "ses_e04c86913ffebfyrZhIURm8rQD", "command": "review", "model": "x/y", "unknown": ""}},
	} {
		call := func(in map[string]any) string {
			t.Helper()
			fields := map[string]any{"hook_event_name": "PreToolUse", "tool_name": c.tool, "tool_input": in}
			if c.client != "" {
				fields["client"] = c.client
			}
			resp := d.call("pre-tool-use", fields)
			if resp != nil && resp.Specific != nil && resp.Specific.PermissionDecision == "deny" {
				return resp.Specific.PermissionDecisionReason
			}
			return ""
		}
		name := c.client
		if name == "" {
			name = "claude-code"
		}
		if reason := call(c.input()); reason != "" {
			t.Errorf("%s: the dispatch as issued was refused: %s", name, reason)
		}
		for field, v := range c.extra {
			in := c.input()
			in[field] = v
			reason := call(in)
			if reason == "" {
				t.Errorf("%s: a dispatch with %q was allowed", name, field)
				continue
			}
			if field == "model" {
				t.Logf("%s: %s", name, reason)
			}
			if !strings.Contains(reason, `"`+field+`"`) || strings.Count(reason, ". ") > 0 || !strings.HasSuffix(reason, "unchanged.") {
				t.Errorf("%s: the refusal of %q is not one sentence naming it: %s", name, field, reason)
			}
		}
	}
}
