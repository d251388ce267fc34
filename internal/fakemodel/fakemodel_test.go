package fakemodel

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func loadRequest(t *testing.T, name string) *Request {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	req, err := ParseRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// The testdata bodies were recorded from Claude Code 2.1.329 (trimmed): a
// main thread after a foreground Agent call, and a plugin subagent after a
// Bash call.
func TestRequestHelpersMainThread(t *testing.T) {
	req := loadRequest(t, "main-after-agent.json")
	if req.IsSubagent() {
		t.Error("IsSubagent() = true for the main thread")
	}
	if got := req.Agent(); got != "" {
		t.Errorf("Agent() = %q, want empty on the main thread", got)
	}
	if got := req.AssistantTurns(); got != 1 {
		t.Errorf("AssistantTurns() = %d, want 1", got)
	}
	if got := req.ProjectDir(); got != "/tmp/rec/proj" {
		t.Errorf("ProjectDir() = %q", got)
	}
	if got := req.FirstUserText(); !strings.Contains(got, "hello there") || !strings.Contains(got, "# gitStatus") {
		t.Errorf("FirstUserText() misses the prompt or the context blocks: %.200q", got)
	}
	last := req.LastUserText()
	if !strings.Contains(last, "[Subagent hand-back]") || !strings.Contains(last, "  report from whetstone:critic") {
		t.Errorf("LastUserText() misses the tool_result text: %.300q", last)
	}
	if got := req.Latest(); got != last {
		t.Errorf("Latest() = %.100q, want the last user message", got)
	}
	uses := req.ToolUses()
	if len(uses) != 1 || uses[0].Name != "Agent" {
		t.Fatalf("ToolUses() = %+v", uses)
	}
	var in struct {
		SubagentType string `json:"subagent_type"`
	}
	if err := json.Unmarshal(uses[0].Input, &in); err != nil || in.SubagentType != "whetstone:critic" {
		t.Errorf("Agent input = %s (%v)", uses[0].Input, err)
	}
	if res, ok := req.ToolResult(uses[0].ID); !ok || res.IsError {
		t.Errorf("ToolResult(%s) = %+v, %v", uses[0].ID, res, ok)
	}
	if !req.HasTool("Agent") || req.HasTool("Grep") {
		t.Error("HasTool disagrees with the tools list")
	}
	if !strings.Contains(req.AllText(), "hello there") || !strings.Contains(req.AllText(), "report from") {
		t.Error("AllText() misses messages")
	}
}

func TestRequestHelpersSubagent(t *testing.T) {
	req := loadRequest(t, "subagent-after-bash.json")
	if !req.IsSubagent() {
		t.Error("IsSubagent() = false for a subagent")
	}
	if got := req.Agent(); got != "whetstone:critic" {
		t.Errorf("Agent() = %q, want whetstone:critic", got)
	}
	if got := req.AssistantTurns(); got != 1 {
		t.Errorf("AssistantTurns() = %d, want 1", got)
	}
	// The last user message holds a tool_result whose content is a string.
	if got := req.LastUserText(); got != "hi" {
		t.Errorf("LastUserText() = %q, want the Bash output", got)
	}
	if got := req.ProjectDir(); got != "/tmp/rec/proj" {
		t.Errorf("ProjectDir() = %q", got)
	}
	if !strings.Contains(req.FirstUserText(), "reviewer critic") {
		t.Errorf("FirstUserText() = %.200q", req.FirstUserText())
	}
}

func TestContentAcceptsStringAndBlocks(t *testing.T) {
	body := `{"messages":[
		{"role":"system","content":"Stop hook feedback:\nX"},
		{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},
			{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"b"}],"is_error":true}]},
		{"role":"assistant","content":[{"type":"thinking","thinking":"…"},{"type":"text","text":"c"}]}]}`
	req, err := ParseRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range req.Messages {
		got = append(got, m.Role+":"+m.Content.Text())
	}
	want := []string{"system:Stop hook feedback:\nX", "user:a\nb", "assistant:c"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("message texts (-want +got):\n%s", diff)
	}
	if res, ok := req.ToolResult("t1"); !ok || !res.IsError {
		t.Errorf("ToolResult(t1) = %+v, %v", res, ok)
	}
	if got := req.Latest(); got != "" {
		t.Errorf("Latest() after a final assistant message = %q, want empty", got)
	}
}

func TestWriteSSEFraming(t *testing.T) {
	blocks := []Block{Text("dispatching ✓"), ToolUse("Agent", map[string]any{"prompt": "ünïcode · x", "run_in_background": false})}
	blocks[1].ID = "toolu_1"
	rec := httptest.NewRecorder()
	if err := WriteSSE(rec, "claude-opus-5-5", "msg_1", blocks); err != nil {
		t.Fatal(err)
	}
	if ct := rec.Header().Get("content-type"); ct != "text/event-stream" {
		t.Errorf("content-type = %q", ct)
	}
	raw := rec.Body.String()
	wantEvents := []string{"message_start", "content_block_start", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
	var events []string
	for _, frame := range strings.Split(strings.TrimSuffix(raw, "\n\n"), "\n\n") {
		lines := strings.Split(frame, "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "event: ") || !strings.HasPrefix(lines[1], "data: ") {
			t.Fatalf("bad frame %q", frame)
		}
		events = append(events, strings.TrimPrefix(lines[0], "event: "))
	}
	if diff := cmp.Diff(wantEvents, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if !strings.Contains(raw, `"message":{"content":[],"id":"msg_1","model":"claude-opus-5-5","role":"assistant","stop_reason":null,"stop_sequence":null,"type":"message","usage":{"input_tokens":10,"output_tokens":1}}`) {
		t.Errorf("message_start does not carry the empty message: %s", raw)
	}
	got, stop, err := ParseSSE(strings.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if stop != "tool_use" {
		t.Errorf("stop_reason = %q, want tool_use", stop)
	}
	if diff := cmp.Diff(blocks, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}

	rec = httptest.NewRecorder()
	if err := WriteSSE(rec, "m", "msg_2", []Block{Text("done")}); err != nil {
		t.Fatal(err)
	}
	if _, stop, err := ParseSSE(rec.Body); err != nil || stop != "end_turn" {
		t.Errorf("text-only reply: stop_reason %q, err %v; want end_turn", stop, err)
	}
}

func TestServer(t *testing.T) {
	var calls sync.Map
	script := func(req *Request) Reply {
		calls.Store(req.LastUserText(), true)
		if req.LastUserText() == "slow" {
			return Reply{Content: []Block{Text("late")}, Delay: 300 * time.Millisecond}
		}
		if req.LastUserText() == "boom" {
			panic("scripted failure")
		}
		return Call(ToolUse("Write", map[string]string{"file_path": "/x", "content": "y"}), ToolUse("Read", map[string]string{"file_path": "/x"}))
	}
	logPath := filepath.Join(t.TempDir(), "model.jsonl")
	s, err := Start(script, logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	post := func(path, body string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Post(s.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	msg := func(text string, stream bool) string {
		b, _ := json.Marshal(map[string]any{"model": "m", "stream": stream, "messages": []any{map[string]any{"role": "user", "content": text}}})
		return string(b)
	}

	// Two concurrent requests: the slow one must not hold up the other.
	start := time.Now()
	var wg sync.WaitGroup
	var fastDone time.Duration
	wg.Add(1)
	go func() {
		defer wg.Done()
		post("/v1/messages?beta=true", msg("slow", true))
	}()
	time.Sleep(20 * time.Millisecond)
	resp, body := post("/v1/messages?beta=true", msg("go", true))
	fastDone = time.Since(start)
	wg.Wait()
	if fastDone > 250*time.Millisecond {
		t.Errorf("a fast request took %v next to a slow one: requests are serialised", fastDone)
	}
	blocks, stop, err := ParseSSE(strings.NewReader(body))
	if err != nil || resp.StatusCode != 200 || stop != "tool_use" || len(blocks) != 2 {
		t.Fatalf("stream: status %d, stop %q, blocks %+v, err %v", resp.StatusCode, stop, blocks, err)
	}
	if blocks[0].ID == "" || blocks[0].ID == blocks[1].ID || !strings.HasPrefix(blocks[0].ID, "toolu_") {
		t.Errorf("tool_use ids %q, %q: want distinct toolu_ ids", blocks[0].ID, blocks[1].ID)
	}
	_, again := post("/v1/messages", msg("go", true))
	blocks2, _, _ := ParseSSE(strings.NewReader(again))
	if len(blocks2) != 2 || blocks2[0].ID != blocks[0].ID {
		t.Errorf("a retried request got different ids: %+v vs %+v", blocks2, blocks)
	}
	_, other := post("/v1/messages", msg("go on", true))
	blocks3, _, _ := ParseSSE(strings.NewReader(other))
	if len(blocks3) != 2 || blocks3[0].ID == blocks[0].ID {
		t.Errorf("a different request reused ids: %+v", blocks3)
	}

	resp, body = post("/v1/messages", msg("go", false))
	var nonStream struct {
		Type       string  `json:"type"`
		Content    []Block `json:"content"`
		StopReason string  `json:"stop_reason"`
	}
	if err := json.Unmarshal([]byte(body), &nonStream); err != nil || nonStream.Type != "message" || nonStream.StopReason != "tool_use" || len(nonStream.Content) != 2 || nonStream.Content[0].ID == "" {
		t.Errorf("non-stream reply %s (%v)", body, err)
	}

	if resp, body = post("/v1/messages/count_tokens?beta=true", msg("x", false)); body != `{"input_tokens":10}` {
		t.Errorf("count_tokens = %d %q", resp.StatusCode, body)
	}
	if resp, _ = post("/v1/other", "{}"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown path: status %d, want 404", resp.StatusCode)
	}
	_, body = post("/v1/messages", msg("boom", true))
	if blocks, _, err := ParseSSE(strings.NewReader(body)); err != nil || len(blocks) != 1 || !strings.Contains(blocks[0].Text, "scripted failure") {
		t.Errorf("panicking script: %+v, %v", blocks, err)
	}

	recs, err := s.Requests()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 8 {
		t.Fatalf("logged %d records, want 8", len(recs))
	}
	var slow, panicked *Record
	for i := range recs {
		r := &recs[i]
		if r.End.Before(r.Start) {
			t.Errorf("record %d ends before it starts", i)
		}
		if req, err := r.Request(); err == nil && req.LastUserText() == "slow" {
			slow = r
		}
		if strings.Contains(r.Error, "scripted failure") {
			panicked = r
		}
	}
	if slow == nil || slow.End.Sub(slow.Start) < 300*time.Millisecond || slow.Reply[0].Text != "late" {
		t.Errorf("slow record = %+v", slow)
	}
	if panicked == nil {
		t.Error("the script panic is not in the log")
	}
}
