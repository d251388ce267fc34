package app_test

import (
	"testing"
)

// BenchmarkShellGate is a read-only agent's Bash call during a run, in
// Claude Code's default permission mode: a pure read (the parser alone),
// and go test (the parser, the code check, and the sandbox rewrite, with
// bubblewrap's probe cached).
func BenchmarkShellGate(b *testing.B) {
	for _, cmd := range []string{"git log --oneline -5 && rg -n TODO .", "go test -count=1 ./..."} {
		b.Run(cmd[:6], func(b *testing.B) {
			a := benchApp()
			const session = "be000000-0000-4000-8000-000000000000"
			dir := benchProject(b, a, session, "/whetstone:review")
			data := payload(b, map[string]any{
				"session_id": session, "hook_event_name": "PreToolUse", "cwd": dir, "permission_mode": "default",
				"agent_type": "whetstone:witness", "agent_id": "agent-witness",
				"tool_name": "Bash", "tool_input": map[string]any{"command": cmd, "description": "look"}})
			b.ReportAllocs()
			for b.Loop() {
				runHook(b, a, "pre-tool-use", data)
			}
		})
	}
}
