// Package fakemodel is a scripted stand-in for the Anthropic Messages API.
// End-to-end tests point the real Claude Code at it (ANTHROPIC_BASE_URL) so
// that every hook, subagent and tool call happens for real while the model's
// side is a Go function of the request.
package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Request is one decoded POST /v1/messages body. Its methods answer the
// questions a script asks: who is calling, at which step, and what it was
// shown last.
type Request struct {
	API      string    `json:"-"` // "" (Anthropic) or OpenAI
	Model    string    `json:"model"`
	Stream   bool      `json:"stream"`
	System   []Block   `json:"system"`
	Messages []Message `json:"messages"`
	Tools    []Tool    `json:"tools"`
}

// Tool is one entry of the request's tools list; only the name matters here.
type Tool struct {
	Name string `json:"name"`
}

// Message is one conversation message. Roles are user, assistant and system
// (Claude Code puts role=system messages inside messages).
type Message struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// Content is a message's content: Claude Code sends either a string or a list
// of blocks, for every role. A string decodes to one text block.
type Content []Block

// UnmarshalJSON accepts both the string and the block-list form.
func (c *Content) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*c = Content{{Type: "text", Text: s}}
		return nil
	}
	var blocks []Block
	if err := json.Unmarshal(data, &blocks); err != nil {
		return fmt.Errorf("decode content: %w", err)
	}
	*c = blocks
	return nil
}

// Block is a content block, in requests (text, tool_use, tool_result) and in
// replies (text, tool_use).
type Block struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_result
	ToolUseID string  `json:"tool_use_id,omitempty"`
	Content   Content `json:"content,omitempty"`
	IsError   bool    `json:"is_error,omitempty"`
}

// AllText is the block's text: a text block's text, a tool_result's content
// texts; empty for other blocks.
func (b Block) AllText() string {
	switch b.Type {
	case "text":
		return b.Text
	case "tool_result":
		return b.Content.Text()
	}
	return ""
}

// Text joins the text of every block (tool_result contents included) with
// newlines.
func (c Content) Text() string {
	var parts []string
	for _, b := range c {
		if s := b.AllText(); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n")
}

// ParseRequest decodes a /v1/messages body.
func ParseRequest(body []byte) (*Request, error) {
	var r Request
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("decode request: %w", err)
	}
	return &r, nil
}

// IsSubagent reports whether a subagent is calling: Claude Code appends
// cc_is_subagent=true to the billing header in system[0].
// In OpenCode, a child session is one offered tools but not task (children
// are denied it).
func (r *Request) IsSubagent() bool {
	if r.API == Responses {
		// Codex offers its children no multi_agent_v1 tools (docs/codex.md §6).
		return len(r.Tools) > 0 && !r.HasTool("spawn_agent")
	}
	if r.API == OpenAI {
		return len(r.Tools) > 0 && !r.HasTool("task")
	}
	return len(r.System) > 0 && strings.Contains(r.System[0].Text, "cc_is_subagent=true")
}

// Agent is the calling agent's "whetstone:<name>", read from the first line
// "# whetstone:<name>" of its body (system[2] in Claude Code, the start of
// the system prompt in OpenCode); "" on the main thread and for agents that
// are not whetstone's.
func (r *Request) Agent() string {
	if r.API == Responses {
		return r.DeveloperAgent()
	}
	body := 2
	if r.API == OpenAI {
		body = 0
	}
	if !r.IsSubagent() || len(r.System) <= body {
		return ""
	}
	first, _, _ := strings.Cut(strings.TrimSpace(r.System[body].Text), "\n")
	name, ok := strings.CutPrefix(strings.TrimSpace(first), "# ")
	if !ok || !strings.HasPrefix(name, "whetstone:") {
		return ""
	}
	return strings.TrimSpace(name)
}

// AssistantTurns is the number of assistant messages so far: the step the
// caller is at.
func (r *Request) AssistantTurns() int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// FirstUserText is all text of the first user message: the prompt (for a
// subagent, the Agent call's prompt).
func (r *Request) FirstUserText() string {
	for _, m := range r.Messages {
		if m.Role == "user" {
			return m.Content.Text()
		}
	}
	return ""
}

// LastUserText is all text of the last user message, tool_result contents
// included.
func (r *Request) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content.Text()
		}
	}
	return ""
}

// Latest is all text of the user and system messages after the last
// assistant message (all messages if there is none): what the caller was
// shown since it last spoke — tool results, hook feedback, notifications.
func (r *Request) Latest() string {
	start := 0
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "assistant" {
			start = i + 1
			break
		}
	}
	var parts []string
	for _, m := range r.Messages[start:] {
		if s := m.Content.Text(); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n")
}

// IsStopFeedback reports whether text is how Claude Code hands the model a
// Stop or SubagentStop hook's block: "Stop hook feedback:\n<reason>" in a
// user message (2.1.329), or "Stop hook blocking error from command:
// \"<command>\": <reason>" (SubagentStop likewise) in a system message after
// a reminder (2.1.332).
func IsStopFeedback(text string) bool {
	return strings.HasPrefix(text, "Stop hook feedback:") ||
		strings.HasPrefix(text, "Stop hook blocking error from command:") ||
		strings.HasPrefix(text, "SubagentStop hook blocking error from command:")
}

// EndsWithStopFeedback reports whether the caller was last shown a Stop or
// SubagentStop hook's block (after its last assistant message).
func (r *Request) EndsWithStopFeedback() bool {
	for i := len(r.Messages) - 1; i >= 0 && r.Messages[i].Role != "assistant"; i-- {
		for _, b := range r.Messages[i].Content {
			if b.Type == "text" && IsStopFeedback(b.Text) {
				return true
			}
		}
	}
	return false
}

// StopFeedback returns the texts of the messages that carry a Stop or
// SubagentStop hook's block (IsStopFeedback), in order. In OpenCode, where
// the plugin prompts the session with the bare reason, every user message
// after the first one.
func (r *Request) StopFeedback() []string {
	var out []string
	if r.API == Responses {
		// Codex continues a blocked thread with a user message
		// <hook_prompt hook_run_id="…">reason</hook_prompt>.
		for _, m := range r.Messages {
			if m.Role == "user" && strings.Contains(m.Content.Text(), "<hook_prompt") {
				out = append(out, m.Content.Text())
			}
		}
		return out
	}
	if r.API == OpenAI {
		for i, m := range r.Messages {
			if m.Role == "user" && i > 0 && !(len(m.Content) > 0 && m.Content[0].Type == "tool_result") {
				out = append(out, m.Content.Text())
			}
		}
		return out
	}
	for _, m := range r.Messages {
		if m.Role != "user" && m.Role != "system" {
			continue
		}
		for _, b := range m.Content {
			if b.Type == "text" && IsStopFeedback(b.Text) {
				out = append(out, b.Text)
			}
		}
	}
	return out
}

// AllText is the text of every message, in order, newline-joined.
func (r *Request) AllText() string {
	var parts []string
	for _, m := range r.Messages {
		if s := m.Content.Text(); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n")
}

// SystemMessages is the text of the role=system messages, in order,
// newline-joined: where Claude Code puts hook context for the model (a
// subagent's SubagentStart context, prepended to its environment message;
// PreToolUse context).
func (r *Request) SystemMessages() string {
	var parts []string
	for _, m := range r.Messages {
		if m.Role == "system" {
			if s := m.Content.Text(); s != "" {
				parts = append(parts, s)
			}
		}
	}
	return strings.Join(parts, "\n")
}

// SystemText is the text of the system blocks, newline-joined.
func (r *Request) SystemText() string {
	return Content(r.System).Text()
}

// ProjectDir is the absolute project directory the environment message names
// (" - Primary working directory: <dir>" in Claude Code, "  Working
// directory: <dir>" in OpenCode's system prompt).
func (r *Request) ProjectDir() string {
	marker := " - Primary working directory: "
	if r.API == OpenAI {
		marker = "  Working directory: "
	}
	if r.API == Responses {
		// Codex's <environment_context> message: <cwd>/path</cwd>.
		if _, rest, ok := strings.Cut(r.AllText(), "<cwd>"); ok {
			dir, _, _ := strings.Cut(rest, "</cwd>")
			return strings.TrimSpace(dir)
		}
		return ""
	}
	for _, text := range []string{r.AllText(), r.SystemText()} {
		if _, rest, ok := strings.Cut(text, marker); ok {
			line, _, _ := strings.Cut(rest, "\n")
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// ToolUses lists the tool_use blocks of every assistant message, in order.
func (r *Request) ToolUses() []Block {
	var uses []Block
	for _, m := range r.Messages {
		if m.Role != "assistant" {
			continue
		}
		for _, b := range m.Content {
			if b.Type == "tool_use" {
				uses = append(uses, b)
			}
		}
	}
	return uses
}

// ToolResult is the tool_result answering the tool_use with the given id, and
// whether there is one.
func (r *Request) ToolResult(toolUseID string) (Block, bool) {
	for _, m := range r.Messages {
		if m.Role != "user" {
			continue
		}
		for _, b := range m.Content {
			if b.Type == "tool_result" && b.ToolUseID == toolUseID {
				return b, true
			}
		}
	}
	return Block{}, false
}

// HasTool reports whether the caller was offered the named tool.
func (r *Request) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}
