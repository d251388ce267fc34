// Package hook decodes hook payloads (Claude Code's, and the same shape from
// the OpenCode plugin, marked "client": "opencode") and encodes hook answers.
package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

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
	PermissionMode string
	Prompt         string
	Source         string
	LastMessage    string
	TranscriptPath string
	StopHookActive bool
	Background     []Task
	// Client is the harness that sent the payload: ClaudeCode, or OpenCode
	// when the OpenCode plugin sent it with "client": "opencode". For
	// OpenCode, Parse has already mapped the tool's name onto Claude
	// Code's (OpenCodeTools) and the agent's name onto "whetstone:<name>".
	Client string
	// Paths are the files an edit-shaped call changes: file_path or
	// notebook_path in Claude Code, filePath in OpenCode, and every path
	// of an OpenCode apply_patch.
	Paths []string
}

// Clients.
const (
	ClaudeCode = "claude-code"
	OpenCode   = "opencode"
)

// OpenCodeTools maps OpenCode 1.18.33's built-in tools onto the Claude Code
// tools that do the same, so that one gate judges both (docs/opencode.md).
// A tool not listed keeps its OpenCode name and is judged as unknown.
var OpenCodeTools = map[string]string{
	"edit": "Edit", "write": "Write", "apply_patch": "ApplyPatch", "bash": "Bash", "task": "Agent",
	"read": "Read", "glob": "Glob", "grep": "Grep", "list": "LS", "webfetch": "WebFetch", "websearch": "WebSearch",
	"todowrite": "TodoWrite", "todoread": "TodoWrite", "skill": "Skill", "invalid": "Invalid", "question": "AskUserQuestion",
}

// OpenCodeAgentPrefix starts the name of each whetstone agent installed
// for OpenCode (whetstone-critic), where Claude Code says whetstone:critic.
const OpenCodeAgentPrefix = "whetstone-"

// ValidName reports whether id can name a file under .whetstone (a session
// id, or a run id, which starts with its session's first characters):
// 1–128 characters of [A-Za-z0-9._-], not starting with '.', '-' or '_'. A plain
// loop, not a regexp: compiling one costs every hook process half a millisecond.
func ValidName(id string) bool {
	if id == "" || len(id) > 128 || id[0] == '.' || id[0] == '-' || id[0] == '_' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

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

// MaxDepth bounds the nesting of a payload's arrays and objects. Claude
// Code's payloads nest a few levels; the validator below is recursive, so a
// hostile payload nested millions deep must be refused before it runs.
const MaxDepth = 256

// tooDeep reports whether raw nests arrays or objects deeper than MaxDepth,
// in one pass that skips strings.
func tooDeep(raw []byte) bool {
	depth, inString := 0, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > MaxDepth {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}

// Parse decodes a payload from bytes.
func Parse(raw []byte) (Payload, error) {
	if tooDeep(raw) {
		return Payload{}, fmt.Errorf("hook payload nests deeper than %d levels", MaxDepth)
	}
	if !gjson.ValidBytes(raw) {
		return Payload{}, errors.New("hook payload is not valid JSON")
	}
	root := gjson.ParseBytes(raw)
	if !root.IsObject() {
		return Payload{}, errors.New("hook payload is not a JSON object")
	}
	// One pass over the top-level keys: a SubagentStop payload carries the
	// reviewer's whole report, and a Get per field would rescan it each time.
	p := Payload{Raw: raw}
	root.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "hook_event_name":
			p.Event = v.String()
		case "session_id":
			p.SessionID = v.String()
		case "cwd":
			p.Cwd = v.String()
		case "agent_id":
			p.AgentID = v.String()
		case "agent_type":
			p.AgentType = v.String()
		case "tool_name":
			p.ToolName = v.String()
		case "tool_input":
			p.ToolInput = v
		case "permission_mode":
			p.PermissionMode = v.String()
		case "prompt":
			p.Prompt = v.String()
		case "source":
			p.Source = v.String()
		case "last_assistant_message":
			p.LastMessage = v.String()
		case "agent_transcript_path":
			p.TranscriptPath = v.String()
		case "stop_hook_active":
			p.StopHookActive = v.Bool()
		case "client":
			p.Client = v.String()
		case "background_tasks":
			for _, t := range v.Array() {
				p.Background = append(p.Background, Task{ID: t.Get("id").String(), Status: t.Get("status").String(), AgentType: t.Get("agent_type").String()})
			}
		}
		return true
	})
	if !ValidName(p.SessionID) {
		return p, fmt.Errorf("hook payload has no usable session_id (got %q)", p.SessionID)
	}
	switch p.Client {
	case "", ClaudeCode:
		p.Client = ClaudeCode
		for _, f := range []string{"file_path", "notebook_path"} {
			if v := p.ToolInput.Get(f).String(); v != "" {
				p.Paths = append(p.Paths, v)
			}
		}
	case OpenCode:
		p.fromOpenCode()
	default:
		return p, fmt.Errorf("hook payload names an unknown client %q (want %q or %q)", p.Client, ClaudeCode, OpenCode)
	}
	return p, nil
}

// fromOpenCode maps an OpenCode payload's tool and agent names onto Claude
// Code's, and collects the paths it edits. The tool's own input is kept:
// the gates read both spellings of the fields they need.
func (p *Payload) fromOpenCode() {
	tool := p.ToolName
	if name, ok := OpenCodeTools[tool]; ok {
		p.ToolName = name
	}
	if rest, ok := strings.CutPrefix(p.AgentType, OpenCodeAgentPrefix); ok {
		p.AgentType = "whetstone:" + rest
	}
	switch tool {
	case "apply_patch":
		p.Paths = PatchPaths(p.ToolInput.Get("patchText").String())
	case "edit", "write":
		if v := p.ToolInput.Get("filePath").String(); v != "" {
			p.Paths = append(p.Paths, v)
		}
	case "bash":
		// OpenCode resolves a relative workdir against its directory, the
		// payload's cwd; anything else ("~/…") stays as given, for the
		// gate to refuse.
		if v := p.ToolInput.Get("workdir").String(); v != "" {
			if !filepath.IsAbs(v) && !strings.HasPrefix(v, "~") && filepath.IsAbs(p.Cwd) {
				v = filepath.Join(p.Cwd, v)
			}
			p.Cwd = v
		}
	}
}

// SubagentType is the agent a dispatch (Agent, Task, OpenCode's task)
// starts, as "whetstone:<name>" for whetstone's agents in either client.
func (p Payload) SubagentType() string {
	t := p.ToolInput.Get("subagent_type").String()
	if rest, ok := strings.CutPrefix(t, OpenCodeAgentPrefix); ok && p.Client == OpenCode {
		return "whetstone:" + rest
	}
	return t
}

// PatchPaths lists every file an apply_patch envelope adds, updates,
// deletes or moves to, in order, without duplicates. It reads more headers
// than OpenCode does, never fewer: OpenCode 1.18.33 takes a line starting
// "*** Add File:" (no space needed after the colon) and trims the rest
// (read from its binary), so a header written "*** Add File:.git/x" names a
// file; a header indented, or a "*** Move to:" anywhere, is also taken
// here, which can only add a path to check.
func PatchPaths(patch string) []string {
	var paths []string
	for _, line := range strings.Split(patch, "\n") {
		line = strings.TrimLeft(line, " \t")
		for _, marker := range []string{"*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:"} {
			if path, ok := strings.CutPrefix(line, marker); ok {
				if path = strings.TrimSpace(path); path != "" && !slices.Contains(paths, path) {
					paths = append(paths, path)
				}
			}
		}
	}
	return paths
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
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string          `json:"permissionDecisionReason,omitempty"`
	AdditionalContext        string          `json:"additionalContext,omitempty"`
	UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
}

// Deny refuses a PreToolUse call; the model sees the reason as the tool error.
func Deny(reason string) *Response {
	return &Response{Specific: &Specific{HookEventName: "PreToolUse", PermissionDecision: "deny", PermissionDecisionReason: reason}}
}

// DenySkillShell refuses one of a skill's inline shell commands (Claude
// Code's PreSkillShellCommand, 2.1.332): the skill's text shows the reason
// in place of the command's output.
func DenySkillShell(reason string) *Response {
	return &Response{Specific: &Specific{HookEventName: "PreSkillShellCommand", PermissionDecision: "deny", PermissionDecisionReason: reason}}
}

// Rewrite lets a PreToolUse call run with a replaced input. decision is
// "" (the client's own permission check still applies) or a permission
// decision; docs/sandbox.md records which one whetstone uses and why.
func Rewrite(decision, reason string, input []byte) *Response {
	return &Response{Specific: &Specific{HookEventName: "PreToolUse", PermissionDecision: decision, PermissionDecisionReason: reason, UpdatedInput: input}}
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

// MapText replaces every text of the answer a model or a person reads with
// f of it.
func (r *Response) MapText(f func(string) string) {
	r.Reason, r.SystemMessage = f(r.Reason), f(r.SystemMessage)
	if r.Specific != nil {
		r.Specific.PermissionDecisionReason = f(r.Specific.PermissionDecisionReason)
		r.Specific.AdditionalContext = f(r.Specific.AdditionalContext)
	}
}

// Encode renders the answer as one line of JSON.
func (r *Response) Encode() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(r) // a Response holds only strings
	return b.Bytes()
}
