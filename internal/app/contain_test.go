package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/client"
	"github.com/whetstone-dev/whetstone/internal/sandbox"
	"github.com/whetstone-dev/whetstone/internal/sandbox/sandboxtest"
)

// These tests run the rewritten line for real, with bash, the way Claude
// Code's Bash tool does: an agent's code that tries to forge the verdict
// (write state.json, plant a git hook, read whetstone's key) runs, and
// nothing of it reaches the project, the repository or the key.

// containKeyDir holds the key of these tests outside /tmp: the sandbox's
// /tmp is a fresh tmpfs, so a key under /tmp would be out of reach anyway
// and prove nothing about hiding it.
func containKeyDir(t *testing.T) string {
	return sandboxtest.OutsideTmp(t, "whetstone-contain-test-")
}

// containApp is an App whose key lives in keyDir and which sees the
// caller's Go build cache, so builds in the sandbox stay warm. Without
// bwrap it has no sandbox.
func containApp(t *testing.T, keyDir string, withSandbox bool) *app.App {
	env := func(k string) string {
		switch k {
		case "WHETSTONE_STATE_DIR":
			return keyDir
		case "HOME", "GOCACHE", "XDG_CACHE_HOME", "PATH":
			return os.Getenv(k)
		}
		return ""
	}
	a := &app.App{Now: time.Now, Getenv: env, Log: io.Discard}
	if withSandbox {
		if _, err := exec.LookPath("bwrap"); err != nil {
			t.Skip("bwrap (bubblewrap) is not installed; `make test` installs it with scripts/install-bwrap")
		}
		if _, ok := sandbox.Find(); !ok {
			t.Fatal("bwrap is installed but the sandbox does not work on this machine")
		}
	} else {
		a.Sandbox = func() (string, bool) { return "", false }
	}
	return a
}

// containProject is a Go module in a git repository with a run started by
// session; config is its whetstone.json. It returns the root (symlinks
// resolved) and the run's directory.
func containProject(t *testing.T, a *app.App, session, prompt, config string) (root, runDir string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	newProject(t, root)
	t.Chdir(root) // hooks find the project from their working directory
	files := map[string]string{
		"go.mod":         "module example.com/victim\n\ngo 1.21\n",
		"main_test.go":   "package main\n\nimport \"testing\"\n\nfunc TestMain0(t *testing.T) {}\n",
		"whetstone.json": config + "\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A run reads whetstone.json at the change's base, and its settings
	// that weaken containment only when the user trusts the file.
	commitConfig(t, root)
	trustConfig(t, a, root)
	out := runHook(t, a, "user-prompt-submit", payload(t, map[string]any{
		"session_id": session, "hook_event_name": "UserPromptSubmit", "cwd": root, "prompt": prompt}))
	if !strings.Contains(string(out), "WHETSTONE-DISPATCH") {
		t.Fatalf("no run started: %s", out)
	}
	return root, filepath.Join(root, ".whetstone", "runs", runOf(t, root, session))
}

// forger is Go code whose init() tries everything a hostile test would:
// read whetstone's key, reseal state.json, plant a pre-commit hook, write
// into .whetstone, and leave a process behind. It prints what happened.
func forger(pkg, key, state, root string) string {
	return fmt.Sprintf(`package %s

import (
	"fmt"
	"os"
	"os/exec"
)

func init() {
	k, kerr := os.ReadFile(%q)
	serr := os.WriteFile(%q, []byte("{\"phase\":\"done\",\"verdict\":\"APPROVE\"}"), 0o644)
	os.MkdirAll(%q, 0o755)
	herr := os.WriteFile(%q, []byte("#!/bin/sh\necho PWNED\n"), 0o755)
	werr := os.WriteFile(%q, []byte("x"), 0o644)
	exec.Command("sh", "-c", "sleep 1234.5678 && touch %s/outlived").Start()
	fmt.Printf("INIT-RAN key=%%v(%%x) state=%%v hook=%%v whetstone=%%v\n", kerr, k, serr, herr, werr)
}
`, pkg, key, state, filepath.Join(root, ".git", "hooks"), filepath.Join(root, ".git", "hooks", "pre-commit"),
		filepath.Join(root, ".whetstone", "forged"), root)
}

// bashPayload is a Bash PreToolUse call by agentType in permission mode.
func bashPayload(t *testing.T, session, root, agentType, mode, cmd string) []byte {
	return payload(t, map[string]any{
		"session_id": session, "hook_event_name": "PreToolUse", "cwd": root, "permission_mode": mode,
		"agent_type": agentType, "agent_id": "agent-" + strings.TrimPrefix(agentType, "whetstone:"),
		"tool_name": "Bash", "tool_input": map[string]any{"command": cmd, "description": "Run the tests", "timeout": 120000}})
}

// rewritten checks that the answer runs cmd in the sandbox with decision
// and keeps the other fields of the input, and returns the new line.
func rewritten(t *testing.T, out []byte, cmd, decision string) string {
	t.Helper()
	spec := gjson.GetBytes(out, "hookSpecificOutput")
	line := spec.Get("updatedInput.command").String()
	if !strings.Contains(line, "bwrap") || !strings.HasSuffix(line, "\nexit\n"+cmd) {
		t.Fatalf("%q was not rewritten to run in the sandbox; answer: %s", cmd, out)
	}
	if got := spec.Get("permissionDecision").String(); got != decision {
		t.Errorf("permissionDecision = %q, want %q; answer: %s", got, decision, out)
	}
	if spec.Get("updatedInput.description").String() != "Run the tests" || spec.Get("updatedInput.timeout").Int() != 120000 {
		t.Errorf("updatedInput lost the call's other fields: %s", spec.Get("updatedInput").Raw)
	}
	return line
}

// bash runs line from dir as Claude Code's Bash tool would.
func bash(t *testing.T, dir, line string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", "-c", line)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("bash: %v", err)
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

// tree is every file under dir (symlinks not followed) with its content.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[p] = string(b)
		} else {
			m[p] = info.Mode().String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// untouched fails the test when the forger reached anything: the key in
// the output, the project's tree (.git and .whetstone included) changed, or
// a process of the command still alive.
func untouched(t *testing.T, out, keyDir string, before map[string]string, root string) {
	t.Helper()
	key, err := os.ReadFile(filepath.Join(keyDir, "key"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, fmt.Sprintf("%x", key)) || strings.Contains(out, "key=<nil>") {
		t.Errorf("the command read whetstone's key:\n%s", out)
	}
	after := tree(t, root)
	for p, v := range after {
		if before[p] != v {
			t.Errorf("%s was written by the sandboxed command", p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("%s was removed by the sandboxed command", p)
		}
	}
	// The kernel kills what is left in the sandbox's pid namespace when its
	// init exits, which may be a few milliseconds after bwrap returns.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		left := survivors()
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("processes of the sandboxed command outlived it by 5 s: %q", left)
			break
		}
	}
}

// survivors are the processes the forger started.
func survivors() []string {
	var left []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte("1234.5678")) {
			left = append(left, p+": "+string(b))
		}
	}
	return left
}

// TestWitnessGoTestOverlayIsContained: the attack of issue 18. The witness,
// in Claude Code's default permission mode, writes a Go file and an overlay
// into the temporary directory and runs go test -overlay, whose init()
// reads the key, reseals state.json, plants .git/hooks/pre-commit and
// writes into .whetstone. whetstone answers allow + the sandboxed line; the
// init runs and none of it lands.
func TestWitnessGoTestOverlayIsContained(t *testing.T) {
	keyDir := containKeyDir(t)
	a := containApp(t, keyDir, true)
	const session = "c1000000-0000-4000-8000-000000000001"
	root, runDir := containProject(t, a, session, "/whetstone:review", `{"pre_existing_blocks": true}`)
	// The temporary directory outside /tmp, so the overlay is visible in
	// the sandbox and the init() really runs there.
	tmp := containKeyDir(t)
	t.Setenv("TMPDIR", tmp)
	w := filepath.Join(tmp, "w")
	if err := os.MkdirAll(w, 0o755); err != nil {
		t.Fatal(err)
	}
	evil := filepath.Join(w, "evil_test.go")
	if err := os.WriteFile(evil, []byte(forger("main", filepath.Join(keyDir, "key"), filepath.Join(runDir, "state.json"), root)), 0o644); err != nil {
		t.Fatal(err)
	}
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(root, "evil_test.go"): evil}})
	if err := os.WriteFile(filepath.Join(w, "overlay.json"), overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	before := tree(t, root)

	for _, mode := range []string{"default", "acceptEdits", "dontAsk", "plan", "bypassPermissions"} {
		t.Run(mode, func(t *testing.T) {
			cmd := "go test -count=1 -v -overlay=" + filepath.Join(w, "overlay.json") + " ./..."
			out := runHook(t, a, "pre-tool-use", bashPayload(t, session, root, "whetstone:witness", mode, cmd))
			line := rewritten(t, out, cmd, sandbox.Decision(mode))
			got, code := bash(t, root, line)
			if code != 0 || !strings.Contains(got, "INIT-RAN") {
				t.Fatalf("the overlaid test did not run in the sandbox (exit %d):\n%s", code, got)
			}
			untouched(t, got, keyDir, before, root)
		})
	}
}

// TestFixerGoTestIsContained: in the fix phase the fixer writes a test
// whose init() forges the verdict, then runs go test. The test runs in the
// sandbox and cannot write .git or .whetstone; the fixer's own file
// commands still run outside it.
func TestFixerGoTestIsContained(t *testing.T) {
	keyDir := containKeyDir(t)
	a := containApp(t, keyDir, true)
	const session = "c2000000-0000-4000-8000-000000000002"
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
	// The fixer's Edit of a test file is its to make.
	evil := filepath.Join(root, "evil_test.go")
	if err := os.WriteFile(evil, []byte(forger("main", filepath.Join(keyDir, "key"), filepath.Join(runDir, "state.json"), root)), 0o644); err != nil {
		t.Fatal(err)
	}
	before := tree(t, root)
	for _, mode := range []string{"default", "bypassPermissions"} {
		t.Run(mode, func(t *testing.T) {
			cmd := "go test -count=1 -v ./..."
			out := runHook(t, a, "pre-tool-use", bashPayload(t, session, root, "whetstone:fixer", mode, cmd))
			line := rewritten(t, out, cmd, sandbox.Decision(mode))
			got, code := bash(t, root, line)
			if code != 0 || !strings.Contains(got, "INIT-RAN") {
				t.Fatalf("the fixer's test did not run in the sandbox (exit %d):\n%s", code, got)
			}
			untouched(t, got, keyDir, before, root)
			// A file command the parser approves is the fixer's work: not
			// rewritten, no answer.
			if out := runHook(t, a, "pre-tool-use", bashPayload(t, session, root, "whetstone:fixer", mode, "mkdir -p internal/newpkg")); out != nil {
				t.Errorf("the fixer's mkdir got an answer: %s", out)
			}
		})
	}
}

// TestNoSandboxRefusesCode: without a sandbox a command that runs the
// project's code is refused with one sentence saying how to get one; pure
// reads still pass; whetstone.json's "sandbox": "if-available" lets code
// run unsandboxed, and "off" never sandboxes.
func TestNoSandboxRefusesCode(t *testing.T) {
	keyDir := containKeyDir(t)
	a := containApp(t, keyDir, false)
	for _, tc := range []struct {
		config  string
		refused bool
	}{
		{`{}`, true},
		{`{"sandbox": "auto"}`, true},
		{`{"sandbox": "if-available"}`, false},
		{`{"sandbox": "off"}`, false},
	} {
		t.Run(tc.config, func(t *testing.T) {
			session := fmt.Sprintf("c3000000-0000-4000-8000-%012d", len(tc.config))
			root, _ := containProject(t, a, session, "/whetstone:review", tc.config)
			out := runHook(t, a, "pre-tool-use", bashPayload(t, session, root, "whetstone:witness", "default", "go test ./..."))
			reason := gjson.GetBytes(out, "hookSpecificOutput.permissionDecisionReason").String()
			if !tc.refused {
				if out != nil {
					t.Errorf("go test was not let through unsandboxed: %s", out)
				}
				return
			}
			if gjson.GetBytes(out, "hookSpecificOutput.permissionDecision").String() != "deny" ||
				!strings.Contains(reason, "runs the project's code") || !strings.Contains(reason, "install bubblewrap") ||
				!strings.Contains(reason, `"sandbox": "if-available"`) || strings.Count(reason, ". ") > 0 {
				t.Errorf("go test without a sandbox: want one sentence refusing it and saying how to get the sandbox; got %s", out)
			}
			if out := runHook(t, a, "pre-tool-use", bashPayload(t, session, root, "whetstone:witness", "default", "git log --oneline -3")); out != nil {
				t.Errorf("a pure read was refused without a sandbox: %s", out)
			}
		})
	}
}

// TestOpenCodeBashIsRewritten: OpenCode has no permission mode; its bash
// calls by read-only agents are rewritten whatever they run, the fixer's
// when they run code; the answer is the whole tool input with only command
// replaced, and no permission decision.
func TestOpenCodeBashIsRewritten(t *testing.T) {
	keyDir := containKeyDir(t)
	a := containApp(t, keyDir, true)
	const session = "c4000000-0000-4000-8000-000000000004"
	root, _ := containProject(t, a, session, "/whetstone:review", `{"pre_existing_blocks": true}`)
	for _, cmd := range []string{"go test -count=1 -coverprofile=c.out ./... && ls c.out", "cat go.mod", "echo x > main.go"} {
		out := runHook(t, a, "pre-tool-use", payload(t, map[string]any{
			"client": "opencode", "session_id": session, "hook_event_name": "PreToolUse", "cwd": root,
			"agent_type": "whetstone-witness", "tool_name": "bash",
			"tool_input": map[string]any{"command": cmd, "description": "Run the tests", "timeout": 120000, "workdir": root}}))
		line := rewritten(t, out, cmd, "")
		if w := gjson.GetBytes(out, "hookSpecificOutput.updatedInput.workdir").String(); w != root {
			t.Errorf("updatedInput lost workdir: %s", out)
		}
		before := tree(t, root)
		got, code := bash(t, root, line)
		if code != 0 {
			t.Errorf("%q failed in the sandbox (exit %d):\n%s", cmd, code, got)
		}
		untouched(t, got, keyDir, before, root)
	}
}

// TestReviewerCoverprofileRunsAndLeavesNothing: a reviewer's go test
// -coverprofile=c.out, which writes into the project, runs in the sandbox
// in every mode (the parser alone refuses it to read-only agents) and
// leaves no c.out behind.
func TestReviewerCoverprofileRunsAndLeavesNothing(t *testing.T) {
	keyDir := containKeyDir(t)
	a := containApp(t, keyDir, true)
	const session = "c5000000-0000-4000-8000-000000000005"
	root, _ := containProject(t, a, session, "/whetstone:review", `{"pre_existing_blocks": true}`)
	before := tree(t, root)
	for _, mode := range []string{"default", "acceptEdits", "bypassPermissions"} {
		t.Run(mode, func(t *testing.T) {
			cmd := "go test -count=1 -coverprofile=c.out ./... && ls -l c.out"
			out := runHook(t, a, "pre-tool-use", bashPayload(t, session, root, "whetstone:witness", mode, cmd))
			got, code := bash(t, root, rewritten(t, out, cmd, sandbox.Decision(mode)))
			if code != 0 || !strings.Contains(got, "coverage:") || !strings.Contains(got, "c.out") {
				t.Fatalf("go test -coverprofile did not run in the sandbox (exit %d):\n%s", code, got)
			}
			untouched(t, got, keyDir, before, root)
		})
	}
	// Without a sandbox the parser's own refusal stands: it names the write.
	b := containApp(t, keyDir, false)
	out := runHook(t, b, "pre-tool-use", bashPayload(t, session, root, "whetstone:witness", "default", "go test -coverprofile=c.out ./..."))
	if reason := gjson.GetBytes(out, "hookSpecificOutput.permissionDecisionReason").String(); !strings.Contains(reason, "is read-only and may not run this") {
		t.Errorf("without a sandbox, want the parser's refusal; got %s", out)
	}
}

// TestProbeCutShortDenies: a hook that runs out of time before the sandbox
// probe answers knows nothing of the machine, so with "if-available" it
// does not leave a line that runs the project's code to the parser, as
// "no sandbox here" would: it denies, saying why.
func TestProbeCutShortDenies(t *testing.T) {
	keyDir := containKeyDir(t)
	a := containApp(t, keyDir, false)
	session := "c3100000-0000-4000-8000-000000000001"
	root, _ := containProject(t, a, session, "/whetstone:review", `{"sandbox": "if-available"}`)
	p, err := client.Parse(bashPayload(t, session, root, "whetstone:witness", "default", "go test ./..."))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	resp, err := a.Hook(ctx, "pre-tool-use", p)
	if err != nil {
		t.Fatal(err)
	}
	if resp == nil || resp.Specific == nil || resp.Specific.PermissionDecision != "deny" || !strings.Contains(resp.Specific.PermissionDecisionReason, "ran out of time looking for the sandbox") {
		t.Fatalf("go test at the hook's deadline with if-available: %+v, want a deny naming the deadline", resp)
	}
}
