package e2e

// The Codex end-to-end test drives the real Codex CLI (0.169.0) with
// whetstone installed the way a user installs it (`whetstone install codex
// --global`), against the scripted fake model speaking OpenAI's Responses
// API. It skips unless WHETSTONE_CODEX names the native codex binary
// (`make e2e-codex` sets it from scripts/install-codex).

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/whetstone-dev/whetstone/internal/client/codex"
	"github.com/whetstone-dev/whetstone/internal/fakemodel"
	"github.com/whetstone-dev/whetstone/internal/sandbox"
)

// cxSession is one test's Codex world: a CODEX_HOME with whetstone
// installed globally, a project, a fake model.
type cxSession struct {
	t     *testing.T
	repo  *repo
	root  string // the whetstone checkout (bin/whetstone)
	model *fakemodel.Server
	drv   codex.Driver
}

func newCodexSession(t *testing.T, r *repo, script fakemodel.Script) *cxSession {
	t.Helper()
	bin := os.Getenv("WHETSTONE_CODEX")
	if bin == "" {
		t.Skip("WHETSTONE_CODEX is not set; `make e2e-codex` sets it to the pinned codex binary")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "bin", "whetstone")); err != nil {
		t.Fatalf("no whetstone binary (%v); run `make build` first", err)
	}
	m, err := fakemodel.Start(script, filepath.Join(t.TempDir(), "model.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	home := t.TempDir()
	if d, err := filepath.EvalSymlinks(home); err == nil {
		home = d
	}
	s := &cxSession{t: t, repo: r, root: root, model: m, drv: codex.Driver{Bin: bin, Home: home, ModelURL: m.URL}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := s.drv.Install(ctx, filepath.Join(root, "bin", "whetstone"))
	cmd.Dir, cmd.Env = r.dir, s.environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("whetstone install codex --global: %v\n%s", err, out)
	}
	if err := s.drv.WriteConfig(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

// environ is Codex's environment: the driver's, PATH and LANG.
func (s *cxSession) environ() []string {
	env := s.drv.Environ()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k == "PATH" || k == "LANG" || k == "GOCOVERDIR" {
			env = append(env, kv)
		}
	}
	return env
}

// exec runs `codex exec prompt` in the project and returns its stdout (the
// last message) and stderr (tool calls and hook lines).
func (s *cxSession) exec(prompt string) (string, string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := s.drv.Run(ctx, s.repo.dir, prompt)
	cmd.Env = s.environ()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	s.t.Logf("codex exec %q: %s", prompt, time.Since(start).Round(time.Millisecond))
	if err != nil || os.Getenv("WHETSTONE_E2E_KEEP") != "" {
		s.keep(string(out), stderr.String())
	}
	if err != nil {
		s.t.Fatalf("codex exec: %v\n%s", err, tail(stderr.String(), 3000))
	}
	s.t.Cleanup(func() {
		if s.t.Failed() {
			s.keep(string(out), stderr.String())
		}
	})
	return string(out), stderr.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// keep saves what a failed run needs to be understood.
func (s *cxSession) keep(stdout, stderr string) {
	dir := filepath.Join(os.TempDir(), "whetstone-e2e", strings.ReplaceAll(s.t.Name(), "/", "_"))
	if os.MkdirAll(dir, 0o755) != nil {
		return
	}
	os.WriteFile(filepath.Join(dir, "stdout.txt"), []byte(stdout), 0o644)
	os.WriteFile(filepath.Join(dir, "stderr.log"), []byte(stderr), 0o644)
	if b, err := os.ReadFile(s.model.LogPath()); err == nil {
		os.WriteFile(filepath.Join(dir, "model.jsonl"), b, 0o644)
	}
	os.RemoveAll(filepath.Join(dir, "repo"))
	exec.Command("cp", "-r", s.repo.dir, filepath.Join(dir, "repo")).Run()
	s.t.Logf("kept stdout, stderr, the model log and the repo in %s", dir)
}

// calls are the fake model's Responses API requests, decoded.
func (s *cxSession) calls() []*fakemodel.Request {
	s.t.Helper()
	recs, err := s.model.Requests()
	if err != nil {
		s.t.Fatal(err)
	}
	var out []*fakemodel.Request
	for _, rec := range recs {
		if !strings.HasSuffix(rec.Path, "/responses") {
			continue
		}
		req, err := rec.Request()
		if err != nil {
			s.t.Fatal(err)
		}
		out = append(out, req)
	}
	return out
}

func (s *cxSession) agentCalls(name string) []*fakemodel.Request {
	var out []*fakemodel.Request
	for _, r := range s.calls() {
		if r.Agent() == "whetstone:"+name {
			out = append(out, r)
		}
	}
	return out
}

// TestCodexFullLoop: in the real Codex, `$whetstone-review --depth quick`
// runs the whole loop to DONE: three reviewers spawned in parallel; the
// critic's malformed report sent back (SubagentStop) and corrected; the
// security reviewer's apply_patch and write-shaped shell command refused
// by the gate, nothing written; the fixer, spawned once, edits with
// apply_patch and its edit lands; the focused re-review approves, and
// Codex's last message carries the verdict.
func TestCodexFullLoop(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles, changedFiles)
	s := newCodexSession(t, r, fakemodel.Whetstone{
		Findings: criticFindsOnce, Fixes: fixOnce, RealModel: true, RogueReviewer: "security-reviewer",
		Malformed: func(reviewer string, iteration int) bool { return reviewer == "critic" && iteration == 1 },
	}.Script())
	start := time.Now()
	out, _ := s.exec(s.drv.Review("--depth quick"))
	t.Logf("the whole loop in Codex: %s", time.Since(start).Round(time.Millisecond))

	calls := s.calls()
	if len(calls) == 0 || !strings.Contains(calls[0].AllText(), "<name>whetstone-review</name>") {
		t.Error("Codex did not hand the model the installed whetstone-review skill")
	}
	run := wantRun(t, r, "done", "", "APPROVE", 2)

	wantFiles(t, r, run, "iter-1/critic.json", "iter-1/verdict.json", "iter-1/fix.json", "report.md")
	if !strings.Contains(r.read("calc.go"), fixOffByOne.New) {
		t.Error("the fixer's apply_patch did not reach calc.go")
	}
	if !strings.Contains(out, "DONE after 2 iterations: APPROVE") {
		t.Errorf("codex exec's last message does not carry the verdict:\n%s", out)
	}

	// The malformed report went back to the critic, which corrected it.
	continued := false
	for _, req := range s.agentCalls("critic") {
		if fb := req.StopFeedback(); len(fb) > 0 {
			continued = true
			if !strings.Contains(fb[0], "whetstone rejected your report (attempt 1 of 3)") {
				t.Errorf("the critic was continued with %q", fb[0])
			}
		}
	}
	if !continued {
		t.Error("the critic's malformed report was never sent back")
	}

	// The rogue reviewer's writes were refused and nothing landed: its
	// apply_patch denied, its shell write denied by the parser or, with
	// bwrap, run in whetstone's sandbox, where the project is read-only.
	if r.exists("rogue-patch.txt") || r.exists("f.txt") {
		t.Error("a reviewer's write landed in the project")
	}
	_, sandboxed := sandbox.Find()
	results := map[string]string{}
	for _, req := range s.agentCalls("security-reviewer") {
		for _, u := range req.ToolUses() {
			if res, ok := req.ToolResult(u.ID); ok {
				results[u.Name] = res.AllText()
			}
		}
	}
	if !strings.Contains(results["apply_patch"], "blocked by PreToolUse hook: whetstone run") {
		t.Errorf("the reviewer's apply_patch was not denied: %q", results["apply_patch"])
	}
	if sh, ok := results["exec_command"]; !ok || !sandboxed && !strings.Contains(sh, "blocked by PreToolUse hook: whetstone run") {
		t.Errorf("the reviewer's shell write was let through: %q", sh)
	}

	// The fixer ran once: the main thread's last request holds every call
	// it made, one fixer spawn among them.
	var last *fakemodel.Request
	for _, req := range s.calls() {
		if !req.IsSubagent() {
			last = req
		}
	}
	fixes := 0
	for _, u := range last.ToolUses() {
		var in struct {
			AgentType string `json:"agent_type"`
		}
		if u.Name == "spawn_agent" && json.Unmarshal(u.Input, &in) == nil && in.AgentType == "whetstone-fixer" {
			fixes++
		}
	}
	if fixes != 1 {
		t.Errorf("the fixer was spawned %d times, want once", fixes)
	}
	if st := r.onlyRun(); st.Iteration != 2 {
		t.Errorf("iterations: %d", st.Iteration)
	}
	if r.exists(".codex") {
		t.Error("the project gained Codex files; everything is installed in CODEX_HOME")
	}
}

// TestCodexGateFailsClosed: Codex lets a call through when its hook fails
// (docs/codex.md §5), so the installed gate turns a failure into exit 2.
// With a whetstone that crashes on pre-tool-use (a wrapper installed in
// its place), the model's `echo x > crash.txt` is refused with the crash's
// words and writes nothing.
func TestCodexGateFailsClosed(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles, changedFiles)
	s := newCodexSession(t, r, func(req *fakemodel.Request) fakemodel.Reply {
		if len(req.ToolUses()) == 0 {
			return fakemodel.Call(fakemodel.ToolUse("exec_command", map[string]any{"cmd": "echo x > crash.txt", "login": false}))
		}
		return fakemodel.Say("done")
	})
	if _, _, err := codex.Uninstall(s.drv.Home); err != nil {
		t.Fatal(err)
	}
	wrapper := filepath.Join(t.TempDir(), "whetstone")
	script := "#!/bin/sh\nif [ \"$2\" = pre-tool-use ]; then echo 'whetstone crashed' >&2; exit 1; fi\nexec " + filepath.Join(s.root, "bin", "whetstone") + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := codex.Install(s.drv.Home, wrapper); err != nil {
		t.Fatal(err)
	}
	s.exec("write crash.txt")
	if r.exists("crash.txt") {
		t.Error("the command ran although the gate failed")
	}
	var shown string
	for _, req := range s.calls() {
		for _, u := range req.ToolUses() {
			if res, ok := req.ToolResult(u.ID); ok {
				shown = res.AllText()
			}
		}
	}
	if !strings.Contains(shown, "blocked by PreToolUse hook") || !strings.Contains(shown, "whetstone crashed") {
		t.Errorf("the model was shown %q, want the refusal with the crash's words", shown)
	}
}

// TestCodexProjectInstall: `whetstone install codex` into the project's
// .codex/ (committed, as a project would) works once the project is
// trusted (`codex exec --trust`): Codex loads the hooks, the agents and the
// skill from there and a clean quick review ends DONE.
func TestCodexProjectInstall(t *testing.T) {
	t.Parallel()
	r := newRepo(t, baseFiles, changedFiles)
	s := newCodexSession(t, r, fakemodel.Whetstone{}.Script())
	if _, _, err := codex.Uninstall(s.drv.Home); err != nil {
		t.Fatal(err)
	}
	install := exec.Command(filepath.Join(s.root, "bin", "whetstone"), "install", "codex")
	install.Dir, install.Env = r.dir, s.environ()
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("whetstone install codex: %v\n%s", err, out)
	}
	r.git("add", ".codex")
	r.git("commit", "-q", "-m", "whetstone for Codex")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := s.drv.Run(ctx, r.dir, s.drv.Review("--depth quick"))
	cmd.Args = append(cmd.Args[:2], append([]string{"--trust"}, cmd.Args[2:]...)...)
	cmd.Env = s.environ()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("codex exec --trust: %v\n%s", err, tail(string(out), 3000))
	}
	wantRun(t, r, "done", "", "APPROVE", 1)
	if calls := s.calls(); len(calls) == 0 || !strings.Contains(calls[0].AllText(), "<name>whetstone-review</name>") {
		t.Error("Codex did not hand the model the project's skill")
	}
	if !strings.Contains(string(out), "DONE after 1 iteration") {
		t.Errorf("codex exec's output has no verdict:\n%s", tail(string(out), 3000))
	}
}
