package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/fakemodel"
	"github.com/whetstone-dev/whetstone/internal/inspect"
	"github.com/whetstone-dev/whetstone/internal/loop"
	runreport "github.com/whetstone-dev/whetstone/internal/report"
	"github.com/whetstone-dev/whetstone/internal/review"
)

// The demo's planted bugs (testdata/demo/README.md), as its scripted
// reviewers report them, and the fixer's edits: iteration 1 fixes Tail and
// the path, not yet Save's MkdirAll, which iteration 2 fixes.
var (
	demoBugs = map[string]map[string]any{
		"critic": {"severity": "high", "confidence": 95, "category": "correctness", "file": "notes.go", "line": 39,
			"title": "Tail returns n+1 lines", "description": "lines[len(lines)-n-1:] starts one line too early, so Tail(name, 2) returns three lines.",
			"suggestion": "Slice from len(lines)-n."},
		"security-reviewer": {"severity": "high", "confidence": 95, "category": "security", "file": "notes.go", "line": 49,
			"title": "Note names can escape the store directory", "description": "path joins an unchecked name onto Dir; Remove(\"../../etc/hosts\") deletes a file outside the store.",
			"suggestion": "Refuse names that are not a single path element."},
		"silent-failure-hunter": {"severity": "high", "confidence": 95, "category": "error-handling", "file": "notes.go", "line": 17,
			"title": "Save ignores the MkdirAll error", "description": "When the directory cannot be created, Save goes on and reports the WriteFile error instead of the cause.",
			"suggestion": "Return the MkdirAll error, wrapped."},
	}
	demoFixes = map[int][][2]string{
		1: {{"return lines[len(lines)-n-1:], nil", "return lines[len(lines)-n:], nil"},
			{"return filepath.Join(s.Dir, name+\".txt\")", "return filepath.Join(s.Dir, filepath.Base(name)+\".txt\")"}},
		2: {{"\tos.MkdirAll(s.Dir, 0o755)\n", "\tif err := os.MkdirAll(s.Dir, 0o755); err != nil {\n\t\treturn fmt.Errorf(\"create %s: %w\", s.Dir, err)\n\t}\n"},
			{"import (\n\t\"os\"", "import (\n\t\"fmt\"\n\t\"os\""}},
	}
)

// iterationCost is what one iteration of a run puts before models.
type iterationCost struct {
	agents                                            []string // dispatched, review and fix phases
	briefs, dispatch, tasks, instructions, reads, all int      // bytes
}

// standardRun drives the standard run of docs/performance.md ("Cost per
// iteration") through the hooks, offline: the demo change, the default
// (standard) roster, three iterations — the planted bugs found, two fixed,
// the third kept open by its reviewer's fix check and fixed, then clean —
// and measures each iteration's model-facing text: the briefs of the
// dispatched agents, the dispatch inputs the orchestrator copies, the
// agents' tasks (SubagentStart) and the hook instructions the orchestrator
// reads (the command's answer, Stop, SubagentStop feedback). It returns the
// run's directory too, for its report.
func standardRun(t *testing.T) ([]iterationCost, string, *app.App, app.Project, *loop.Run) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
		"GIT_COMMITTER_EMAIL": "t@example.org", "GIT_AUTHOR_DATE": "2026-11-20T09:00:00Z", "GIT_COMMITTER_DATE": "2026-11-20T09:00:00Z",
		"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"} {
		t.Setenv(k, v)
	}
	dir := filepath.Join(t.TempDir(), "notes")
	git := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	copyDir := func(from string) {
		t.Helper()
		entries, err := os.ReadDir(from)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(from, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	git("init", "-q", "-b", "main")
	git("remote", "add", "origin", "https://github.com/whetstone-dev/notes.git")
	copyDir(filepath.Join(root, "testdata", "demo", "base"))
	// No signals: they run go build and vet, which cost time, not text.
	// The run reads whetstone.json at the change's base.
	if err := os.WriteFile(filepath.Join(dir, "whetstone.json"), []byte(`{"checks": false}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	git("commit", "-q", "-m", "notes: a store of short notes")
	copyDir(filepath.Join(root, "testdata", "demo", "change"))
	t.Chdir(dir)

	a := &app.App{Now: func() time.Time { return fixtureAt }, Getenv: testGetenv, Log: io.Discard, Stderr: io.Discard}
	const session = "c057c057-0000-4000-8000-000000000000"
	proj, err := a.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var costs []iterationCost
	cost := func(n int) *iterationCost {
		for len(costs) < n {
			costs = append(costs, iterationCost{})
		}
		return &costs[n-1]
	}
	load := func() *loop.Run {
		t.Helper()
		r, err := proj.Load(proj.Latest())
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	command, err := os.ReadFile(filepath.Join(root, "commands", "review.md"))
	if err != nil {
		t.Fatal(err)
	}
	cost(1).instructions += len(command)

	// phase dispatches every line of an instruction and starts each agent;
	// it returns the dispatched agents' names.
	phase := func(instruction string) []string {
		t.Helper()
		r := load()
		c := cost(r.Iteration)
		c.instructions += len(instruction)
		if os.Getenv("COST_DUMP") != "" {
			t.Logf("INSTR:\n%s", instruction)
		}
		lines := fakemodel.Dispatches(instruction)
		if len(lines) == 0 {
			t.Fatalf("iteration %d, %s phase: no dispatch lines in:\n%s", r.Iteration, r.Phase, instruction)
		}
		var names []string
		for _, in := range lines {
			raw, _ := json.Marshal(in)
			name := strings.TrimPrefix(in["subagent_type"].(string), "whetstone:")
			brief, err := os.ReadFile(filepath.Join(root, "agents", name+".md"))
			if err != nil {
				t.Fatal(err)
			}
			task := answerText(t, runHook(t, a, "subagent-start", startAgentPayload(t, session, dir, "whetstone:"+name, fmt.Sprintf("it%d-%s", r.Iteration, name))))
			c.agents = append(c.agents, name)
			c.briefs += len(brief)
			c.dispatch += len(raw)
			c.tasks += len(task)
			if os.Getenv("COST_DUMP") != "" {
				t.Logf("TASK %s:\n%s", name, task)
			}
			c.reads += changeRead(t, dir, r, name)
			names = append(names, name)
		}
		return names
	}
	finish := func(name, msg string) {
		t.Helper()
		r := load()
		out := runHook(t, a, "subagent-stop", stopPayload(t, session, dir, "whetstone:"+name, fmt.Sprintf("it%d-%s", r.Iteration, name), msg))
		if strings.Contains(string(out), `"decision":"block"`) {
			t.Fatalf("%s's report was refused: %s", name, out)
		}
		cost(r.Iteration).instructions += len(answerText(t, out))
	}
	next := func() string {
		t.Helper()
		out := answerText(t, runHook(t, a, "stop", payload(t, map[string]any{"session_id": session, "hook_event_name": "Stop", "cwd": dir,
			"stop_hook_active": false, "background_tasks": []any{}})))
		return out
	}
	edit := func(iteration int) {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(dir, "notes.go"))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		for _, e := range demoFixes[iteration] {
			if !strings.Contains(text, e[0]) {
				t.Fatalf("notes.go no longer holds %q", e[0])
			}
			text = strings.Replace(text, e[0], e[1], 1)
		}
		if err := os.WriteFile(filepath.Join(dir, "notes.go"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	instruction := answerText(t, runHook(t, a, "user-prompt-submit", payload(t, map[string]any{
		"session_id": session, "hook_event_name": "UserPromptSubmit", "cwd": dir, "prompt": "/whetstone:review"})))
	mkdir := "" // the id of Save's MkdirAll finding
	for iteration := 1; ; iteration++ {
		r := load()
		if r.Phase != loop.Review || r.Iteration != iteration {
			t.Fatalf("the run is in the %s phase of iteration %d, want review of %d", r.Phase, r.Iteration, iteration)
		}
		for _, name := range phase(instruction) {
			var findings, checks []map[string]any
			if bug, ok := demoBugs[name]; ok && iteration == 1 {
				findings = []map[string]any{bug}
			}
			for _, id := range load().FixChecks(name) {
				status := "fixed"
				if id == mkdir && iteration == 2 {
					status = "not_fixed"
				}
				checks = append(checks, check(id, status, "checked against fix.patch"))
			}
			finish(name, reviewerMessage(t, name, findings, checks))
		}
		instruction = next()
		if r := load(); r.Phase != loop.Fix {
			if r.Phase != loop.Done || iteration != 3 {
				t.Fatalf("after the review of iteration %d the run is %s (%s), want fix, or done after iteration 3:\n%s", iteration, r.Phase, r.StopReason, instruction)
			}
			cost(iteration).instructions += len(instruction) // the final summary
			return costs, dir, a, proj, r
		}
		if iteration == 1 {
			mkdir = titles(t, proj, proj.Latest())["Save ignores the MkdirAll error"]
		}
		if got := phase(instruction); !slices.Equal(got, []string{"fixer"}) {
			t.Fatalf("the fix phase dispatched %v", got)
		}
		var results []map[string]any
		for _, id := range load().Digest.Blocking {
			results = append(results, map[string]any{"id": id, "status": "fixed", "note": "edited notes.go", "files": []string{"notes.go"}})
		}
		edit(iteration)
		data, _ := json.Marshal(map[string]any{"schema": review.SchemaFix, "results": results})
		finish("fixer", "```json\n"+string(data)+"\n```")
		instruction = next()
	}
}

// changeRead is the size of the change file agent name's task points it to
// first (loop.Run.Task): fix.patch for a reviewer of a focused round and
// the fixer of a later one, else the whole change, diff.patch.
func changeRead(t *testing.T, dir string, r *loop.Run, name string) int {
	t.Helper()
	file := changeFile.FindString(r.Task(name))
	if file == "" {
		t.Fatalf("%s's task names no change file:\n%s", name, r.Task(name))
	}
	info, err := os.Stat(filepath.Join(dir, r.Dir(), file))
	if err != nil {
		t.Fatalf("%s's change file: %v", name, err)
	}
	return int(info.Size())
}

var changeFile = regexp.MustCompile(`iter-[0-9]+/(diff|fix)\.patch`)

// TestStandardRunCost measures the standard run's model-facing text per
// iteration (`make bench` prints it; `go test -v -run TestStandardRunCost
// ./internal/app`): the table of docs/performance.md, "Cost per iteration".
func TestStandardRunCost(t *testing.T) {
	costs, _, _, _, _ := standardRun(t)
	if len(costs) != 3 {
		t.Fatalf("the standard run took %d iterations, want 3", len(costs))
	}
	total, first := 0, 0
	t.Logf("%-9s %6s %8s %8s %8s %8s %8s %8s %6s  %s", "iteration", "agents", "briefs", "dispatch", "tasks", "instr", "reads", "bytes", "vs 1", "dispatched")
	for i, c := range costs {
		c.all = c.briefs + c.dispatch + c.tasks + c.instructions + c.reads
		total += c.all
		if i == 0 {
			first = c.all
		}
		t.Logf("%-9d %6d %8d %8d %8d %8d %8d %8d %5.0f%%  %s", i+1, len(c.agents), c.briefs, c.dispatch, c.tasks, c.instructions, c.reads, c.all,
			100*float64(c.all)/float64(first), strings.Join(c.agents, " "))
	}
	t.Logf("%-9s %6s %8s %8s %8s %8s %8s %8d", "run", "", "", "", "", "", "", total)

	// Issue 19's targets: iterations 2 and later at most 40 % of iteration
	// 1, the run at most half of the 130 950 B before it. Iteration 3 meets
	// its target; iteration 2 (four reviewers and the fixer again, against
	// five and the fixer) and the run do not, and are held to what this
	// tree reaches (60 %, 96 603 B, with each one-line lens's evidence bar
	// and "Not yours" list; docs/performance.md says what is left), so a
	// text that grows again fails here. Since issue 28 the demo's
	// whetstone.json is committed at the base (a run reads it there), no
	// longer a changed file of iteration 1: that iteration reads 942 B
	// less (48 424 B), iteration 2 is the same 29 428 B, which is 61 %.
	const before = 130950
	for i, bound := range map[int]float64{2: 0.61, 3: 0.40} {
		if got := float64(costs[i-1].briefs+costs[i-1].dispatch+costs[i-1].tasks+costs[i-1].instructions+costs[i-1].reads) / float64(first); got > bound {
			t.Errorf("iteration %d costs %.0f %% of iteration 1, want at most %.0f %%", i, 100*got, 100*bound)
		}
	}
	if total > before*75/100 {
		t.Errorf("the standard run costs %d B, want at most %d (75 %% of the %d before issue 19)", total, before*75/100, before)
	}
}

// TestDemoReportToPaste: the standard run on the demo change ends DONE, and
// its report.md — the comment to paste — is under 150 lines, links each
// fixed finding's lines on GitHub and shows the fixer's hunks.
func TestDemoReportToPaste(t *testing.T) {
	_, _, a, proj, r := standardRun(t)
	md, rep, err := inspect.RenderReport(context.Background(), a, proj, r, "md")
	if err != nil {
		t.Fatal(err)
	}
	if path := os.Getenv("WHETSTONE_DEMO_REPORT"); path != "" {
		if err := os.WriteFile(path, md, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(string(md), "\n"); n >= 150 {
		t.Errorf("the demo's report.md is %d lines, want under 150:\n%s", n, md)
	}
	if rep.Verdict != review.Approve || rep.Counts.Dispositions[runreport.Fixed] != 3 {
		t.Fatalf("the demo run: %s with %v, want APPROVE with 3 fixed", rep.Verdict, rep.Counts.Dispositions)
	}
	for _, f := range rep.Findings {
		if !strings.Contains(string(md), "[`notes.go#L"+fmt.Sprint(f.Line)+"`](https://github.com/whetstone-dev/notes/blob/") || f.FixHunks == "" ||
			!strings.Contains(string(md), "```diff\n"+f.FixHunks+"```\n") {
			t.Errorf("%s (%s): no link or no fix hunk in report.md:\n%s", f.ID, f.Title, md)
		}
	}
	written, err := os.ReadFile(filepath.Join(proj.Root, ".whetstone", "runs", r.ID, "report.md"))
	if err != nil || string(written) != string(md) {
		t.Errorf("report.md written at the end differs from whetstone report (%v)", err)
	}
}
