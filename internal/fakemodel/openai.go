package fakemodel

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// OpenAI is the API of a Request decoded from an OpenAI-compatible chat
// completions body (OpenCode); Anthropic's Messages API is the default.
const OpenAI = "openai"

// chatRequest is a POST /v1/chat/completions body, as OpenCode 1.18.33
// sends it (docs: fake-model.md §3.2).
type chatRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// ParseChatRequest decodes a chat completions body into a Request, so that
// one script serves both APIs: system messages become System blocks, an
// assistant's tool_calls become tool_use blocks, and consecutive tool
// messages one user message of tool_result blocks.
func ParseChatRequest(body []byte) (*Request, error) {
	var c chatRequest
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, fmt.Errorf("decode request: %w", err)
	}
	r := &Request{API: OpenAI, Model: c.Model, Stream: c.Stream}
	for _, t := range c.Tools {
		r.Tools = append(r.Tools, Tool{Name: t.Function.Name})
	}
	for _, m := range c.Messages {
		var content Content
		if len(bytes.TrimSpace(m.Content)) > 0 && string(bytes.TrimSpace(m.Content)) != "null" {
			if err := json.Unmarshal(m.Content, &content); err != nil {
				return nil, fmt.Errorf("decode %s message: %w", m.Role, err)
			}
		}
		switch m.Role {
		case "system":
			r.System = append(r.System, content...)
		case "assistant":
			var blocks Content
			for _, b := range content {
				if b.Text != "" {
					blocks = append(blocks, b)
				}
			}
			for _, tc := range m.ToolCalls {
				args := json.RawMessage(tc.Function.Arguments)
				if !json.Valid(args) {
					args = json.RawMessage("{}")
				}
				blocks = append(blocks, Block{Type: "tool_use", ID: tc.ID, Name: tc.Function.Name, Input: args})
			}
			r.Messages = append(r.Messages, Message{Role: "assistant", Content: blocks})
		case "tool":
			res := Block{Type: "tool_result", ToolUseID: m.ToolCallID, Content: content}
			if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == "user" && len(r.Messages[n-1].Content) > 0 && r.Messages[n-1].Content[0].Type == "tool_result" {
				r.Messages[n-1].Content = append(r.Messages[n-1].Content, res)
			} else {
				r.Messages = append(r.Messages, Message{Role: "user", Content: Content{res}})
			}
		default:
			r.Messages = append(r.Messages, Message{Role: m.Role, Content: content})
		}
	}
	return r, nil
}

// IsTitle reports whether OpenCode is asking for a session title: a request
// with no tools whose system prompt starts "You are a title generator".
func (r *Request) IsTitle() bool {
	return r.API == OpenAI && len(r.Tools) == 0 && strings.Contains(r.SystemText(), "You are a title generator")
}

func (s *Server) chat(ctx context.Context, w http.ResponseWriter, body []byte, rec *Record) {
	req, err := ParseChatRequest(body)
	if err != nil {
		rec.Error = err.Error()
		w.Header().Set("content-type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"type":"invalid_request_error","message":%q}}`, err.Error())
		return
	}
	reply, ok := s.answer(ctx, req, body, rec, "call_")
	if !ok {
		return
	}
	if !req.Stream {
		w.Header().Set("content-type", "application/json")
		json.NewEncoder(w).Encode(completion(req.Model, reply.Content))
		return
	}
	if err := WriteChatSSE(w, req.Model, reply.Content); err != nil {
		rec.Error = err.Error()
	}
}

// chatParts splits blocks into the message's text and its tool_calls.
func chatParts(blocks []Block) (string, []map[string]any) {
	var text []string
	var calls []map[string]any
	for _, b := range blocks {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_use":
			args := string(b.Input)
			if args == "" {
				args = "{}"
			}
			calls = append(calls, map[string]any{"index": len(calls), "id": b.ID, "type": "function",
				"function": map[string]any{"name": b.Name, "arguments": args}})
		}
	}
	return strings.Join(text, "\n"), calls
}

func finishReason(calls []map[string]any) string {
	if len(calls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

var chatUsage = map[string]int{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}

// completion is the non-streamed answer.
func completion(model string, blocks []Block) map[string]any {
	text, calls := chatParts(blocks)
	msg := map[string]any{"role": "assistant", "content": text}
	if len(calls) > 0 {
		msg["tool_calls"] = calls
	}
	return map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": time.Now().Unix(), "model": model,
		"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": finishReason(calls)}}, "usage": chatUsage}
}

// WriteChatSSE streams blocks as one assistant message in chat completion
// chunks: the text, then each tool call's name and, in a second chunk, its
// arguments; the finish reason; the usage; [DONE].
func WriteChatSSE(w http.ResponseWriter, model string, blocks []Block) error {
	flusher, _ := w.(http.Flusher)
	created := time.Now().Unix()
	send := func(choices []map[string]any, extra map[string]any) error {
		chunk := map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": created, "model": model, "choices": choices}
		for k, v := range extra {
			chunk[k] = v
		}
		raw, err := json.Marshal(chunk)
		if err != nil {
			return fmt.Errorf("encode chunk: %w", err)
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", raw); err != nil {
			return fmt.Errorf("write chunk: %w", err)
		}
		if flusher != nil {
			flusher.Flush()
		}
		return nil
	}
	delta := func(d map[string]any) []map[string]any {
		return []map[string]any{{"index": 0, "delta": d, "finish_reason": nil}}
	}
	w.Header().Set("content-type", "text/event-stream")
	w.Header().Set("cache-control", "no-cache")
	w.WriteHeader(http.StatusOK)
	text, calls := chatParts(blocks)
	if err := send(delta(map[string]any{"role": "assistant", "content": text}), nil); err != nil {
		return err
	}
	for _, c := range calls {
		fn := c["function"].(map[string]any)
		head := map[string]any{"index": c["index"], "id": c["id"], "type": "function", "function": map[string]any{"name": fn["name"], "arguments": ""}}
		if err := send(delta(map[string]any{"tool_calls": []map[string]any{head}}), nil); err != nil {
			return err
		}
		args := map[string]any{"index": c["index"], "function": map[string]any{"arguments": fn["arguments"]}}
		if err := send(delta(map[string]any{"tool_calls": []map[string]any{args}}), nil); err != nil {
			return err
		}
	}
	if err := send([]map[string]any{{"index": 0, "delta": map[string]any{}, "finish_reason": finishReason(calls)}}, nil); err != nil {
		return err
	}
	if err := send([]map[string]any{}, map[string]any{"usage": chatUsage}); err != nil {
		return err
	}
	if _, err := fmt.Fprint(w, "data: [DONE]\n\n"); err != nil {
		return fmt.Errorf("write [DONE]: %w", err)
	}
	if flusher != nil {
		flusher.Flush()
	}
	return nil
}
