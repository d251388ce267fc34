package fakemodel

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Responses is the API of a Request decoded from an OpenAI Responses API
// body: what the Codex CLI sends to a custom model provider with wire_api =
// "responses" (docs/codex.md).
const Responses = "responses"

// responsesRequest is a POST /v1/responses body. Codex CLI 0.169.0 sends no
// instructions: its system prompt is the first developer message of input.
type responsesRequest struct {
	Model        string          `json:"model"`
	Stream       bool            `json:"stream"`
	Instructions string          `json:"instructions"`
	Input        []responsesItem `json:"input"`
	Tools        []responsesTool `json:"tools"`
}

// responsesTool is one offered tool; a namespace (Codex's multi_agent_v1)
// holds its tools, which the model calls by name with the namespace beside.
type responsesTool struct {
	Type  string          `json:"type"`
	Name  string          `json:"name"`
	Tools []responsesTool `json:"tools"`
}

// namespaces maps each namespaced tool's name to its namespace.
func (q *responsesRequest) namespaces() map[string]string {
	ns := map[string]string{}
	for _, t := range q.Tools {
		if t.Type == "namespace" {
			for _, in := range t.Tools {
				ns[in.Name] = t.Name
			}
		}
	}
	return ns
}

// responsesItem is one input item: a message, a function or custom (free
// form) tool call, or its output.
type responsesItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	// function_call, custom_tool_call and their outputs
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	Output    json.RawMessage `json:"output"`
}

// ParseResponsesRequest decodes a Responses API body into a Request, so that
// one script serves the three APIs: instructions become a System block,
// messages keep their role (developer messages become system ones), a
// function_call becomes a tool_use block of its arguments and a
// custom_tool_call one whose input is the JSON string of its free-form
// input; consecutive outputs become one user message of tool_result blocks.
// A tool call directly after an assistant message joins that message: one
// response's text and calls are one turn.
func ParseResponsesRequest(body []byte) (*Request, error) {
	var q responsesRequest
	if err := json.Unmarshal(body, &q); err != nil {
		return nil, fmt.Errorf("decode request: %w", err)
	}
	r := &Request{API: Responses, Model: q.Model, Stream: q.Stream}
	if q.Instructions != "" {
		r.System = Content{Text(q.Instructions)}
	}
	for _, t := range q.Tools {
		if t.Type == "namespace" {
			for _, in := range t.Tools {
				r.Tools = append(r.Tools, Tool{Name: in.Name})
			}
			continue
		}
		r.Tools = append(r.Tools, Tool{Name: t.Name})
	}
	last := func(role string) *Message {
		if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == role {
			return &r.Messages[n-1]
		}
		return nil
	}
	for i, it := range q.Input {
		switch it.Type {
		case "message", "":
			content, err := responsesContent(it.Content)
			if err != nil {
				return nil, fmt.Errorf("input item %d: %w", i, err)
			}
			role := it.Role
			if role == "developer" {
				role = "system"
			}
			r.Messages = append(r.Messages, Message{Role: role, Content: content})
		case "function_call", "custom_tool_call":
			input := json.RawMessage(it.Arguments)
			if it.Type == "custom_tool_call" {
				input, _ = json.Marshal(it.Input)
			} else if !json.Valid(input) {
				input = json.RawMessage("{}")
			}
			use := Block{Type: "tool_use", ID: it.CallID, Name: it.Name, Input: input}
			if m := last("assistant"); m != nil {
				m.Content = append(m.Content, use)
			} else {
				r.Messages = append(r.Messages, Message{Role: "assistant", Content: Content{use}})
			}
		case "function_call_output", "custom_tool_call_output":
			out, err := responsesContent(it.Output)
			if err != nil {
				return nil, fmt.Errorf("input item %d: %w", i, err)
			}
			res := Block{Type: "tool_result", ToolUseID: it.CallID, Content: out}
			if m := last("user"); m != nil && len(m.Content) > 0 && m.Content[0].Type == "tool_result" {
				m.Content = append(m.Content, res)
			} else {
				r.Messages = append(r.Messages, Message{Role: "user", Content: Content{res}})
			}
		}
		// reasoning and other items carry nothing a script asks about.
	}
	return r, nil
}

// responsesContent decodes a message's content or a tool call's output: a
// string or a list of input_text/output_text parts (other parts, such as
// images, are dropped).
func responsesContent(raw json.RawMessage) (Content, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return Content{Text(s)}, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, fmt.Errorf("decode content: %w", err)
	}
	var c Content
	for _, p := range parts {
		if p.Text != "" {
			c = append(c, Text(p.Text))
		}
	}
	return c, nil
}

// DeveloperAgent is the calling Codex subagent's "whetstone:<name>": the first
// line "# whetstone:<name>" of a developer message, which is how Codex hands
// a custom agent its developer_instructions; "" for other callers.
func (r *Request) DeveloperAgent() string {
	if r.API != Responses {
		return ""
	}
	for _, m := range r.Messages {
		if m.Role != "system" {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimSpace(m.Content.Text()), "\n")
		if name, ok := strings.CutPrefix(strings.TrimSpace(first), "# "); ok && strings.HasPrefix(name, "whetstone:") {
			return strings.TrimSpace(name)
		}
	}
	return ""
}

func (s *Server) responses(ctx context.Context, w http.ResponseWriter, body []byte, rec *Record) {
	req, err := ParseResponsesRequest(body)
	if err != nil {
		rec.Error = err.Error()
		w.Header().Set("content-type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"type":"invalid_request_error","message":%q}}`, err.Error())
		return
	}
	var q responsesRequest
	_ = json.Unmarshal(body, &q) // decoded above
	reply, ok := s.answer(ctx, req, body, rec, "call_")
	if !ok {
		return
	}
	if err := WriteResponsesSSE(w, "resp_"+digest(body, -1), req.Model, q.namespaces(), reply.Content); err != nil {
		rec.Error = err.Error()
	}
}

// responsesItems turns reply blocks into output items: text blocks into one
// assistant message (first), each tool_use into a function_call of its input
// or, when the input is a JSON string, a custom_tool_call of that string
// (Codex's free-form apply_patch tool). A call of a tool that the request
// offered inside a namespace names that namespace (namespaces: tool name to
// namespace).
func responsesItems(namespaces map[string]string, blocks []Block) ([]map[string]any, error) {
	var items []map[string]any
	var text []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_use":
			var free string
			if json.Unmarshal(b.Input, &free) == nil {
				items = append(items, map[string]any{"type": "custom_tool_call", "id": "ctc_" + b.ID, "status": "completed",
					"call_id": b.ID, "name": b.Name, "input": free})
				continue
			}
			args := string(b.Input)
			if args == "" {
				args = "{}"
			}
			call := map[string]any{"type": "function_call", "id": "fc_" + b.ID, "status": "completed",
				"call_id": b.ID, "name": b.Name, "arguments": args}
			if ns := namespaces[b.Name]; ns != "" {
				call["namespace"] = ns
			}
			items = append(items, call)
		default:
			return nil, fmt.Errorf("unsupported reply block type %q", b.Type)
		}
	}
	if len(text) > 0 {
		msg := map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
			"content": []map[string]any{{"type": "output_text", "text": strings.Join(text, "\n"), "annotations": []any{}}}}
		items = append([]map[string]any{msg}, items...)
	}
	return items, nil
}

// WriteResponsesSSE streams blocks as one Responses API response:
// response.created, then per output item output_item.added, the text as an
// output_text.delta for a message, output_item.done with the whole item;
// response.completed with usage. Every event is "event: <type>" plus its
// data, flushed.
func WriteResponsesSSE(w http.ResponseWriter, id, model string, namespaces map[string]string, blocks []Block) error {
	items, err := responsesItems(namespaces, blocks)
	if err != nil {
		return err
	}
	flusher, _ := w.(http.Flusher)
	seq := 0
	send := func(typ string, data map[string]any) error {
		data["type"] = typ
		data["sequence_number"] = seq
		seq++
		raw, err := json.Marshal(data)
		if err != nil {
			return fmt.Errorf("encode %s: %w", typ, err)
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, raw); err != nil {
			return fmt.Errorf("write %s: %w", typ, err)
		}
		if flusher != nil {
			flusher.Flush()
		}
		return nil
	}
	resp := func(status string, output []map[string]any) map[string]any {
		r := map[string]any{"id": id, "object": "response", "model": model, "status": status, "output": output}
		if status == "completed" {
			r["usage"] = map[string]any{"input_tokens": 10, "input_tokens_details": map[string]int{"cached_tokens": 0},
				"output_tokens": 5, "output_tokens_details": map[string]int{"reasoning_tokens": 0}, "total_tokens": 15}
		}
		return r
	}
	w.Header().Set("content-type", "text/event-stream")
	w.Header().Set("cache-control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if err := send("response.created", map[string]any{"response": resp("in_progress", []map[string]any{})}); err != nil {
		return err
	}
	for i, it := range items {
		if err := send("response.output_item.added", map[string]any{"output_index": i, "item": it}); err != nil {
			return err
		}
		if it["type"] == "message" {
			text := it["content"].([]map[string]any)[0]["text"]
			if err := send("response.output_text.delta", map[string]any{"output_index": i, "item_id": it["id"], "content_index": 0, "delta": text}); err != nil {
				return err
			}
		}
		if err := send("response.output_item.done", map[string]any{"output_index": i, "item": it}); err != nil {
			return err
		}
	}
	return send("response.completed", map[string]any{"response": resp("completed", items)})
}

// ParseResponsesSSE decodes a stream written by WriteResponsesSSE into its
// output items (as JSON objects), checking that every event's name matches
// its data's type and that the stream ends in response.completed.
func ParseResponsesSSE(r io.Reader) ([]map[string]any, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 64<<20)
	var event string
	var items []map[string]any
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
			continue
		case !strings.HasPrefix(line, "data: "):
			return nil, fmt.Errorf("unexpected SSE line %q", line)
		}
		var ev struct {
			Type string         `json:"type"`
			Item map[string]any `json:"item"`
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev); err != nil {
			return nil, fmt.Errorf("decode %s: %w", event, err)
		}
		if ev.Type != event {
			return nil, fmt.Errorf("event %q carries data of type %q", event, ev.Type)
		}
		switch ev.Type {
		case "response.output_item.done":
			items = append(items, ev.Item)
		case "response.completed":
			return items, nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, errors.New("stream ended without response.completed")
}
