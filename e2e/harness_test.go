package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/whetstone-dev/whetstone/internal/client/claudecode"
	"github.com/whetstone-dev/whetstone/internal/fakemodel"
)

// runTimeout bounds one claude process.
const runTimeout = 3 * time.Minute

// env is what every test needs: the claude binary and the plugin directory.
type env struct {
	claude string
	plugin string
}

// setup skips the test unless WHETSTONE_CLAUDE names the claude binary, and
// checks that the plugin has a built hook binary (otherwise the launcher
// would build one per test, into each test's fresh HOME).
func setup(t *testing.T) env {
	t.Helper()
	claude := os.Getenv("WHETSTONE_CLAUDE")
	if claude == "" {
		t.Skip("WHETSTONE_CLAUDE is not set; `make e2e` sets it to the pinned claude binary")
	}
	plugin := os.Getenv("WHETSTONE_PLUGIN")
	if plugin == "" {
		plugin = ".."
	}
	plugin, err := filepath.Abs(plugin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(plugin, "bin", "whetstone")); err != nil {
		t.Fatalf("no hook binary in the plugin (%v); run `make build` first", err)
	}
	return env{claude: claude, plugin: plugin}
}

// repo is a throwaway git repository.
type repo struct {
	t   *testing.T
	dir string
}

// newRepo commits base as the initial version, then writes change on top,
// uncommitted.
func newRepo(t *testing.T, base, change map[string]string) *repo {
	t.Helper()
	r := &repo{t: t, dir: t.TempDir()}
	// Resolve symlinks so paths match what Claude Code reports.
	if d, err := filepath.EvalSymlinks(r.dir); err == nil {
		r.dir = d
	}
	r.git("init", "-q", "-b", "main")
	r.write(base)
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "base")
	r.write(change)
	return r
}

func (r *repo) write(files map[string]string) {
	r.t.Helper()
	for name, content := range files {
		p := filepath.Join(r.dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
}

func (r *repo) read(name string) string {
	r.t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dir, name))
	if err != nil {
		r.t.Fatal(err)
	}
	return string(b)
}

func (r *repo) exists(name string) bool {
	_, err := os.Stat(filepath.Join(r.dir, name))
	return err == nil
}

func (r *repo) git(args ...string) {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=test", "GIT_COMMITTER_EMAIL=test@example.com",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// session is one test's Claude Code world: a HOME, a project, a fake model.
type session struct {
	t     *testing.T
	env   env
	repo  *repo
	home  string
	tmp   string // TMPDIR: Claude Code writes task output files there
	model *fakemodel.Server
	runs  int
	// environ is added to claude's environment (and so to every hook's).
	environ []string
	// mode is claude's --permission-mode; "" means bypassPermissions.
	mode string
	// settings, when set, is a settings file passed with --settings.
	settings string
}

func newSession(t *testing.T, e env, r *repo, script fakemodel.Script) *session {
	t.Helper()
	s := &session{t: t, env: e, repo: r, home: t.TempDir(), tmp: t.TempDir()}
	m, err := fakemodel.Start(script, filepath.Join(t.TempDir(), "model.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	s.model = m
	t.Cleanup(func() { m.Close() })
	return s
}

// trust runs `whetstone trust` in the project as the session's user (its
// HOME, so the trust file sits next to the hooks' key): the project's
// committed whetstone.json then applies in full (docs/security.md).
func (s *session) trust() {
	s.t.Helper()
	d := claudecode.Driver{Bin: s.env.claude, Plugin: s.env.plugin, Home: s.home, Tmp: s.tmp, ModelURL: s.model.URL}
	cmd := exec.Command(filepath.Join(s.env.plugin, "bin", "whetstone"), "trust")
	cmd.Dir = s.repo.dir
	cmd.Env = append(append(cleanEnv(), d.Environ()...), s.environ...)
	if out, err := cmd.CombinedOutput(); err != nil {
		s.t.Fatalf("whetstone trust: %v\n%s", err, out)
	}
}

// claude runs `claude -p prompt` with the plugin and returns its stream.
// Extra arguments (e.g. --resume ID) come after the prompt.
func (s *session) claude(prompt string, extra ...string) *stream {
	s.t.Helper()
	s.runs++
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	logs := s.t.TempDir()
	d := claudecode.Driver{Bin: s.env.claude, Plugin: s.env.plugin, Home: s.home, Tmp: s.tmp, ModelURL: s.model.URL,
		Mode: s.mode, Settings: s.settings, Debug: filepath.Join(logs, "debug.log")}
	cmd := d.Run(ctx, prompt, extra...)
	cmd.Dir = s.repo.dir
	cmd.Env = append(append(cleanEnv(), d.Environ()...), s.environ...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	s.t.Logf("claude -p %q %v: %v in %v (debug log %s)", prompt, extra, err, time.Since(start).Round(time.Millisecond), logs)
	run := s.runs
	if ctx.Err() != nil {
		s.dumpOnFailure(run, stdout.Bytes(), logs)
		s.t.Fatalf("claude did not finish within %v", runTimeout)
	}
	if err != nil {
		s.t.Logf("stderr:\n%s", stderr.String())
	}
	st := parseStream(s.t, stdout.Bytes())
	s.t.Cleanup(func() {
		if s.t.Failed() || os.Getenv("WHETSTONE_E2E_KEEP") != "" {
			s.dumpOnFailure(run, stdout.Bytes(), logs)
		}
	})
	// A missing or broken --plugin-dir is skipped silently (exit 0).
	if !st.pluginLoaded("whetstone") {
		s.t.Fatalf("system/init does not list the whetstone plugin from %s; init: %v", s.env.plugin, st.of("system", "init"))
	}
	return st
}

// dumpOnFailure keeps what a failing test needs for a post-mortem (every
// test's, with WHETSTONE_E2E_KEEP=1).
func (s *session) dumpOnFailure(run int, stdout []byte, logs string) {
	dir := filepath.Join(os.TempDir(), "whetstone-e2e", strings.ReplaceAll(s.t.Name(), "/", "_"))
	if os.MkdirAll(dir, 0o755) != nil {
		return
	}
	os.WriteFile(filepath.Join(dir, fmt.Sprintf("stream-%d.jsonl", run)), stdout, 0o644)
	if b, err := os.ReadFile(filepath.Join(logs, "debug.log")); err == nil {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("debug-%d.log", run)), b, 0o644)
	}
	if run > 1 {
		return // the model log and the repo are the session's, kept once
	}
	if b, err := os.ReadFile(s.model.LogPath()); err == nil {
		os.WriteFile(filepath.Join(dir, "model.jsonl"), b, 0o644)
	}
	os.RemoveAll(filepath.Join(dir, "repo"))
	exec.Command("cp", "-r", s.repo.dir, filepath.Join(dir, "repo")).Run()
	s.t.Logf("kept the streams, debug logs, the model log and the repo in %s", dir)
}

// cleanEnv is the test process's environment without anything that would
// point claude elsewhere.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "ANTHROPIC_") || strings.HasPrefix(k, "CLAUDE") || k == "HOME" || k == "TMPDIR" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// requests decodes the fake model's log.
func (s *session) requests() []exchange {
	s.t.Helper()
	recs, err := s.model.Requests()
	if err != nil {
		s.t.Fatal(err)
	}
	var out []exchange
	for _, rec := range recs {
		if rec.Path != "/v1/messages" {
			continue
		}
		req, err := rec.Request()
		if err != nil {
			s.t.Fatal(err)
		}
		out = append(out, exchange{Record: rec, req: req})
	}
	return out
}

// exchange is one model call: the logged record and the decoded request.
type exchange struct {
	fakemodel.Record
	req *fakemodel.Request
}

// agentCalls returns the Agent tool_use inputs of one reply.
func (x exchange) agentCalls() []map[string]any {
	var out []map[string]any
	for _, b := range x.Reply {
		if b.Type == "tool_use" && b.Name == "Agent" {
			var in map[string]any
			json.Unmarshal(b.Input, &in)
			out = append(out, in)
		}
	}
	return out
}

// event is one stream-json line.
type event map[string]any

func (e event) str(key string) string { s, _ := e[key].(string); return s }

// stream is the parsed stream-json output of one claude run.
type stream struct {
	events []event
}

func parseStream(t *testing.T, out []byte) *stream {
	t.Helper()
	st := &stream{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			t.Logf("not JSON on stdout: %.200s", line)
			continue
		}
		st.events = append(st.events, e)
	}
	return st
}

// of returns the events of a type and subtype ("" matches any subtype).
func (st *stream) of(typ, subtype string) []event {
	var out []event
	for _, e := range st.events {
		if e.str("type") == typ && (subtype == "" || e.str("subtype") == subtype) {
			out = append(out, e)
		}
	}
	return out
}

// sessionID is the session's id from the first init message.
func (st *stream) sessionID() string {
	for _, e := range st.of("system", "init") {
		return e.str("session_id")
	}
	return ""
}

// pluginLoaded reports whether system/init lists the plugin by name.
func (st *stream) pluginLoaded(name string) bool {
	for _, e := range st.of("system", "init") {
		plugins, _ := e["plugins"].([]any)
		for _, p := range plugins {
			if pm, _ := p.(map[string]any); pm["name"] == name {
				return true
			}
		}
	}
	return false
}

// hookOutputs returns the stdout of every hook_response whose hook_event (or
// hook_name) matches.
func (st *stream) hookOutputs(hookEvent string) []string {
	var out []string
	for _, e := range st.of("system", "hook_response") {
		if e.str("hook_event") == hookEvent || e.str("hook_name") == hookEvent {
			out = append(out, e.str("stdout"))
		}
	}
	return out
}

// hookTexts returns what hooks of an event told Claude Code: the decoded
// additionalContext, block reason or systemMessage of each JSON answer, or
// the plain stdout.
func (st *stream) hookTexts(hookEvent string) []string {
	var out []string
	for _, stdout := range st.hookOutputs(hookEvent) {
		var resp struct {
			Reason        string `json:"reason"`
			SystemMessage string `json:"systemMessage"`
			Specific      struct {
				Context string `json:"additionalContext"`
				Reason  string `json:"permissionDecisionReason"`
			} `json:"hookSpecificOutput"`
		}
		if json.Unmarshal([]byte(stdout), &resp) != nil {
			out = append(out, stdout)
			continue
		}
		for _, s := range []string{resp.Specific.Context, resp.Specific.Reason, resp.Reason, resp.SystemMessage} {
			if s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// notices returns the content of informational and notification messages.
func (st *stream) notices() []string {
	var out []string
	for _, e := range st.events {
		if e.str("type") != "system" {
			continue
		}
		switch e.str("subtype") {
		case "informational", "notification":
			b, _ := json.Marshal(e)
			out = append(out, string(b))
		}
	}
	return out
}

// toolResults returns every tool_result block the stream shows (main thread
// and subagents), keyed by tool_use id.
func (st *stream) toolResults() map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, e := range st.of("user", "") {
		msg, _ := e["message"].(map[string]any)
		content, _ := msg["content"].([]any)
		for _, c := range content {
			if b, _ := c.(map[string]any); b["type"] == "tool_result" {
				id, _ := b["tool_use_id"].(string)
				out[id] = b
			}
		}
	}
	return out
}

// toolUses returns every tool_use block of the stream's assistant messages.
func (st *stream) toolUses() []map[string]any {
	var out []map[string]any
	for _, e := range st.of("assistant", "") {
		msg, _ := e["message"].(map[string]any)
		content, _ := msg["content"].([]any)
		for _, c := range content {
			if b, _ := c.(map[string]any); b["type"] == "tool_use" {
				b["parent_tool_use_id"] = e["parent_tool_use_id"]
				out = append(out, b)
			}
		}
	}
	return out
}

// resultText flattens a tool_result's content.
func resultText(b map[string]any) string {
	switch c := b["content"].(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, x := range c {
			if m, _ := x.(map[string]any); m["text"] != nil {
				parts = append(parts, m["text"].(string))
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

func containsAny(list []string, sub string) bool {
	return slices.ContainsFunc(list, func(s string) bool { return strings.Contains(s, sub) })
}
