package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/client"
	"github.com/whetstone-dev/whetstone/internal/hook"
	"github.com/whetstone-dev/whetstone/internal/loop"
	"github.com/whetstone-dev/whetstone/internal/review"
)

// allReviewers is the largest roster: the five core reviewers and the five
// specialists, so one review phase expects ten reports.
var allReviewers = []string{"critic", "pedant", "witness", "security-reviewer", "silent-failure-hunter",
	"performance-reviewer", "api-reviewer", "database-reviewer", "concurrency-reviewer", "architecture-reviewer"}

const reviewPrompt = "/whetstone:review --reviewers critic,pedant,witness,security-reviewer,silent-failure-hunter,performance-reviewer,api-reviewer,database-reviewer,concurrency-reviewer,architecture-reviewer"

// cleanReviewers report no findings; the others report one blocking finding
// each, so a complete round always moves to the fix phase.
var cleanReviewers = []string{"witness", "api-reviewer", "database-reviewer"}

// hookEvent is one hook invocation: the subcommand and its stdin.
type hookEvent struct {
	name    string // for failure messages
	event   string
	payload []byte
}

func payload(t testing.TB, fields map[string]any) []byte {
	t.Helper()
	data, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// newProject makes a git repository with one commit and one uncommitted
// file, so a review has a change to look at. The commit holds
// whetstone.json: a run reads it at the change's base.
func newProject(t testing.TB, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The reports name files the change does not touch; they must still
	// block, so that a round with findings goes on to the fix phase.
	if err := os.WriteFile(filepath.Join(dir, "whetstone.json"), []byte(`{"pre_existing_blocks": true}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "whetstone.json"}, {"-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "base"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func startPayload(t testing.TB, session, dir string) []byte {
	return payload(t, map[string]any{"session_id": session, "hook_event_name": "UserPromptSubmit", "cwd": dir, "prompt": reviewPrompt})
}

// dispatchPayload is the orchestrator's dispatch of agent name in the first
// iteration of run id, with the prompt whetstone issued.
func dispatchPayload(t testing.TB, session, dir, id, name string) []byte {
	return payload(t, map[string]any{"session_id": session, "hook_event_name": "PreToolUse", "cwd": dir, "tool_name": "Agent",
		"tool_input": map[string]any{"subagent_type": "whetstone:" + name, "description": "whetstone " + name, "prompt": loop.JobLine(id, 1, name)}})
}

// reviewReport is reviewer name's report as agent agentID writes it. Two
// agents of one reviewer report the same finding, so the round's outcome
// does not depend on which copy wins; the description tells them apart.
func reviewReport(t testing.TB, name, agentID string, findings int) string {
	t.Helper()
	list := []map[string]any{}
	if !slices.Contains(cleanReviewers, name) {
		for i := 0; i < findings; i++ {
			list = append(list, map[string]any{
				"severity": "high", "confidence": 90, "category": "correctness", "file": fmt.Sprintf("src/%s/file%d.go", name, i%20),
				"line": 10 + 7*i, "end_line": 12 + 7*i, "title": fmt.Sprintf("%s problem number %d in this code", name, i),
				"description": "reported by " + agentID, "evidence": "see the code", "suggestion": "fix it",
			})
		}
	}
	verdict := "clean"
	if len(list) > 0 {
		verdict = "issues_found"
	}
	data, err := json.MarshalIndent(map[string]any{"schema": review.SchemaReview, "reviewer": name, "verdict": verdict, "findings": list}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return "I reviewed the change.\n\n```json\n" + string(data) + "\n```\n"
}

func startAgentPayload(t testing.TB, session, dir, agentType, agentID string) []byte {
	fields := map[string]any{"session_id": session, "hook_event_name": "SubagentStart", "cwd": dir, "agent_type": agentType}
	if agentID != "" {
		fields["agent_id"] = agentID
	}
	return payload(t, fields)
}

func stopPayload(t testing.TB, session, dir, agentType, agentID, msg string) []byte {
	fields := map[string]any{"session_id": session, "hook_event_name": "SubagentStop", "cwd": dir, "stop_hook_active": false,
		"agent_type": agentType, "last_assistant_message": msg,
		"agent_transcript_path": "/nonexistent/" + agentID + ".jsonl", "background_tasks": []any{}}
	if agentID != "" {
		fields["agent_id"] = agentID
	}
	return payload(t, fields)
}

// stampede is the 32 SubagentStop events that arrive at once: the ten
// reviewers' reports, a second agent of each reviewer, and twelve strays —
// other plugins' and unknown agents, the fixer and the validator out of
// phase, an orphan without agent_id, and another session's agents. With
// starts, it is the 32 SubagentStart events that come before them.
func stampede(t testing.TB, session, dir string, starts bool) []hookEvent {
	var evs []hookEvent
	add := func(name, agentType, agentID, msg string, sess string) {
		if starts {
			evs = append(evs, hookEvent{name, "subagent-start", startAgentPayload(t, sess, dir, agentType, agentID)})
			return
		}
		evs = append(evs, hookEvent{name, "subagent-stop", stopPayload(t, sess, dir, agentType, agentID, msg)})
	}
	for _, n := range allReviewers {
		add(n, "whetstone:"+n, "agent-"+n+"-1", reviewReport(t, n, "agent-"+n+"-1", 1), session)
		add(n+" (second agent)", "whetstone:"+n, "agent-"+n+"-2", reviewReport(t, n, "agent-"+n+"-2", 1), session)
	}
	critic := reviewReport(t, "critic", "stray", 1)
	fix := `{"schema":"whetstone.fix/v1","results":[]}`
	add("other plugin", "cc-plugin:critic", "stray-1", critic, session)
	add("bare name", "critic", "stray-2", critic, session)
	add("unknown whetstone agent", "whetstone:nonexistent", "stray-3", critic, session)
	add("main-thread-like", "", "stray-4", critic, session)
	for i := 0; i < 4; i++ {
		add("fixer out of phase", "whetstone:fixer", fmt.Sprintf("stray-fixer-%d", i), fix, session)
	}
	add("validator at standard depth", "whetstone:validator", "stray-5", `{"schema":"whetstone.validation/v1","results":[]}`, session)
	add("orphan without agent_id", "whetstone:critic", "", critic, session)
	add("other session", "whetstone:critic", "stray-6", critic, "other-session-1")
	add("other session", "whetstone:pedant", "stray-7", reviewReport(t, "pedant", "stray-7", 1), "other-session-2")
	if len(evs) != 32 {
		t.Fatalf("stampede has %d events, want 32", len(evs))
	}
	return evs
}

// startAnswer is what the subagent-start of stampede event name answers
// must hold: a reviewer's task names its job, a whetstone agent the phase
// does not expect is told so, anything else gets no answer ("").
func startAnswer(name string) string {
	reviewer := strings.TrimSuffix(name, " (second agent)")
	switch {
	case slices.Contains(allReviewers, reviewer):
		return "iteration 1 · reviewer " + reviewer + "\\n"
	case name == "unknown whetstone agent" || name == "fixer out of phase" || name == "validator at standard depth":
		return "does not expect"
	}
	return ""
}

// stateView is the part of state.json these tests check, decoded
// independently of package loop.
type stateView struct {
	RunID     string `json:"run_id"`
	Phase     string `json:"phase"`
	Iteration int    `json:"iteration"`
	Revision  int    `json:"revision"`
	LedgerRev int    `json:"ledger_rev"`
	Agents    map[string]struct {
		Status string `json:"status"`
	} `json:"agents"`
	// History is in the ledger file state.json names, the run's cold part.
	History []struct {
		Iteration int    `json:"iteration"`
		Phase     string `json:"phase"`
		Note      string `json:"note"`
	} `json:"history"`
}

func runOf(t testing.TB, dir, session string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, ".whetstone", "sessions", session))
	if err != nil {
		t.Fatalf("the session owns no run: %v", err)
	}
	return strings.TrimSpace(string(b))
}

func readState(t testing.TB, runDir string) stateView {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(runDir, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s stateView
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("state.json: %v", err)
	}
	ledger := filepath.Join(runDir, fmt.Sprintf("ledger-%d.json", s.LedgerRev))
	if data, err = os.ReadFile(ledger); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("%s: %v", ledger, err)
	}
	// Exactly one ledger: each update removes the one it replaced.
	if all, _ := filepath.Glob(filepath.Join(runDir, "ledger*")); len(all) != 1 {
		t.Errorf("ledger files: %v, want only %s", all, ledger)
	}
	return s
}

// checkOneTransition checks that a run moved from review to fix exactly
// once, with every reviewer's report stored and one verdict and one
// analytics record written.
func checkOneTransition(t testing.TB, dir, runID string) {
	t.Helper()
	runDir := filepath.Join(dir, ".whetstone", "runs", runID)
	s := readState(t, runDir)
	if s.Phase != "fix" || s.Iteration != 1 {
		t.Fatalf("state: phase %q iteration %d; want fix, 1", s.Phase, s.Iteration)
	}
	var steps []string
	toFix := 0
	for _, h := range s.History {
		steps = append(steps, fmt.Sprintf("%d:%s", h.Iteration, h.Phase))
		if h.Phase == "fix" && h.Iteration == 1 {
			toFix++
		}
	}
	if toFix != 1 || len(s.History) != 2 {
		t.Fatalf("history %v; want exactly [1:review 1:fix]", steps)
	}
	if len(s.Agents) > 0 {
		t.Errorf("fix phase agents %+v; want none: a fixer that started in the review phase is not the fix phase's", s.Agents)
	}

	entries, err := os.ReadDir(runDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && e.Name() != "iter-1" {
			t.Errorf("unexpected directory %s: only iteration 1 may exist", e.Name())
		}
	}
	iter := filepath.Join(runDir, "iter-1")
	files, err := os.ReadDir(iter)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Name())
	}
	want := []string{"diff.patch", "verdict.json"}
	for _, n := range allReviewers {
		want = append(want, n+".json")
	}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("iter-1 holds %v; want %v", names, want)
	}
	for _, n := range allReviewers {
		data, err := os.ReadFile(filepath.Join(iter, n+".json"))
		if err != nil {
			t.Error(err)
			continue
		}
		r, ps := review.ValidateReview(data, review.Expect{Reviewer: n})
		if ps != nil {
			t.Errorf("%s.json is not a valid report:\n%s", n, ps)
			continue
		}
		for _, f := range r.Findings {
			if f.Description != "reported by agent-"+n+"-1" && f.Description != "reported by agent-"+n+"-2" {
				t.Errorf("%s.json holds a finding from %q", n, f.Description)
			}
		}
	}
	var v struct {
		Reviewers map[string]string `json:"reviewers"`
		Findings  []struct {
			Reviewers []string `json:"reviewers"`
		} `json:"findings"`
		Blocking []string `json:"blocking"`
		Next     string   `json:"next_phase"`
	}
	data, err := os.ReadFile(filepath.Join(iter, "verdict.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("verdict.json: %v", err)
	}
	wantFindings := len(allReviewers) - len(cleanReviewers)
	if len(v.Reviewers) != len(allReviewers) || len(v.Findings) != wantFindings || len(v.Blocking) != wantFindings || v.Next != "fix" {
		t.Errorf("verdict: %d reviewers %v, %d findings, %d blocking, next %q; want %d reviewers reported, %d findings, all blocking, next fix",
			len(v.Reviewers), v.Reviewers, len(v.Findings), len(v.Blocking), v.Next, len(allReviewers), wantFindings)
	}
	for n, st := range v.Reviewers {
		if st != "reported" {
			t.Errorf("verdict: %s is %q, want reported", n, st)
		}
	}
	lines, err := os.ReadFile(filepath.Join(dir, ".whetstone", "analytics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(lines, []byte("\n")); n != 1 {
		t.Errorf("analytics.jsonl has %d records, want 1:\n%s", n, lines)
	}
}

// buildWhetstone builds the binary under test once per test.
func buildWhetstone(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "whetstone")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/whetstone-dev/whetstone/cmd/whetstone")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// hookEnv is the environment the hook processes get: this one without
// whetstone's own knobs, so a developer's settings cannot change the result.
// keyDir holds the tests' whetstone key (TestMain), never the user's.
var keyDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "whetstone-key-")
	if err != nil {
		panic(err)
	}
	keyDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testGetenv is the environment an in-process App sees: only the key's
// directory.
func testGetenv(k string) string {
	if k == "WHETSTONE_STATE_DIR" {
		return keyDir
	}
	return ""
}

func hookEnv() []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "WHETSTONE_") || strings.HasPrefix(kv, "CLAUDE_CODE_SESSION_ID=")
	})
	return append(env, "WHETSTONE_STATE_DIR="+keyDir)
}

type result struct {
	ev             hookEvent
	stdout, stderr string
	err            error
}

// runAtOnce starts one process per event, waits until all are running, then
// writes every payload at the same moment, so the hooks race for real.
func runAtOnce(t testing.TB, bin, dir string, evs []hookEvent) []result {
	t.Helper()
	type proc struct {
		cmd            *exec.Cmd
		stdin          io.WriteCloser
		stdout, stderr bytes.Buffer
	}
	procs := make([]*proc, len(evs))
	for i, ev := range evs {
		p := &proc{cmd: exec.Command(bin, "hook", ev.event)}
		p.cmd.Dir, p.cmd.Env = dir, hookEnv()
		p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
		var err error
		if p.stdin, err = p.cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs[i] = p
	}
	// The processes block reading stdin; give the last ones started time to
	// get there, then release them all together.
	time.Sleep(5 * time.Millisecond)
	gate := make(chan struct{})
	var wg sync.WaitGroup
	for i, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			_, _ = p.stdin.Write(evs[i].payload)
			_ = p.stdin.Close()
		}()
	}
	close(gate)
	wg.Wait()
	out := make([]result, len(evs))
	for i, p := range procs {
		err := p.cmd.Wait()
		out[i] = result{evs[i], p.stdout.String(), p.stderr.String(), err}
	}
	return out
}

// TestConcurrentSubagentStops runs the whole review phase of a ten-reviewer
// run as real processes: ten dispatches at once (which write nothing), then
// 32 SubagentStart and 32 SubagentStop hooks, each batch released at the
// same moment. The phase must conclude exactly once.
//
// Each trial starts 75 processes (1.5–5 s on a 2-core machine), which the
// race detector does not watch (the binary is built without it), so
// `make test` runs 40 trials; WHETSTONE_TEST_TRIALS=N runs N (200 before
// a release, docs/testing.md).
func TestConcurrentSubagentStops(t *testing.T) {
	trials := 40
	if testing.Short() {
		trials = 10
	}
	if n, err := strconv.Atoi(os.Getenv("WHETSTONE_TEST_TRIALS")); err == nil && n > 0 {
		trials = n
	}
	bin := buildWhetstone(t)
	base := t.TempDir()
	start := time.Now()
	for trial := 0; trial < trials; trial++ {
		dir := newProject(t, filepath.Join(base, fmt.Sprint(trial)))
		session := fmt.Sprintf("c0ffee%02d-%04d-4000-8000-000000000000", trial%100, trial)

		res := runAtOnce(t, bin, dir, []hookEvent{{"start", "user-prompt-submit", startPayload(t, session, dir)}})
		if res[0].err != nil || !strings.Contains(res[0].stdout, "WHETSTONE-DISPATCH") {
			t.Fatalf("trial %d: user-prompt-submit: %v\nstdout: %s\nstderr: %s", trial, res[0].err, res[0].stdout, res[0].stderr)
		}
		runID := runOf(t, dir, session)

		before := readState(t, filepath.Join(dir, ".whetstone", "runs", runID)).Revision
		var dispatches []hookEvent
		for _, n := range allReviewers {
			dispatches = append(dispatches, hookEvent{"dispatch " + n, "pre-tool-use", dispatchPayload(t, session, dir, runID, n)})
		}
		for _, r := range runAtOnce(t, bin, dir, dispatches) {
			if r.err != nil || r.stdout != "" {
				t.Fatalf("trial %d: %s: %v; stdout %q (a dispatch of an expected agent is allowed silently)\nstderr: %s", trial, r.ev.name, r.err, r.stdout, r.stderr)
			}
		}
		// A dispatch writes nothing: the agents are recorded as they start.
		if s := readState(t, filepath.Join(dir, ".whetstone", "runs", runID)); s.Revision != before || len(s.Agents) != 0 {
			t.Fatalf("trial %d: the dispatches changed the state: revision %d → %d, agents %v", trial, before, s.Revision, s.Agents)
		}

		for _, starts := range []bool{true, false} {
			for _, r := range runAtOnce(t, bin, dir, stampede(t, session, dir, starts)) {
				// A starting reviewer gets its task; a whetstone agent the
				// phase does not expect (a fixer in the review phase) is
				// told its report will not count; other agents and other
				// sessions get nothing, and no stop gets an answer.
				want := ""
				if starts {
					want = startAnswer(r.ev.name)
				}
				if r.err != nil || r.stderr != "" || !strings.Contains(r.stdout, want) || (want == "") != (r.stdout == "") {
					t.Errorf("trial %d: %s %s: %v (want an answer holding %q)\nstdout: %s\nstderr: %s", trial, r.ev.event, r.ev.name, r.err, want, r.stdout, r.stderr)
				}
			}
		}
		checkOneTransition(t, dir, runID)
		if t.Failed() {
			t.Fatalf("trial %d failed; project kept at %s", trial, dir)
		}
		_ = os.RemoveAll(dir)
	}
	t.Logf("%d trials in %v (%v each)", trials, time.Since(start).Round(time.Millisecond), (time.Since(start) / time.Duration(trials)).Round(time.Millisecond))
}

// TestConcurrentSubagentStopsInProcess is the same race with goroutines
// calling App.Hook, so the race detector watches the handlers too.
func TestConcurrentSubagentStopsInProcess(t *testing.T) {
	trials := 20
	if testing.Short() {
		trials = 5
	}
	base := t.TempDir()
	a := &app.App{Now: time.Now, Getenv: testGetenv, Log: io.Discard}
	for trial := 0; trial < trials; trial++ {
		dir := newProject(t, filepath.Join(base, fmt.Sprint(trial)))
		t.Chdir(dir) // hooks find the project from the working directory
		session := fmt.Sprintf("90a0a000-%04d-4000-8000-000000000000", trial)
		call := func(ev hookEvent) (*hook.Response, error) {
			p, err := client.Parse(ev.payload)
			if err != nil {
				return nil, err
			}
			return a.Hook(context.Background(), ev.event, p)
		}
		resp, err := call(hookEvent{"start", "user-prompt-submit", startPayload(t, session, dir)})
		if err != nil || resp == nil || !strings.Contains(resp.Specific.AdditionalContext, "WHETSTONE-DISPATCH") {
			t.Fatalf("trial %d: start: %+v, %v", trial, resp, err)
		}
		runID := runOf(t, dir, session)
		parallel := func(evs []hookEvent) []error {
			errs := make([]error, len(evs))
			var ready, wg sync.WaitGroup
			gate := make(chan struct{})
			for i, ev := range evs {
				ready.Add(1)
				wg.Add(1)
				go func() {
					defer wg.Done()
					ready.Done()
					<-gate
					_, errs[i] = call(ev)
				}()
			}
			ready.Wait()
			close(gate)
			wg.Wait()
			return errs
		}
		before := readState(t, filepath.Join(dir, ".whetstone", "runs", runID)).Revision
		var dispatches []hookEvent
		for _, n := range allReviewers {
			dispatches = append(dispatches, hookEvent{"dispatch " + n, "pre-tool-use", dispatchPayload(t, session, dir, runID, n)})
		}
		for i, err := range parallel(dispatches) {
			if err != nil {
				t.Fatalf("trial %d: %s: %v", trial, dispatches[i].name, err)
			}
		}
		if after := readState(t, filepath.Join(dir, ".whetstone", "runs", runID)).Revision; after != before {
			t.Fatalf("trial %d: the dispatches wrote the state: revision %d → %d", trial, before, after)
		}
		for _, starts := range []bool{true, false} {
			evs := stampede(t, session, dir, starts)
			for i, err := range parallel(evs) {
				if err != nil {
					t.Errorf("trial %d: %s %s: %v", trial, evs[i].event, evs[i].name, err)
				}
			}
		}
		checkOneTransition(t, dir, runID)
		if t.Failed() {
			t.Fatalf("trial %d failed; project kept at %s", trial, dir)
		}
	}
}
