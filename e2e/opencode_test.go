package e2e

// The OpenCode end-to-end tests drive the real OpenCode (1.18.33) with the
// whetstone plugin (opencode/whetstone.ts), installed the way a user
// installs it, against the same scripted fake model speaking OpenAI's chat
// completions. They skip unless WHETSTONE_OPENCODE names the opencode
// binary (`make e2e-opencode` sets it, and WHETSTONE_OPENCODE_PLUGIN_PKG to
// the @opencode-ai/plugin package it installed next to it).

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/whetstone-dev/whetstone/internal/client/opencode"
	"github.com/whetstone-dev/whetstone/internal/fakemodel"
	"github.com/whetstone-dev/whetstone/internal/sandbox"
)

// ocEnv is what every OpenCode test needs.
type ocEnv struct {
	opencode  string // the binary
	pluginPkg string // node_modules/@opencode-ai/plugin, copied to skip npm
	root      string // the whetstone checkout: bin/whetstone, opencode/
}

func setupOpenCode(t *testing.T) ocEnv {
	t.Helper()
	oc := os.Getenv("WHETSTONE_OPENCODE")
	if oc == "" {
		t.Skip("WHETSTONE_OPENCODE is not set; `make e2e-opencode` sets it to the pinned opencode binary")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "bin", "whetstone")); err != nil {
		t.Fatalf("no whetstone binary (%v); run `make build` first", err)
	}
	if _, err := exec.LookPath("rg"); err != nil {
		t.Fatal("rg is not on PATH: OpenCode would try to download it (scripts/install-ripgrep)")
	}
	return ocEnv{opencode: oc, pluginPkg: os.Getenv("WHETSTONE_OPENCODE_PLUGIN_PKG"), root: root}
}

// ocSession is one test's OpenCode world: a HOME with whetstone installed
// globally (by `whetstone install opencode --global`, or as a package
// plugin in the global opencode.json), so that nothing whetstone or
// OpenCode writes lands in the project under review; a project; a fake
// model.
type ocSession struct {
	t      *testing.T
	env    ocEnv
	repo   *repo
	home   string
	config string   // $XDG_CONFIG_HOME/opencode
	extra  []string // environment added to (or overriding) environ's
	model  *fakemodel.Server
	runs   int
}

// newOpenCodeSession starts a session with whetstone installed by
// `whetstone install opencode --global`.
func newOpenCodeSession(t *testing.T, e ocEnv, r *repo, script fakemodel.Script) *ocSession {
	t.Helper()
	s := newOpenCodeHome(t, e, r, script)
	s.install()
	s.writeConfig(nil)
	return s
}

// newOpenCodeHome is a session's HOME, its config dir and its fake model,
// with nothing installed yet.
func newOpenCodeHome(t *testing.T, e ocEnv, r *repo, script fakemodel.Script) *ocSession {
	t.Helper()
	s := &ocSession{t: t, env: e, repo: r, home: t.TempDir()}
	m, err := fakemodel.Start(script, filepath.Join(t.TempDir(), "model.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	s.model = m
	t.Cleanup(func() { m.Close() })
	s.config = filepath.Join(s.home, ".config", "opencode")
	if err := os.MkdirAll(s.config, 0o755); err != nil {
		t.Fatal(err)
	}
	return s
}

// writeConfig writes the global opencode.json: the fake model as the only
// provider, plus extra.
func (s *ocSession) writeConfig(extra map[string]any) {
	s.t.Helper()
	if err := s.driver().WriteConfig(extra); err != nil {
		s.t.Fatal(err)
	}
}

// driver is the OpenCode driver the demo shares. A session that talks to
// no model (one that only lists agents) has none.
func (s *ocSession) driver() opencode.Driver {
	d := opencode.Driver{Bin: s.env.opencode, Home: s.home}
	if s.model != nil {
		d.ModelURL = s.model.URL
	}
	return d
}

// install installs whetstone into the global config dir with `whetstone
// install opencode --global`, and seeds the @opencode-ai/plugin package
// OpenCode installs there at start-up. OpenCode still asks npm, which fails
// at once (environ: no retries, an unreachable registry).
func (s *ocSession) install() {
	s.t.Helper()
	cmd := s.driver().Install(context.Background(), filepath.Join(s.env.root, "bin", "whetstone"))
	cmd.Dir = s.repo.dir
	cmd.Env = s.environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		s.t.Fatalf("whetstone install opencode --global: %v\n%s", err, out)
	}
	if s.env.pluginPkg != "" {
		seed := filepath.Join(s.config, "node_modules", "@opencode-ai")
		if err := os.MkdirAll(seed, 0o755); err != nil {
			s.t.Fatal(err)
		}
		if out, err := exec.Command("cp", "-r", s.env.pluginPkg, seed).CombinedOutput(); err != nil {
			s.t.Fatalf("seed @opencode-ai/plugin: %v\n%s", err, out)
		}
		pkg := `{"dependencies":{"@opencode-ai/plugin":"1.18.33"}}`
		os.WriteFile(filepath.Join(s.config, "package.json"), []byte(pkg), 0o644)
	}
}

// environ is OpenCode's environment: a throwaway HOME and XDG dirs, no
// update check, no model catalog fetch, and an npm that fails at once;
// then the session's extra.
func (s *ocSession) environ() []string {
	env := append(s.driver().Environ(), "TMPDIR="+filepath.Join(s.home, "tmp"))
	os.MkdirAll(filepath.Join(s.home, "tmp"), 0o755)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "PATH" || k == "LANG" || k == "GOCOVERDIR" {
			env = append(env, kv)
		}
	}
	// exec.Cmd keeps the last value of a repeated variable.
	return append(env, s.extra...)
}

// ocTimeout bounds one opencode process.
const ocTimeout = 3 * time.Minute

// run runs `opencode run args…` in the project and returns its output.
func (s *ocSession) run(args ...string) string {
	s.t.Helper()
	s.runs++
	ctx, cancel := context.WithTimeout(context.Background(), ocTimeout)
	defer cancel()
	cmd := s.driver().Run(ctx, args...)
	cmd.Dir = s.repo.dir
	cmd.Env = s.environ()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	s.t.Logf("opencode run %s: %s", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	if err != nil || s.t.Failed() || os.Getenv("WHETSTONE_E2E_KEEP") != "" {
		s.dump(string(out), stderr.String())
	}
	if err != nil {
		s.t.Fatalf("opencode run %v: %v", args, err)
	}
	s.t.Cleanup(func() {
		if s.t.Failed() {
			s.dump(string(out), stderr.String())
		}
	})
	return string(out)
}

// dump keeps what a failed test needs to be understood.
func (s *ocSession) dump(stdout, stderr string) {
	dir := filepath.Join(os.TempDir(), "whetstone-e2e", strings.ReplaceAll(s.t.Name(), "/", "_"))
	if os.MkdirAll(dir, 0o755) != nil {
		return
	}
	os.WriteFile(filepath.Join(dir, fmt.Sprintf("stdout-%d.txt", s.runs)), []byte(stdout), 0o644)
	os.WriteFile(filepath.Join(dir, fmt.Sprintf("stderr-%d.log", s.runs)), []byte(stderr), 0o644)
	if b, err := os.ReadFile(s.model.LogPath()); err == nil {
		os.WriteFile(filepath.Join(dir, "model.jsonl"), b, 0o644)
	}
	os.RemoveAll(filepath.Join(dir, "repo"))
	exec.Command("cp", "-r", s.repo.dir, filepath.Join(dir, "repo")).Run()
	s.t.Logf("kept stdout, the server log, the model log and the repo in %s", dir)
}

// ocCalls are the fake model's chat completion requests, decoded.
func (s *ocSession) calls() []*fakemodel.Request {
	s.t.Helper()
	recs, err := s.model.Requests()
	if err != nil {
		s.t.Fatal(err)
	}
	var out []*fakemodel.Request
	for _, rec := range recs {
		if rec.Path != "/v1/chat/completions" {
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

// rootCalls are the root session's requests (the orchestrator's).
func (s *ocSession) rootCalls() []*fakemodel.Request {
	var out []*fakemodel.Request
	for _, r := range s.calls() {
		if !r.IsTitle() && !r.IsSubagent() {
			out = append(out, r)
		}
	}
	return out
}

// agentCalls are the requests of whetstone agent name (whetstone:<name>).
func (s *ocSession) agentCalls(name string) []*fakemodel.Request {
	var out []*fakemodel.Request
	for _, r := range s.calls() {
		if r.Agent() == "whetstone:"+name {
			out = append(out, r)
		}
	}
	return out
}

// serve starts `opencode serve` in the project and returns its base URL;
// the server is stopped when the test ends.
func (s *ocSession) serve() string {
	s.t.Helper()
	cmd := exec.Command(s.env.opencode, "serve", "--port", "0", "--print-logs", "--log-level", "INFO")
	cmd.Dir = s.repo.dir
	cmd.Env = s.environ()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if s.t.Failed() {
			s.dump("", stderr.String())
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if _, url, ok := strings.Cut(sc.Text(), "listening on "); ok {
				found <- strings.TrimSpace(url)
			}
		}
		close(found)
	}()
	select {
	case url, ok := <-found:
		if !ok {
			s.t.Fatalf("opencode serve exited without listening:\n%s", stderr.String())
		}
		return url
	case <-time.After(time.Minute):
		s.t.Fatalf("opencode serve did not listen within a minute:\n%s", stderr.String())
	}
	return ""
}

// post sends one JSON request to the server and decodes the answer into v.
func (s *ocSession) post(url string, body any, v any) {
	s.t.Helper()
	raw, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", strings.NewReader(string(raw)))
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		s.t.Fatalf("POST %s: %s\n%s", url, resp.Status, b)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			s.t.Fatalf("POST %s: %v\n%s", url, err, b)
		}
	}
}

// waitFor polls the model log until cond holds (the log is the clock, as
// the server gives no completion signal of its own), failing after limit.
func (s *ocSession) waitFor(what string, limit time.Duration, cond func() bool) {
	s.t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestOpenCodeFullLoop: /whetstone-review under `opencode run`, which exits
// at the first idle of the root session, goes through two iterations to
// DONE: each phase's instructions ride on the result of the task call that
// completed the one before.
func TestOpenCodeFullLoop(t *testing.T) {
	t.Parallel()
	e := setupOpenCode(t)
	r := newRepo(t, baseFiles, changedFiles)
	s := newOpenCodeSession(t, e, r, fakemodel.Whetstone{Findings: criticFindsOnce, Fixes: fixOnce}.Script())
	s.run("--command", "whetstone-review")

	run := wantRun(t, r, "done", "", "APPROVE", 2)
	wantFiles(t, r, run, "iter-1/critic.json", "iter-1/verdict.json", "iter-1/fix.json", "iter-2/critic.json", "report.md")
	if !strings.Contains(r.read("calc.go"), fixOffByOne.New) {
		t.Error("the fixer's edit did not reach calc.go")
	}
	roots := s.rootCalls()
	if len(roots) == 0 {
		t.Fatal("the root session made no model call")
	}
	last := roots[len(roots)-1].Latest()
	if !strings.Contains(last, "DONE after 2 iterations: APPROVE") {
		t.Errorf("the orchestrator's last request does not carry the summary:\n%.2000s", last)
	}
	if n := len(s.agentCalls("fixer")); n == 0 {
		t.Error("the fixer never ran")
	}
	if r.exists(".opencode") || r.exists("opencode.json") {
		t.Error("the project gained OpenCode files; everything is installed globally")
	}
}

// TestOpenCodeSkillStartsReview: a request in plain words starts the
// review: OpenCode offers the model whetstone's review skill, the model
// loads it, whetstone's start message and first instructions arrive with
// the skill's content, and under `opencode run` the loop goes to DONE; the
// orchestrator's final message tells the verdict. Each agent's task comes
// from whetstone, not from the dispatch's one-line prompt.
func TestOpenCodeSkillStartsReview(t *testing.T) {
	t.Parallel()
	e := setupOpenCode(t)
	r := newRepo(t, baseFiles, changedFiles)
	s := newOpenCodeSession(t, e, r, fakemodel.Whetstone{Findings: criticFindsOnce, Fixes: fixOnce}.Script())
	s.run("Please review my current change with the whetstone review loop")

	run := wantRun(t, r, "done", "", "APPROVE", 2)
	wantFiles(t, r, run, "iter-1/critic.json", "iter-1/fix.json", "iter-2/critic.json", "report.md")
	if !strings.Contains(r.read("calc.go"), fixOffByOne.New) {
		t.Error("the fixer's edit did not reach calc.go")
	}
	roots := s.rootCalls()
	if len(roots) == 0 {
		t.Fatal("the root session made no model call")
	}
	if sys := roots[0].SystemText(); !strings.Contains(sys, "<name>whetstone-review</name>") {
		t.Errorf("OpenCode did not offer the model the whetstone-review skill:\n%.3000s", sys)
	}
	skills := toolResults(roots, "skill")
	if len(skills) != 1 {
		t.Fatalf("the orchestrator's skill calls got %d results, want 1: %v", len(skills), skills)
	}
	for call, res := range skills {
		if !strings.Contains(res, `<skill_content name="whetstone-review">`) || !strings.Contains(res, "You are the orchestrator of a whetstone review") {
			t.Errorf("%s did not load the skill:\n%.1500s", call, res)
		}
		if i, j := strings.Index(res, "</skill_content>"), strings.Index(res, fakemodel.DispatchMarker+`{"subagent_type":"whetstone-critic"`); i < 0 || j < i {
			t.Errorf("%s's result does not end with whetstone's first instructions:\n%.3000s", call, res)
		}
	}
	// The dispatch is a short line; the critic's task (the files it reads,
	// its output contract) reached its model from whetstone.
	critic := s.agentCalls("critic")
	if len(critic) == 0 {
		t.Fatal("the critic never ran")
	}
	for _, u := range toolUsesOf(roots, "task") {
		var in struct{ Prompt string }
		json.Unmarshal(u.Input, &in)
		if strings.Contains(in.Prompt, "\n") || len(in.Prompt) > 200 {
			t.Errorf("a dispatch prompt is not one short line:\n%s", in.Prompt)
		}
	}
	if first := critic[0].FirstUserText(); !strings.Contains(first, "context.json") || !strings.Contains(first, "whetstone.review/v1") {
		t.Errorf("the critic's first message lacks its task from whetstone:\n%.3000s", first)
	}
	if final := lastRootReply(s); !strings.Contains(final, "APPROVE") {
		t.Errorf("the orchestrator's final message does not tell the verdict: %q", final)
	}
}

// TestOpenCodeSkillInChildStartsNothing: a subagent that loads whetstone's
// review skill starts no run, and no model is shown whetstone's
// instructions.
func TestOpenCodeSkillInChildStartsNothing(t *testing.T) {
	t.Parallel()
	e := setupOpenCode(t)
	r := newRepo(t, baseFiles, changedFiles)
	s := newOpenCodeSession(t, e, r, func(req *fakemodel.Request) fakemodel.Reply {
		switch {
		case req.IsTitle():
			return fakemodel.Say("Delegate")
		case req.IsSubagent() && req.AssistantTurns() == 0:
			return fakemodel.Call(fakemodel.ToolUse("skill", map[string]any{"name": "whetstone-review"}))
		case req.IsSubagent():
			return fakemodel.Say("Loaded the skill.")
		case req.AssistantTurns() == 0:
			return fakemodel.Call(fakemodel.ToolUse("task", map[string]any{"description": "load the skill", "prompt": "Load the whetstone-review skill.", "subagent_type": "general"}))
		}
		return fakemodel.Say("The helper is done.")
	})
	s.run("Ask a helper to load the whetstone-review skill.")

	children := 0
	for _, req := range s.calls() {
		if req.IsSubagent() {
			children++
		}
		// The skill's own text shows the marker, never a dispatch line.
		if all := req.AllText() + req.SystemText(); strings.Contains(all, fakemodel.DispatchMarker+"{") || strings.Contains(all, "whetstone run ") {
			t.Errorf("a model was shown whetstone's instructions:\n%.2000s", req.Latest())
		}
	}
	if children < 2 {
		t.Fatalf("the child made %d model calls; it never got its skill call's result", children)
	}
	if r.exists(".whetstone/runs") || r.exists(".whetstone/sessions") {
		t.Error("a child's skill call started a run")
	}
}

// toolUsesOf are the calls of the named tool in the requests, each once.
func toolUsesOf(reqs []*fakemodel.Request, name string) []fakemodel.Block {
	seen := map[string]bool{}
	var out []fakemodel.Block
	for _, req := range reqs {
		for _, u := range req.ToolUses() {
			if u.Name == name && !seen[u.ID] {
				seen[u.ID] = true
				out = append(out, u)
			}
		}
	}
	return out
}

// lastRootReply is the text of the root session's last model reply: what
// the user reads at the end.
func lastRootReply(s *ocSession) string {
	s.t.Helper()
	recs, err := s.model.Requests()
	if err != nil {
		s.t.Fatal(err)
	}
	last := ""
	for _, rec := range recs {
		req, err := rec.Request()
		if err != nil || rec.Path != "/v1/chat/completions" || req.IsTitle() || req.IsSubagent() {
			continue
		}
		last = fakemodel.Content(rec.Reply).Text()
	}
	return last
}

// wantWritesDenied checks what the rogue witness and orchestrator of a
// fakemodel.Whetstone script (RogueReviewer "witness", RogueEdit) tried: the
// witness created no file; each of its 4 writes per iteration was refused by
// OpenCode (a tool it is not offered) or denied by whetstone; its bash ran
// in the sandbox where there is one (a read-only agent's every bash does in
// OpenCode: its write vanished), else was denied by whetstone; the
// orchestrator's one edit was denied by whetstone.
func wantWritesDenied(t *testing.T, s *ocSession, r *repo, iterations int) {
	t.Helper()
	_, sandboxed := sandbox.Find()
	for _, f := range []string{"rogue.txt", "rogue-patch.txt", "f.txt"} {
		if r.exists(f) {
			t.Errorf("the witness created %s", f)
		}
	}
	results := toolResults(s.agentCalls("witness"), "invalid", "write", "edit", "apply_patch", "bash")
	if len(results) != 4*iterations {
		t.Errorf("the witness's 4 writes in each of %d iterations got %d results: %v", iterations, len(results), results)
	}
	for call, res := range results {
		refused := strings.Contains(res, "Model tried to call unavailable tool")
		denied := strings.Contains(res, "whetstone run") && strings.Contains(res, "whetstone-witness is read-only")
		bash := strings.HasPrefix(call, "bash ")
		if bash && !sandboxed && !denied || !bash && !refused && !denied {
			t.Errorf("the witness's %s was let through: %q", call, res)
		}
	}
	edits := toolResults(s.rootCalls(), "edit", "apply_patch")
	if len(edits) != 1 {
		t.Fatalf("the orchestrator's edit got %d results: %v", len(edits), edits)
	}
	for call, res := range edits {
		if !strings.Contains(res, "only whetstone-fixer may change files") {
			t.Errorf("the orchestrator's %s was not denied by whetstone: %q", call, res)
		}
	}
}

// toolResults are the results of every call of the named tools in the
// requests, by call id, as the model was shown them.
func toolResults(reqs []*fakemodel.Request, tools ...string) map[string]string {
	out := map[string]string{}
	for _, req := range reqs {
		for _, u := range req.ToolUses() {
			if !slices.Contains(tools, u.Name) {
				continue
			}
			if res, ok := req.ToolResult(u.ID); ok {
				out[u.Name+" "+u.ID] = res.AllText()
			}
		}
	}
	return out
}

// TestOpenCodeWritesDenied: during a run, nothing but the fixer in the fix
// phase changes the project. A reviewer's write, edit and apply_patch are
// refused (OpenCode does not even offer them: the agent's permission denies
// edit) and its write-shaped bash is denied by whetstone; the
// orchestrator's own edit (apply_patch for gpt-5 models) is denied by
// whetstone. The run finishes.
func TestOpenCodeWritesDenied(t *testing.T) {
	t.Parallel()
	e := setupOpenCode(t)
	for _, model := range []string{"fake/fake-model", "fake/gpt-5.1"} {
		t.Run(strings.TrimPrefix(model, "fake/"), func(t *testing.T) {
			t.Parallel()
			r := newRepo(t, baseFiles, changedFiles)
			rogue := fakemodel.Edit{File: "calc.go", Old: "// Mean is the average of xs.", New: "// Mean, by the orchestrator."}
			s := newOpenCodeSession(t, e, r, fakemodel.Whetstone{RogueReviewer: "witness", RogueEdit: &rogue}.Script())
			s.run("--command", "whetstone-review", "-m", model)

			wantRun(t, r, "done", "", "APPROVE", 1)
			if strings.Contains(r.read("calc.go"), rogue.New) {
				t.Error("the orchestrator's edit reached calc.go")
			}
			wantWritesDenied(t, s, r, 1)
		})
	}
}

// TestOpenCodeInvalidReportContinued: the critic's first report is
// invalid; whetstone sends it back, the plugin continues the critic's
// session with the problems, and the orchestrator sees only the corrected
// report, which counts.
func TestOpenCodeInvalidReportContinued(t *testing.T) {
	t.Parallel()
	e := setupOpenCode(t)
	r := newRepo(t, baseFiles, changedFiles)
	malformed := func(reviewer string, iteration int) bool { return reviewer == "critic" }
	s := newOpenCodeSession(t, e, r, fakemodel.Whetstone{Malformed: malformed}.Script())
	s.run("--command", "whetstone-review")

	run := wantRun(t, r, "done", "", "APPROVE", 1)
	wantFiles(t, r, run, "iter-1/critic.json")
	continued := false
	for _, req := range s.agentCalls("critic") {
		if fb := req.StopFeedback(); len(fb) > 0 {
			continued = true
			if !strings.Contains(fb[0], "whetstone rejected your report (attempt 1 of 3)") || !strings.Contains(fb[0], "severity") {
				t.Errorf("the critic was continued with %q", fb[0])
			}
		}
	}
	if !continued {
		t.Fatal("the critic's session was never continued")
	}
	for k, v := range toolResults(s.rootCalls(), "task") {
		if strings.Contains(v, `"urgent"`) {
			t.Errorf("the orchestrator was shown the invalid report (%s):\n%s", k, v)
		}
	}
}

// TestOpenCodeSecondSessionUntouched: while one session's run is active, a
// new prompt in that session is reminded of the pending dispatches, and a
// second session in the same project edits freely and is shown nothing of
// whetstone; the run stays where it was.
func TestOpenCodeSecondSessionUntouched(t *testing.T) {
	t.Parallel()
	e := setupOpenCode(t)
	r := newRepo(t, baseFiles, changedFiles)
	lazy := fakemodel.Whetstone{Lazy: true}.Script()
	s := newOpenCodeSession(t, e, r, func(req *fakemodel.Request) fakemodel.Reply {
		if !req.IsTitle() && strings.Contains(req.FirstUserText(), "Add a README") {
			if req.AssistantTurns() == 0 {
				return fakemodel.Call(fakemodel.ToolUse("write", map[string]any{"filePath": filepath.Join(req.ProjectDir(), "README.md"), "content": "# calc\n"}))
			}
			return fakemodel.Say("Added README.md.")
		}
		return lazy(req)
	})
	s.run("--command", "whetstone-review")
	wantRun(t, r, "review", "", "", 1)

	// The user writes again in the review session: whetstone reminds the
	// orchestrator of the agents nobody dispatched, in that message.
	s.run("--continue", "Please continue.")
	reminded := false
	for _, req := range s.rootCalls() {
		last := req.LastUserText()
		if strings.Contains(last, "Please continue.") && strings.Contains(last, fakemodel.DispatchMarker+`{"subagent_type":"whetstone-critic"`) {
			reminded = true
		}
	}
	if !reminded {
		t.Error("the orchestrator's new prompt carried no reminder of the pending dispatches")
	}

	s.run("Add a README.")
	if !r.exists("README.md") {
		t.Error("the second session's write was blocked")
	}
	for _, req := range s.rootCalls() {
		if strings.Contains(req.FirstUserText(), "Add a README") {
			if all := req.AllText() + req.SystemText(); strings.Contains(all, fakemodel.DispatchMarker) || strings.Contains(all, "whetstone run ") {
				t.Errorf("the second session was shown whetstone's text:\n%.1500s", req.Latest())
			}
		}
	}
	if got := r.onlyRun(); got.Phase != "review" {
		t.Errorf("the second session moved the run to %q", got.Phase)
	}
}

// TestOpenCodeStopReprompt: under `opencode serve`, an orchestrator that
// ends its turn without dispatching is prompted again with the phase's
// instructions when its session goes idle, and the run finishes.
func TestOpenCodeStopReprompt(t *testing.T) {
	t.Parallel()
	e := setupOpenCode(t)
	r := newRepo(t, baseFiles, changedFiles)
	s := newOpenCodeSession(t, e, r, fakemodel.Whetstone{LazyTurns: 1}.Script())
	url := s.serve()
	var session struct {
		ID string `json:"id"`
	}
	s.post(url+"/session", map[string]any{}, &session)
	s.post(url+"/session/"+session.ID+"/command", map[string]any{"command": "whetstone-review", "arguments": ""}, nil)
	s.waitFor("the run to finish", 2*time.Minute, func() bool {
		runs := r.runs()
		return len(runs) == 1 && runs[0].Phase == "done"
	})
	wantRun(t, r, "done", "", "APPROVE", 1)
	reprompted := false
	for _, req := range s.rootCalls() {
		if strings.Contains(req.LastUserText(), fakemodel.DispatchMarker+`{"subagent_type":"whetstone-critic"`) && req.AssistantTurns() == 1 {
			reprompted = true
		}
	}
	if !reprompted {
		t.Error("the idle orchestrator was not prompted again with the dispatch lines")
	}
}

// TestOpenCodePluginHasOneExport: OpenCode calls every export of a plugin
// file as a plugin, so the file must export exactly the plugin function.
func TestOpenCodePluginHasOneExport(t *testing.T) {
	t.Parallel()
	e := setupOpenCode(t)
	script := filepath.Join(t.TempDir(), "exports.ts")
	src := fmt.Sprintf("const m = await import(%q)\nconsole.log(JSON.stringify(Object.entries(m).map(([k, v]) => [k, typeof v])))\n", filepath.Join(e.root, "opencode", "whetstone.ts"))
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(e.opencode, "run", script)
	cmd.Env = append(os.Environ(), "BUN_BE_BUN=1", "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("load the plugin with OpenCode's Bun: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != `[["Whetstone","function"]]` {
		t.Errorf("the plugin exports %s; want exactly one function", got)
	}
}

// TestOpenCodePackagePlugin: loaded as a package (the file itself, not an
// installed copy), the plugin brings its agents, the review command and
// the review skill through OpenCode's config hook.
func TestOpenCodePackagePlugin(t *testing.T) {
	t.Parallel()
	e := setupOpenCode(t)
	r := newRepo(t, baseFiles, changedFiles)
	s := &ocSession{t: t, env: e, repo: r, home: t.TempDir()}
	s.config = filepath.Join(s.home, ".config", "opencode")
	os.MkdirAll(s.config, 0o755)
	config := `{"plugin": ["file://` + filepath.Join(e.root, "opencode", "whetstone.ts") + `"], "autoupdate": false}`
	if err := os.WriteFile(filepath.Join(s.config, "opencode.json"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"agent", "list"}, {"debug", "config"}, {"debug", "skill"}} {
		// A file, not a pipe: OpenCode exits before a pipe takes its whole
		// output (debug config prints some 100 KB).
		f, err := os.Create(filepath.Join(t.TempDir(), "out"))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(e.opencode, args...)
		cmd.Dir, cmd.Env, cmd.Stdout = r.dir, s.environ(), f
		err = cmd.Run()
		f.Close()
		out, _ := os.ReadFile(f.Name())
		if err != nil {
			t.Fatalf("opencode %v: %v\n%s", args, err, out)
		}
		want := map[string][]string{
			"list":   {"whetstone-critic (subagent)", "whetstone-fixer (subagent)"},
			"config": {`"whetstone-review"`, "You are the orchestrator of a whetstone review"},
			// Offered to the model: a name and a description.
			"skill": {`"name": "whetstone-review"`, `"description": "Start (or resume) a whetstone review`, filepath.Join(e.root, "opencode", "skill", "whetstone-review", "SKILL.md")},
		}[args[len(args)-1]]
		for _, w := range want {
			if !strings.Contains(string(out), w) {
				t.Errorf("opencode %v lacks %q:\n%.3000s", args, w, out)
			}
		}
	}
}

// TestOpenCodePackagedLoop: OpenCode installs the `make pack` tarball as a
// plugin ("whetstone@file:<tarball>") with npm offline, and on a PATH
// without Go the packaged binary enforces the loop: a reviewer's edits and
// the orchestrator's are denied, the fixer's goes through, and the run
// reaches DONE. Nothing else could have run the hooks: no WHETSTONE_BIN, no
// checkout, and the whetstone found on PATH is a decoy that leaves a mark.
func TestOpenCodePackagedLoop(t *testing.T) {
	t.Parallel()
	e := setupOpenCode(t)
	tgz := os.Getenv("WHETSTONE_PACKAGE")
	if tgz == "" {
		t.Skip("WHETSTONE_PACKAGE is not set; `make e2e-opencode` sets it to the `make pack` tarball")
	}
	tgz, err := filepath.Abs(tgz)
	if err != nil {
		t.Fatal(err)
	}
	r := newRepo(t, baseFiles, changedFiles)
	rogue := fakemodel.Edit{File: "calc.go", Old: "// Mean is the average of xs.", New: "// Mean, by the orchestrator."}
	s := newOpenCodeHome(t, e, r, fakemodel.Whetstone{
		Findings: criticFindsOnce, Fixes: fixOnce, RogueReviewer: "witness", RogueEdit: &rogue,
	}.Script())
	// Nothing is seeded: the plugin needs no @opencode-ai/plugin at run
	// time (its import is a type), and OpenCode's npm fails at once.
	s.writeConfig(map[string]any{"plugin": []string{"whetstone@file:" + tgz}})
	decoy := t.TempDir()
	mark := filepath.Join(t.TempDir(), "decoy-ran")
	if err := os.WriteFile(filepath.Join(decoy, "whetstone"), []byte("#!/bin/sh\necho \"$@\" >>"+mark+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s.extra = append(s.extra, "PATH="+decoy+string(filepath.ListSeparator)+pathWithoutGo(t))
	s.run("--command", "whetstone-review")

	// OpenCode extracted the package into its cache (the spec is the
	// directory: packages/whetstone@file:<tarball>/node_modules/whetstone),
	// its binaries executable.
	pkg := filepath.Join(s.home, ".cache", "opencode", "packages", "whetstone@file:"+tgz, "node_modules", "whetstone")
	bin := filepath.Join(pkg, "bin", runtime.GOOS+"-"+runtime.GOARCH, "whetstone")
	if fi, err := os.Stat(bin); err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("the installed package's binary %s: %v; want mode 0755", bin, err)
	}
	if _, err := os.Stat(filepath.Join(pkg, "bin", "whetstone")); err == nil {
		t.Error("the installed package has a bin/whetstone; the test cannot tell which binary ran")
	}
	if b, err := os.ReadFile(mark); err == nil {
		t.Errorf("the plugin ran the whetstone on PATH, not the packaged one:\n%s", b)
	}

	// What the user sees: the run is over, approved, in two iterations;
	// the fixer's edit is in calc.go, the orchestrator's is not, and the
	// witness wrote nothing.
	run := wantRun(t, r, "done", "", "APPROVE", 2)
	wantFiles(t, r, run, "iter-1/critic.json", "iter-1/witness.json", "iter-1/fix.json", "report.md")
	cmd := exec.Command(bin, "status", "--json")
	cmd.Dir, cmd.Env = r.dir, s.environ() // the key that seals the state is in XDG_STATE_HOME
	out, err := cmd.Output()
	var st struct{ Phase, Verdict string }
	if err != nil || json.Unmarshal(out, &st) != nil || st.Phase != "done" || st.Verdict != "APPROVE" {
		t.Errorf("the packaged whetstone status --json: %v\n%s", err, out)
	}
	calc := r.read("calc.go")
	if !strings.Contains(calc, fixOffByOne.New) {
		t.Error("the fixer's edit did not reach calc.go")
	}
	if strings.Contains(calc, rogue.New) {
		t.Error("the orchestrator's edit reached calc.go")
	}
	// The denials reached the models: OpenCode does not offer the witness
	// the edit tools (the packaged agent's permission), whetstone sandboxes
	// its write-shaped bash and denies the orchestrator's edit.
	wantWritesDenied(t, s, r, 2)
	if r.exists(".opencode") || r.exists("opencode.json") {
		t.Error("the project gained OpenCode files")
	}
}

// TestOpenCodeCompaction: after OpenCode compacts the review session
// (POST /session/{id}/summarize under `opencode serve`), the phase's
// instructions are back in the orchestrator's system prompt.
func TestOpenCodeCompaction(t *testing.T) {
	t.Parallel()
	e := setupOpenCode(t)
	r := newRepo(t, baseFiles, changedFiles)
	s := newOpenCodeSession(t, e, r, fakemodel.Whetstone{Lazy: true}.Script())
	url := s.serve()
	var session struct {
		ID string `json:"id"`
	}
	s.post(url+"/session", map[string]any{}, &session)
	s.post(url+"/session/"+session.ID+"/command", map[string]any{"command": "whetstone-review", "arguments": ""}, nil)
	wantRun(t, r, "review", "", "", 1)
	s.post(url+"/session/"+session.ID+"/summarize", map[string]any{"providerID": "fake", "modelID": "fake-model"}, nil)
	s.post(url+"/session/"+session.ID+"/prompt_async", map[string]any{"parts": []any{map[string]any{"type": "text", "text": "Where were we?"}}}, nil)
	s.waitFor("the orchestrator's request after the compaction", time.Minute, func() bool {
		for _, req := range s.rootCalls() {
			if strings.Contains(req.AllText(), "Where were we?") {
				return true
			}
		}
		return false
	})
	for _, req := range s.rootCalls() {
		if !strings.Contains(req.AllText(), "Where were we?") {
			continue
		}
		if sys := req.SystemText(); !strings.Contains(sys, "A whetstone review run is in progress in this session (the conversation was compacted)") ||
			!strings.Contains(sys, fakemodel.DispatchMarker+`{"subagent_type":"whetstone-critic"`) {
			t.Errorf("the system prompt after the compaction lacks the run's instructions:\n%.3000s", sys)
		}
		return
	}
}

// TestOpenCodeStaleCheckoutBinary: loaded from a source checkout whose
// bin/whetstone reports another version than the checkout's VERSION, the
// plugin does not run that binary, and says why (the Claude Code launcher
// does the same).
func TestOpenCodeStaleCheckoutBinary(t *testing.T) {
	t.Parallel()
	e := setupOpenCode(t)
	r := newRepo(t, baseFiles, changedFiles)
	checkout := t.TempDir()
	for _, dir := range []string{"opencode", "bin"} {
		os.MkdirAll(filepath.Join(checkout, dir), 0o755)
	}
	plugin, err := os.ReadFile(filepath.Join(e.root, "opencode", "whetstone.ts"))
	if err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(filepath.Join(e.root, "bin", "whetstone"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(checkout, "opencode", "whetstone.ts"), plugin, 0o644)
	os.WriteFile(filepath.Join(checkout, "bin", "whetstone"), bin, 0o755)
	os.WriteFile(filepath.Join(checkout, "VERSION"), []byte("9.9.9\n"), 0o644)
	s := &ocSession{t: t, env: e, repo: r, home: t.TempDir()}
	s.config = filepath.Join(s.home, ".config", "opencode")
	os.MkdirAll(s.config, 0o755)
	config := `{"plugin": ["file://` + filepath.Join(checkout, "opencode", "whetstone.ts") + `"], "autoupdate": false}`
	if err := os.WriteFile(filepath.Join(s.config, "opencode.json"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(e.opencode, "agent", "list", "--print-logs") // the plugin's stderr is in the logs
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = r.dir, s.environ(), out, out
	err = cmd.Run()
	out.Close()
	log, _ := os.ReadFile(out.Name())
	if err != nil {
		t.Fatalf("opencode agent list: %v\n%s", err, log)
	}
	want := "is version " + strings.TrimSpace(readVersion(t, e.root)) + ", not 9.9.9; not using it"
	if !strings.Contains(string(log), want) {
		t.Errorf("the plugin did not refuse the stale binary (want %q):\n%.4000s", want, log)
	}
}

func readVersion(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestOpenCodeReadsTightPatchHeaders establishes what the fixer's apply_patch
// gate must read: OpenCode 1.18.33 applies "*** Add File:<path>" with no
// space after the colon (hook.PatchPaths takes such headers too; the
// opencode testscript shows the fixer denied for one naming .git). In a
// session with no run, nothing is gated, so the file is OpenCode's doing.
func TestOpenCodeReadsTightPatchHeaders(t *testing.T) {
	t.Parallel()
	e := setupOpenCode(t)
	r := newRepo(t, baseFiles, changedFiles)
	patch := "*** Begin Patch\n*** Add File:tight.txt\n+no space after the colon\n*** End Patch"
	s := newOpenCodeSession(t, e, r, func(req *fakemodel.Request) fakemodel.Reply {
		if req.IsTitle() {
			return fakemodel.Say("Patch")
		}
		if req.AssistantTurns() == 0 {
			return fakemodel.Call(fakemodel.ToolUse("apply_patch", map[string]any{"patchText": patch}))
		}
		return fakemodel.Say("Patched.")
	})
	s.run("-m", "fake/gpt-5.1", "Add tight.txt.")
	if got := r.read("tight.txt"); got != "no space after the colon" && got != "no space after the colon\n" {
		results := toolResults(s.rootCalls(), "apply_patch", "invalid")
		t.Fatalf("tight.txt = %q: OpenCode did not apply the header without a space; tool results %v", got, results)
	}
}

// TestOpenCodeFailsClosedWithoutBinary: the plugin with no whetstone binary
// to run (none found, or one that cannot be started), loaded by OpenCode's
// Bun and called as OpenCode calls it, refuses a write and a shell command
// of a session whose review run is in progress (.whetstone/active/<root
// session>, app.markActive), naming the fix, and lets every call of a
// session without one through.
func TestOpenCodeFailsClosedWithoutBinary(t *testing.T) {
	t.Parallel()
	oc := os.Getenv("WHETSTONE_OPENCODE")
	if oc == "" {
		t.Skip("WHETSTONE_OPENCODE is not set; `make e2e-opencode` sets it to the pinned opencode binary")
	}
	// The plugin file alone, in a package without bin/, so that it finds no
	// binary beside it; PATH holds none either.
	pkg := filepath.Join(t.TempDir(), "opencode")
	os.MkdirAll(pkg, 0o755)
	src, err := os.ReadFile(filepath.Join("..", "opencode", "whetstone.ts"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(pkg, "whetstone.ts"), src, 0o644)
	project := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", project).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	sub := filepath.Join(project, "sub")
	os.MkdirAll(sub, 0o755)
	script := filepath.Join(t.TempDir(), "gate.ts")
	os.WriteFile(script, []byte(`const { Whetstone } = await import(process.argv[2])
const client = { session: { get: async () => ({ data: {} }) } }
const hooks: any = await Whetstone({ client, directory: process.argv[3] } as any)
const out: any = {}
for (const [tool, args] of [["write", { filePath: "main.go", content: "x" }], ["bash", { command: "rm -rf .git" }]] as const) {
  try {
    await hooks["tool.execute.before"]({ tool, sessionID: "ses_root1", callID: "c1" }, { args })
    out[tool] = ""
  } catch (e: any) {
    out[tool] = e.message
  }
}
console.log(JSON.stringify(out))
`), 0o644)
	noexec := filepath.Join(t.TempDir(), "whetstone")
	os.WriteFile(noexec, []byte("not a program"), 0o644)
	gate := func(env ...string) map[string]string {
		t.Helper()
		cmd := exec.Command(oc, "run", script, filepath.Join(pkg, "whetstone.ts"), sub)
		cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "BUN_BE_BUN=1"}, env...)
		out, err := cmd.Output()
		var got map[string]string
		if err != nil || json.Unmarshal(out, &got) != nil {
			t.Fatalf("run the plugin with OpenCode's Bun: %v\n%s", err, out)
		}
		return got
	}
	// A whetstone of the repository's on PATH (a direnv'd node_modules/.bin)
	// is not whetstone: it would answer every call with no objection.
	fake := "#!/bin/sh\ncat >/dev/null\necho '{}'\n"
	repoBin := filepath.Join(project, "node_modules", ".bin")
	os.MkdirAll(repoBin, 0o755)
	os.WriteFile(filepath.Join(repoBin, "whetstone"), []byte(fake), 0o755)
	for _, env := range [][]string{nil, {"WHETSTONE_BIN=" + noexec}, {"PATH=" + repoBin + ":/usr/bin:/bin"}} {
		os.RemoveAll(filepath.Join(project, ".whetstone"))
		if got := gate(env...); got["write"] != "" || got["bash"] != "" {
			t.Errorf("%v, no run: %v; want every call let through", env, got)
		}
		os.MkdirAll(filepath.Join(project, ".whetstone", "active"), 0o755)
		os.WriteFile(filepath.Join(project, ".whetstone", "active", "another-session"), []byte("r-1\n"), 0o644)
		if got := gate(env...); got["write"] != "" || got["bash"] != "" {
			t.Errorf("%v, another session's run: %v; want every call let through", env, got)
		}
		os.WriteFile(filepath.Join(project, ".whetstone", "active", "ses_root1"), []byte("r-2\n"), 0o644)
		for tool, reason := range gate(env...) {
			if !strings.Contains(reason, "review run is in progress, so this call is refused") || !strings.Contains(reason, "make build") {
				t.Errorf("%v, the session's run in progress: %s: %q; want it refused with the fix", env, tool, reason)
			}
		}
	}
	// The same whetstone on PATH outside the project is used.
	elsewhere := t.TempDir()
	os.WriteFile(filepath.Join(elsewhere, "whetstone"), []byte(fake), 0o755)
	if got := gate("PATH=" + elsewhere + ":/usr/bin:/bin"); got["write"] != "" || got["bash"] != "" {
		t.Errorf("whetstone on PATH outside the project, answering no objection: %v; want it asked", got)
	}
}
