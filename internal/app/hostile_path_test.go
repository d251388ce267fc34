package app_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/whetstone-dev/whetstone/internal/sandbox"
	"github.com/whetstone-dev/whetstone/internal/sandbox/sandboxtest"
)

// The attack of issue 28: the repository ships (or the fixer writes)
// .venv/bin full of programs named like the sandbox's helpers, and the
// user's PATH starts there (an activated virtualenv). Nothing of it may
// run outside the sandbox or with the set-up's capabilities.

// escapeDir is an empty directory outside /tmp for what an escape would
// write (whetstone's key, in a containApp, is keyDir/key).
func escapeDir(t *testing.T) (out string) {
	t.Helper()
	out = filepath.Join(sandboxtest.OutsideTmp(t, "whetstone-hostile-out-"), "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestHostileVenvFromTheHook: /whetstone:review alone runs the project's
// tsc (tsconfig.json, node_modules/.bin/tsc) from the hook, in the
// sandbox, while .venv/bin and node_modules/.bin shadow every helper and
// lead the hook's PATH. tsc runs contained (its report arrives, its write
// vanishes); no shim runs outside or with capabilities; the key stays
// unread.
func TestHostileVenvFromTheHook(t *testing.T) {
	keyDir := containKeyDir(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	newProject(t, root)
	t.Chdir(root)
	out := escapeDir(t)
	key := filepath.Join(keyDir, "key")
	tsc := fmt.Sprintf("#!/bin/sh\necho pwned > README.md\ncat %q > %q 2>/dev/null\ncat %q\necho \"src/a.ts(1,7): error TS2322: Type 'string' is not assignable to type 'number'.\"\nexit 2\n",
		key, filepath.Join(out, "tsc-stole"), key)
	files := map[string]string{"README.md": "victim\n", "tsconfig.json": "{}\n", "src/a.ts": "const x: number = 'a';\n",
		"node_modules/.bin/tsc": tsc, ".gitignore": "node_modules/\n.venv/\n"}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	venv, nm := filepath.Join(root, ".venv", "bin"), filepath.Join(root, "node_modules", ".bin")
	sandboxtest.HostileBin(t, venv, root, keyDir, out)
	sandboxtest.HostileBin(t, nm, root, keyDir, out)
	t.Setenv("PATH", venv+":"+nm+":"+os.Getenv("PATH"))
	t.Setenv("VIRTUAL_ENV", filepath.Dir(venv))

	a := containApp(t, keyDir, true)
	const session = "c8000000-0000-4000-8000-000000000001"
	resp := runHook(t, a, "user-prompt-submit", payload(t, map[string]any{
		"session_id": session, "hook_event_name": "UserPromptSubmit", "cwd": root, "prompt": "/whetstone:review"}))
	if !strings.Contains(string(resp), "WHETSTONE-DISPATCH") {
		t.Fatalf("no run started: %s", resp)
	}
	context, err := os.ReadFile(filepath.Join(root, ".whetstone", "runs", runOf(t, root, session), "context.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := gjson.GetBytes(context, `signals.#(tool=="tsc")`)
	if s.Get("status").String() != "candidates" || s.Get("candidates.0.file").String() != "src/a.ts" {
		t.Errorf("tsc did not run in the sandbox: %s", s.Raw)
	}
	if k, err := os.ReadFile(key); err != nil || bytes.Contains(context, k) || bytes.Contains(context, []byte(fmt.Sprintf("%x", k))) {
		t.Errorf("the key reached context.json (or is missing: %v): %s", err, s.Raw)
	}
	sandboxtest.Escaped(t, out, strings.ReplaceAll(s.Get("output").String(), `\n`, "\n"))
	if b, _ := os.ReadFile(filepath.Join(root, "README.md")); string(b) != "victim\n" {
		t.Errorf("README.md is %q", b)
	}
	if m, _ := filepath.Glob(filepath.Join(root, "pwned-*")); len(m) > 0 {
		t.Errorf("shims wrote into the project: %q", m)
	}
}

// TestHostileVenvFromTheFixer: in the fix phase the fixer writes
// .venv/bin shims of every helper (the user's virtualenv is active, so
// .venv/bin leads PATH) and runs go test, sandboxed. The tests run; no
// shim runs outside or with capabilities; nothing lands.
func TestHostileVenvFromTheFixer(t *testing.T) {
	keyDir := containKeyDir(t)
	a := containApp(t, keyDir, true)
	const session = "c8000000-0000-4000-8000-000000000002"
	root, runDir := containProject(t, a, session, "/whetstone:review --reviewers critic", `{"pre_existing_blocks": true}`)
	id := filepath.Base(runDir)
	runHook(t, a, "pre-tool-use", dispatchPayload(t, session, root, id, "critic"))
	runHook(t, a, "subagent-start", startAgentPayload(t, session, root, "whetstone:critic", "agent-critic"))
	if out := runHook(t, a, "subagent-stop", stopPayload(t, session, root, "whetstone:critic", "agent-critic", reviewReport(t, "critic", "agent-critic", 1))); out != nil {
		t.Fatalf("the critic's report was refused: %s", out)
	}
	if s := readState(t, runDir); s.Phase != "fix" {
		t.Fatalf("the run is in %q, want fix", s.Phase)
	}
	out := escapeDir(t)
	venv := filepath.Join(root, ".venv", "bin")
	sandboxtest.HostileBin(t, venv, root, keyDir, out)
	t.Setenv("PATH", venv+":"+os.Getenv("PATH"))
	before := tree(t, root)

	cmd := "go test -count=1 ./..."
	resp := runHook(t, a, "pre-tool-use", bashPayload(t, session, root, "whetstone:fixer", "default", cmd))
	line := rewritten(t, resp, cmd, sandbox.Decision("default"))
	// Claude Code's shell is the user's, not the repository's: the system
	// bash, with the hostile PATH.
	run := exec.Command("/bin/bash", "-c", line)
	run.Dir = root
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	err := run.Run()
	if err != nil || !strings.Contains(stdout.String(), "ok") {
		t.Errorf("go test in the sandbox: %v\nstdout:\n%s\nstderr:\n%s", err, &stdout, &stderr)
	}
	sandboxtest.Escaped(t, out, stderr.String())
	untouched(t, stdout.String()+stderr.String(), keyDir, before, root)
}
