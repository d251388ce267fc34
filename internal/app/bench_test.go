package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/client"
	"github.com/whetstone-dev/whetstone/internal/review"
)

// The hook benchmarks measure what one hook process does after start-up:
// decode the payload, answer, encode the answer. scripts/bench measures
// whole processes; docs/performance.md has both.

func benchApp() *app.App {
	return &app.App{Now: time.Now, Getenv: testGetenv, Log: io.Discard}
}

func fixture(b *testing.B, name string) map[string]any {
	b.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "claude-code", name))
	if err != nil {
		b.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		b.Fatal(err)
	}
	return m
}

// runHook is one hook invocation as the binary does it, minus start-up.
func runHook(b testing.TB, a *app.App, event string, data []byte) []byte {
	p, err := client.Parse(data)
	if err != nil {
		b.Fatal(err)
	}
	resp, err := a.Hook(context.Background(), event, p)
	if err != nil {
		b.Fatal(err)
	}
	if resp == nil {
		return nil
	}
	return resp.Encode()
}

// benchProject makes a project with an active run owned by session, as
// /whetstone:review would, and makes it the working directory.
func benchProject(b *testing.B, a *app.App, session, prompt string) string {
	b.Helper()
	dir := newProject(b, filepath.Join(b.TempDir(), "project"))
	// A Go module: the go commands are verification commands only there.
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/bench\n\ngo 1.21\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Chdir(dir)
	out := runHook(b, a, "user-prompt-submit", payload(b, map[string]any{
		"session_id": session, "hook_event_name": "UserPromptSubmit", "cwd": dir, "prompt": prompt}))
	if !strings.Contains(string(out), "WHETSTONE-DISPATCH") {
		b.Fatalf("no run started: %s", out)
	}
	return dir
}

// BenchmarkHookNoRun is the cost every tool call pays in a session that owns
// no run: the captured PreToolUse payload of an Edit, in a project where
// another session has an active run.
func BenchmarkHookNoRun(b *testing.B) {
	a := benchApp()
	data := payload(b, fixture(b, "pretooluse-edit-main.json"))
	benchProject(b, a, "0beef000-0000-4000-8000-000000000000", "/whetstone:review")
	b.ReportAllocs()
	for b.Loop() {
		if out := runHook(b, a, "pre-tool-use", data); out != nil {
			b.Fatalf("a session without a run got an answer: %s", out)
		}
	}
}

// BenchmarkEditGate is the orchestrator trying to Edit during a run: the
// gate reads state.json and denies.
func BenchmarkEditGate(b *testing.B) {
	a := benchApp()
	fx := fixture(b, "pretooluse-edit-main.json")
	benchProject(b, a, fx["session_id"].(string), "/whetstone:review")
	data := payload(b, fx)
	b.ReportAllocs()
	for b.Loop() {
		out := runHook(b, a, "pre-tool-use", data)
		if !strings.Contains(string(out), `"permissionDecision":"deny"`) {
			b.Fatalf("edit during a run not denied: %s", out)
		}
	}
}

// coreReviewers is the standard roster of a run with no specialist signals.
var coreReviewers = []string{"critic", "pedant", "witness", "security-reviewer", "silent-failure-hunter"}

// bigReport is a reviewer's report with n findings spread over 20 files and
// five categories. Even-numbered findings are raised by every reviewer
// (they merge); odd ones are the reviewer's own.
func bigReport(name string, n int) []byte {
	categories := []string{"correctness", "error-handling", "security", "performance", "maintainability"}
	severities := []string{"high", "medium", "low", "critical", "info"}
	findings := make([]map[string]any, n)
	for i := range findings {
		title := fmt.Sprintf("Unchecked error from call %d loses the write on shutdown", i)
		if i%2 == 1 {
			title = fmt.Sprintf("%s sees a distinct problem %d in handling of input data", name, i)
		}
		findings[i] = map[string]any{
			"severity": severities[i%len(severities)], "confidence": 80 + i%21, "category": categories[i%len(categories)],
			"file": fmt.Sprintf("internal/pkg%d/file%02d.go", i%4, i%20), "line": 10 + 3*i, "end_line": 12 + 3*i,
			"title": title, "description": strings.Repeat("What is wrong and why it matters. ", 6),
			"evidence": "if err := f.Close(); err != nil { /* ignored */ }", "suggestion": "Return the error to the caller.",
		}
	}
	data, _ := json.MarshalIndent(map[string]any{"schema": review.SchemaReview, "reviewer": name, "verdict": "issues_found", "findings": findings}, "", "  ")
	return data
}

// BenchmarkConcludeReview is the SubagentStop that completes a review of
// five reviewers × 10 findings (the most a report may hold): extract and validate the last report,
// store it, read the other four, merge 1000 findings, move the run to the
// fix phase and write verdict.json, state.json and analytics. The run
// directory is restored before each iteration, outside the timer.
func BenchmarkConcludeReview(b *testing.B) {
	a := benchApp()
	const session = "c0c0c000-0000-4000-8000-000000000000"
	dir := benchProject(b, a, session, "/whetstone:review --reviewers "+strings.Join(coreReviewers, ","))
	stop := func(name string) []byte {
		msg := "Review done.\n\n```json\n" + string(bigReport(name, review.MaxReportFindings)) + "\n```\n"
		return stopPayload(b, session, dir, "whetstone:"+name, "agent-"+name, msg)
	}
	id := runOf(b, dir, session)
	for _, n := range coreReviewers {
		runHook(b, a, "pre-tool-use", dispatchPayload(b, session, dir, id, n))
		runHook(b, a, "subagent-start", startAgentPayload(b, session, dir, "whetstone:"+n, "agent-"+n))
	}
	for _, n := range coreReviewers[:4] {
		if out := runHook(b, a, "subagent-stop", stop(n)); out != nil {
			b.Fatalf("%s's report was refused: %s", n, out)
		}
	}
	last := stop(coreReviewers[4])
	ws := filepath.Join(dir, ".whetstone")
	runDir := filepath.Join(ws, "runs", runOf(b, dir, session))
	statePath := filepath.Join(runDir, "state.json")
	before, err := os.ReadFile(statePath)
	if err != nil {
		b.Fatal(err)
	}
	// The ledger the state names is replaced by each conclusion.
	ledgers, _ := filepath.Glob(filepath.Join(runDir, "ledger-*.json"))
	saved := map[string][]byte{}
	for _, l := range ledgers {
		if saved[l], err = os.ReadFile(l); err != nil {
			b.Fatal(err)
		}
	}
	restore := func() {
		now, _ := filepath.Glob(filepath.Join(runDir, "ledger-*.json"))
		for _, l := range now {
			_ = os.Remove(l)
		}
		for l, data := range saved {
			if err := os.WriteFile(l, data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		for _, p := range []string{
			filepath.Join(runDir, "iter-1", coreReviewers[4]+".json"), filepath.Join(runDir, "iter-1", "verdict.json"),
			filepath.Join(runDir, "report.md"), filepath.Join(runDir, "report.json"), filepath.Join(runDir, "report.sarif"), filepath.Join(ws, "analytics.jsonl"), filepath.Join(runDir, "rounds.md"),
		} {
			_ = os.Remove(p)
		}
		if err := os.WriteFile(statePath, before, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(last)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		restore()
		b.StartTimer()
		if out := runHook(b, a, "subagent-stop", last); out != nil {
			b.Fatalf("the last report was refused: %s", out)
		}
	}
	b.StopTimer()
	s := readState(b, runDir)
	if s.Phase != "fix" {
		b.Fatalf("after the last report the run is in %q, want fix", s.Phase)
	}
}

// BenchmarkDispatchGate is the orchestrator dispatching a reviewer the
// phase expects, with the prompt whetstone issued, in a run with a time
// budget: the hook checks the budget (tick) and allows the dispatch, both
// read from state.json without decoding it.
func BenchmarkDispatchGate(b *testing.B) {
	a := benchApp()
	session := "0dis0000-0000-4000-8000-000000000000"
	dir := newProject(b, filepath.Join(b.TempDir(), "project"))
	if err := os.WriteFile(filepath.Join(dir, "whetstone.json"), []byte(`{"pre_existing_blocks": true, "budget": {"minutes": 600}}`+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	commitConfig(b, dir) // a run reads it at the change's base
	b.Chdir(dir)
	if out := runHook(b, a, "user-prompt-submit", startPayload(b, session, dir)); !strings.Contains(string(out), "WHETSTONE-DISPATCH") {
		b.Fatalf("no run started: %s", out)
	}
	data := dispatchPayload(b, session, dir, app.Project{Root: dir}.RunOf(session), "critic")
	b.ReportAllocs()
	for b.Loop() {
		if out := runHook(b, a, "pre-tool-use", data); out != nil {
			b.Fatalf("an expected dispatch was answered: %s", out)
		}
	}
}
