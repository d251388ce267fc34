package opencode

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/whetstone-dev/whetstone/internal/brief"
)

// OpenCode's files are generated from the same sources as Claude Code's:
// the agents from internal/brief/src, the command from the Claude Code
// command (commands/review.md), so the two clients never read different
// rules.

// Prefix starts the name of every whetstone agent and command in
// OpenCode: its agent names are file names, with no plugin namespace.
const Prefix = "whetstone-"

// Command is the review command's name in OpenCode (/whetstone-review).
const Command = Prefix + "review"

// Render is what cmd/genagents writes for OpenCode, by slash path from
// the module root: opencode/agent/whetstone-<name>.md for every agent,
// the review command opencode/command/whetstone-review.md and the review
// skill opencode/skill/whetstone-review/SKILL.md, both from command, the
// Claude Code command (commands/review.md). The plugin,
// opencode/whetstone.ts, is written by hand.
func (Client) Render(reg brief.Registry, command []byte) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, a := range reg.All() {
		name := a.Name
		b, err := RenderAgent(reg, name)
		if err != nil {
			return nil, err
		}
		out["opencode/agent/"+Prefix+name+".md"] = b
	}
	b, err := RenderCommand(command)
	if err != nil {
		return nil, err
	}
	out["opencode/command/"+Command+".md"] = b
	if b, err = RenderSkill(command); err != nil {
		return nil, err
	}
	out["opencode/skill/"+Command+"/SKILL.md"] = b
	return out, nil
}

// RenderAgent is the OpenCode agent file of reg's agent name,
// .opencode/agent/whetstone-<name>.md: a subagent whose permissions match
// its Claude Code tools. Claude Code's model aliases name no OpenCode
// model, so the agent uses the session's.
func RenderAgent(reg brief.Registry, name string) ([]byte, error) {
	a, err := reg.Load(name)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "---\ndescription: %s\nmode: subagent\npermission:\n", strings.ReplaceAll(a.Description, "/whetstone:review", "/"+Command))
	for _, p := range Permissions(a.Tools) {
		fmt.Fprintf(&b, "  %s: %s\n", p[0], p[1])
	}
	b.WriteString("---\n")
	b.WriteString(openCodeBody.Replace(a.Body))
	return b.Bytes(), nil
}

// openCodeBody names OpenCode's tools where an agent's brief names Claude
// Code's. The first line, "# whetstone:<name>", stays: it is the brief's
// marker in both clients.
var openCodeBody = strings.NewReplacer(
	"with the Edit and Write tools", "with the edit and write tools (apply_patch, for models that have it)",
)

// Permissions are the permission rules that give an agent what its
// Claude Code tools give it: reading is always allowed; edit (OpenCode's
// edit, write and apply_patch) only with Edit or Write; bash only with
// Bash, allowed without asking because whetstone's gate judges every
// command; no web access and no subagents.
func Permissions(tools []string) [][2]string {
	allow := func(ok bool) string {
		if ok {
			return "allow"
		}
		return "deny"
	}
	return [][2]string{
		{"edit", allow(slices.Contains(tools, "Edit") || slices.Contains(tools, "Write"))},
		{"bash", allow(slices.Contains(tools, "Bash"))},
		{"webfetch", "deny"},
		{"task", "deny"},
	}
}

// openCodeWords are the command's Claude Code phrases and what OpenCode
// says instead. Each must occur in the Claude Code command, so a reworded
// source fails the generator instead of leaving a Claude Code phrase behind.
var openCodeWords = [][2]string{
	{"Hook text addressed to you: `UserPromptSubmit hook additional context: …` when the user typed the command, `PreToolUse:Skill hook additional context: …` when you invoked it as a skill; later `Stop hook feedback: …` (newer Claude Code: `Stop hook blocking error from command: …`) when you end a turn, or `SessionStart hook additional context: …` after a compaction or resume.",
		"whetstone's text addressed to you: after this prompt when the user typed the command, at the end of the skill's result when you invoked it as a skill; later at the end of the result of the task call that completed a phase, in a message when you end a turn, or in the system prompt after a compaction."},
	{"<the Agent tool input, one JSON object>", "<the task tool input, one JSON object>"},
	{" Dispatch lines carry `\"run_in_background\": false` by default (`true` when the project configures background agents): use the JSON unchanged either way.", ""},
	{"If the agents run in the background, end your turn with one short line (for example \"whetstone: 5 reviewers running, iteration 1\"). You are notified as each agent finishes; answer such a notification with one short line too, unless it comes with new whetstone instructions. When the phase is complete the hooks give you the next instruction. Do not restart an agent that is still running,",
		"The task calls return when the agents finish; the result that completes the phase ends with whetstone's next instruction. Do not restart an agent,"},
	{"an Agent call", "a task call"},
	{"Agent call", "task call"},
	{"/whetstone:review", "/" + Command},
	{"Bash command", "bash command"},
	{"(MCP tools, PowerShell, worktrees)", "(MCP and custom tools)"},
}

// RenderCommand turns the Claude Code command file into OpenCode's
// .opencode/command/whetstone-review.md.
func RenderCommand(claude []byte) ([]byte, error) {
	text := string(claude)
	front, ok := strings.CutPrefix(text, "---\n")
	front, body, ok2 := strings.Cut(front, "\n---\n")
	if !ok || !ok2 {
		return nil, fmt.Errorf("opencode: the Claude Code command has no frontmatter")
	}
	var desc string
	for _, line := range strings.Split(front, "\n") {
		if v, ok := strings.CutPrefix(line, "description: "); ok {
			desc = v
		}
	}
	if desc == "" {
		return nil, fmt.Errorf("opencode: the Claude Code command has no description")
	}
	for _, w := range openCodeWords {
		if !strings.Contains(body, w[0]) {
			return nil, fmt.Errorf("opencode: the Claude Code command no longer says %q; update openCodeWords in internal/client/opencode/render.go", w[0])
		}
		body = strings.ReplaceAll(body, w[0], w[1])
	}
	return []byte("---\ndescription: " + desc + "\n---\n" + body), nil
}

// SkillDescription is the review skill's description: what
// OpenCode offers the model, so it names what a user asks for.
const SkillDescription = "Start (or resume) a whetstone review of the user's current code change, a convergent review and fix loop in which specialist reviewer subagents check the change in parallel, one fixer fixes what they find, and they review again until it is clean. Use it when the user asks to review their change, diff, branch or work with whetstone, or for a thorough multi-agent review that also fixes what it finds. It reviews the default scope with the project's settings (for given paths, refs or flags the user types /whetstone-review instead); only the main session can start it."

// openCodeSkillWords turn OpenCode's review command into the review skill:
// the skill takes no arguments and its instructions arrive with its
// content. Each must occur in the command.
var openCodeSkillWords = [][2]string{
	{"Arguments: `$ARGUMENTS` (whetstone's hooks have already read them: the scope, as paths or globs and `--since REF`, `--staged`, `--uncommitted` or `--last-commit`, defaulting to the branch against its merge-base with the default branch plus uncommitted work; `--force` past the size gates; `--depth`, `--max-iterations`, `--reviewers`, `--restart`. You do not parse them).",
		"Loading this skill started whetstone's review of the current change, or resumed this session's run: the default scope (the branch against its merge-base with the default branch plus uncommitted work; on the default branch, the uncommitted work, else the last commit) and the project's `whetstone.json` settings. A skill takes no arguments: another scope (paths, `--since REF`, `--staged`, `--uncommitted`, `--last-commit`) or other settings (`--depth`, `--max-iterations`, `--reviewers`, `--force`) need the command, `/whetstone-review --restart <scope and flags>`; tell the user so when they asked for one."},
	{"whetstone's text addressed to you: after this prompt when the user typed the command, at the end of the skill's result when you invoked it as a skill;",
		"whetstone's text addressed to you: at the end of this skill's result;"},
	{"(whetstone could not start, or this text reached you some other way)", "(whetstone could not start, or this skill was loaded outside the main session)"},
}

// RenderSkill is OpenCode's review skill,
// skill/whetstone-review/SKILL.md, made from the Claude Code command in
// OpenCode's words: loading it through OpenCode's skill tool starts the
// run, and whetstone's first instructions follow its content.
func RenderSkill(claude []byte) ([]byte, error) {
	command, err := RenderCommand(claude)
	if err != nil {
		return nil, err
	}
	_, body, _ := strings.Cut(strings.TrimPrefix(string(command), "---\n"), "\n---\n")
	for _, w := range openCodeSkillWords {
		if !strings.Contains(body, w[0]) {
			return nil, fmt.Errorf("opencode: OpenCode's command no longer says %q; update openCodeSkillWords in internal/client/opencode/render.go", w[0])
		}
		body = strings.ReplaceAll(body, w[0], w[1])
	}
	return []byte("---\nname: " + Command + "\ndescription: " + SkillDescription + "\n---\n" + body), nil
}
