package app_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestActiveFileFollowsTheRun: .whetstone/active/<session>, which tells the
// launcher and the OpenCode plugin that a session's run is in progress
// when they cannot run whetstone, exists from the run's start to its end,
// and the hooks bring it back in line when it was lost or left behind.
func TestActiveFileFollowsTheRun(t *testing.T) {
	d := newDriver(t, newProject(t, t.TempDir()))
	active := filepath.Join(d.dir, ".whetstone", "active", d.session)
	exists := func() bool { _, err := os.Lstat(active); return err == nil }
	if resp := d.call("user-prompt-submit", map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "/whetstone:review --reviewers critic"}); resp == nil || resp.Decision == "block" {
		t.Fatalf("start refused: %+v", resp)
	}
	id := d.proj.Latest()
	if b, err := os.ReadFile(active); err != nil || strings.TrimSpace(string(b)) != id {
		t.Fatalf("after the start: %s holds %q (%v), want the run's id %s", active, b, err, id)
	}

	// Lost (or never written, by an older whetstone): the next hook of the
	// run writes it again.
	os.Remove(active)
	d.call("pre-tool-use", map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": map[string]any{"file_path": "main.go"}})
	if !exists() {
		t.Fatal("a hook of the running run did not write the active file again")
	}

	if _, err := d.a.Abort(d.proj, id); err != nil {
		t.Fatal(err)
	}
	if exists() {
		t.Fatal("the active file outlived the run's end")
	}
	if _, err := os.Lstat(filepath.Join(d.dir, ".whetstone", "sessions", d.session)); err != nil {
		t.Fatalf("the session file went with it: %v", err)
	}

	// Left behind (a crash between the end and the removal): the next hook
	// removes it.
	os.WriteFile(active, []byte(id+"\n"), 0o644)
	d.call("pre-tool-use", map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Read", "tool_input": map[string]any{"file_path": "main.go"}})
	if exists() {
		t.Fatal("a hook of the ended run left a stale active file")
	}

	// A new run of the session (--restart is not needed: the last one ended).
	d.call("user-prompt-submit", map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "/whetstone:review --reviewers critic"})
	if b, _ := os.ReadFile(active); strings.TrimSpace(string(b)) == id || !exists() {
		t.Fatalf("after a second start: active file %q, want the new run's id", b)
	}
}
