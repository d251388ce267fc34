// Package opencode is whetstone's OpenCode client (OpenCode 1.18.33,
// docs/opencode.md): its plugin (opencode/whetstone.ts) sends the hook
// payloads marked "client": "opencode"; this package maps OpenCode's tool
// and agent names onto whetstone's, renders and installs OpenCode's files,
// and words the answers in OpenCode's names.
package opencode

import (
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/whetstone-dev/whetstone/internal/hook"
)

// Client is OpenCode.
type Client struct{}

// Name is the payload's "client" value and `whetstone install`'s argument.
func (Client) Name() string { return "opencode" }

// Title names OpenCode for people.
func (Client) Title() string { return "OpenCode" }

// Tools maps OpenCode 1.18.33's built-in tools onto whetstone's names for
// the tools that do the same (Claude Code's), so that one gate judges
// both (docs/opencode.md). A tool not listed keeps its OpenCode name and
// is judged as unknown.
var Tools = map[string]string{
	"edit": "Edit", "write": "Write", "apply_patch": "ApplyPatch", "bash": "Bash", "task": "Agent",
	"read": "Read", "glob": "Glob", "grep": "Grep", "list": "LS", "webfetch": "WebFetch", "websearch": "WebSearch",
	"todowrite": "TodoWrite", "todoread": "TodoWrite", "skill": "Skill", "invalid": "Invalid", "question": "AskUserQuestion",
}

// Normalise maps a payload's tool and agent names onto whetstone's
// (whetstone-critic → whetstone:critic), and collects the paths an edit
// changes and the directory a bash call runs in. The tool's own input is
// kept: the gates read both spellings of the fields they need.
func (Client) Normalise(p *hook.Payload) {
	tool := p.ToolName
	if name, ok := Tools[tool]; ok {
		p.ToolName = name
	}
	p.AgentType = canonical(p.AgentType)
	p.Dispatch = canonical(p.Dispatch)
	switch tool {
	case "apply_patch":
		p.Paths = hook.PatchPaths(p.ToolInput.Get("patchText").String())
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
			p.Cwd, p.CwdFromCall = v, true
		}
	}
}

// canonical spells an OpenCode agent name (whetstone-critic) as whetstone
// does (whetstone:critic); any other name stays.
func canonical(agent string) string {
	if rest, ok := strings.CutPrefix(agent, Prefix); ok {
		return "whetstone:" + rest
	}
	return agent
}

// DispatchTool is OpenCode's task tool.
func (Client) DispatchTool() string { return "task" }

// AgentType is the name of a whetstone agent's file in .opencode/agent/.
func (Client) AgentType(name string) string { return Prefix + name }

// Background is false: the task tool has no run_in_background, its
// subagents always run in the foreground.
func (Client) Background() bool { return false }

// DispatchFields are the task tool's fields a dispatch of a whetstone
// agent may carry: those of its WHETSTONE-DISPATCH line. The tool's others
// (docs: opencode.md §3) carry context into the child: task_id resumes an
// earlier child session with its history, command is a slash command's.
var DispatchFields = map[string]string{"subagent_type": "string", "description": "string", "prompt": "string"}

// DispatchFields is the package's DispatchFields.
func (Client) DispatchFields() map[string]string { return DispatchFields }

// ReviewSkill reports whether a Skill call loads whetstone's review skill,
// skill {"name": "whetstone-review"}; it takes no arguments.
func (Client) ReviewSkill(p hook.Payload) (string, bool) {
	return "", strings.TrimSpace(p.ToolInput.Get("name").String()) == Command
}

// ReviewCommand is what the user types to start a review.
func (Client) ReviewCommand() string { return "/" + Command }

// words turns whetstone's names into OpenCode's: whetstone's agents and
// command (whetstone:critic → whetstone-critic, /whetstone:review →
// /whetstone-review) and the tools. Built on first use: compiling a
// regexp costs every hook process time.
var words = sync.OnceValue(func() func(string) string {
	names := regexp.MustCompile(`\bwhetstone:([a-z][a-z-]*[a-z])`)
	tools := strings.NewReplacer(
		"the Edit tool", "the edit tool",
		"Use Read, Grep, Glob and read-only Bash commands.", "Use read, grep, glob and read-only bash commands.",
		"write-shaped Bash", "write-shaped bash",
	)
	return func(s string) string {
		if s == "" {
			return s
		}
		return tools.Replace(names.ReplaceAllString(s, Prefix+"$1"))
	}
})

// Phrase words every text of an answer in OpenCode's names.
func (Client) Phrase(r *hook.Response) { r.MapText(words()) }

// Pass is the answer to a tool call whetstone does not object to: the
// plugin is always answered with a JSON object, {} for no objection, so
// that an empty answer is a failure it can deny (docs/opencode.md).
func (Client) Pass() *hook.Response { return &hook.Response{} }

// NextOnSubagentStop is true: `opencode run` ends at the first idle of the
// root session, so no Stop analogue would carry the next step; it rides
// on the result of the task call that completed the phase
// (docs/opencode.md), and a finished run's summary with it.
func (Client) NextOnSubagentStop() bool { return true }

// RewritesWholeLine is true: OpenCode has no permission mode and its
// plugin applies the rewrite, so a read-only agent's whole command line
// runs in the sandbox (docs/sandbox.md).
func (Client) RewritesWholeLine(string) bool { return true }

// SandboxDecision is none: the plugin applies the rewrite.
func (Client) SandboxDecision(string) string { return "" }

// SessionEnv is empty: the plugin runs the binary directly, no launcher.
func (Client) SessionEnv() string { return "" }

// Binary is the program doctor looks for, and how to install it.
func (Client) Binary() (name, fix string) {
	return "opencode", "install OpenCode: npm install -g opencode-ai"
}
