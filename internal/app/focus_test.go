package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/client"
	"github.com/whetstone-dev/whetstone/internal/hook"
	"github.com/whetstone-dev/whetstone/internal/inspect"
	"github.com/whetstone-dev/whetstone/internal/loop"
	"github.com/whetstone-dev/whetstone/internal/review"
	"github.com/whetstone-dev/whetstone/internal/scope"
)

// intentRepo is a project on a feature branch with one commit whose message
// states a deliberate behaviour, and a pull-request description written
// where the CI recipe writes it (.whetstone/pull-request.md).
func intentRepo(t *testing.T) string {
	t.Helper()
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
		"GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"} {
		t.Setenv(k, v)
	}
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
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
	write("main.go", "package main\n\nfunc main() {}\n")
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	git("checkout", "-q", "-b", "feature")
	write("lib.go", "package main\n\n// Sum adds.\nfunc Sum(xs []int) int {\n\tn := 0\n\tfor _, x := range xs {\n\t\tif x > 0 {\n\t\t\tn += x\n\t\t}\n\t}\n\treturn n\n}\n")
	write("main.go", "package main\n\nfunc main() { println(Sum([]int{1, -2})) }\n")
	git("add", "-A")
	git("commit", "-q", "-m", "Add Sum that skips negatives\n\nSum ignores negative numbers on purpose: they are refunds.\x1b[31m")
	write(".whetstone/pull-request.md", "Adds Sum for the report.\r\n\r\nNegative numbers are refunds and stay out.\n")
	return dir
}

// driver drives a run through the hooks as Claude Code would.
type driver struct {
	t       *testing.T
	a       *app.App
	dir     string
	session string
	proj    app.Project
	n       int
	ctx     context.Context // the hooks' context; nil means context.Background()
}

func newDriver(t *testing.T, dir string) *driver {
	t.Chdir(dir) // the project is the hook's working directory
	a := &app.App{Now: time.Now, Getenv: testGetenv, Log: io.Discard, Stderr: io.Discard}
	proj, err := a.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &driver{t: t, a: a, dir: dir, session: "f0c50000-0000-4000-8000-000000000000", proj: proj}
}

func (d *driver) call(event string, fields map[string]any) *hook.Response {
	d.t.Helper()
	fields["session_id"], fields["cwd"] = d.session, d.dir
	p, err := client.Parse(payload(d.t, fields))
	if err != nil {
		d.t.Fatal(err)
	}
	ctx := d.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	resp, err := d.a.Hook(ctx, event, p)
	if err != nil {
		d.t.Fatalf("hook %s: %v", event, err)
	}
	return resp
}

func (d *driver) run() *loop.Run {
	d.t.Helper()
	r, err := d.proj.Load(d.proj.Latest())
	if err != nil {
		d.t.Fatal(err)
	}
	return r
}

// dispatch asks the dispatch gate for an agent with the prompt whetstone
// issued and returns its denial, or "".
func (d *driver) dispatch(agent string) string {
	d.t.Helper()
	r := d.run()
	resp := d.call("pre-tool-use", map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Agent",
		"tool_input": map[string]any{"subagent_type": "whetstone:" + agent, "description": "whetstone " + agent, "prompt": r.Prompt(agent)}})
	if resp != nil && resp.Specific != nil && resp.Specific.PermissionDecision == "deny" {
		return resp.Specific.PermissionDecisionReason
	}
	return ""
}

// agent dispatches and starts an agent, returns the task whetstone gave it
// and a function that stops it with its final message.
func (d *driver) agent(name string) (task string, stop func(msg string)) {
	d.t.Helper()
	if reason := d.dispatch(name); reason != "" {
		d.t.Fatalf("dispatch of %s denied: %s", name, reason)
	}
	d.n++
	id := fmt.Sprintf("agent-%d", d.n)
	resp := d.call("subagent-start", map[string]any{"hook_event_name": "SubagentStart", "agent_type": "whetstone:" + name, "agent_id": id})
	if resp == nil || resp.Specific == nil {
		d.t.Fatalf("%s got no task", name)
	}
	return resp.Specific.AdditionalContext, func(msg string) {
		d.t.Helper()
		if resp := d.call("subagent-stop", map[string]any{"hook_event_name": "SubagentStop", "agent_type": "whetstone:" + name, "agent_id": id,
			"last_assistant_message": msg, "stop_hook_active": false, "agent_transcript_path": "/nonexistent", "background_tasks": []any{}}); resp != nil && resp.Decision == "block" {
			d.t.Fatalf("%s's report was refused: %s", name, resp.Reason)
		}
	}
}

// TestFocusedReReviewAndIntent drives a run through the hooks: the commit
// message and the pull-request description are in context.json and in
// every agent's task; after a fix that changes only a comment, iteration 2
// dispatches the critic and the reviewer with a finding to check, not the
// witness (the gate refuses it), their tasks name fix.patch and the open
// finding by id, and the witness's note, which nobody looked at again,
// stays open to the end.
func TestFocusedReReviewAndIntent(t *testing.T) {
	dir := intentRepo(t)
	d := newDriver(t, dir)
	resp := d.call("user-prompt-submit", map[string]any{"hook_event_name": "UserPromptSubmit",
		"prompt": "/whetstone:review --reviewers critic,pedant,witness --intent .whetstone/pull-request.md"})
	if resp == nil || resp.Decision == "block" {
		t.Fatalf("start refused: %+v", resp)
	}
	r := d.run()
	var ctx scope.Context
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, r.Dir(), "context.json"))), &ctx); err != nil {
		t.Fatal(err)
	}
	in := ctx.Intent
	if in == nil || len(in.Commits) != 1 || in.Commits[0].Subject != "Add Sum that skips negatives" ||
		in.Commits[0].Body != "Sum ignores negative numbers on purpose: they are refunds.[31m" ||
		in.Description != "Adds Sum for the report.\n\nNegative numbers are refunds and stay out." || in.Source != ".whetstone/pull-request.md" {
		t.Fatalf("context.json's intent: %+v", in)
	}
	if slices.Contains(filesOf(ctx), ".whetstone/pull-request.md") {
		t.Error("the description file is part of the reviewed change")
	}

	const subject = `"Add Sum that skips negatives"`
	bug := func(file string, line, confidence int, title string) map[string]any {
		return map[string]any{"severity": "medium", "confidence": confidence, "category": "maintainability", "file": file, "line": line,
			"title": title, "description": "d"}
	}
	reports := map[string]string{
		"critic":  reviewerMessage(t, "critic", nil, nil),
		"pedant":  reviewerMessage(t, "pedant", []map[string]any{bug("lib.go", 3, 90, "The comment says Sum adds all numbers")}, nil),
		"witness": reviewerMessage(t, "witness", []map[string]any{bug("main.go", 3, 60, "The printed total is not checked")}, nil),
	}
	for _, name := range []string{"critic", "pedant", "witness"} {
		task, stop := d.agent(name)
		for _, want := range []string{subject, `"intent" in ` + r.Dir() + "/context.json", "the pull-request description"} {
			if !strings.Contains(task, want) {
				t.Errorf("%s's task lacks %q:\n%s", name, want, task)
			}
		}
		if name == "critic" && !strings.Contains(task, "Judge the change against that intent") {
			t.Errorf("the critic is not told to judge the change against the intent:\n%s", task)
		}
		stop(reports[name])
	}
	if r = d.run(); r.Phase != loop.Fix {
		t.Fatalf("after iteration 1: %s, want fix", r.Phase)
	}
	task, stop := d.agent("fixer")
	if !strings.Contains(task, subject) || !strings.Contains(task, "- F-0001 [medium] lib.go:3") {
		t.Errorf("the fixer's task:\n%s", task)
	}
	if err := os.WriteFile(filepath.Join(dir, "lib.go"), []byte(strings.Replace(readFile(t, filepath.Join(dir, "lib.go")), "// Sum adds.", "// Sum adds the positive numbers.", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	stop(`{"schema": "whetstone.fix/v1", "results": [{"id": "F-0001", "status": "fixed", "note": "comment says positive", "files": ["lib.go"]}]}`)

	r = d.run()
	if r.Phase != loop.Review || r.Iteration != 2 {
		t.Fatalf("after the fix: %s iteration %d", r.Phase, r.Iteration)
	}
	if diff := cmp.Diff([]string{"critic", "pedant"}, r.Expected); diff != "" {
		t.Fatalf("iteration 2 expects (-want +got):\n%s", diff)
	}
	var agents []string
	st := inspect.StatusOf(r, time.Now())
	for _, a := range st.Agents {
		agents = append(agents, a.Name+": "+a.Why)
	}
	if diff := cmp.Diff([]string{"critic: reviews every fix for regressions", "pedant: checks 1 finding it raised"}, agents); diff != "" {
		t.Errorf("status agents (-want +got):\n%s", diff)
	}
	if text := st.Text(false); !strings.Contains(text, "pedant  not dispatched · checks 1 finding it raised") {
		t.Errorf("status does not say why pedant looks again:\n%s", text)
	}
	if reason := d.dispatch("witness"); !strings.Contains(reason, "not part of the review phase") {
		t.Errorf("the witness, with nothing to look at, was not refused: %q", reason)
	}
	fixPatch := r.Dir() + "/iter-2/fix.patch"
	critic, stopCritic := d.agent("critic")
	pedant, stopPedant := d.agent("pedant")
	for name, task := range map[string]string{"critic": critic, "pedant": pedant} {
		for _, want := range []string{fixPatch, "not the whole change again", subject} {
			if !strings.Contains(task, want) {
				t.Errorf("%s's iteration 2 task lacks %q:\n%s", name, want, task)
			}
		}
	}
	if !strings.Contains(critic, "find regressions") {
		t.Errorf("the critic's task does not name its regression job:\n%s", critic)
	}
	if !strings.Contains(pedant, "(fixed | not_fixed | partially_fixed | withdrawn): F-0001.") {
		t.Errorf("pedant's task does not name its open finding:\n%s", pedant)
	}
	stopCritic(reviewerMessage(t, "critic", nil, nil))
	stopPedant(reviewerMessage(t, "pedant", nil, []map[string]any{{"id": "F-0001", "status": "fixed"}}))

	r = d.run()
	if r.Phase != loop.Done || r.Verdict != review.ApproveWithNotes {
		t.Fatalf("after the focused round: %s %s, want done APPROVE_WITH_NOTES", r.Phase, r.Verdict)
	}
	if err := d.proj.LoadCold(r); err != nil {
		t.Fatal(err)
	}
	for _, e := range r.Findings {
		switch e.ID {
		case "F-0001":
			if e.Status != review.StatusResolved {
				t.Errorf("F-0001 = %s, want resolved", e.Status)
			}
		case "F-0002":
			if !e.Open() || e.Last != 1 {
				t.Errorf("the witness's note was touched by a round the witness was not in: %+v", e)
			}
		}
	}
}

// TestIntentFileRefused: --intent must name a regular file inside the
// project of at most 256 KiB; otherwise the review does not start, says
// why, and leaves no run behind.
func TestIntentFileRefused(t *testing.T) {
	dir := intentRepo(t)
	outside := filepath.Join(t.TempDir(), "secret.md")
	if err := os.WriteFile(outside, []byte("not for the agents\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, ".whetstone", "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".whetstone", "big.md"), []byte(strings.Repeat("x", scope.MaxDescriptionFile+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, want string }{
		{".whetstone/link.md", "outside the project"},
		{outside, "outside the project"},
		{".whetstone/big.md", "larger than 256 KiB"},
		{".whetstone/missing.md", "cannot be read"},
	} {
		d := newDriver(t, dir)
		resp := d.call("user-prompt-submit", map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "/whetstone:review --intent " + tc.file})
		if resp == nil || resp.Decision != "block" || !strings.Contains(resp.Reason, tc.want) || !strings.Contains(resp.Reason, "No review was started") {
			t.Errorf("--intent %s: %+v, want a refusal saying %q", tc.file, resp, tc.want)
		}
		if _, err := os.Stat(filepath.Join(dir, ".whetstone", "runs")); err == nil {
			t.Errorf("--intent %s left a run behind", tc.file)
		}
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func filesOf(c scope.Context) []string {
	var out []string
	for _, f := range c.Files {
		out = append(out, f.Path)
	}
	return out
}
