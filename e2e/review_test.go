package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/whetstone-dev/whetstone/internal/fakemodel"
	"github.com/whetstone-dev/whetstone/internal/sandbox"
)

// The scenarios of the review loop. Each test is one Claude Code session
// (two for resume) on a fresh repo with the planted off-by-one in calc.go.

// critic finds the off-by-one in iteration 1 and nothing after.
func criticFindsOnce(reviewer string, iteration int) []fakemodel.Finding {
	if reviewer == "critic" && iteration == 1 {
		return []fakemodel.Finding{offByOne}
	}
	return nil
}

func fixOnce(iteration int) []fakemodel.Edit {
	if iteration == 1 {
		return []fakemodel.Edit{fixOffByOne}
	}
	return nil
}

var reviewJob = regexp.MustCompile(`whetstone review · run (\S+) · iteration (\d+) · reviewer ([a-z0-9-]+)`)

// reviewerCall is a reviewer's model call, with its place in the loop.
type reviewerCall struct {
	exchange
	reviewer  string
	iteration int
}

// reviewerCalls returns every model call made by a whetstone reviewer.
func (s *session) reviewerCalls() []reviewerCall {
	var out []reviewerCall
	for _, x := range s.requests() {
		if !x.req.IsSubagent() {
			continue
		}
		m := reviewJob.FindStringSubmatch(x.req.FirstUserText())
		if m == nil {
			continue
		}
		var it int
		fmt.Sscan(m[2], &it)
		out = append(out, reviewerCall{exchange: x, reviewer: m[3], iteration: it})
	}
	return out
}

// subagentCalls returns the model calls of one agent type.
func (s *session) subagentCalls(agentType string) []exchange {
	var out []exchange
	for _, x := range s.requests() {
		if x.req.IsSubagent() && x.req.Agent() == agentType {
			out = append(out, x)
		}
	}
	return out
}

// mainCalls returns the main thread's model calls.
func (s *session) mainCalls() []exchange {
	var out []exchange
	for _, x := range s.requests() {
		if !x.req.IsSubagent() {
			out = append(out, x)
		}
	}
	return out
}

// wantRun checks the final state of the repo's only run.
func wantRun(t *testing.T, r *repo, phase, reason, verdict string, iteration int) runState {
	t.Helper()
	run := r.onlyRun()
	if run.Phase != phase || run.StopReason != reason || run.Iteration != iteration || (verdict != "" && run.Verdict != verdict) {
		t.Errorf("run %s: phase %q, stop_reason %q, verdict %q, iteration %d; want %q, %q, %q, %d",
			run.ID, run.Phase, run.StopReason, run.Verdict, run.Iteration, phase, reason, verdict, iteration)
	}
	return run
}

func wantFiles(t *testing.T, r *repo, run runState, names ...string) {
	t.Helper()
	for _, n := range names {
		if !r.exists(runFile(run, n)) {
			t.Errorf("%s is missing", runFile(run, n))
		}
	}
}

// wantSummary checks that the Stop hook showed the run's summary.
// wantSummary checks that the run's summary reached the orchestrator, which
// relayed it to the user in a message of its own (with background agents,
// later notifications may add turns after it).
func wantSummary(t *testing.T, st *stream, sub string) {
	t.Helper()
	var said []string
	for _, e := range st.of("assistant", "") {
		if e["parent_tool_use_id"] != nil {
			continue
		}
		msg, _ := e["message"].(map[string]any)
		content, _ := msg["content"].([]any)
		for _, c := range content {
			if b, _ := c.(map[string]any); b["type"] == "text" {
				text, _ := b["text"].(string)
				said = append(said, text)
				if strings.Contains(text, "whetstone run ") && strings.Contains(text, sub) {
					return
				}
			}
		}
	}
	t.Errorf("the orchestrator never relayed a summary containing %q; it said:\n%s", sub, strings.Join(said, "\n---\n"))
}

// wantNotice checks that the user was shown the summary by the client
// (a hook's systemMessage), whatever the model did with it.
func wantNotice(t *testing.T, st *stream, sub string) {
	t.Helper()
	if notices := st.notices(); !containsAny(notices, "says: whetstone run") || !containsAny(notices, sub) {
		t.Errorf("no summary notice containing %q; notices:\n%s", sub, strings.Join(notices, "\n"))
	}
}

// wantParallelReviewers checks that iteration 1's reviewers were dispatched
// in one assistant message and that their model calls overlapped.
func wantParallelReviewers(t *testing.T, s *session) {
	t.Helper()
	var fanout []map[string]any
	for _, x := range s.mainCalls() {
		if calls := x.agentCalls(); len(calls) > len(fanout) {
			fanout = calls
		}
	}
	var first []reviewerCall
	reviewers := map[string]bool{}
	for _, c := range s.reviewerCalls() {
		if c.iteration == 1 && c.req.AssistantTurns() == 0 {
			first = append(first, c)
			reviewers[c.reviewer] = true
		}
	}
	if len(reviewers) < 3 {
		t.Fatalf("iteration 1 had %d reviewers, want at least 3 (critic, security-reviewer, silent-failure-hunter)", len(reviewers))
	}
	if len(fanout) != len(reviewers) {
		t.Errorf("the largest dispatch message has %d Agent calls; iteration 1 had %d reviewers", len(fanout), len(reviewers))
	}
	for _, in := range fanout {
		if d, _ := in["description"].(string); !strings.Contains(d, "iteration 1") {
			t.Errorf("the fan-out message dispatched %q", d)
		}
	}
	// Serial reviewers would never overlap. Under CPU starvation Claude Code
	// can start parallel subagents seconds apart, so ask for some overlap
	// rather than for all of them at once.
	if n := maxInFlight(first); n < 2 {
		t.Errorf("at most %d reviewer model call(s) were in flight at once; the reviewers did not run in parallel", n)
	}
}

// maxInFlight is the largest number of calls that were running at the same
// moment.
func maxInFlight(calls []reviewerCall) int {
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, c := range calls {
		edges = append(edges, edge{c.Start, +1}, edge{c.End, -1})
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.delta - b.delta // an end before a start at the same instant
	})
	n, most := 0, 0
	for _, e := range edges {
		n += e.delta
		most = max(most, n)
	}
	return most
}

// wantBackgrounded checks every whetstone task's is_backgrounded flag.
func wantBackgrounded(t *testing.T, st *stream, want bool) {
	t.Helper()
	n := 0
	for _, e := range st.of("system", "task_started") {
		if !strings.HasPrefix(e.str("subagent_type"), "whetstone:") {
			continue
		}
		n++
		if e["is_backgrounded"] != want {
			t.Errorf("%s started with is_backgrounded %v, want %v", e.str("subagent_type"), e["is_backgrounded"], want)
		}
	}
	if n == 0 {
		t.Error("no whetstone task started")
	}
}

// TestTwoIterationsForeground: findings → fix → clean → DONE, with the
// reviewers dispatched in one message and running in parallel (scenario a).
func TestTwoIterationsForeground(t *testing.T) {
	t.Parallel()
	e := setup(t)
	r := newRepo(t, baseFiles, changedFiles)
	s := newSession(t, e, r, fakemodel.Whetstone{
		Findings: criticFindsOnce, Fixes: fixOnce, ReviewerDelay: 500 * time.Millisecond,
	}.Script())
	st := s.claude("/whetstone:review")

	run := wantRun(t, r, "done", "", "APPROVE", 2)
	wantFiles(t, r, run, "state.json", "context.json", "iter-1/critic.json", "iter-1/verdict.json", "iter-1/fix.json", "iter-2/critic.json", "iter-2/verdict.json", "report.md")
	if !strings.Contains(r.read("calc.go"), fixOffByOne.New) {
		t.Error("the fixer's Edit did not reach calc.go")
	}
	wantParallelReviewers(t, s)
	wantBackgrounded(t, st, false)
	wantSummary(t, st, "DONE")
	wantSummary(t, st, "Report: .whetstone/runs/"+run.ID+"/report.md")
	// The audit trail: a rounds.md section and an analytics record per round.
	rounds := r.read(runFile(run, "rounds.md"))
	for _, want := range []string{"## Round 1 · iteration 1", "- Reviewers: critic (reported", "## Round 2 · iteration 2", "- Consecutive clean passes: 1"} {
		if !strings.Contains(rounds, want) {
			t.Errorf("rounds.md lacks %q:\n%s", want, rounds)
		}
	}
	if n := strings.Count(r.read(".whetstone/analytics.jsonl"), `"run_id":"`+run.ID+`"`); n != 2 {
		t.Errorf("analytics.jsonl has %d records of run %s, want 2", n, run.ID)
	}
}

// TestReviewersSeeTheChange: what the agents receive is right. Two
// reviewers report the off-by-one under different categories and wordings,
// so one finding reaches the fixer; a finding on Max, which the change does
// not touch, is pre_existing and blocks nothing; every report is wrapped in
// prose full of Go braces and is accepted the first time; the reviewers'
// prompts name the diff, and the diff holds the change.
func TestReviewersSeeTheChange(t *testing.T) {
	t.Parallel()
	e := setup(t)
	r := newRepo(t, baseFiles, changedFiles)
	sameBug := fakemodel.Finding{Severity: "medium", Category: "tests", File: "calc.go", Line: 7,
		Title: "Loop in Sum skips the first element xs[0]", Description: "i starts at 1."}
	oldBug := fakemodel.Finding{Severity: "high", Category: "correctness", File: "calc.go", Line: 25,
		Title: "Max returns 0 when every element is negative", Description: "best starts at 0."}
	s := newSession(t, e, r, fakemodel.Whetstone{
		GoProse: true, Fixes: fixOnce,
		Findings: func(reviewer string, iteration int) []fakemodel.Finding {
			switch {
			case reviewer == "critic" && iteration == 1:
				return []fakemodel.Finding{offByOne, oldBug}
			case reviewer == "critic":
				return []fakemodel.Finding{oldBug}
			case reviewer == "silent-failure-hunter" && iteration == 1:
				return []fakemodel.Finding{sameBug}
			}
			return nil
		},
	}.Script())
	st := s.claude("/whetstone:review")

	run := wantRun(t, r, "done", "", "APPROVE_WITH_NOTES", 2)
	wantFiles(t, r, run, "iter-1/diff.patch", "iter-2/diff.patch", "iter-2/fix.patch")
	var v struct {
		Findings []struct {
			ID          string   `json:"id"`
			Title       string   `json:"title"`
			Blocking    bool     `json:"blocking"`
			PreExisting bool     `json:"pre_existing"`
			Reviewers   []string `json:"reviewers"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(r.read(runFile(run, "iter-1/verdict.json"))), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Findings) != 2 {
		t.Fatalf("iteration 1 has %d findings, want 2 (the off-by-one once, the Max bug): %+v", len(v.Findings), v.Findings)
	}
	for _, f := range v.Findings {
		switch f.Title {
		case offByOne.Title:
			if !f.Blocking || f.PreExisting || strings.Join(f.Reviewers, ",") != "critic,silent-failure-hunter" {
				t.Errorf("the off-by-one = %+v, want blocking, in the change, raised by critic and silent-failure-hunter", f)
			}
		case oldBug.Title:
			if f.Blocking || !f.PreExisting {
				t.Errorf("the Max finding = %+v, want pre_existing and not blocking", f)
			}
		default:
			t.Errorf("unexpected finding %+v", f)
		}
	}
	fixerCalls := s.subagentCalls("whetstone:fixer")
	if len(fixerCalls) == 0 || len(s.reviewerCalls()) == 0 {
		t.Fatalf("%d fixer and %d reviewer model calls; want some of each", len(fixerCalls), len(s.reviewerCalls()))
	}
	for _, c := range fixerCalls {
		if ids := fixerIDs.FindAllString(c.req.SystemMessages(), -1); len(ids) != 1 {
			t.Errorf("the fixer was asked to fix %v, want exactly one finding", ids)
		}
	}
	for _, c := range s.reviewerCalls() {
		if fb := c.req.StopFeedback(); len(fb) > 0 {
			t.Errorf("%s's report (iteration %d) was sent back: %s", c.reviewer, c.iteration, fb[0])
		}
		// The dispatch prompt is the job line; the task arrives from
		// whetstone's SubagentStart hook in the agent's system message.
		if first, want := strings.TrimSpace(c.req.FirstUserText()), fmt.Sprintf("whetstone review · run %s · iteration %d · reviewer %s", run.ID, c.iteration, c.reviewer); !strings.HasSuffix(first, want) {
			t.Errorf("%s's prompt is not its job line %q:\n%s", c.reviewer, want, first)
		}
		prompt := c.req.SystemMessages()
		if want := "SubagentStart hook additional context: Your task, from whetstone:\n" + fmt.Sprintf("whetstone review · run %s · iteration %d · reviewer %s\n", run.ID, c.iteration, c.reviewer); !strings.Contains(prompt, want) {
			t.Errorf("%s's system message does not carry its task from whetstone (%q):\n%s", c.reviewer, want, prompt)
		}
		if want := fmt.Sprintf("iter-%d/diff.patch", c.iteration); !strings.Contains(prompt, want) {
			t.Errorf("%s's prompt does not name %s:\n%s", c.reviewer, want, prompt)
		}
		if c.iteration == 2 && !strings.Contains(prompt, "iter-2/fix.patch") {
			t.Errorf("%s's iteration 2 prompt does not name fix.patch:\n%s", c.reviewer, prompt)
		}
	}
	if d := r.read(runFile(run, "iter-1/diff.patch")); !strings.Contains(d, "+\tfor i := 1; i < len(xs); i++ {") || !strings.Contains(d, "+func Mean") {
		t.Errorf("iter-1/diff.patch does not hold the change:\n%s", d)
	}
	if d := r.read(runFile(run, "iter-2/fix.patch")); !strings.Contains(d, "-\tfor i := 1;") || !strings.Contains(d, "+\tfor i := 0;") || strings.Contains(d, "Mean") {
		t.Errorf("iter-2/fix.patch is not exactly the fixer's edit:\n%s", d)
	}
	wantBackgrounded(t, st, false)
}

var fixerIDs = regexp.MustCompile(`(?m)^- F-\d{4}`)

// TestTwoIterationsBackground: the same loop with background agents
// (whetstone.json "background": true; the orchestrator copies the dispatch
// lines unchanged) (scenario b).
func TestTwoIterationsBackground(t *testing.T) {
	t.Parallel()
	e := setup(t)
	base := maps.Clone(baseFiles)
	base["whetstone.json"] = `{"background": true}` + "\n"
	r := newRepo(t, base, changedFiles)
	s := newSession(t, e, r, fakemodel.Whetstone{Findings: criticFindsOnce, Fixes: fixOnce, ReviewerDelay: 500 * time.Millisecond}.Script())
	st := s.claude("/whetstone:review")

	run := wantRun(t, r, "done", "", "APPROVE", 2)
	wantFiles(t, r, run, "iter-1/critic.json", "iter-1/verdict.json", "iter-1/fix.json", "iter-2/critic.json", "report.md")
	if !strings.Contains(r.read("calc.go"), fixOffByOne.New) {
		t.Error("the fixer's Edit did not reach calc.go")
	}
	wantParallelReviewers(t, s)
	wantBackgrounded(t, st, true)
	wantSummary(t, st, "DONE")
}

// TestMalformedReportIsSentBack: the critic's first report is invalid; the
// SubagentStop hook blocks it with the problems by JSON path, the critic
// corrects itself and the loop goes on (scenario c).
func TestMalformedReportIsSentBack(t *testing.T) {
	t.Parallel()
	e := setup(t)
	r := newRepo(t, baseFiles, changedFiles)
	s := newSession(t, e, r, fakemodel.Whetstone{
		Findings: criticFindsOnce, Fixes: fixOnce,
		Malformed: func(reviewer string, iteration int) bool { return reviewer == "critic" && iteration == 1 },
	}.Script())
	s.claude("/whetstone:review")

	var feedback string
	for _, c := range s.reviewerCalls() {
		if fb := c.req.StopFeedback(); c.reviewer == "critic" && c.iteration == 1 && len(fb) > 0 {
			feedback = fb[0]
		}
	}
	if feedback == "" {
		t.Fatal("the critic never got Stop hook feedback for its malformed report")
	}
	for _, path := range []string{"$.findings[0].severity", "$.findings[0].confidence", "$.findings[0].line"} {
		if !strings.Contains(feedback, path) {
			t.Errorf("the feedback does not name %s:\n%s", path, feedback)
		}
	}
	run := wantRun(t, r, "done", "", "APPROVE", 2)
	wantFiles(t, r, run, "iter-1/critic.json", "iter-1/fix.json")
	if crit := r.read(runFile(run, "iter-1/critic.json")); !strings.Contains(crit, offByOne.Title) || strings.Contains(crit, "urgent") {
		t.Errorf("iter-1/critic.json is not the corrected report:\n%s", crit)
	}
}

// TestEditGates: a reviewer's Write and write-shaped Bash are denied, the
// orchestrator's own Edit during the run is denied, the fixer's Edit in the
// fix phase is allowed (scenario d). The rogue reviewer is witness, the one
// reviewer with Bash; no reviewer has Write in its tools list, so Claude Code
// refuses that call before whetstone's gate sees it. With the sandbox on
// (bubblewrap installed, bypassPermissions mode) the write-shaped Bash runs
// in the sandbox instead, and its write never reaches the project.
func TestEditGates(t *testing.T) {
	t.Parallel()
	for _, sandboxed := range []bool{false, true} {
		t.Run(map[bool]string{false: "parser", true: "sandbox"}[sandboxed], func(t *testing.T) {
			t.Parallel()
			if _, ok := sandbox.Find(); sandboxed && !ok {
				t.Skip("no working bubblewrap here (make test installs it)")
			}
			editGates(t, sandboxed)
		})
	}
}

func editGates(t *testing.T, sandboxed bool) {
	e := setup(t)
	base := maps.Clone(baseFiles)
	if !sandboxed {
		base["whetstone.json"] = `{"sandbox": "off"}` + "\n"
	}
	r := newRepo(t, base, changedFiles)
	rogue := fakemodel.Edit{File: "calc.go", Old: "// Mean is the average of xs.", New: "// Mean, edited by the orchestrator."}
	s := newSession(t, e, r, fakemodel.Whetstone{
		Findings: criticFindsOnce, Fixes: fixOnce, RogueReviewer: "witness", RogueEdit: &rogue,
	}.Script())
	if !sandboxed {
		s.trust() // "sandbox": "off" applies only from a trusted file
	}
	st := s.claude("/whetstone:review")

	results := st.toolResults()
	var sawWrite, sawBash, sawOrchestratorEdit, sawFixerEdit bool
	for _, u := range st.toolUses() {
		res, ok := results[u["id"].(string)]
		if !ok {
			t.Errorf("no tool_result for %s %v", u["name"], u["input"])
			continue
		}
		text, isErr := resultText(res), res["is_error"] == true
		input, _ := u["input"].(map[string]any)
		inSubagent := u["parent_tool_use_id"] != nil
		switch {
		case u["name"] == "Write" && inSubagent:
			sawWrite = true
			if !isErr || !(strings.Contains(text, "whetstone") || strings.Contains(text, "No such tool available: Write")) {
				t.Errorf("the reviewer's Write was not refused: %q", text)
			}
		case u["name"] == "Bash" && inSubagent && input["command"] == fakemodel.RogueCommand:
			sawBash = true
			if sandboxed && isErr {
				t.Errorf("the reviewer's Bash did not run in the sandbox: %q", text)
			}
			if !sandboxed && (!isErr || !strings.Contains(text, "PreToolUse:Bash hook error") || !strings.Contains(text, "whetstone:witness is read-only")) {
				t.Errorf("the reviewer's write-shaped Bash was not denied by whetstone: %q", text)
			}
		case u["name"] == "Edit" && !inSubagent:
			sawOrchestratorEdit = true
			if !isErr || !strings.Contains(text, "PreToolUse:Edit hook error") || !strings.Contains(text, "only whetstone:fixer may change files") {
				t.Errorf("the orchestrator's Edit was not denied by whetstone: %q", text)
			}
		case u["name"] == "Edit" && inSubagent:
			sawFixerEdit = true
			if isErr {
				t.Errorf("the fixer's Edit failed: %q", text)
			}
		}
	}
	if !sawWrite || !sawBash || !sawOrchestratorEdit || !sawFixerEdit {
		t.Errorf("tool calls seen: reviewer Write %v, reviewer Bash %v, orchestrator Edit %v, fixer Edit %v; want all", sawWrite, sawBash, sawOrchestratorEdit, sawFixerEdit)
	}
	for _, f := range []string{"rogue.txt", "f.txt"} {
		if r.exists(f) {
			t.Errorf("%s exists: a read-only agent wrote it", f)
		}
	}
	calc := r.read("calc.go")
	if strings.Contains(calc, rogue.New) {
		t.Error("the orchestrator's Edit changed calc.go")
	}
	if !strings.Contains(calc, fixOffByOne.New) {
		t.Error("the fixer's Edit did not reach calc.go")
	}
	run := wantRun(t, r, "done", "", "APPROVE", 2)
	denied := 0
	for _, res := range st.of("result", "") {
		if d, _ := res["permission_denials"].([]any); len(d) > 0 {
			denied += len(d)
		}
	}
	if denied == 0 {
		t.Error("no result lists a permission denial")
	}
	if strings.Contains(r.read(runFile(run, "iter-1/verdict.json")), `"tampered"`) {
		t.Error("the tamper backstop reported a change although nothing reached the project")
	}
}

// TestStopsAtMaxIterations: findings never go away (the fix does not hold,
// and a new blocking finding turns up) → STOPPED max_iterations (scenario e).
func TestStopsAtMaxIterations(t *testing.T) {
	t.Parallel()
	e := setup(t)
	r := newRepo(t, baseFiles, changedFiles)
	divByZero := fakemodel.Finding{Severity: "high", Category: "error-handling", File: "calc.go", Line: 14,
		Title: "Mean divides by zero on an empty slice", Description: "len(xs) is 0 for an empty slice."}
	s := newSession(t, e, r, fakemodel.Whetstone{
		Findings: func(reviewer string, iteration int) []fakemodel.Finding {
			if reviewer != "critic" {
				return nil
			}
			if iteration == 1 {
				return []fakemodel.Finding{offByOne}
			}
			again := offByOne
			again.Prior = "F-0001"
			return []fakemodel.Finding{again, divByZero}
		},
	}.Script())
	st := s.claude("/whetstone:review --max-iterations 2")

	run := wantRun(t, r, "stopped", "max_iterations", "REQUEST_CHANGES", 2)
	wantFiles(t, r, run, "iter-1/verdict.json", "iter-1/fix.json", "iter-2/verdict.json", "report.md", "report.json", "report.sarif")
	wantSummary(t, st, "STOPPED (max_iterations)")
	// The CI recipe's last step fails the job on this verdict.
	if _, code := s.whetstone("report", "--exit-code", "--format", "json"); code != 1 {
		t.Errorf("report --exit-code on a REQUEST_CHANGES run exited %d, want 1", code)
	}
	sarif, _ := s.whetstone("report", "--format", "sarif")
	wantValidSARIF(t, sarif)
}

// TestStopsWhenStalled: the same finding comes back after the fix → STOPPED
// stalled (scenario e).
func TestStopsWhenStalled(t *testing.T) {
	t.Parallel()
	e := setup(t)
	r := newRepo(t, baseFiles, changedFiles)
	s := newSession(t, e, r, fakemodel.Whetstone{
		Findings: func(reviewer string, iteration int) []fakemodel.Finding {
			if reviewer != "critic" {
				return nil
			}
			f := offByOne
			if iteration > 1 {
				f.Prior = "F-0001"
			}
			return []fakemodel.Finding{f}
		},
	}.Script())
	st := s.claude("/whetstone:review")

	wantRun(t, r, "stopped", "stalled", "REQUEST_CHANGES", 2)
	wantSummary(t, st, "STOPPED (stalled)")
}

// TestLazyOrchestrator: the orchestrator ends its turn without dispatching;
// the Stop hook blocks with the instructions, and gives up as no_progress
// before Claude Code's block cap would end the turn silently — also when the
// cap is lowered with CLAUDE_CODE_STOP_HOOK_BLOCK_CAP (scenario f); the
// last block, within the cap, tells the orchestrator the run is over.
func TestLazyOrchestrator(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{8, 3} {
		t.Run(fmt.Sprintf("cap%d", limit), func(t *testing.T) {
			e := setup(t)
			r := newRepo(t, baseFiles, changedFiles)
			s := newSession(t, e, r, fakemodel.Whetstone{Lazy: true}.Script())
			if limit != 8 {
				s.environ = append(s.environ, fmt.Sprintf("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=%d", limit))
			}
			st := s.claude("/whetstone:review")

			blocked := 0
			for _, x := range s.mainCalls() {
				if latest := x.req.Latest(); x.req.EndsWithStopFeedback() {
					blocked++
					// The last block tells the orchestrator the run is over.
					if strings.Contains(latest, "STOPPED (no_progress)") && strings.Contains(latest, "The whetstone run is over") {
						continue
					}
					if !strings.Contains(latest, fakemodel.DispatchMarker+`{"subagent_type":"whetstone:critic"`) {
						t.Errorf("a Stop block carries no dispatch line for the critic:\n%s", latest)
					}
				}
			}
			if blocked == 0 || blocked > limit {
				t.Fatalf("the Stop hook blocked the lazy orchestrator %d times; want 1 to %d (Claude Code overrides block %d)", blocked, limit, limit+1)
			}
			if containsAny(st.notices(), "stop-hook-block-cap") {
				t.Error("Claude Code's Stop hook block cap was reached")
			}
			wantRun(t, r, "stopped", "no_progress", "REQUEST_CHANGES", 1)
			wantNotice(t, st, "STOPPED (no_progress)") // the lazy model relays nothing
			t.Logf("the Stop hook blocked %d times", blocked)
		})
	}
}

// TestResumeAndSecondSession: a session ends mid-run; a second session in
// the same repo is unaffected; compacting and resuming the first re-injects
// the phase's instructions, and the run finishes (scenarios g and h).
func TestResumeAndSecondSession(t *testing.T) {
	t.Parallel()
	e := setup(t)
	r := newRepo(t, baseFiles, changedFiles)
	w := fakemodel.Whetstone{Findings: criticFindsOnce, Fixes: fixOnce}
	script := w.Script()
	// The second, unrelated session edits a README; the review session
	// follows the whetstone scenario.
	s := newSession(t, e, r, func(req *fakemodel.Request) fakemodel.Reply {
		if !req.IsSubagent() && strings.Contains(req.FirstUserText(), "Add a README") {
			if req.AssistantTurns() == 0 {
				return fakemodel.Call(fakemodel.ToolUse("Write", map[string]any{"file_path": req.ProjectDir() + "/README.md", "content": "# calc\n"}))
			}
			return fakemodel.Say("Added README.md.")
		}
		return script(req)
	})

	// One main turn: the reviewers are dispatched and report, then the
	// session ends before the orchestrator can dispatch the fixer.
	first := s.claude("/whetstone:review", "--max-turns", "1")
	id := first.sessionID()
	wantRun(t, r, "fix", "", "", 1)

	other := s.claude("Add a README.")
	if !r.exists("README.md") {
		t.Error("the second session's Write was blocked")
	}
	for _, res := range other.toolResults() {
		if res["is_error"] == true {
			t.Errorf("a tool call of the second session failed: %s", resultText(res))
		}
	}
	for _, x := range s.mainCalls() {
		if strings.Contains(x.req.FirstUserText(), "Add a README") && strings.Contains(x.req.AllText(), fakemodel.DispatchMarker) {
			t.Error("the second session was shown whetstone instructions")
		}
	}
	if got := r.onlyRun(); got.Phase != "fix" {
		t.Errorf("the second session moved the run to %q", got.Phase)
	}

	// Compaction: the SessionStart(compact) hook re-injects the instructions.
	compacted := s.claude("/compact", "--resume", id)
	if outs := compacted.hookTexts("SessionStart:compact"); !containsAny(outs, "compacted") || !containsAny(outs, fakemodel.DispatchMarker+`{"subagent_type":"whetstone:fixer"`) {
		t.Errorf("SessionStart(compact) did not re-inject the fix phase's instructions; outputs: %q", outs)
	}

	resumed := s.claude("continue", "--resume", id)
	if outs := resumed.hookTexts("SessionStart:resume"); !containsAny(outs, "resumed") || !containsAny(outs, fakemodel.DispatchMarker+`{"subagent_type":"whetstone:fixer"`) {
		t.Errorf("SessionStart(resume) did not re-inject the fix phase's instructions; outputs: %q", outs)
	}
	wantRun(t, r, "done", "", "APPROVE", 2)
	if !strings.Contains(r.read("calc.go"), fixOffByOne.New) {
		t.Error("the fixer's Edit did not reach calc.go")
	}
	var fixers []string
	for _, x := range s.mainCalls() {
		for _, in := range x.agentCalls() {
			if d, _ := in["description"].(string); strings.Contains(d, "fixer") {
				fixers = append(fixers, d)
			}
		}
	}
	if len(fixers) != 1 {
		t.Errorf("the fixer was dispatched %d times, want once: %q", len(fixers), fixers)
	}
}

// TestPlainWordsSkillStart: the user asks in words; the model invokes
// whetstone's review as a skill (Skill {"skill":"whetstone:review"}), which
// starts the run with the first instruction on the call. The orchestrator
// first briefs each reviewer itself, as a model that knows better does:
// every such dispatch is denied with the prompt to use, and it then copies
// the lines. Each agent gets its task from whetstone as it starts; the
// critic writes its report as real models do (absolute path, confidence
// 0.95, "High"), which is taken the first time; the loop runs to DONE and
// the orchestrator's final message relays the verdict to the user.
func TestPlainWordsSkillStart(t *testing.T) {
	t.Parallel()
	e := setup(t)
	r := newRepo(t, baseFiles, changedFiles)
	s := newSession(t, e, r, fakemodel.Whetstone{Findings: criticFindsOnce, Fixes: fixOnce, BriefsReviewers: true, RealModel: true}.Script())
	st := s.claude(fakemodel.SkillRequest)

	run := wantRun(t, r, "done", "", "APPROVE", 2)
	// The critic wrote an absolute path, confidence 0.95 and "High": the
	// report was taken at once, as the contract's form.
	if v := r.read(runFile(run, "iter-1/verdict.json")); !strings.Contains(v, `"file": "calc.go"`) || !strings.Contains(v, `"confidence": 95`) || !strings.Contains(v, `"severity": "high"`) {
		t.Errorf("iteration 1's verdict does not hold the critic's finding in normal form:\n%s", v)
	}
	for _, c := range s.reviewerCalls() {
		if fb := c.req.StopFeedback(); len(fb) > 0 {
			t.Errorf("%s's report (iteration %d) was sent back: %s", c.reviewer, c.iteration, fb[0])
		}
	}
	skill := false
	for _, u := range st.toolUses() {
		in, _ := u["input"].(map[string]any)
		if u["name"] == "Skill" && in["skill"] == "whetstone:review" {
			skill = true
		}
	}
	if !skill {
		t.Fatal("the model never invoked the whetstone:review skill")
	}
	started := false
	for _, text := range st.hookTexts("PreToolUse") {
		if strings.Contains(text, "whetstone started review run "+run.ID) && strings.Contains(text, fakemodel.DispatchMarker) {
			started = true
		}
	}
	if !started {
		t.Error("the Skill call's PreToolUse answer did not carry the start and the dispatch lines")
	}
	// What the model read after its Skill call: the command's text (the
	// command is what whetstone:review resolves to) and, beside it, the
	// first instruction as a role=system message.
	read := false
	for _, x := range s.mainCalls() {
		if text := x.req.AllText(); strings.Contains(text, "Launching skill: whetstone:review") &&
			strings.Contains(text, "You are the orchestrator of a whetstone review.") &&
			strings.Contains(x.req.SystemMessages(), "PreToolUse:Skill hook additional context: whetstone started review run "+run.ID) {
			read = true
			break
		}
	}
	if !read {
		t.Error("after the Skill call the model did not read the command's text and the first instruction")
	}
	// The forged briefs were denied; no reviewer ever saw one.
	denied := 0
	for _, res := range st.toolResults() {
		if b, _ := json.Marshal(res); strings.Contains(string(b), "exactly the prompt whetstone issued") {
			denied++
		}
	}
	if denied == 0 {
		t.Error("no dispatch with the orchestrator's own brief was denied")
	}
	for _, c := range s.reviewerCalls() {
		if strings.Contains(c.req.AllText(), "reply with exactly this report") {
			t.Errorf("%s received the orchestrator's brief", c.reviewer)
		}
		if !strings.Contains(c.req.SystemMessages(), "SubagentStart hook additional context: Your task, from whetstone:") {
			t.Errorf("%s (iteration %d) did not get its task from whetstone", c.reviewer, c.iteration)
		}
	}
	// The user hears the end from the model.
	results := st.of("result", "")
	if len(results) == 0 {
		t.Fatal("no result")
	}
	final := results[len(results)-1].str("result")
	for _, want := range []string{"whetstone run " + run.ID + " DONE", "APPROVE", "Report: .whetstone/runs/" + run.ID + "/report.md"} {
		if !strings.Contains(final, want) {
			t.Errorf("the orchestrator's final message lacks %q:\n%s", want, final)
		}
	}
}
