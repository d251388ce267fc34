// Package hook decodes Claude Code hook payloads and encodes hook answers.
package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"

	"github.com/tidwall/gjson"
)

// MaxPayload caps a hook's stdin. Claude Code's payloads are a few KiB; a
// reviewer's final message can be large, and is capped again on extraction.
const MaxPayload = 16 << 20

// Task is one entry of background_tasks.
type Task struct {
	ID        string
	Status    string
	AgentType string
}

// Payload is the part of a hook's stdin whetstone uses.
type Payload struct {
	Raw            []byte
	Event          string
	SessionID      string
	Cwd            string
	AgentID        string
	AgentType      string
	ToolName       string
	ToolInput      gjson.Result
	Prompt         string
	Source         string
	LastMessage    string
	TranscriptPath string
	StopHookActive bool
	Background     []Task
}

var sessionPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// Read decodes a payload. It reads only what it needs with gjson: hooks run
// on every tool call and must not pay for a full decode.
func Read(r io.Reader) (Payload, error) {
	raw, err := io.ReadAll(io.LimitReader(r, MaxPayload+1))
	if err != nil {
		return Payload{}, fmt.Errorf("read hook payload: %w", err)
	}
	if len(raw) > MaxPayload {
		return Payload{}, fmt.Errorf("hook payload larger than %d bytes", MaxPayload)
	}
	return Parse(raw)
}

// Parse decodes a payload from bytes.
func Parse(raw []byte) (Payload, error) {
	if !gjson.ValidBytes(raw) {
		return Payload{}, errors.New("hook payload is not valid JSON")
	}
	root := gjson.ParseBytes(raw)
	if !root.IsObject() {
		return Payload{}, errors.New("hook payload is not a JSON object")
	}
	get := func(k string) string { return root.Get(k).String() }
	p := Payload{
		Raw:            raw,
		Event:          get("hook_event_name"),
		SessionID:      get("session_id"),
		Cwd:            get("cwd"),
		AgentID:        get("agent_id"),
		AgentType:      get("agent_type"),
		ToolName:       get("tool_name"),
		ToolInput:      root.Get("tool_input"),
		Prompt:         get("prompt"),
		Source:         get("source"),
		LastMessage:    get("last_assistant_message"),
		TranscriptPath: get("agent_transcript_path"),
		StopHookActive: root.Get("stop_hook_active").Bool(),
	}
	for _, t := range root.Get("background_tasks").Array() {
		p.Background = append(p.Background, Task{ID: t.Get("id").String(), Status: t.Get("status").String(), AgentType: t.Get("agent_type").String()})
	}
	if !sessionPattern.MatchString(p.SessionID) {
		return p, fmt.Errorf("hook payload has no usable session_id (got %q)", p.SessionID)
	}
	return p, nil
}

// Response is a hook's JSON answer on stdout.
type Response struct {
	Decision      string    `json:"decision,omitempty"`
	Reason        string    `json:"reason,omitempty"`
	SystemMessage string    `json:"systemMessage,omitempty"`
	Specific      *Specific `json:"hookSpecificOutput,omitempty"`
}

// Specific is the hookSpecificOutput object.
type Specific struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
	AdditionalContext        string `json:"additionalContext,omitempty"`
}

// Deny refuses a PreToolUse call; the model sees the reason as the tool error.
func Deny(reason string) *Response {
	return &Response{Specific: &Specific{HookEventName: "PreToolUse", PermissionDecision: "deny", PermissionDecisionReason: reason}}
}

// Block makes the main agent (Stop) or a subagent (SubagentStop) continue
// with the reason as its next user message, or refuses a prompt
// (UserPromptSubmit), showing the reason to the user.
func Block(reason string) *Response { return &Response{Decision: "block", Reason: reason} }

// Context adds text to the model's context for an event.
func Context(event, text string) *Response {
	return &Response{Specific: &Specific{HookEventName: event, AdditionalContext: text}}
}

// Message lets the action proceed and shows the user a message.
func Message(msg string) *Response { return &Response{SystemMessage: msg} }

// Encode renders the answer as one line of JSON.
func (r *Response) Encode() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(r) // a Response holds only strings
	return b.Bytes()
}
