// Package codex is whetstone's Codex CLI client (Codex CLI 0.169.0,
// docs/codex.md). Codex sends Claude Code's hook payloads with its own tool
// names (the shell is Bash, apply_patch, spawn_agent,
// multi_agent_v1wait_agent) and no "client" field: the hooks that
// `whetstone install codex` writes run `whetstone hook <event>
// --client=codex`, which marks the payload (client.ReadAs). This package
// maps Codex's names onto whetstone's, renders and installs Codex's files
// (agents/*.toml, the review skill, hooks.json) and words the answers in
// Codex's names.
package codex

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/whetstone-dev/whetstone/internal/hook"
)

// Client is the Codex CLI.
type Client struct{}

// Name is `whetstone install`'s argument and the --client of the hooks.
func (Client) Name() string { return "codex" }

// Title names Codex for people.
func (Client) Title() string { return "Codex" }

// Prefix starts the name of every whetstone agent and skill in Codex: its
// custom agents are files with no plugin namespace (agents/whetstone-critic.toml).
const Prefix = "whetstone-"

// Skill is the review skill's name: the user types $whetstone-review.
const Skill = Prefix + "review"

// Tools maps Codex 0.169.0's tool names, as its PreToolUse payloads spell
// them, onto whetstone's names for the tools that do the same
// (docs/codex.md §4). A tool not listed keeps its name and is denied during
// a run (request_user_input, send_input, resume_agent, MCP tools).
// write_stdin never reaches a hook (docs/codex.md §7).
var Tools = map[string]string{
	"Bash": "Bash", "apply_patch": "ApplyPatch",
	"spawn_agent": "Agent", "multi_agent_v1spawn_agent": "Agent",
	"wait_agent": "TaskOutput", "multi_agent_v1wait_agent": "TaskOutput",
	"close_agent": "TaskStop", "multi_agent_v1close_agent": "TaskStop",
	"view_image": "Read", "web_search": "WebSearch",
	"get_goal": "TodoWrite", "create_goal": "TodoWrite", "update_goal": "TodoWrite",
}

// Normalise maps a payload's tool and agent names onto whetstone's
// (whetstone-critic → whetstone:critic), turns a typed $whetstone-review
// into /whetstone:review, collects the files an apply_patch changes, and
// gives a spawn_agent call the prompt field the dispatch gate reads (its
// message).
func (Client) Normalise(p *hook.Payload) {
	tool := p.ToolName
	if name, ok := Tools[tool]; ok {
		p.ToolName = name
	}
	p.AgentType = canonical(p.AgentType)
	p.Prompt = command(p.Prompt)
	switch p.ToolName {
	case "ApplyPatch":
		// Codex applies a relative path from the session's directory,
		// which need not be the project's root: judge that path.
		p.Paths = hook.PatchPaths(p.ToolInput.Get("command").String())
		for i, path := range p.Paths {
			if !filepath.IsAbs(path) && filepath.IsAbs(p.Cwd) {
				p.Paths[i] = strings.TrimSuffix(p.Cwd, "/") + "/" + path
			}
		}
	case "Agent":
		p.Dispatch = canonical(p.ToolInput.Get("agent_type").String())
		p.ToolInput = withPrompt(p.ToolInput)
	}
}

// canonical spells a Codex agent name (whetstone-critic) as whetstone does
// (whetstone:critic); any other name stays.
func canonical(agent string) string {
	if rest, ok := strings.CutPrefix(agent, Prefix); ok {
		return "whetstone:" + rest
	}
	return agent
}

// command turns a prompt that invokes the review skill ($whetstone-review
// args, or $whetstone:review from a plugin) into whetstone's command,
// /whetstone:review args; any other prompt stays.
func command(prompt string) string {
	p := strings.TrimLeft(prompt, " \t\r\n")
	for _, name := range []string{"$" + Skill, "$whetstone:review"} {
		rest, ok := strings.CutPrefix(p, name)
		if ok && (rest == "" || strings.ContainsRune(" \t\r\n", rune(rest[0]))) {
			return "/whetstone:review" + rest
		}
	}
	return prompt
}

// withPrompt is a spawn_agent input with "prompt" set to its "message",
// the field the dispatch gate compares with the prompt whetstone issued.
// An input that is not an object, or names a prompt itself, stays: the
// gate then refuses it as it does any dispatch with another prompt.
func withPrompt(in gjson.Result) gjson.Result {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(in.Raw), &m) != nil || m["prompt"] != nil {
		return in
	}
	msg, ok := m["message"]
	if !ok {
		msg = json.RawMessage(`""`)
	}
	m["prompt"] = msg
	raw, err := json.Marshal(m)
	if err != nil {
		return in
	}
	return gjson.ParseBytes(raw)
}

// DispatchTool is Codex's spawn_agent.
func (Client) DispatchTool() string { return "spawn_agent" }

// AgentType is the name of a whetstone agent's file in agents/.
func (Client) AgentType(name string) string { return Prefix + name }

// Background is false: spawn_agent has no run_in_background; its agents
// always run beside the main thread, which waits for them with wait_agent.
func (Client) Background() bool { return false }

// DispatchFields are the spawn_agent fields a dispatch of a whetstone
// agent may carry: those of its WHETSTONE-DISPATCH line, the agent and the
// job line as its message. The others carry context into the child:
// fork_context and fork_turns the parent's conversation, items content
// besides the message; any other is refused as unknown. A "prompt" of the
// model's own is one too: the gate would read it for the message
// (withPrompt), Codex does not.
var DispatchFields = map[string]string{"agent_type": "string", "message": "string"}

// DispatchFields is the package's DispatchFields.
func (Client) DispatchFields() map[string]string { return DispatchFields }

// ReviewSkill is never true: Codex hands a skill to the model as text (the
// user's $whetstone-review, seen by UserPromptSubmit), not as a tool call.
func (Client) ReviewSkill(hook.Payload) (string, bool) { return "", false }

// ReviewCommand is what the user types to start a review.
func (Client) ReviewCommand() string { return "$" + Skill }

// Pass is no answer: an empty stdout lets a call run.
func (Client) Pass() *hook.Response { return nil }

// NextOnSubagentStop is false: a blocked Stop continues Codex's main thread
// with the reason as a user message (docs/codex.md §5), so the next step
// rides on Stop as in Claude Code. Codex has no limit on Stop or
// SubagentStop blocks: whetstone's own counters bound them (the run's
// consecutive Stop blocks, loop.Idle; an agent's rejected reports,
// loop.MaxRejections).
func (Client) NextOnSubagentStop() bool { return false }

// RewritesWholeLine is true: a read-only agent's whole command line runs
// in whetstone's sandbox, Codex applying the rewrite (allow with
// updatedInput, docs/codex.md §5). bwrap cannot run inside Codex's own
// sandbox (§8), so whetstone in Codex needs Codex's sandbox off; under it
// a reviewer's shell fails, which refuses, never leaks (docs/codex.md).
func (Client) RewritesWholeLine(string) bool { return true }

// SandboxDecision is allow: Codex applies updatedInput only with it.
func (Client) SandboxDecision(string) string { return "allow" }

// SessionEnv is empty: the hooks run the binary directly, no launcher.
func (Client) SessionEnv() string { return "" }

// Binary is the program doctor looks for, and how to install it.
func (Client) Binary() (name, fix string) {
	return "codex", "install the Codex CLI: npm install -g @openai/codex"
}
