// Package e2e drives the real Claude Code (2.1.332) with the whetstone plugin
// against a scripted fake model (internal/fakemodel). Every hook, subagent and
// tool call happens for real; only the model is scripted. The tests skip
// unless WHETSTONE_CLAUDE names the claude binary (`make e2e` sets it).
package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whetstone-dev/whetstone/internal/fakemodel"
)

// maxFunc ends calc.go in the base and in the change alike.
const maxFunc = `
// Max returns the largest element of xs.
func Max(xs []int) int {
	best := 0
	for _, x := range xs {
		if x > best {
			best = x
		}
	}
	return best
}
`

// The sample project: Sum is correct in the base commit; the uncommitted
// change plants an off-by-one and adds Mean. Max (lines 17-26 after the
// change) is old code the change does not touch.
var (
	baseFiles = map[string]string{
		"go.mod": "module example.com/calc\n\ngo 1.22\n",
		"calc.go": `package calc

// Sum adds up xs.
func Sum(xs []int) int {
	total := 0
	for i := 0; i < len(xs); i++ {
		total += xs[i]
	}
	return total
}
` + maxFunc,
	}
	changedFiles = map[string]string{
		"calc.go": `package calc

// Sum adds up xs.
func Sum(xs []int) int {
	total := 0
	for i := 1; i < len(xs); i++ {
		total += xs[i]
	}
	return total
}

// Mean is the average of xs.
func Mean(xs []int) int {
	return Sum(xs) / len(xs)
}
` + maxFunc,
	}
	offByOne = fakemodel.Finding{
		Severity: "high", Category: "correctness", File: "calc.go", Line: 6,
		Title: "Sum skips the first element", Description: "The loop starts at 1, so xs[0] is never added.",
	}
	fixOffByOne = fakemodel.Edit{File: "calc.go", Old: "for i := 1; i < len(xs); i++", New: "for i := 0; i < len(xs); i++"}
)

// TestPluginLoadsPlainPrompt is the smoke test: the plugin loads, and a plain
// prompt in a session with no run sees no trace of whetstone (scenario h).
func TestPluginLoadsPlainPrompt(t *testing.T) {
	t.Parallel()
	e := setup(t)
	r := newRepo(t, baseFiles, changedFiles)
	script := func(req *fakemodel.Request) fakemodel.Reply {
		if req.AssistantTurns() == 0 {
			return fakemodel.Call(fakemodel.ToolUse("Edit", map[string]any{
				"file_path": filepath.Join(req.ProjectDir(), "calc.go"), "old_string": "Sum adds up xs.", "new_string": "Sum adds up every element of xs.",
			}))
		}
		return fakemodel.Say("Edited the comment.")
	}
	s := newSession(t, e, r, script)
	st := s.claude("Please improve the comment on Sum.")

	if !strings.Contains(r.read("calc.go"), "Sum adds up every element of xs.") {
		t.Error("the plain session's Edit did not change calc.go")
	}
	for _, res := range st.toolResults() {
		if res["is_error"] == true {
			t.Errorf("tool call failed in a session with no run: %s", resultText(res))
		}
	}
	for _, x := range s.requests() {
		// The agent and skill lists name the plugin; run context would not.
		if all := x.req.AllText(); strings.Contains(all, fakemodel.DispatchMarker) || strings.Contains(all, "whetstone run ") {
			t.Errorf("a request of the plain session mentions whetstone: %.300s", x.req.Latest())
		}
	}
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "Stop"} {
		for _, out := range st.hookOutputs(ev) {
			if strings.TrimSpace(out) != "" {
				t.Errorf("%s hook printed %q in a session with no run", ev, out)
			}
		}
	}
	if r.exists(".whetstone/runs") {
		t.Error("a plain prompt created .whetstone/runs")
	}
}

// runState is the part of state.json the tests assert on.
type runState struct {
	ID         string `json:"run_id"`
	Session    string `json:"session_id"`
	Phase      string `json:"phase"`
	Iteration  int    `json:"iteration"`
	StopReason string `json:"stop_reason"`
	Verdict    string `json:"verdict"`
}

// runs reads every .whetstone/runs/*/state.json of the repo.
func (r *repo) runs() []runState {
	r.t.Helper()
	paths, _ := filepath.Glob(filepath.Join(r.dir, ".whetstone", "runs", "*", "state.json"))
	var out []runState
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			r.t.Fatal(err)
		}
		var s runState
		if err := json.Unmarshal(b, &s); err != nil {
			r.t.Fatalf("%s: %v", p, err)
		}
		out = append(out, s)
	}
	return out
}

// onlyRun returns the repo's single run.
func (r *repo) onlyRun() runState {
	r.t.Helper()
	runs := r.runs()
	if len(runs) != 1 {
		r.t.Fatalf("found %d runs under .whetstone/runs, want 1", len(runs))
	}
	return runs[0]
}

// runFile is the path of a file in a run's directory, relative to the repo.
func runFile(run runState, name string) string {
	return filepath.Join(".whetstone", "runs", run.ID, name)
}
