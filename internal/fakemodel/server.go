package fakemodel

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Script decides the model's reply from the request alone. It is called
// concurrently and must keep no state between calls: derive the step from the
// request (AssistantTurns, Latest, ToolUses), so that answers stay right under
// concurrency and client retries.
type Script func(req *Request) Reply

// Reply is what the model answers: content blocks (Text, ToolUse) and an
// optional delay before the stream starts.
type Reply struct {
	Content []Block       `json:"content"`
	Delay   time.Duration `json:"delay,omitempty"`
}

// Text is a text content block.
func Text(s string) Block { return Block{Type: "text", Text: s} }

// ToolUse is a tool_use content block calling the named tool with input (any
// value that encodes to a JSON object). The server fills in the id.
func ToolUse(name string, input any) Block {
	raw, err := json.Marshal(input)
	if err != nil {
		panic(fmt.Sprintf("fakemodel: encode %s input: %v", name, err))
	}
	return Block{Type: "tool_use", Name: name, Input: raw}
}

// Say is a reply of one text block.
func Say(text string) Reply { return Reply{Content: []Block{Text(text)}} }

// Call is a reply of tool_use blocks, which Claude Code runs in parallel.
func Call(uses ...Block) Reply { return Reply{Content: uses} }

// Record is one logged exchange: the request path and body, the reply as
// sent (tool_use ids filled in) and when it started and ended.
type Record struct {
	Path  string          `json:"path"`
	Body  json.RawMessage `json:"body,omitempty"`
	Reply []Block         `json:"reply,omitempty"`
	Error string          `json:"error,omitempty"`
	Start time.Time       `json:"start"`
	End   time.Time       `json:"end"`
}

// Request decodes the record's body.
func (rec Record) Request() (*Request, error) {
	if rec.Path == "/v1/chat/completions" {
		return ParseChatRequest(rec.Body)
	}
	if rec.Path == "/v1/responses" {
		return ParseResponsesRequest(rec.Body)
	}
	return ParseRequest(rec.Body)
}

// Server is a running fake model on 127.0.0.1: the Anthropic Messages API
// (POST /v1/messages, Claude Code) and the OpenAI-compatible chat
// completions API (POST /v1/chat/completions, OpenCode), answered by the
// same script.
type Server struct {
	// URL is the base URL for ANTHROPIC_BASE_URL (no /v1); OpenCode's
	// baseURL is URL + "/v1".
	URL string

	script  Script
	logPath string
	srv     *http.Server
	done    chan struct{}

	mu  sync.Mutex
	log *os.File
}

// Start serves script on a free 127.0.0.1 port and logs every exchange as
// JSONL to logPath (created or truncated).
func Start(script Script, logPath string) (*Server, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create model log: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("listen: %w", err)
	}
	s := &Server{
		URL:     "http://" + ln.Addr().String(),
		script:  script,
		logPath: logPath,
		log:     f,
		done:    make(chan struct{}),
	}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln) // returns ErrServerClosed on Close
	}()
	return s, nil
}

// Close stops the server, cutting open streams, and closes the log.
func (s *Server) Close() error {
	err := s.srv.Close()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	if cerr := s.log.Close(); err == nil {
		err = cerr
	}
	return err
}

// LogPath is the JSONL log file.
func (s *Server) LogPath() string { return s.logPath }

// Requests reads back every exchange logged so far, in the order they ended.
func (s *Server) Requests() ([]Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ReadLog(s.logPath)
}

// ReadLog reads a JSONL log written by a Server.
func ReadLog(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open model log: %w", err)
	}
	defer f.Close()
	var recs []Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
	for sc.Scan() {
		var rec Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return recs, fmt.Errorf("model log line %d: %w", len(recs)+1, err)
		}
		recs = append(recs, rec)
	}
	return recs, sc.Err()
}

func (s *Server) record(rec Record) {
	line, err := json.Marshal(rec)
	if err != nil {
		line, _ = json.Marshal(Record{Path: rec.Path, Error: "encode record: " + err.Error(), Start: rec.Start, End: rec.End})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log.Write(append(line, '\n'))
}

// ServeHTTP routes on the path and ignores the query string.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := Record{Path: r.URL.Path, Start: time.Now()}
	body, err := io.ReadAll(r.Body)
	if json.Valid(body) {
		rec.Body = body
	} else if len(body) > 0 {
		rec.Body, _ = json.Marshal(string(body))
	}
	defer func() {
		rec.End = time.Now()
		s.record(rec)
	}()
	if err != nil {
		rec.Error = "read body: " + err.Error()
		http.Error(w, rec.Error, http.StatusBadRequest)
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		w.Header().Set("content-type", "application/json")
		io.WriteString(w, `{"input_tokens":10}`)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		s.messages(r.Context(), w, body, &rec)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions":
		s.chat(r.Context(), w, body, &rec)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/responses":
		s.responses(r.Context(), w, body, &rec)
	default:
		rec.Error = "not found"
		http.NotFound(w, r)
	}
}

func (s *Server) messages(ctx context.Context, w http.ResponseWriter, body []byte, rec *Record) {
	req, err := ParseRequest(body)
	if err != nil {
		rec.Error = err.Error()
		w.Header().Set("content-type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":%q}}`, err.Error())
		return
	}
	reply, ok := s.answer(ctx, req, body, rec, "toolu_")
	if !ok {
		return
	}
	if !req.Stream {
		w.Header().Set("content-type", "application/json")
		json.NewEncoder(w).Encode(message(req.Model, messageID(body), reply.Content, true))
		return
	}
	if err := WriteSSE(w, req.Model, messageID(body), reply.Content); err != nil {
		rec.Error = err.Error()
	}
}

// run calls the script; a panicking script ends the caller's turn with the
// panic as text, so a test fails on its assertions instead of hanging in
// client retries.
func (s *Server) run(req *Request, rec *Record) (reply Reply) {
	defer func() {
		if p := recover(); p != nil {
			rec.Error = fmt.Sprintf("script panic: %v", p)
			reply = Say("fakemodel: " + rec.Error)
		}
	}()
	reply = s.script(req)
	if len(reply.Content) == 0 {
		reply.Content = []Block{Text("(no reply scripted)")}
	}
	return reply
}

// answer runs the script for either API, records the reply and waits out
// its delay; false when the client went away meanwhile. Every tool_use
// block gets an id (prefix, then a digest of the request body and its
// index): unique within a session (each request of a conversation has a
// different body), and the same when the client retries.
func (s *Server) answer(ctx context.Context, req *Request, body []byte, rec *Record, prefix string) (Reply, bool) {
	reply := s.run(req, rec)
	for i := range reply.Content {
		if reply.Content[i].Type == "tool_use" && reply.Content[i].ID == "" {
			reply.Content[i].ID = prefix + digest(body, i)
		}
	}
	rec.Reply = reply.Content
	if reply.Delay > 0 {
		select {
		case <-time.After(reply.Delay):
		case <-ctx.Done():
			rec.Error = "client went away during delay"
			return reply, false
		}
	}
	return reply, true
}

func messageID(body []byte) string { return "msg_" + digest(body, -1) }

func digest(body []byte, i int) string {
	h := sha256.New()
	h.Write(body)
	fmt.Fprintf(h, "#%d", i)
	return hex.EncodeToString(h.Sum(nil))[:24]
}

func stopReason(blocks []Block) string {
	for _, b := range blocks {
		if b.Type == "tool_use" {
			return "tool_use"
		}
	}
	return "end_turn"
}

type usage struct {
	InputTokens  int `json:"input_tokens,omitempty"`
	OutputTokens int `json:"output_tokens"`
}

// message is the Messages API message object; final selects the finished
// form (content and stop_reason) over the empty message_start form.
func message(model, id string, blocks []Block, final bool) map[string]any {
	m := map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model,
		"content": []Block{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": usage{InputTokens: 10, OutputTokens: 1},
	}
	if final {
		content := make([]map[string]any, len(blocks))
		for i, b := range blocks {
			content[i] = startBlock(b)
			if b.Type == "text" {
				content[i]["text"] = b.Text
			} else {
				content[i]["input"] = b.Input
			}
		}
		m["content"] = content
		m["stop_reason"] = stopReason(blocks)
		m["usage"] = usage{InputTokens: 10, OutputTokens: 5}
	}
	return m
}

func startBlock(b Block) map[string]any {
	if b.Type == "tool_use" {
		return map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}
	}
	return map[string]any{"type": "text", "text": ""}
}

type event struct {
	name string
	data map[string]any
}

// WriteSSE streams blocks as one assistant message in the Messages API's
// server-sent events, flushing after every event. A tool_use input is sent in
// two input_json_delta pieces, as real streams split it.
func WriteSSE(w http.ResponseWriter, model, id string, blocks []Block) error {
	flusher, _ := w.(http.Flusher)
	send := func(event string, data any) error {
		raw, err := json.Marshal(data)
		if err != nil {
			return fmt.Errorf("encode %s: %w", event, err)
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, raw); err != nil {
			return fmt.Errorf("write %s: %w", event, err)
		}
		if flusher != nil {
			flusher.Flush()
		}
		return nil
	}
	events := []event{{"message_start", map[string]any{"message": message(model, id, nil, false)}}}
	add := func(name string, data map[string]any) { events = append(events, event{name, data}) }
	for i, b := range blocks {
		add("content_block_start", map[string]any{"index": i, "content_block": startBlock(b)})
		switch b.Type {
		case "text":
			add("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "text_delta", "text": b.Text}})
		case "tool_use":
			input := string(b.Input)
			if input == "" {
				input = "{}"
			}
			half := len(input) / 2
			for half > 0 && !utf8.RuneStart(input[half]) {
				half--
			}
			for _, piece := range []string{input[:half], input[half:]} {
				add("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": piece}})
			}
		default:
			return fmt.Errorf("unsupported reply block type %q", b.Type)
		}
		add("content_block_stop", map[string]any{"index": i})
	}
	add("message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": stopReason(blocks), "stop_sequence": nil},
		"usage": usage{OutputTokens: 5},
	})
	add("message_stop", map[string]any{})
	w.Header().Set("content-type", "text/event-stream")
	w.Header().Set("cache-control", "no-cache")
	w.WriteHeader(http.StatusOK)
	for _, e := range events {
		e.data["type"] = e.name
		if err := send(e.name, e.data); err != nil {
			return err
		}
	}
	return nil
}

// ParseSSE decodes a stream written by WriteSSE back into content blocks and
// the stop reason; tests use it to check the framing.
func ParseSSE(r io.Reader) (blocks []Block, stop string, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 64<<20)
	var event string
	partial := map[int]*strings.Builder{}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			event = ""
			continue
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
			continue
		case !strings.HasPrefix(line, "data: "):
			return nil, "", fmt.Errorf("unexpected SSE line %q", line)
		}
		var ev struct {
			Type         string `json:"type"`
			Index        int    `json:"index"`
			ContentBlock Block  `json:"content_block"`
			Delta        struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				PartialJSON string `json:"partial_json"`
				StopReason  string `json:"stop_reason"`
			} `json:"delta"`
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev); err != nil {
			return nil, "", fmt.Errorf("decode %s: %w", event, err)
		}
		if ev.Type != event {
			return nil, "", fmt.Errorf("event %q carries data of type %q", event, ev.Type)
		}
		switch ev.Type {
		case "content_block_start":
			if ev.Index != len(blocks) {
				return nil, "", fmt.Errorf("block index %d out of order", ev.Index)
			}
			b := ev.ContentBlock
			b.Input = nil
			blocks = append(blocks, b)
			partial[ev.Index] = &strings.Builder{}
		case "content_block_delta":
			if ev.Index >= len(blocks) {
				return nil, "", fmt.Errorf("delta for unknown block %d", ev.Index)
			}
			blocks[ev.Index].Text += ev.Delta.Text
			partial[ev.Index].WriteString(ev.Delta.PartialJSON)
		case "content_block_stop":
			if blocks[ev.Index].Type == "tool_use" {
				raw := json.RawMessage(partial[ev.Index].String())
				if !json.Valid(raw) {
					return nil, "", fmt.Errorf("block %d input is not JSON: %s", ev.Index, raw)
				}
				blocks[ev.Index].Input = raw
			}
		case "message_delta":
			stop = ev.Delta.StopReason
		case "message_stop":
			return blocks, stop, nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, "", err
	}
	return nil, "", errors.New("stream ended without message_stop")
}
