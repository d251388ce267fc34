package fakemodel

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// chatBody is a chat completions request shaped like OpenCode 1.18.33's: a
// system prompt, the task prompt, an assistant turn with two tool calls and
// their two results, as separate tool messages; user content as parts.
const chatBody = `{"model":"fake-model","stream":true,"stream_options":{"include_usage":true},
"tools":[{"type":"function","function":{"name":"bash","parameters":{}}},{"type":"function","function":{"name":"read","parameters":{}}}],
"tool_choice":"auto",
"messages":[
 {"role":"system","content":"# whetstone:critic\n\nYou are critic.\nYou are powered by the model named fake-model.\n<env>\n  Working directory: /home/dev/project\n</env>"},
 {"role":"user","content":[{"type":"text","text":"whetstone review · run r-1 · iteration 1 · reviewer critic"}]},
 {"role":"assistant","content":"","tool_calls":[
   {"id":"call_1","type":"function","function":{"name":"read","arguments":"{\"filePath\":\"/home/dev/project/a.go\"}"}},
   {"id":"call_2","type":"function","function":{"name":"bash","arguments":"{\"command\":\"git diff\"}"}}]},
 {"role":"tool","tool_call_id":"call_1","content":"package a"},
 {"role":"tool","tool_call_id":"call_2","content":"diff --git"},
 {"role":"user","content":"whetstone rejected your report (attempt 1 of 3)."}
]}`

func TestParseChatRequest(t *testing.T) {
	r, err := ParseChatRequest([]byte(chatBody))
	if err != nil {
		t.Fatal(err)
	}
	if !r.IsSubagent() || r.IsTitle() || r.Agent() != "whetstone:critic" || r.ProjectDir() != "/home/dev/project" {
		t.Errorf("subagent %v, title %v, agent %q, dir %q", r.IsSubagent(), r.IsTitle(), r.Agent(), r.ProjectDir())
	}
	if r.AssistantTurns() != 1 || len(r.ToolUses()) != 2 || r.ToolUses()[1].Name != "bash" {
		t.Fatalf("turns %d, tool uses %+v", r.AssistantTurns(), r.ToolUses())
	}
	if res, ok := r.ToolResult("call_2"); !ok || res.AllText() != "diff --git" {
		t.Errorf("result of call_2: %+v %v", res, ok)
	}
	if got := len(r.Messages); got != 4 { // user, assistant, one user of 2 tool results, user
		t.Errorf("%d messages, want the two tool results merged into one", got)
	}
	if fb := r.StopFeedback(); len(fb) != 1 || !strings.HasPrefix(fb[0], "whetstone rejected") {
		t.Errorf("StopFeedback = %q", fb)
	}
	if !strings.HasPrefix(r.FirstUserText(), "whetstone review · run r-1") {
		t.Errorf("FirstUserText = %q", r.FirstUserText())
	}
}

// TestChatServer: a streamed reply is OpenAI's chunk format, ending in
// [DONE]; tool call ids are call_…; the log reads back as a Request.
func TestChatServer(t *testing.T) {
	script := func(req *Request) Reply {
		return Reply{Content: []Block{Text("looking"), ToolUse("task", map[string]string{"subagent_type": "whetstone-critic"})}}
	}
	s, err := Start(script, filepath.Join(t.TempDir(), "model.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, err := http.Post(s.URL+"/v1/chat/completions", "application/json", strings.NewReader(chatBody))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("content-type") != "text/event-stream" {
		t.Fatalf("status %d, content-type %q", resp.StatusCode, resp.Header.Get("content-type"))
	}
	var text, name, args, finish, last string
	usage := false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		last = line
		if line == "[DONE]" {
			continue
		}
		var c struct {
			Object  string `json:"object"`
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					ToolCalls []struct {
						ID       string `json:"id"`
						Function struct {
							Name, Arguments string
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage json.RawMessage `json:"usage"`
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil || c.Object != "chat.completion.chunk" {
			t.Fatalf("chunk %q: %v", line, err)
		}
		usage = usage || len(c.Usage) > 0
		for _, ch := range c.Choices {
			text += ch.Delta.Content
			for _, tc := range ch.Delta.ToolCalls {
				if tc.ID != "" && !strings.HasPrefix(tc.ID, "call_") {
					t.Errorf("tool call id %q", tc.ID)
				}
				name += tc.Function.Name
				args += tc.Function.Arguments
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
	}
	if text != "looking" || name != "task" || args != `{"subagent_type":"whetstone-critic"}` || finish != "tool_calls" || !usage || last != "[DONE]" {
		t.Errorf("text %q, name %q, args %q, finish %q, usage %v, last %q", text, name, args, finish, usage, last)
	}
	recs, err := s.Requests()
	if err != nil || len(recs) != 1 {
		t.Fatalf("log: %v, %d records", err, len(recs))
	}
	if req, err := recs[0].Request(); err != nil || req.API != OpenAI || req.Agent() != "whetstone:critic" {
		t.Errorf("logged request: %+v, %v", req, err)
	}
	io.Copy(io.Discard, resp.Body)
}
