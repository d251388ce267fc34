package app_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/whetstone-dev/whetstone/internal/loop"
)

// criticRun starts a run with the critic alone in the repository dir.
func criticRun(t *testing.T, dir string) *driver {
	t.Helper()
	d := newDriver(t, dir)
	if resp := d.call("user-prompt-submit", map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "/whetstone:review --reviewers critic"}); resp == nil || resp.Decision == "block" {
		t.Fatalf("start refused: %+v", resp)
	}
	return d
}

// expired is a hook's context whose deadline has passed.
func expired(t *testing.T) context.Context {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	t.Cleanup(cancel)
	return ctx
}

// A hook whose deadline has passed gives up choosing the change at once
// (not after detectTimeout's 90 s) and refuses the prompt as a change that
// cannot be computed is refused: one sentence, nothing written.
func TestStartGivesUpAtTheHooksDeadline(t *testing.T) {
	dir := intentRepo(t)
	d := newDriver(t, dir)
	d.ctx = expired(t)
	start := time.Now()
	resp := d.call("user-prompt-submit", map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "/whetstone:review"})
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the hook took %s past its deadline", took)
	}
	if resp == nil || resp.Decision != "block" || !strings.Contains(resp.Reason, "deadline exceeded") || !strings.Contains(resp.Reason, "No review was started") {
		t.Fatalf("answer = %+v, want a block naming the deadline", resp)
	}
	if _, err := os.Stat(filepath.Join(dir, ".whetstone", "runs")); !os.IsNotExist(err) {
		t.Errorf("a refused start left .whetstone/runs behind (%v)", err)
	}
}

// The concluding stop of the fixer, at its deadline, cannot compute the
// change for the next review round: the run stops as error, saying why,
// as it does when computing the change fails or times out; it never
// reviews a stale diff, and the hook still answers.
func TestConcludingStopGivesUpAtTheHooksDeadline(t *testing.T) {
	dir := intentRepo(t)
	d := criticRun(t, dir)
	_, stop := d.agent("critic")
	stop(reviewerMessage(t, "critic", []map[string]any{{"severity": "medium", "confidence": 90, "category": "maintainability",
		"file": "lib.go", "line": 3, "title": "The comment says Sum adds all numbers", "description": "d"}}, nil))
	if r := d.run(); r.Phase != loop.Fix {
		t.Fatalf("after iteration 1: %s, want fix", r.Phase)
	}
	_, stop = d.agent("fixer")
	if err := os.WriteFile(filepath.Join(dir, "lib.go"), []byte("package main\n\n// Sum adds the positive numbers.\nfunc Sum(xs []int) int { return 0 }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d.ctx = expired(t)
	start := time.Now()
	stop(`{"schema": "whetstone.fix/v1", "results": [{"id": "F-0001", "status": "fixed", "note": "n", "files": ["lib.go"]}]}`)
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the hook took %s past its deadline", took)
	}
	r := d.run()
	if r.Phase != loop.Stopped || r.StopReason != loop.Error || !strings.Contains(r.Error, "could not compute the change for iteration 2") || !strings.Contains(r.Error, "deadline exceeded") {
		t.Fatalf("after the fix at its deadline: %s %s %q, want stopped as error naming the deadline", r.Phase, r.StopReason, r.Error)
	}
}

// A review round that concludes at its deadline cannot compare the work
// tree with the phase's baseline. What cannot be checked is not taken as
// untouched: the phase is recorded as unverified and the run does not
// approve, though its one reviewer found nothing.
func TestUncomparedPhaseNeverApproves(t *testing.T) {
	dir := intentRepo(t)
	d := criticRun(t, dir)
	_, stop := d.agent("critic")
	d.ctx = expired(t)
	stop(reviewerMessage(t, "critic", nil, nil))
	r := d.run()
	if len(r.Tampered) == 0 || !strings.Contains(r.Tampered[0], "unverified: the work tree could not be compared with its baseline") {
		t.Fatalf("tampered = %q, want the phase recorded as unverified", r.Tampered)
	}
	if r.Phase != loop.Done && r.Phase != loop.Stopped {
		t.Fatalf("after the clean round: %s, want the run ended", r.Phase)
	}
	if r.Verdict == "APPROVE" || r.Verdict == "APPROVE_WITH_NOTES" {
		t.Errorf("verdict %s after a phase whetstone could not check", r.Verdict)
	}
	v, err := os.ReadFile(filepath.Join(dir, ".whetstone", "runs", r.ID, "iter-1", "verdict.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(v), `"APPROVE`) || !strings.Contains(string(v), "unverified") {
		t.Errorf("iter-1/verdict.json approves or does not name the unverified phase:\n%s", v)
	}
}

// The launcher answers a session without a run by the session its
// environment names (CLAUDE_CODE_SESSION_ID); should a client ever name
// another one there than in the payload, a run the launcher could not
// see would go ungated, so it does not start.
func TestStartRefusedWhenTheEnvironmentNamesAnotherSession(t *testing.T) {
	dir := intentRepo(t)
	d := newDriver(t, dir)
	d.a.Getenv = func(k string) string {
		if k == "CLAUDE_CODE_SESSION_ID" {
			return "another-session"
		}
		return testGetenv(k)
	}
	resp := d.call("user-prompt-submit", map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "/whetstone:review"})
	if resp == nil || resp.Decision != "block" || !strings.Contains(resp.Reason, `names session "another-session"`) || !strings.Contains(resp.Reason, "No review was started") {
		t.Fatalf("answer = %+v, want the start refused naming both sessions", resp)
	}
	if _, err := os.Stat(filepath.Join(dir, ".whetstone", "runs")); !os.IsNotExist(err) {
		t.Errorf("a refused start left .whetstone/runs behind (%v)", err)
	}
	d.a.Getenv = func(k string) string {
		if k == "CLAUDE_CODE_SESSION_ID" {
			return d.session
		}
		return testGetenv(k)
	}
	if resp := d.call("user-prompt-submit", map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "/whetstone:review"}); resp == nil || resp.Decision == "block" {
		t.Fatalf("the same session in both: %+v, want a run started", resp)
	}
}

// A round with a finding that concludes at its deadline cannot take the
// fix phase's baseline either: that phase is recorded as unverified when
// it starts, instead of being left unchecked (or checked against the
// review phase's stale baseline).
func TestPhaseWithoutBaselineIsUnverified(t *testing.T) {
	dir := intentRepo(t)
	d := criticRun(t, dir)
	_, stop := d.agent("critic")
	d.ctx = expired(t)
	stop(reviewerMessage(t, "critic", []map[string]any{{"severity": "medium", "confidence": 90, "category": "maintainability",
		"file": "lib.go", "line": 3, "title": "The comment says Sum adds all numbers", "description": "d"}}, nil))
	r := d.run()
	if r.Phase != loop.Fix {
		t.Fatalf("after the round: %s, want fix", r.Phase)
	}
	if r.Baseline != nil || !strings.Contains(strings.Join(r.Tampered, "\n"), "unverified: no baseline could be taken for the fix phase of iteration 1") {
		t.Fatalf("baseline %v, tampered %q: want no baseline and the fix phase recorded as unverified", r.Baseline, r.Tampered)
	}
}
