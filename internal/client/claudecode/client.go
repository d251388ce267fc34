// Package claudecode is whetstone's Claude Code client (docs/claude-code.md
// in the shared docs, docs/design.md): Claude Code loads the plugin
// directory itself (.claude-plugin/, hooks/hooks.json, agents/, commands/,
// skills/), and its names are the ones whetstone uses inside (Edit, Bash,
// Agent; whetstone:critic), so its payloads and answers pass as they are.
package claudecode

import (
	"strings"

	"github.com/whetstone-dev/whetstone/internal/brief"
	"github.com/whetstone-dev/whetstone/internal/hook"
	"github.com/whetstone-dev/whetstone/internal/sandbox"
)

// Client is Claude Code.
type Client struct{}

// Name is the payload's "client" value; Claude Code's own payloads carry
// none, and a payload without one is Claude Code's.
func (Client) Name() string { return "claude-code" }

// Title names Claude Code for people.
func (Client) Title() string { return "Claude Code" }

// Normalise collects the file an edit-shaped call changes (file_path, or a
// NotebookEdit's notebook_path); every name is whetstone's already.
func (Client) Normalise(p *hook.Payload) {
	for _, f := range []string{"file_path", "notebook_path"} {
		if v := p.ToolInput.Get(f).String(); v != "" {
			p.Paths = append(p.Paths, v)
		}
	}
}

// DispatchTool is the Agent tool.
func (Client) DispatchTool() string { return "Agent" }

// AgentType is whetstone:<name>, in the plugin's namespace.
func (Client) AgentType(name string) string { return "whetstone:" + name }

// Background is true: the Agent tool takes run_in_background.
func (Client) Background() bool { return true }

// DispatchFields are the Agent tool's fields a dispatch of a whetstone
// agent may carry: what its WHETSTONE-DISPATCH line holds (the agent, a
// label, the job line, run_in_background as the run's settings say).
// The rest of the tool's input (docs: claude-code.md §6) starts the agent
// with more than its job line or elsewhere: resume and a fork carry
// another agent's context, model and effort override the agent's own,
// isolation moves it out of the project whetstone gates.
var DispatchFields = map[string]string{"subagent_type": "string", "description": "string", "prompt": "string", "run_in_background": "boolean"}

// DispatchFields is the package's DispatchFields.
func (Client) DispatchFields() map[string]string { return DispatchFields }

// command is the review command, which is also a skill.
const command = "whetstone:review"

// ReviewCommand is what the user types to start a review.
func (Client) ReviewCommand() string { return "/" + command }

// ReviewSkill reports whether a Skill call is whetstone's review, Skill
// {"skill": "whetstone:review", "args": "…"} (the model may write the
// command's slash too), and its arguments.
func (Client) ReviewSkill(p hook.Payload) (string, bool) {
	name := strings.TrimPrefix(strings.TrimSpace(p.ToolInput.Get("skill").String()), "/")
	return p.ToolInput.Get("args").String(), name == command
}

// Phrase leaves an answer as it is: it is in Claude Code's words.
func (Client) Phrase(*hook.Response) {}

// Pass is no answer: an empty stdout lets a tool call run.
func (Client) Pass() *hook.Response { return nil }

// NextOnSubagentStop is false: the Stop hook blocks the orchestrator's
// turn with the next step.
func (Client) NextOnSubagentStop() bool { return false }

// RewritesWholeLine reports whether a read-only agent's whole command line
// runs in the sandbox, not only the part that runs code: in
// bypassPermissions, where the rewritten line is checked against the
// user's deny and ask rules only (docs/sandbox.md).
func (Client) RewritesWholeLine(permissionMode string) bool {
	return sandbox.RewriteInMode(permissionMode)
}

// SandboxDecision is the permission decision sent with a sandboxed line
// (sandbox.Decision).
func (Client) SandboxDecision(permissionMode string) string {
	return sandbox.Decision(permissionMode)
}

// Render is what cmd/genagents writes for Claude Code, by slash path from
// the module root: agents/<name>.md for every agent of reg. The review command
// (commands/review.md) and skill are written by hand; command is unused.
func (Client) Render(reg brief.Registry, command []byte) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, a := range reg.All() {
		name := a.Name
		b, err := reg.Render(name)
		if err != nil {
			return nil, err
		}
		out["agents/"+name+".md"] = b
	}
	return out, nil
}

// SessionEnv names the hook's session in its environment, as the payload's
// session_id (docs: claude-code.md); the launcher answers a session
// without a run by it.
func (Client) SessionEnv() string { return "CLAUDE_CODE_SESSION_ID" }

// Binary is the program doctor looks for, and how to install it.
func (Client) Binary() (name, fix string) {
	return "claude", "install Claude Code: npm install -g @anthropic-ai/claude-code"
}
