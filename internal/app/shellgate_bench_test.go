package app_test

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkShellGate is a read-only agent's Bash call during a run, in
// Claude Code's default permission mode: a pure read (the parser alone),
// a read that walks a tree (the parser and the sandbox rewrite), go test
// (the parser, the code check, and the sandbox rewrite, with bubblewrap's
// probe cached), and a pure read with the project's .venv/bin first on
// PATH (one stat per program name: the programs are the system's).
func BenchmarkShellGate(b *testing.B) {
	for _, bc := range []struct {
		name, cmd string
		venv      bool
	}{
		{"read", "git log --oneline -5 && cat go.mod | head", false},
		{"walk", "git log --oneline -5 && rg -n TODO .", false},
		{"go-test", "go test -count=1 ./...", false},
		{"read-venv", "git log --oneline -5 && cat go.mod | head", true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			a := benchApp()
			var venv string
			if bc.venv {
				a.Getenv = func(k string) string {
					if k == "PATH" {
						return venv + ":" + os.Getenv("PATH")
					}
					return testGetenv(k)
				}
			}
			const session = "be000000-0000-4000-8000-000000000000"
			dir := benchProject(b, a, session, "/whetstone:review")
			venv = filepath.Join(dir, ".venv", "bin")
			if err := os.MkdirAll(venv, 0o755); err != nil {
				b.Fatal(err)
			}
			data := payload(b, map[string]any{
				"session_id": session, "hook_event_name": "PreToolUse", "cwd": dir, "permission_mode": "default",
				"agent_type": "whetstone:witness", "agent_id": "agent-witness",
				"tool_name": "Bash", "tool_input": map[string]any{"command": bc.cmd, "description": "look"}})
			b.ReportAllocs()
			for b.Loop() {
				runHook(b, a, "pre-tool-use", data)
			}
		})
	}
}
