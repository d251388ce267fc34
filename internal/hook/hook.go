// Package hook decodes hook payloads and encodes hook answers, in the one
// shape every client's hooks send (a client that sends another shape has
// its plugin translate it). What differs between clients — tool and agent
// names, the paths an edit changes — is normalised by the client's package
// (internal/client), which calls Parse.
package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

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
	// Client is the name of the client that sent the payload, its
	// "client" field ("" for the default client). The fields below are
	// filled by that client's Normalise (internal/client): ToolName and
	// AgentType in whetstone's own words (Edit, Bash, Agent, …;
	// whetstone:<name>), whatever the client calls them.
	Client string
	// Paths are the files an edit-shaped call changes.
	Paths []string
	// Dispatch is the agent a dispatch call (Agent, Task) starts, as
	// whetstone:<name> for whetstone's agents.
	Dispatch string
	// CwdFromCall reports that the call names its own working directory
	// (Cwd), which must then exist: it is not the session's.
	CwdFromCall bool
}

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
// on every tool call and must not pay for a full decode. On an error the
// Payload still holds what was read (Raw, at most MaxPayload+1 bytes), for
// Peek.
//
// Read and Parse decode only: they neither check that the payload's client
// is one whetstone knows nor fill what each client spells its own way (tool
// and agent names, the paths an edit changes: client.Client's Normalise). A
// hook reads its payload with client.Read or client.Parse, which call these
// and then do both.
func Read(r io.Reader) (Payload, error) {
	raw, err := io.ReadAll(io.LimitReader(r, MaxPayload+1))
	if err != nil {
		return Payload{Raw: raw}, fmt.Errorf("read hook payload: %w", err)
	}
	if len(raw) > MaxPayload {
		return Payload{Raw: raw}, fmt.Errorf("hook payload larger than %d bytes", MaxPayload)
	}
	return Parse(raw)
}

// Peek reads a payload's session_id and client without decoding or
// validating the rest: one gjson scan of the top-level keys, which skips
// nested values without recursion, so it answers for a payload nested too
// deep, too large (raw is then its first MaxPayload+1 bytes, and both
// clients send these keys before tool_input) or broken after these keys.
// A session id that is not a string or not ValidName is "".
func Peek(raw []byte) (session, client string) {
	v := gjson.GetManyBytes(raw, "session_id", "client")
	if v[0].Type == gjson.String && ValidName(v[0].Str) {
		session = v[0].Str
	}
	if v[1].Type == gjson.String {
		client = v[1].Str
	}
	return session, client
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

// Parse decodes a payload from bytes, as Read does (and no more: see Read).
// On an error the Payload holds raw, for Peek.
func Parse(raw []byte) (Payload, error) {
	p, err := parse(raw)
	p.Raw = raw
	return p, err
}

func parse(raw []byte) (Payload, error) {
	if tooDeep(raw) {
		return Payload{}, fmt.Errorf("hook payload nests deeper than %d levels", MaxDepth)
	}
	if !gjson.ValidBytes(raw) {
		return Payload{}, errors.New("hook payload is not valid JSON")
	}
	// gjson takes invalid UTF-8 in strings; the clients never send it, and
	// a command judged with its bytes replaced would not be the one run.
	if !utf8.Valid(raw) {
		return Payload{}, errors.New("hook payload is not valid UTF-8")
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
	p.Dispatch = p.ToolInput.Get("subagent_type").String()
	return p, nil
}

// toolFields are the fields of a tool call's payload whetstone reads, with
// the JSON type each must have when present.
var toolFields = map[string]gjson.Type{
	"hook_event_name": gjson.String, "session_id": gjson.String, "cwd": gjson.String,
	"agent_id": gjson.String, "agent_type": gjson.String, "tool_name": gjson.String,
	"permission_mode": gjson.String, "client": gjson.String, "tool_input": gjson.JSON,
}

// CheckToolCall reports why a PreToolUse payload that decoded cannot be
// judged as the client meant it: a field whetstone reads has another JSON
// type (an agent_type that is a number would make a reviewer nobody),
// appears twice at the top level or in tool_input (gjson reads the first
// copy, JavaScript the last), the tool has no name, or its input is not
// an object.
func CheckToolCall(p Payload) error {
	root := gjson.ParseBytes(p.Raw)
	if err := noDuplicates(root, "hook payload"); err != nil {
		return err
	}
	var err error
	root.ForEach(func(k, v gjson.Result) bool {
		if want, ok := toolFields[k.Str]; ok && v.Type != want {
			err = fmt.Errorf("hook payload's %s is %s, not %s", k.Str, typeName(v), map[gjson.Type]string{gjson.String: "a string", gjson.JSON: "an object"}[want])
		}
		return err == nil
	})
	switch {
	case err != nil:
		return err
	case p.ToolName == "":
		return errors.New("hook payload names no tool (tool_name)")
	case !p.ToolInput.IsObject():
		return fmt.Errorf("hook payload's tool_input is %s, not an object", typeName(p.ToolInput))
	}
	return noDuplicates(p.ToolInput, "hook payload's tool_input")
}

// noDuplicates refuses an object that names one key twice.
func noDuplicates(obj gjson.Result, what string) error {
	seen := map[string]bool{}
	var err error
	obj.ForEach(func(k, _ gjson.Result) bool {
		if seen[k.Str] {
			err = fmt.Errorf("%s names %q twice", what, k.Str)
		}
		seen[k.Str] = true
		return err == nil
	})
	return err
}

// typeName names a JSON value's type in words.
func typeName(v gjson.Result) string {
	switch {
	case !v.Exists():
		return "missing"
	case v.IsArray():
		return "an array"
	case v.IsObject():
		return "an object"
	case v.Type == gjson.String:
		return "a string"
	case v.Type == gjson.Number:
		return "a number"
	case v.Type == gjson.Null:
		return "null"
	}
	return "a boolean"
}

// PatchPaths lists every file an apply_patch envelope adds, updates,
// deletes or moves to, in order, without duplicates. It reads more headers
// than the clients that apply it do, never fewer: OpenCode 1.18.33 takes a line starting
// "*** Add File:" (no space needed after the colon) and trims the rest
// (read from its binary), so a header written "*** Add File:.git/x" names a
// file; a header indented, or a "*** Move to:" anywhere, is also taken
// here, which can only add a path to check.
func PatchPaths(patch string) []string {
	var paths []string
	for _, line := range strings.Split(patch, "\n") {
		// Any Unicode space, as Codex's parser trims a header (Rust's
		// trim): "\f*** Add File: .git/x" names a file there too.
		line = strings.TrimLeftFunc(line, unicode.IsSpace)
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
