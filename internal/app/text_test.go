package app_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whetstone-dev/whetstone/internal/fakemodel"
	"github.com/whetstone-dev/whetstone/internal/review"
)

// answerText is the text a hook's JSON answer gives the model: its
// additionalContext or its block reason.
func answerText(t testing.TB, out []byte) string {
	t.Helper()
	var resp struct {
		Reason   string `json:"reason"`
		Specific struct {
			Context string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if len(out) > 0 {
		if err := json.Unmarshal(out, &resp); err != nil {
			t.Fatalf("answer %s: %v", out, err)
		}
	}
	return resp.Specific.Context + resp.Reason
}

// TestModelFacingText drives a standard two-iteration run through the hooks
// in process and measures the text models read, as docs/performance.md
// reports it (`go test -v -run TestModelFacingText ./internal/app`): what
// the orchestrator must copy per phase, what each agent is told, and the
// whole run's model-facing bytes. It checks what a user pays for: every
// dispatch line is at most 300 bytes, and every agent reads the blocking
// rule exactly once (its task, with the run's numbers; not its brief).
func TestModelFacingText(t *testing.T) {
	a := benchApp()
	const session = "7e470000-0000-4000-8000-000000000000"
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := newProject(t, filepath.Join(t.TempDir(), "project"))
	t.Chdir(dir)
	start := runHook(t, a, "user-prompt-submit", payload(t, map[string]any{
		"session_id": session, "hook_event_name": "UserPromptSubmit", "cwd": dir, "prompt": "/whetstone:review"}))
	brief := func(name string) string {
		b, err := os.ReadFile(filepath.Join(root, "agents", name+".md"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	command, err := os.ReadFile(filepath.Join(root, "commands", "review.md"))
	if err != nil {
		t.Fatal(err)
	}
	total := len(command)
	rule := "What blocks (decided by whetstone, not by you)" // how review.Rule begins
	if !strings.HasPrefix(review.DefaultRule(), rule) {
		t.Fatalf("review.Rule no longer begins %q", rule)
	}

	// phase dispatches every line of an instruction, starts each agent and
	// returns its name → task, after checking the lines and the rule.
	phase := func(label, instruction string) map[string]string {
		t.Helper()
		total += len(instruction)
		lines := fakemodel.Dispatches(instruction)
		if len(lines) == 0 {
			t.Fatalf("%s: no dispatch lines in:\n%s", label, instruction)
		}
		echoed, tasks := 0, map[string]string{}
		for _, in := range lines {
			raw, _ := json.Marshal(in)
			line := len(fakemodel.DispatchMarker) + len(raw)
			echoed += len(raw)
			if line > 300 {
				t.Errorf("%s: a dispatch line is %d bytes, want at most 300: %s", label, line, raw)
			}
			name := strings.TrimPrefix(in["subagent_type"].(string), "whetstone:")
			task := answerText(t, runHook(t, a, "subagent-start", startAgentPayload(t, session, dir, "whetstone:"+name, label+"-"+name)))
			b := brief(name)
			if n := strings.Count(b+task, rule); n != 1 {
				t.Errorf("%s: whetstone:%s reads the blocking rule %d times (brief and task), want once", label, name, n)
			}
			tasks[name] = task
			total += len(raw) + len(task) + len(b)
		}
		taskBytes := 0
		for _, task := range tasks {
			taskBytes += len(task)
		}
		t.Logf("%-22s %d agents: instruction %5d B, echoed %4d B (%3d per agent), tasks %5d B", label, len(lines), len(instruction), echoed, echoed/len(lines), taskBytes)
		return tasks
	}
	report := func(name string, findings []map[string]any, checks []map[string]any) string {
		if findings == nil {
			findings = []map[string]any{}
		}
		if checks == nil {
			checks = []map[string]any{}
		}
		data, _ := json.Marshal(map[string]any{"schema": review.SchemaReview, "reviewer": name, "verdict": map[bool]string{true: "clean", false: "issues_found"}[len(findings) == 0], "findings": findings, "fix_checks": checks})
		return "```json\n" + string(data) + "\n```"
	}
	finish := func(label, name, msg string) {
		t.Helper()
		out := runHook(t, a, "subagent-stop", stopPayload(t, session, dir, "whetstone:"+name, label+"-"+name, msg))
		if strings.Contains(string(out), `"decision":"block"`) {
			t.Fatalf("%s's report was refused: %s", name, out)
		}
	}
	nextInstruction := func() string {
		t.Helper()
		return answerText(t, runHook(t, a, "stop", payload(t, map[string]any{"session_id": session, "hook_event_name": "Stop", "cwd": dir, "stop_hook_active": false, "background_tasks": []any{}})))
	}

	reviewers := phase("review, iteration 1", answerText(t, start))
	bug := []map[string]any{{"severity": "high", "confidence": 95, "category": "correctness", "file": "main.go", "line": 3,
		"title": "main does nothing", "description": "main returns at once.", "evidence": "main.go:3", "suggestion": "Do the work."}}
	for name := range reviewers {
		var fs []map[string]any
		if name == "critic" {
			fs = bug
		}
		finish("review, iteration 1", name, report(name, fs, nil))
	}
	phase("fix, iteration 1", nextInstruction())
	finish("fix, iteration 1", "fixer", "```json\n"+`{"schema":"whetstone.fix/v1","results":[{"id":"F-0001","status":"fixed","note":"done","files":["main.go"]}]}`+"\n```")
	reviewers = phase("review, iteration 2", nextInstruction())
	for name := range reviewers {
		var checks []map[string]any
		if name == "critic" {
			checks = []map[string]any{{"id": "F-0001", "status": "fixed", "note": "checked"}}
		}
		finish("review, iteration 2", name, report(name, nil, checks))
	}
	finale := nextInstruction()
	if !strings.Contains(finale, " DONE ") {
		t.Fatalf("the run did not end DONE:\n%s", finale)
	}
	total += len(finale)
	t.Logf("%-22s finale %d B; the command %d B", "end", len(finale), len(command))
	t.Logf("model-facing text of the run (command, instructions, dispatch inputs, briefs, tasks, finale): %d B", total)
}
