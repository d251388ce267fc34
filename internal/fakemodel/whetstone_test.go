package fakemodel

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// conv builds a request the way Claude Code shapes one: system blocks with
// the subagent marker and the agent body, then messages.
type conv struct {
	agent string // "" for the main thread
	dir   string // the project directory; "/p" when empty
	msgs  []map[string]any
}

func (c *conv) add(role string, content any) *conv {
	c.msgs = append(c.msgs, map[string]any{"role": role, "content": content})
	return c
}

func (c *conv) request(t *testing.T) *Request {
	t.Helper()
	sys0 := "x-anthropic-billing-header: cc_version=2.1.329.abc; cc_entrypoint=sdk-cli;"
	body := "\nYou are an agent working with the user."
	if c.agent != "" {
		sys0 += " cc_is_subagent=true;"
		body = "# " + c.agent + "\n\nYou review code."
	}
	dir := c.dir
	if dir == "" {
		dir = "/p"
	}
	msgs := append([]map[string]any{{"role": "system", "content": "# Environment\n - Primary working directory: " + dir + "\n - Is a git repository: true"}}, c.msgs...)
	raw, err := json.Marshal(map[string]any{
		"model": "claude-opus-5-5", "stream": true,
		"system":   []map[string]any{{"type": "text", "text": sys0}, {"type": "text", "text": "You are a Claude agent."}, {"type": "text", "text": body}},
		"messages": msgs,
	})
	if err != nil {
		t.Fatal(err)
	}
	req, err := ParseRequest(raw)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func agentUse(id, desc string) map[string]any {
	return map[string]any{"type": "tool_use", "id": id, "name": "Agent", "input": map[string]any{"subagent_type": "x", "description": desc, "prompt": "p"}}
}

const twoLines = "whetstone run r1 · iteration 1 of at most 5 · review phase.\n" +
	`WHETSTONE-DISPATCH {"subagent_type":"whetstone:critic","description":"whetstone critic, iteration 1","prompt":"whetstone review · run r1 · iteration 1 · reviewer critic\nScope."}` + "\n" +
	`WHETSTONE-DISPATCH {"subagent_type":"whetstone:pedant","description":"whetstone pedant, iteration 1","prompt":"whetstone review · run r1 · iteration 1 · reviewer pedant"}` + "\n"

func descriptions(r Reply) []string {
	var out []string
	for _, b := range r.Content {
		if b.Type == "tool_use" {
			var in map[string]any
			json.Unmarshal(b.Input, &in)
			out = append(out, in["description"].(string))
		}
	}
	return out
}

func TestOrchestratorDispatchesEachLineOnce(t *testing.T) {
	script := Whetstone{}.Script()

	first := (&conv{}).add("user", "/whetstone:review").
		add("system", "UserPromptSubmit hook additional context: "+twoLines).request(t)
	reply := script(first)
	want := []string{"whetstone critic, iteration 1", "whetstone pedant, iteration 1"}
	if diff := cmp.Diff(want, descriptions(reply)); diff != "" {
		t.Fatalf("first turn dispatches (-want +got):\n%s", diff)
	}
	var in map[string]any
	json.Unmarshal(reply.Content[1].Input, &in)
	if in["run_in_background"] != nil || in["subagent_type"] != "whetstone:critic" || !strings.HasPrefix(in["prompt"].(string), "whetstone review · run r1") {
		t.Errorf("Agent input = %v", in)
	}

	// A Stop block repeats a line already dispatched and adds a new one.
	later := (&conv{}).add("user", "/whetstone:review").
		add("system", "UserPromptSubmit hook additional context: "+twoLines).
		add("assistant", []any{agentUse("t1", "whetstone critic, iteration 1"), agentUse("t2", "whetstone pedant, iteration 1")}).
		add("user", []any{map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}, map[string]any{"type": "tool_result", "tool_use_id": "t2", "content": "ok"}}).
		add("assistant", "Waiting.").
		add("user", "Stop hook feedback:\n"+twoLines+`WHETSTONE-DISPATCH {"subagent_type":"whetstone:fixer","description":"whetstone fixer, iteration 1","prompt":"whetstone fix · run r1 · iteration 1"}`).
		request(t)
	if diff := cmp.Diff([]string{"whetstone fixer, iteration 1"}, descriptions(script(later))); diff != "" {
		t.Errorf("after a Stop block (-want +got):\n%s", diff)
	}

	// Nothing new: text, no tool call.
	idle := (&conv{}).add("user", "/whetstone:review").
		add("system", "UserPromptSubmit hook additional context: "+twoLines).
		add("assistant", []any{agentUse("t1", "whetstone critic, iteration 1")}).
		add("user", []any{map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": "Async agent launched successfully."}}).
		request(t)
	if r := script(idle); len(descriptions(r)) != 0 || r.Content[0].Type != "text" {
		t.Errorf("idle turn = %+v, want text only", r)
	}

	if r := (Whetstone{Lazy: true}).Script()(first); len(descriptions(r)) != 0 {
		t.Errorf("a lazy orchestrator dispatched: %+v", r)
	}
	rogue := Whetstone{RogueEdit: &Edit{File: "a.go", Old: "x", New: "y"}}.Script()
	if r := rogue(idle); len(r.Content) != 1 || r.Content[0].Name != "Edit" || !strings.Contains(string(r.Content[0].Input), `"/p/a.go"`) {
		t.Errorf("rogue orchestrator = %+v, want an Edit of /p/a.go", r)
	}
}

func reportOf(t *testing.T, r Reply) map[string]any {
	t.Helper()
	text := r.Content[0].Text
	start, end := strings.Index(text, "{"), strings.LastIndex(text, "}")
	var v map[string]any
	if start < 0 || json.Unmarshal([]byte(text[start:end+1]), &v) != nil {
		t.Fatalf("no JSON report in %q", text)
	}
	return v
}

func TestReviewerReports(t *testing.T) {
	w := Whetstone{
		Findings: func(reviewer string, iteration int) []Finding {
			if reviewer == "critic" && iteration == 1 {
				return []Finding{{Severity: "high", Category: "correctness", File: "a.go", Line: 3, Title: "Bug"}}
			}
			if reviewer == "critic" && iteration == 2 {
				return []Finding{{Severity: "high", Category: "correctness", File: "a.go", Line: 3, Title: "Bug", Prior: "F-0001"}}
			}
			return nil
		},
		Malformed:     func(reviewer string, iteration int) bool { return reviewer == "pedant" },
		RogueReviewer: "witness",
	}
	script := w.Script()
	ask := func(name string, iteration int, prompt string, more ...map[string]any) map[string]any {
		c := &conv{agent: "whetstone:" + name}
		c.add("user", []any{map[string]any{"type": "text", "text": "<system-reminder>ctx</system-reminder>"},
			map[string]any{"type": "text", "text": "whetstone review · run r1 · iteration " + string(rune('0'+iteration)) + " · reviewer " + name + "\n" + prompt}})
		for _, m := range more {
			c.msgs = append(c.msgs, m)
		}
		return reportOf(t, script(c.request(t)))
	}

	got := ask("critic", 1, "")
	if got["verdict"] != "issues_found" || got["schema"] != "whetstone.review/v1" || got["reviewer"] != "critic" || len(got["findings"].([]any)) != 1 {
		t.Errorf("critic iteration 1 = %v", got)
	}
	got = ask("critic", 2, "Check these fixes of findings you raised, one fix_checks entry each: F-0001, F-0002.\nWhat blocks …")
	checks, _ := json.Marshal(got["fix_checks"])
	if string(checks) != `[{"id":"F-0001","note":"checked","status":"not_fixed"},{"id":"F-0002","note":"checked","status":"fixed"}]` {
		t.Errorf("critic iteration 2 fix_checks = %s", checks)
	}
	if got := ask("critic", 2, "no fixes to check"); got["fix_checks"] != nil {
		t.Errorf("fix_checks without a list in the prompt = %v", got["fix_checks"])
	}

	if got := ask("security-reviewer", 1, ""); got["verdict"] != "clean" || len(got["findings"].([]any)) != 0 {
		t.Errorf("clean reviewer = %v", got)
	}

	bad := ask("pedant", 1, "")
	if f := bad["findings"].([]any)[0].(map[string]any); f["severity"] != "urgent" {
		t.Errorf("malformed report = %v", bad)
	}
	fixed := ask("pedant", 1, "",
		map[string]any{"role": "assistant", "content": "bad report"},
		map[string]any{"role": "user", "content": "Stop hook feedback:\n- $.findings[0].severity: must be one of …"})
	if fixed["verdict"] != "clean" {
		t.Errorf("corrected report = %v", fixed)
	}

	c := &conv{agent: "whetstone:witness"}
	c.add("user", "whetstone review · run r1 · iteration 1 · reviewer witness")
	r := script(c.request(t))
	if len(r.Content) != 2 || r.Content[0].Name != "Write" || r.Content[1].Name != "Bash" || !strings.Contains(string(r.Content[1].Input), "echo x \\u003e f.txt") {
		t.Errorf("rogue reviewer first turn = %+v", r)
	}
}

func TestFixerAndValidator(t *testing.T) {
	w := Whetstone{Fixes: func(iteration int) []Edit { return []Edit{{File: "a.go", Old: "i := 1", New: "i := 0"}} }}
	script := w.Script()
	prompt := "whetstone fix · run r1 · iteration 1\nFix these.\n- F-0001 [high] a.go:3 Bug here\n- F-0002 [critical] dir/b.go:10 Other\nMake minimal changes."
	c := &conv{agent: "whetstone:fixer"}
	c.add("user", prompt)
	r := script(c.request(t))
	if len(r.Content) != 1 || r.Content[0].Name != "Edit" || !strings.Contains(string(r.Content[0].Input), `"file_path":"/p/a.go"`) {
		t.Fatalf("fixer first turn = %+v", r)
	}
	c.add("assistant", []any{map[string]any{"type": "tool_use", "id": "e1", "name": "Edit", "input": map[string]any{}}})
	c.add("user", []any{map[string]any{"type": "tool_result", "tool_use_id": "e1", "content": "updated"}})
	got := reportOf(t, script(c.request(t)))
	results, _ := json.Marshal(got["results"])
	if got["schema"] != "whetstone.fix/v1" || string(results) != `[{"files":["a.go"],"id":"F-0001","note":"edited","status":"fixed"},{"files":["dir/b.go"],"id":"F-0002","note":"edited","status":"fixed"}]` {
		t.Errorf("fix report = %v", got)
	}

	v := &conv{agent: "whetstone:validator"}
	v.add("user", strings.Replace(prompt, "whetstone fix", "whetstone validate", 1))
	got = reportOf(t, script(v.request(t)))
	results, _ = json.Marshal(got["results"])
	if got["schema"] != "whetstone.validation/v1" || string(results) != `[{"id":"F-0001","note":"reproduced","status":"confirmed"},{"id":"F-0002","note":"reproduced","status":"confirmed"}]` {
		t.Errorf("validation report = %v", got)
	}
}

// TestSummaryOfIsTheRunsSummary: the orchestrator's last message is the
// summary whetstone handed it, from its first line to the report's path,
// whatever wraps it (OpenCode's task result), so `opencode run` ends with it.
func TestSummaryOfIsTheRunsSummary(t *testing.T) {
	text := "<task_result>\nclean\n</task_result>\n\nThe whetstone run is over. whetstone run 1a2b-1 DONE after 2 iterations: APPROVE.\nFindings: 3 raised in 2 review rounds; none open.\nTime: 30s; tokens: 75.\nReport: .whetstone/runs/1a2b-1/report.md\n</task_result>"
	want := "whetstone run 1a2b-1 DONE after 2 iterations: APPROVE.\nFindings: 3 raised in 2 review rounds; none open.\nTime: 30s; tokens: 75.\nReport: .whetstone/runs/1a2b-1/report.md"
	if got := summaryOf(text); got != want {
		t.Errorf("summaryOf = %q, want %q", got, want)
	}
}
