package whetstone_test

import (
	"encoding/json"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/whetstone-dev/whetstone/internal/cli"
	"github.com/whetstone-dev/whetstone/internal/client/codex"
)

// hookTimeouts reads the timeout of each `whetstone hook <event>` command
// of a hooks.json (Claude Code's and Codex's share the format), in seconds.
func hookTimeouts(t *testing.T, data []byte) map[string]int {
	t.Helper()
	var f struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
				Timeout int    `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	event := regexp.MustCompile(` hook ([a-z-]+)`)
	for _, groups := range f.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				m := event.FindStringSubmatch(h.Command)
				if m == nil {
					t.Fatalf("hooks.json command %q runs no whetstone hook", h.Command)
				}
				if old, ok := out[m[1]]; ok && old != h.Timeout {
					t.Errorf("hook %s has timeouts %d and %d", m[1], old, h.Timeout)
				}
				out[m[1]] = h.Timeout
			}
		}
	}
	return out
}

// TestHookTimeoutsAgree: a hook's timeout is written in four places, which
// must agree: Claude Code's hooks/hooks.json, the OpenCode plugin's
// TIMEOUT_S, the hooks.json `whetstone install codex` writes, and the
// binary's own deadline (cli.HookDeadline), which leaves a margin for the
// answer, and a gate's refusal (cli.GateGrace) before the client's kill.
func TestHookTimeoutsAgree(t *testing.T) {
	claude, err := os.ReadFile("hooks/hooks.json")
	if err != nil {
		t.Fatal(err)
	}
	codexHooks, err := codex.Hooks("/usr/local/bin/whetstone")
	if err != nil {
		t.Fatal(err)
	}
	plugin, err := os.ReadFile("opencode/whetstone.ts")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`const TIMEOUT_S: Record<string, number> = (\{[^}]*\})`).FindSubmatch(plugin)
	if m == nil {
		t.Fatal("opencode/whetstone.ts has no TIMEOUT_S table")
	}
	var opencode map[string]int
	if err := json.Unmarshal(m[1], &opencode); err != nil {
		t.Fatalf("TIMEOUT_S %s is not JSON (keep every key quoted): %v", m[1], err)
	}
	want := hookTimeouts(t, claude)
	if len(want) < 6 {
		t.Fatalf("hooks/hooks.json answers %d events: %v", len(want), want)
	}
	// Codex has no PreSkillShellCommand; every other event is the same.
	skill := want["pre-skill-shell-command"]
	delete(want, "pre-skill-shell-command")
	if diff := cmp.Diff(want, hookTimeouts(t, codexHooks)); diff != "" {
		t.Errorf("Codex's hooks.json timeouts differ from hooks/hooks.json's (-claude +codex):\n%s", diff)
	}
	if diff := cmp.Diff(want, opencode); diff != "" {
		t.Errorf("opencode/whetstone.ts's TIMEOUT_S differs from hooks/hooks.json's (-claude +opencode):\n%s", diff)
	}
	want["pre-skill-shell-command"] = skill
	for event, timeout := range want {
		d, ok := cli.HookDeadline([]string{"whetstone", "hook", event})
		if limit := time.Duration(timeout) * time.Second; !ok || d+cli.GateGrace >= limit || limit-d > 15*time.Second {
			t.Errorf("hook %s: the binary's deadline is %v (+%v grace) for a client timeout of %v; want 5 to 15 s less than the timeout, the grace included", event, d, cli.GateGrace, limit)
		}
	}
	// Claude Code lets a call through when its hook times out, unless the
	// hook says onFailure: block (shared/docs/claude-code.md §10).
	var f struct {
		Hooks map[string][]struct {
			Hooks []struct {
				OnFailure string `json:"onFailure"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(claude, &f); err != nil {
		t.Fatal(err)
	}
	for _, event := range []string{"PreToolUse", "PreSkillShellCommand"} {
		if len(f.Hooks[event]) == 0 {
			t.Errorf("hooks/hooks.json has no %s hook", event)
		}
		for _, g := range f.Hooks[event] {
			for _, h := range g.Hooks {
				if h.OnFailure != "block" {
					t.Errorf("a %s hook of hooks/hooks.json has onFailure %q: Claude Code would let a call through when it times out", event, h.OnFailure)
				}
			}
		}
	}
}
