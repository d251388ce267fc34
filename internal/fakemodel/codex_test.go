package fakemodel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/whetstone-dev/whetstone/internal/client/codex"
)

// codexBinary is the pinned native codex of scripts/install-codex in
// ${WHETSTONE_CACHE:-<repo>/.cache} (codex.NativeBinary); the test skips
// when it is not there.
func codexBinary(t *testing.T) string {
	t.Helper()
	cache := os.Getenv("WHETSTONE_CACHE")
	if cache == "" {
		cache = filepath.Join("..", "..", ".cache")
	}
	bin, err := codex.NativeBinary(cache, codex.Version)
	if err != nil {
		t.Skip(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("the Codex CLI %s is not installed (%v): run scripts/install-codex", codex.Version, err)
	}
	return bin
}

func gitRepo(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// hookPayload is the part of a Codex hook's stdin that the test checks.
type hookPayload struct {
	SessionID      string          `json:"session_id"`
	TurnID         string          `json:"turn_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	Event          string          `json:"hook_event_name"`
	Model          string          `json:"model"`
	PermissionMode string          `json:"permission_mode"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
	StopHookActive *bool           `json:"stop_hook_active"`
	LastMessage    *string         `json:"last_assistant_message"`
}

// TestCodexHooks runs the real Codex CLI against the fake Responses API with
// one hook script on PreToolUse and Stop: the hook sees Claude Code's
// payload shape (shell as "Bash", apply_patch with the patch in
// tool_input.command), its deny reaches the model as the tool's output and
// the file is not written, and a Stop block is handed to the model once
// before the second Stop (stop_hook_active) is let through.
func TestCodexHooks(t *testing.T) {
	bin := codexBinary(t)
	dir := t.TempDir()
	home, proj := filepath.Join(dir, "home"), filepath.Join(dir, "proj")
	for _, d := range []string{home, proj} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(proj, "a.txt"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRepo(t, proj)

	const patch = "*** Begin Patch\n*** Add File: denied.txt\n+no\n*** End Patch\n"
	const denyReason, stopReason = "whetstone: reviewers do not edit", "whetstone: one more pass"
	script := func(req *Request) Reply {
		switch len(req.ToolUses()) {
		case 0:
			return Call(ToolUse("exec_command", map[string]string{"cmd": "cat a.txt"}))
		case 1:
			return Call(ToolUse("apply_patch", patch))
		}
		return Say("done")
	}
	s, err := Start(script, filepath.Join(dir, "model.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	payloads := filepath.Join(dir, "hooks.jsonl")
	hook := filepath.Join(dir, "hook.sh")
	hookScript := fmt.Sprintf(`#!/bin/sh
payload=$(cat)
printf '%%s\n' "$payload" >> %q
case "$payload" in
*'"tool_name":"apply_patch"'*) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"%s"}}' ;;
*'"hook_event_name":"Stop"'*'"stop_hook_active":false'*) echo '{"decision":"block","reason":"%s"}' ;;
esac
`, payloads, denyReason, stopReason)
	if err := os.WriteFile(hook, []byte(hookScript), 0o755); err != nil {
		t.Fatal(err)
	}
	handler := []map[string]any{{"type": "command", "command": hook, "timeout": 30}}
	hooks, _ := json.Marshal(map[string]any{"hooks": map[string]any{
		"PreToolUse": []any{map[string]any{"matcher": "*", "hooks": handler}},
		"Stop":       []any{map[string]any{"hooks": handler}},
	}})
	if err := os.WriteFile(filepath.Join(home, "hooks.json"), hooks, 0o644); err != nil {
		t.Fatal(err)
	}
	// The fake model as the only provider, every tool up front (the
	// driver's config: docs/codex.md §1).
	if err := (codex.Driver{Bin: bin, Home: home, ModelURL: s.URL}).WriteConfig(context.Background()); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "exec", "--dangerously-bypass-hook-trust", "-s", "workspace-write", "-C", proj, "check the change")
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("codex exec: %v\n%s", err, stderr.String())
	}
	if strings.TrimSpace(string(out)) != "done" {
		t.Errorf("codex exec printed %q, want the last message", out)
	}
	if _, err := os.Stat(filepath.Join(proj, "denied.txt")); !os.IsNotExist(err) {
		t.Errorf("the denied apply_patch wrote denied.txt (%v)", err)
	}

	// The live payloads have exactly the keys of the ones captured in
	// testdata/codex (docs/codex.md), so a Codex that changes them fails here.
	raw := readLines(t, payloads)
	for i, fixture := range map[int]string{0: "pre-tool-use-bash.json", 1: "pre-tool-use-apply-patch.json", 2: "stop.json", 3: "stop-active.json"} {
		if i < len(raw) {
			if got, want := keys(t, raw[i]), keys(t, readFixture(t, fixture)); got != want {
				t.Errorf("payload %d has keys %s, testdata/codex/%s has %s", i, got, fixture, want)
			}
		}
	}
	got := readPayloads(t, payloads)
	var events []string
	for _, p := range got {
		events = append(events, p.Event+":"+p.ToolName)
		if p.SessionID == "" || p.TurnID == "" || p.TranscriptPath == "" || p.Model != "fake-model" || p.PermissionMode == "" {
			t.Errorf("%s payload lacks a common field: %+v", p.Event, p)
		}
		if real, _ := filepath.EvalSymlinks(proj); p.Cwd != proj && p.Cwd != real {
			t.Errorf("%s cwd %q, want %q", p.Event, p.Cwd, proj)
		}
	}
	if want := "PreToolUse:Bash PreToolUse:apply_patch Stop: Stop:"; strings.Join(events, " ") != want {
		t.Fatalf("hook events %q, want %q", strings.Join(events, " "), want)
	}
	var bash, applyPatch struct{ Command string }
	json.Unmarshal(got[0].ToolInput, &bash)
	json.Unmarshal(got[1].ToolInput, &applyPatch)
	if bash.Command != "cat a.txt" || applyPatch.Command != patch {
		t.Errorf("tool_input.command: Bash %q, apply_patch %q", bash.Command, applyPatch.Command)
	}
	if got[2].StopHookActive == nil || *got[2].StopHookActive || got[3].StopHookActive == nil || !*got[3].StopHookActive {
		t.Errorf("stop_hook_active: %v then %v, want false then true", got[2].StopHookActive, got[3].StopHookActive)
	}
	if got[2].LastMessage == nil || *got[2].LastMessage != "done" {
		t.Errorf("Stop last_assistant_message %v, want done", got[2].LastMessage)
	}

	// What the model was shown: the deny as the call's output, the Stop
	// reason as a user message wrapped in <hook_prompt>.
	recs, err := s.Requests()
	if err != nil {
		t.Fatal(err)
	}
	last, err := recs[len(recs)-1].Request()
	if err != nil {
		t.Fatal(err)
	}
	if res, ok := last.ToolResult(got[1].ToolUseID); !ok || res.AllText() != "Command blocked by PreToolUse hook: "+denyReason+". Command: "+patch {
		t.Errorf("apply_patch output as the model saw it: %q (found %v)", res.AllText(), ok)
	}
	if fb := last.Latest(); !strings.Contains(fb, "<hook_prompt") || !strings.Contains(fb, stopReason+"</hook_prompt>") {
		t.Errorf("after the blocked Stop the model was shown %q", fb)
	}
	if len(recs) != 4 {
		t.Errorf("%d model requests, want 4 (two calls, done, done again after the block)", len(recs))
	}
}

func readPayloads(t *testing.T, path string) []hookPayload {
	t.Helper()
	var out []hookPayload
	for _, line := range readLines(t, path) {
		var p hookPayload
		if err := json.Unmarshal(line, &p); err != nil {
			t.Fatalf("hook payload %s: %v", line, err)
		}
		out = append(out, p)
	}
	return out
}

func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no hook ran: %v", err)
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	for sc.Scan() {
		out = append(out, append([]byte(nil), sc.Bytes()...))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "codex", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// keys is the sorted top-level keys of a JSON object, space-separated.
func keys(t *testing.T, data []byte) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, " ")
}
