package fakemodel

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// responsesBody is a Responses API request shaped like Codex CLI 0.169.0's
// (docs/codex.md): developer and user messages, a namespaced spawn_agent
// call, an exec_command call and a free-form apply_patch call with their
// outputs, a Stop hook's continuation prompt.
const responsesBody = `{"model":"fake-model","stream":true,"tool_choice":"auto","parallel_tool_calls":true,"store":false,
"tools":[{"type":"function","name":"exec_command","parameters":{}},{"type":"custom","name":"apply_patch","format":{}},
 {"type":"namespace","name":"multi_agent_v1","description":"","tools":[{"type":"function","name":"spawn_agent","parameters":{}},{"type":"function","name":"wait_agent","parameters":{}}]},
 {"type":"web_search","external_web_access":false}],
"input":[
 {"type":"message","role":"developer","content":[{"type":"input_text","text":"# whetstone:critic\nYou review."}]},
 {"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/home/dev/project</cwd>\n</environment_context>"}]},
 {"type":"message","role":"user","content":[{"type":"input_text","text":"review the change"}]},
 {"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"git diff\"}","call_id":"call_1"},
 {"type":"function_call_output","call_id":"call_1","output":"diff --git"},
 {"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch\n*** End Patch\n","call_id":"call_2"},
 {"type":"custom_tool_call_output","call_id":"call_2","output":"Command blocked by PreToolUse hook: no edits."},
 {"type":"reasoning","summary":[]},
 {"type":"message","role":"assistant","content":[{"type":"output_text","text":"REPORT"}]},
 {"type":"message","role":"user","content":[{"type":"input_text","text":"<hook_prompt hook_run_id=\"stop:0:/h/hooks.json\">again</hook_prompt>"}]}
]}`

func TestParseResponsesRequest(t *testing.T) {
	r, err := ParseResponsesRequest([]byte(responsesBody))
	if err != nil {
		t.Fatal(err)
	}
	if r.API != Responses || r.Model != "fake-model" || !r.Stream {
		t.Errorf("api %q model %q stream %v", r.API, r.Model, r.Stream)
	}
	if !r.HasTool("spawn_agent") || !r.HasTool("apply_patch") || r.HasTool("multi_agent_v1") {
		t.Errorf("tools %+v: want the namespace's tools by name, not the namespace", r.Tools)
	}
	if r.DeveloperAgent() != "whetstone:critic" {
		t.Errorf("DeveloperAgent = %q", r.DeveloperAgent())
	}
	if main, _ := ParseResponsesRequest([]byte(`{"input":[{"type":"message","role":"developer","content":"You are Codex."}]}`)); main.DeveloperAgent() != "" {
		t.Errorf("main thread's DeveloperAgent = %q", main.DeveloperAgent())
	}
	if !strings.HasPrefix(r.SystemMessages(), "# whetstone:critic") {
		t.Errorf("developer message is not a system one: %q", r.SystemMessages())
	}
	uses := r.ToolUses()
	if len(uses) != 2 || uses[0].Name != "exec_command" || string(uses[0].Input) != `{"cmd":"git diff"}` {
		t.Fatalf("tool uses %+v", uses)
	}
	var patch string
	if err := json.Unmarshal(uses[1].Input, &patch); err != nil || !strings.HasPrefix(patch, "*** Begin Patch") {
		t.Errorf("apply_patch input %s: want the free-form text as a JSON string (%v)", uses[1].Input, err)
	}
	if res, ok := r.ToolResult("call_2"); !ok || !strings.Contains(res.AllText(), "blocked by PreToolUse") {
		t.Errorf("result of call_2: %+v %v", res, ok)
	}
	// each call its own turn (Codex sends one call a response here), then REPORT
	if r.AssistantTurns() != 3 {
		t.Errorf("%d assistant turns, want 3: %+v", r.AssistantTurns(), r.Messages)
	}
	if !strings.Contains(r.Latest(), "<hook_prompt") {
		t.Errorf("Latest = %q, want the Stop hook's prompt", r.Latest())
	}
}

// TestResponsesServer: the stream is Responses API events ending in
// response.completed; text comes first as one assistant message, a JSON
// string input becomes a custom_tool_call, a namespaced tool carries its
// namespace; the log reads back as a Request.
func TestResponsesServer(t *testing.T) {
	script := func(req *Request) Reply {
		return Reply{Content: []Block{
			ToolUse("spawn_agent", map[string]string{"agent_type": "critic", "message": "review"}),
			Text("dispatching"),
			ToolUse("apply_patch", "*** Begin Patch\n*** End Patch\n"),
		}}
	}
	s, err := Start(script, filepath.Join(t.TempDir(), "model.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, err := http.Post(s.URL+"/v1/responses", "application/json", strings.NewReader(responsesBody))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("content-type") != "text/event-stream" {
		t.Fatalf("status %d, content-type %q", resp.StatusCode, resp.Header.Get("content-type"))
	}
	items, err := ParseResponsesSSE(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 3 {
		t.Fatalf("%d items: %v", len(items), items)
	}
	if items[0]["type"] != "message" || items[0]["role"] != "assistant" {
		t.Errorf("first item %v, want the assistant message", items[0])
	}
	if it := items[1]; it["type"] != "function_call" || it["name"] != "spawn_agent" || it["namespace"] != "multi_agent_v1" ||
		it["arguments"] != `{"agent_type":"critic","message":"review"}` || !strings.HasPrefix(it["call_id"].(string), "call_") {
		t.Errorf("spawn_agent item %v", it)
	}
	if it := items[2]; it["type"] != "custom_tool_call" || it["name"] != "apply_patch" || it["input"] != "*** Begin Patch\n*** End Patch\n" || it["namespace"] != nil {
		t.Errorf("apply_patch item %v", it)
	}
	io.Copy(io.Discard, resp.Body) // the end of the body: the exchange is logged
	recs, err := s.Requests()
	if err != nil || len(recs) != 1 {
		t.Fatalf("log: %v, %d records", err, len(recs))
	}
	if req, err := recs[0].Request(); err != nil || req.API != Responses || len(req.ToolUses()) != 2 {
		t.Errorf("logged request: %+v, %v", req, err)
	}
}

func TestResponsesRejectsBadBody(t *testing.T) {
	s, err := Start(func(*Request) Reply { return Say("x") }, filepath.Join(t.TempDir(), "model.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, err := http.Post(s.URL+"/v1/responses", "application/json", strings.NewReader(`{"input":"not a list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("status %d, want 400", resp.StatusCode)
	}
}
