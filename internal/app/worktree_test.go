package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/client"
	"github.com/whetstone-dev/whetstone/internal/hook"
	"github.com/whetstone-dev/whetstone/internal/loop"
)

// TestHooksLeaveTreeAlone drives a run through start, a concluding review,
// the fix and the next review in a Go workspace with a tracked go.work
// whose module needs a module from the cache (so `go build` would write
// go.work.sum), beside a 200 MiB untracked file that git would hash. After
// every hook `git status --porcelain --ignored` (whetstone's own directory
// aside) and the index are what they were.
func TestHooksLeaveTreeAlone(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not installed")
	}
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
		"GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"} {
		t.Setenv(k, v)
	}
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q", "-b", "main")
	write("go.work", "go 1.21\n\nuse (\n\t.\n\t./lib\n)\n")
	write("go.mod", "module example.com/app\n\ngo 1.21\n")
	write("main.go", "package main\n\nimport \"example.com/lib\"\n\nfunc main() { lib.Same() }\n")
	write("lib/go.mod", "module example.com/lib\n\ngo 1.21\n\nrequire github.com/google/go-cmp v0.7.0\n")
	write("lib/lib.go", "package lib\n\nimport \"github.com/google/go-cmp/cmp\"\n\nfunc Same() bool { return cmp.Equal(1, 1) }\n")
	// The checksums, so that GOPROXY=off needs no checksum database a
	// machine only has after other Go builds (a fresh module cache).
	write("lib/go.sum", ownGoSum(t, "github.com/google/go-cmp"))
	write(".gitignore", "*.log\n")
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	write("main.go", "package main\n\nimport \"example.com/lib\"\n\nfunc main() { _ = lib.Same() }\n")
	write("build.log", "ignored\n")
	f, err := os.Create(filepath.Join(dir, "capture.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(200 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if out := git("add", "-A", "--dry-run"); !strings.Contains(out, "add 'capture.pcap'") {
		t.Fatalf("git would not hash capture.pcap:\n%s", out)
	}
	t.Chdir(dir)

	state := func() string {
		t.Helper()
		var kept []string
		for _, line := range strings.Split(git("status", "--porcelain", "--ignored", "-uall"), "\n") {
			if !strings.Contains(line, ".whetstone/") {
				kept = append(kept, line)
			}
		}
		index, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%s\nindex %x", strings.Join(kept, "\n"), index)
	}
	want := state()

	a := &app.App{Now: time.Now, Getenv: testGetenv, Log: io.Discard, Stderr: io.Discard, CheckBudget: -1} // the signals are asserted: no budget
	session := "7ree0000-0000-4000-8000-000000000000"
	call := func(event string, fields map[string]any) *hook.Response {
		t.Helper()
		fields["session_id"], fields["cwd"] = session, dir
		p, err := client.Parse(payload(t, fields))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		resp, err := a.Hook(context.Background(), event, p)
		if err != nil {
			t.Fatalf("hook %s: %v", event, err)
		}
		t.Logf("%s: %v", event, time.Since(start).Round(time.Millisecond))
		if got := state(); got != want {
			t.Fatalf("hook %s changed the work tree or the index:\n%s\n---\n%s", event, want, got)
		}
		return resp
	}
	proj, err := a.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	call("user-prompt-submit", map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "/whetstone:review --reviewers critic --max-iterations 2"})
	id := proj.Latest()
	var ctx struct {
		Files []struct {
			Path, Triage string
			TriageReason string `json:"triage_reason"`
		} `json:"files"`
		Signals []struct{ Tool, Status string } `json:"signals"`
	}
	data, err := os.ReadFile(filepath.Join(dir, ".whetstone", "runs", id, "context.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &ctx); err != nil {
		t.Fatal(err)
	}
	if s := fmt.Sprint(ctx.Files); !strings.Contains(s, "{capture.pcap skip larger than 4 MiB") {
		t.Errorf("context.json files: %s, want capture.pcap skipped as large", s)
	}
	if s := fmt.Sprint(ctx.Signals); !strings.Contains(s, "{go build clean}") || !strings.Contains(s, "{go vet clean}") {
		t.Errorf("signals: %s, want go build and go vet clean through the workspace", s)
	}
	n := 0
	report := func(agent, msg string) {
		t.Helper()
		n++
		agentID := fmt.Sprintf("agent-%d", n)
		call("pre-tool-use", map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Agent",
			"tool_input": map[string]any{"subagent_type": "whetstone:" + agent, "description": "whetstone " + agent, "prompt": "go"}})
		call("subagent-start", map[string]any{"hook_event_name": "SubagentStart", "agent_type": "whetstone:" + agent, "agent_id": agentID})
		// The agent's own calls go through the gates too.
		for _, tool := range []map[string]any{
			{"tool_name": "Read", "tool_input": map[string]any{"file_path": filepath.Join(dir, "main.go")}},
			{"tool_name": "Bash", "tool_input": map[string]any{"command": "git status --short && git log --oneline -3"}},
			{"tool_name": "Grep", "tool_input": map[string]any{"pattern": "Same", "path": dir}},
		} {
			tool["hook_event_name"], tool["agent_type"], tool["agent_id"] = "PreToolUse", "whetstone:"+agent, agentID
			if resp := call("pre-tool-use", tool); resp != nil && resp.Specific != nil && resp.Specific.PermissionDecision == "deny" {
				t.Errorf("%s's %s was denied: %s", agent, tool["tool_name"], resp.Specific.PermissionDecisionReason)
			}
		}
		if resp := call("subagent-stop", map[string]any{"hook_event_name": "SubagentStop", "agent_type": "whetstone:" + agent, "agent_id": agentID,
			"last_assistant_message": msg, "stop_hook_active": false, "agent_transcript_path": "/nonexistent", "background_tasks": []any{}}); resp != nil {
			t.Fatalf("%s's report was refused: %s", agent, resp.Encode())
		}
	}
	bug := map[string]any{"severity": "high", "confidence": 90, "category": "correctness", "file": "main.go", "line": 5,
		"title": "The result of lib.Same is thrown away", "description": "main discards what Same reports."}
	report("critic", reviewerMessage(t, "critic", []map[string]any{bug}, nil))
	r, err := proj.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Phase != loop.Fix {
		t.Fatalf("after the review the run is in %s, want fix", r.Phase)
	}
	var results []map[string]any
	for _, fid := range r.Digest.Blocking {
		results = append(results, map[string]any{"id": fid, "status": "fixed", "note": "uses the result", "files": []string{"main.go"}})
	}
	write("main.go", "package main\n\nimport \"example.com/lib\"\n\nfunc main() {\n\tif !lib.Same() {\n\t\tpanic(1)\n\t}\n}\n")
	want = state()
	data, _ = json.Marshal(map[string]any{"schema": "whetstone.fix/v1", "results": results})
	report("fixer", string(data))
	if r, _ = proj.Load(id); r.Phase != loop.Review || r.Iteration != 2 {
		t.Fatalf("after the fix the run is in %s of %d, want review of 2", r.Phase, r.Iteration)
	}
	fix, err := os.ReadFile(filepath.Join(dir, ".whetstone", "runs", id, "iter-2", "fix.patch"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(fix), "go.work.sum") || strings.Contains(string(fix), "capture.pcap") || !strings.Contains(string(fix), "panic(1)") {
		t.Errorf("fix.patch holds more or less than the fixer's work:\n%s", fix)
	}
}

// ownGoSum returns whetstone's own go.sum lines of module mod, whose files
// the module cache holds because this test builds with them.
func ownGoSum(t *testing.T, mod string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for line := range strings.Lines(string(data)) {
		if strings.HasPrefix(line, mod+" ") {
			out.WriteString(line)
		}
	}
	return out.String()
}
