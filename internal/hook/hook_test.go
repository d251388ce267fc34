package hook_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/whetstone-dev/whetstone/internal/hook"
)

// fixtures returns the payloads Claude Code 2.1.329 really sent, by file name.
func fixtures(t testing.TB) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "claude-code", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no captured payloads in testdata/claude-code (%v)", err)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = data
	}
	return out
}

// decoded is what Parse should find, worked out independently with
// encoding/json.
type decoded struct {
	Event, SessionID, Cwd, AgentID, AgentType, ToolName, Prompt, Source, LastMessage, TranscriptPath string
	StopHookActive                                                                                   bool
	ToolInput                                                                                        string
	Background                                                                                       []hook.Task
}

func oracle(t *testing.T, data []byte) decoded {
	t.Helper()
	var v struct {
		Event          string          `json:"hook_event_name"`
		SessionID      string          `json:"session_id"`
		Cwd            string          `json:"cwd"`
		AgentID        string          `json:"agent_id"`
		AgentType      string          `json:"agent_type"`
		ToolName       string          `json:"tool_name"`
		ToolInput      json.RawMessage `json:"tool_input"`
		Prompt         string          `json:"prompt"`
		Source         string          `json:"source"`
		LastMessage    string          `json:"last_assistant_message"`
		TranscriptPath string          `json:"agent_transcript_path"`
		StopHookActive bool            `json:"stop_hook_active"`
		Background     []struct {
			ID        string `json:"id"`
			Status    string `json:"status"`
			AgentType string `json:"agent_type"`
		} `json:"background_tasks"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	d := decoded{Event: v.Event, SessionID: v.SessionID, Cwd: v.Cwd, AgentID: v.AgentID, AgentType: v.AgentType,
		ToolName: v.ToolName, Prompt: v.Prompt, Source: v.Source, LastMessage: v.LastMessage,
		TranscriptPath: v.TranscriptPath, StopHookActive: v.StopHookActive}
	if len(v.ToolInput) > 0 {
		var buf bytes.Buffer
		if err := json.Compact(&buf, v.ToolInput); err != nil {
			t.Fatal(err)
		}
		d.ToolInput = buf.String()
	}
	for _, b := range v.Background {
		d.Background = append(d.Background, hook.Task{ID: b.ID, Status: b.Status, AgentType: b.AgentType})
	}
	return d
}

func fromPayload(t *testing.T, p hook.Payload) decoded {
	t.Helper()
	d := decoded{Event: p.Event, SessionID: p.SessionID, Cwd: p.Cwd, AgentID: p.AgentID, AgentType: p.AgentType,
		ToolName: p.ToolName, Prompt: p.Prompt, Source: p.Source, LastMessage: p.LastMessage,
		TranscriptPath: p.TranscriptPath, StopHookActive: p.StopHookActive, Background: p.Background}
	if p.ToolInput.Exists() {
		var buf bytes.Buffer
		if err := json.Compact(&buf, []byte(p.ToolInput.Raw)); err != nil {
			t.Fatalf("tool_input is not JSON: %v", err)
		}
		d.ToolInput = buf.String()
	}
	return d
}

// TestParseFixtures decodes every captured payload and compares each field
// with a full encoding/json decode of the same bytes.
func TestParseFixtures(t *testing.T) {
	for name, data := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			p, err := hook.Parse(data)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(oracle(t, data), fromPayload(t, p)); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
			if !bytes.Equal(p.Raw, data) {
				t.Error("Raw is not the input")
			}
			// Claude Code marks a subagent's events with agent_id and
			// agent_type and the main thread's with neither (docs/claude-code.md §9).
			inSubagent := strings.Contains(name, "subagent")
			if got := p.AgentID != "" && p.AgentType != ""; got != inSubagent {
				t.Errorf("agent_id %q, agent_type %q; want both set exactly in a subagent's events", p.AgentID, p.AgentType)
			}
			q, err := hook.Read(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if diff := cmp.Diff(fromPayload(t, p), fromPayload(t, q)); diff != "" {
				t.Errorf("Read differs from Parse (-Parse +Read):\n%s", diff)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name, in string
	}{
		{"empty", ""},
		{"not JSON", "session_id=abc"},
		{"truncated", `{"session_id":"abc"`},
		{"array", `[{"session_id":"abc"}]`},
		{"string", `"abc"`},
		{"null", `null`},
		{"trailing garbage", `{"session_id":"abc"} x`},
		{"no session", `{"hook_event_name":"Stop"}`},
		{"empty session", `{"session_id":""}`},
		{"session with slash", `{"session_id":"../../etc"}`},
		{"session dot dot", `{"session_id":".."}`},
		{"session leading dot", `{"session_id":".hidden"}`},
		{"session with NUL", `{"session_id":"abc\u0000def"}`},
		{"session with newline", `{"session_id":"abc\ndef"}`},
		{"session with space", `{"session_id":"abc def"}`},
		{"session object", `{"session_id":{"a":1}}`},
		{"session too long", `{"session_id":"` + strings.Repeat("a", 129) + `"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if p, err := hook.Parse([]byte(tt.in)); err == nil {
				t.Errorf("Parse(%q) = session %q, nil; want an error", tt.in, p.SessionID)
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	for _, id := range []string{"1e5fb35f-5511-4c7f-aaea-99a35bdcfa38", "a", "A.b_c-d", strings.Repeat("a", 128)} {
		in := `{"session_id":` + strings.TrimSpace(mustJSON(t, id)) + `}`
		p, err := hook.Parse([]byte(in))
		if err != nil || p.SessionID != id {
			t.Errorf("Parse(%s) = %q, %v; want %q", in, p.SessionID, err, id)
		}
	}
	// Whitespace around the object is how Claude Code may frame it.
	if _, err := hook.Parse([]byte("\n  {\"session_id\":\"abc\"}\n")); err != nil {
		t.Errorf("Parse with surrounding whitespace: %v", err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReadLimit(t *testing.T) {
	frame := func(n int) []byte {
		head, tail := `{"session_id":"abc","pad":"`, `"}`
		return []byte(head + strings.Repeat("x", n-len(head)-len(tail)) + tail)
	}
	if _, err := hook.Read(bytes.NewReader(frame(hook.MaxPayload))); err != nil {
		t.Errorf("Read of exactly MaxPayload bytes: %v", err)
	}
	if _, err := hook.Read(bytes.NewReader(frame(hook.MaxPayload + 1))); err == nil {
		t.Error("Read of MaxPayload+1 bytes succeeded; want an error")
	}
	boom := errors.New("boom")
	if _, err := hook.Read(iotest.ErrReader(boom)); !errors.Is(err, boom) {
		t.Errorf("Read from a failing reader = %v; want it to wrap %v", err, boom)
	}
	// A pipe that delivers the payload a byte at a time still reads whole.
	p, err := hook.Read(iotest.OneByteReader(strings.NewReader(`{"session_id":"abc","hook_event_name":"Stop"}`)))
	if err != nil || p.Event != "Stop" {
		t.Errorf("Read one byte at a time = %q, %v", p.Event, err)
	}
}

func TestResponses(t *testing.T) {
	tests := []struct {
		name string
		resp *hook.Response
		want string
	}{
		{"deny", hook.Deny("no <edits> & \"quotes\""), `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no <edits> & \"quotes\""}}`},
		{"block", hook.Block("dispatch the reviewers\nnow"), `{"decision":"block","reason":"dispatch the reviewers\nnow"}`},
		{"context", hook.Context("UserPromptSubmit", "WHETSTONE-DISPATCH {}"), `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"WHETSTONE-DISPATCH {}"}}`},
		{"message", hook.Message("run done"), `{"systemMessage":"run done"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.resp.Encode()
			// Claude Code parses stdout as the answer only when it is one
			// JSON object from the first byte (docs/claude-code.md §10).
			if len(got) == 0 || got[0] != '{' || bytes.IndexByte(got, '\n') != len(got)-1 {
				t.Fatalf("Encode is not one line starting with {: %q", got)
			}
			var want, have any
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(got, &have); err != nil {
				t.Fatalf("Encode is not JSON: %v\n%s", err, got)
			}
			if diff := cmp.Diff(want, have); diff != "" {
				t.Errorf("Encode (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzParse feeds Parse arbitrary bytes: it must never panic, and whatever
// it accepts has a session id that is safe as a file name under
// .whetstone/sessions/ (spec §6).
func FuzzParse(f *testing.F) {
	for _, data := range fixtures(f) {
		f.Add(data)
	}
	f.Add([]byte(`{"session_id":"abc","background_tasks":[{"id":1},null,"x"],"tool_input":"str"}`))
	f.Add([]byte(`{"session_id":"../x"}`))
	f.Add([]byte(`{"session_id":"a","session_id":"../b"}`))
	f.Add([]byte(`{"session_id":"\u0061bc","agent_type":"whetstone:critic","stop_hook_active":"true"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := hook.Parse(data)
		q, rerr := hook.Read(bytes.NewReader(data))
		if (err == nil) != (rerr == nil) || p.SessionID != q.SessionID {
			t.Fatalf("Parse and Read disagree: %q, %v vs %q, %v", p.SessionID, err, q.SessionID, rerr)
		}
		if err != nil {
			return
		}
		if !bytes.Equal(p.Raw, data) {
			t.Fatal("Raw is not the input")
		}
		if !json.Valid(data) {
			t.Fatalf("Parse accepted bytes encoding/json rejects: %q", data)
		}
		id := p.SessionID
		switch {
		case id == "" || len(id) > 128:
			t.Fatalf("session id of length %d accepted", len(id))
		case id == "." || id == ".." || id[0] == '.' || id[0] == '-':
			t.Fatalf("session id %q accepted", id)
		case strings.ContainsAny(id, "/\\\x00\n\r\t "):
			t.Fatalf("session id %q with a separator or control character accepted", id)
		case filepath.Base(id) != id || filepath.Clean(id) != id:
			t.Fatalf("session id %q is not a plain file name", id)
		}
		for _, r := range id {
			if r > 0x7e || r < 0x21 {
				t.Fatalf("session id %q has a non-printable or non-ASCII character", id)
			}
		}
	})
}

func TestDeepPayloadIsRefusedQuickly(t *testing.T) {
	deep := []byte(`{"session_id":"s","x":` + strings.Repeat("[", 8<<20) + strings.Repeat("]", 8<<20) + `}`)
	if _, err := hook.Parse(deep); err == nil || !strings.Contains(err.Error(), "nests deeper") {
		t.Fatalf("Parse of an 8-million-deep payload = %v, want a nesting error", err)
	}
	ok := []byte(`{"session_id":"s","x":"[[[[{{{{","y":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`)
	if _, err := hook.Parse(ok); err != nil {
		t.Fatalf("Parse of a 100-deep payload with brackets in a string: %v", err)
	}
}

// TestPeekReadsWhatParseRefuses: the session id and client of a payload
// Parse cannot decode are still read, so that the gate can deny it during
// the session's run; a session id that names no file is not read.
func TestPeekReadsWhatParseRefuses(t *testing.T) {
	deep := strings.Repeat("[", hook.MaxDepth+1) + strings.Repeat("]", hook.MaxDepth+1)
	for _, tt := range []struct {
		name, raw       string
		session, client string
	}{
		{"too deep", `{"session_id":"s1","client":"opencode","tool_input":{"x":` + deep + `}}`, "s1", "opencode"},
		{"session after the deep input", `{"tool_input":` + deep + `,"session_id":"s1"}`, "s1", ""},
		{"cut short", `{"session_id":"s1","tool_input":{"content":"aaaa`, "s1", ""},
		{"invalid UTF-8", "{\"session_id\":\"s1\",\"x\":\"\xff\"}", "s1", ""},
		{"unusable id", `{"session_id":"../x"}`, "", ""},
		{"id not a string", `{"session_id":5}`, "", ""},
		{"not JSON", `garbage`, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := hook.Parse([]byte(tt.raw)); err == nil && tt.session != "" {
				t.Fatalf("Parse accepted %q", tt.raw)
			}
			session, client := hook.Peek([]byte(tt.raw))
			if session != tt.session || client != tt.client {
				t.Errorf("Peek = %q, %q; want %q, %q", session, client, tt.session, tt.client)
			}
		})
	}
}

// TestCheckToolCall: a decoded PreToolUse payload that cannot be judged as
// the client meant it is refused with the reason.
func TestCheckToolCall(t *testing.T) {
	for _, tt := range []struct{ raw, want string }{
		{`{"session_id":"s1","tool_name":"Bash","tool_input":{"command":"ls"}}`, ""},
		{`{"session_id":"s1","tool_name":"Bash","tool_input":{"command":"ls","command":"rm -rf ."}}`, `tool_input names "command" twice`},
		{`{"session_id":"s1","tool_name":"Read","tool_name":"Bash","tool_input":{}}`, `names "tool_name" twice`},
		{`{"session_id":"s1","tool_name":"Bash","tool_input":"ls"}`, "tool_input is a string, not an object"},
		{`{"session_id":"s1","tool_name":"Bash"}`, "tool_input is missing, not an object"},
		{`{"session_id":"s1","tool_input":{}}`, "names no tool"},
		{`{"session_id":"s1","tool_name":["Bash"],"tool_input":{}}`, "tool_name is an array, not a string"},
		{`{"session_id":"s1","agent_type":{"a":1},"tool_name":"Bash","tool_input":{}}`, "agent_type is an object, not a string"},
	} {
		p, err := hook.Parse([]byte(tt.raw))
		if err != nil {
			t.Fatalf("Parse(%s): %v", tt.raw, err)
		}
		err = hook.CheckToolCall(p)
		if got := fmt.Sprint(err); tt.want == "" && err != nil || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("CheckToolCall(%s) = %v, want %q", tt.raw, err, tt.want)
		}
	}
}
