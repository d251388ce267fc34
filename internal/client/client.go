// Package client is the room for the coding agents whetstone runs in. Each
// client is one package below this one (claudecode, opencode) implementing
// Client; the registry below lists them. Nothing outside internal/client
// branches on a client: the hook command parses a payload with Parse and
// asks the payload's client (Of) everything that differs. Adding a client
// is one new package and one line in all.
package client

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/whetstone-dev/whetstone/internal/brief"
	"github.com/whetstone-dev/whetstone/internal/client/claudecode"
	"github.com/whetstone-dev/whetstone/internal/client/codex"
	"github.com/whetstone-dev/whetstone/internal/client/opencode"
	"github.com/whetstone-dev/whetstone/internal/hook"
	"github.com/whetstone-dev/whetstone/internal/install"
	"github.com/whetstone-dev/whetstone/internal/loop"
)

// Client is what differs between the coding agents whetstone runs in.
// Inside, whetstone speaks one language, Claude Code's names: tools (Edit,
// Write, ApplyPatch, Bash, Agent, Skill, …) and agents (whetstone:critic);
// a client translates on the way in (Normalise) and on the way out
// (AgentType, DispatchTool, Phrase).
type Client interface {
	// Name is the client's name: the value of a payload's "client" field
	// and the argument of `whetstone install`.
	Name() string
	// Title names the client for people ("OpenCode").
	Title() string

	// Normalise fills what whetstone reads of a decoded payload in its
	// own words: ToolName, AgentType and Dispatch, the Paths an edit
	// changes, a Cwd the call names (CwdFromCall).
	Normalise(p *hook.Payload)
	// ReviewSkill reports whether a Skill call (ToolName "Skill", after
	// Normalise) invokes whetstone's review, and with which arguments.
	ReviewSkill(p hook.Payload) (args string, ok bool)

	// DispatchTool, AgentType and Background spell a dispatch in the
	// instructions.
	loop.Client
	// DispatchFields are the only fields of the dispatch tool's input
	// that a dispatch of a whetstone agent may carry, each with its JSON
	// type ("string" or "boolean"): what its client needs to start the
	// agent with its job line. Any other field could carry context into
	// the new agent (CheckDispatch).
	DispatchFields() map[string]string

	// Phrase rewrites every text of an answer in the client's names.
	Phrase(r *hook.Response)
	// Pass is the answer to a tool call whetstone does not object to.
	Pass() *hook.Response
	// NextOnSubagentStop reports whether the next instruction rides on the
	// SubagentStop that completes a phase, rather than on a blocked Stop.
	NextOnSubagentStop() bool

	// RewritesWholeLine reports whether a read-only agent's whole command
	// line runs in the sandbox in permission mode mode, not only the part
	// that runs the project's code; SandboxDecision is the permission
	// decision sent with the rewritten line.
	RewritesWholeLine(mode string) bool
	SandboxDecision(mode string) string

	// Render is the client's generated files (agents, command, skill) by
	// slash path from the module root, from the registry's agents and the
	// review command, commands/review.md (cmd/genagents writes them).
	Render(reg brief.Registry, command []byte) (map[string][]byte, error)

	// SessionEnv is the environment variable in which the client names a
	// hook's session for the launcher (scripts/whetstone), "" for none.
	SessionEnv() string

	// Binary is the program `whetstone doctor` looks for, and the fix
	// it suggests when it is missing.
	Binary() (name, fix string)
}

// Installer is a client that `whetstone install <name>` installs into a
// config directory (a client that loads the plugin directory itself, as
// Claude Code does, is not one).
type Installer interface {
	Client
	// ConfigDir is the directory install writes into: project's, or with
	// global the user's; GlobalDir names the latter for help texts.
	ConfigDir(project string, global bool, getenv func(string) string) (string, error)
	GlobalDir() string
	// Install writes the client's files, the plugin running binary, and
	// returns the paths written; Uninstall removes exactly those
	// (internal/install's manifest rules).
	Install(dir, binary string) ([]string, error)
	Uninstall(dir string) (removed, kept []string, err error)
	// ReviewCommand is what the user types to start a review.
	ReviewCommand() string
	// Inspect reads and checks an install in dir (`whetstone doctor`).
	Inspect(dir string) (install.Status, error)
}

// all are the clients, the default (a payload with no "client") first.
var all = []Client{claudecode.Client{}, opencode.Client{}, codex.Client{}}

// All lists the clients, the default first.
func All() []Client { return all }

// Default is the client of a payload that names none.
func Default() Client { return all[0] }

// Lookup finds the client named name; "" is the default.
func Lookup(name string) (Client, error) {
	if name == "" {
		return Default(), nil
	}
	for _, c := range all {
		if c.Name() == name {
			return c, nil
		}
	}
	return nil, fmt.Errorf("unknown client %q (want %s)", name, Names())
}

// Names lists the clients' names, quoted, for messages.
func Names() string {
	var q []string
	for _, c := range all {
		q = append(q, fmt.Sprintf("%q", c.Name()))
	}
	return strings.Join(q, " or ")
}

// Of is the client that sent p (Parse has refused an unknown one; Of
// answers the default for it).
func Of(p hook.Payload) Client {
	if c, err := Lookup(p.Client); err == nil {
		return c
	}
	return Default()
}

// Parse decodes a payload and normalises it for its client. On an error
// the Payload holds raw, for hook.Peek.
func Parse(raw []byte) (hook.Payload, error) {
	return normalise(hook.Parse(raw))
}

// Read reads, decodes and normalises a payload (hook.Read).
func Read(r io.Reader) (hook.Payload, error) {
	return normalise(hook.Read(r))
}

// ReadAs reads a payload that client name sent, for a client whose
// payloads do not name it (Codex's hooks run `whetstone hook <event>
// --client=codex`): the payload is marked with a leading "client" key, so
// that everything reading it (Peek, Parse) sees the client; a payload that
// names a client itself then has two, which the tool gate refuses. An
// empty name is Read.
func ReadAs(r io.Reader, name string) (hook.Payload, error) {
	if name == "" {
		return Read(r)
	}
	if _, err := Lookup(name); err != nil {
		return hook.Payload{}, fmt.Errorf("--client: %w", err)
	}
	raw, err := io.ReadAll(io.LimitReader(r, hook.MaxPayload+1))
	if err != nil {
		return hook.Payload{Raw: raw}, fmt.Errorf("read hook payload: %w", err)
	}
	raw = mark(raw, name)
	if len(raw) > hook.MaxPayload+len(name)+12 {
		return hook.Payload{Raw: raw}, fmt.Errorf("hook payload larger than %d bytes", hook.MaxPayload)
	}
	return Parse(raw)
}

// mark puts "client": name first in the JSON object raw; anything else is
// left for Parse to refuse.
func mark(raw []byte, name string) []byte {
	i := 0
	for i < len(raw) && strings.ContainsRune(" \t\r\n", rune(raw[i])) {
		i++
	}
	if i == len(raw) || raw[i] != '{' {
		return raw
	}
	j := i + 1
	for j < len(raw) && strings.ContainsRune(" \t\r\n", rune(raw[j])) {
		j++
	}
	key := `"client":` + strconv.Quote(name)
	if j < len(raw) && raw[j] != '}' {
		key += ","
	}
	out := make([]byte, 0, len(raw)+len(key))
	out = append(append(append(out, raw[:i+1]...), key...), raw[i+1:]...)
	return out
}

func normalise(p hook.Payload, err error) (hook.Payload, error) {
	if err != nil {
		return p, err
	}
	c, err := Lookup(p.Client)
	if err != nil {
		return p, fmt.Errorf("hook payload names an %w", err)
	}
	p.Client = c.Name()
	c.Normalise(&p)
	return p, nil
}

// Installers lists the clients `whetstone install` installs.
func Installers() []Installer {
	var out []Installer
	for _, c := range all {
		if i, ok := c.(Installer); ok {
			out = append(out, i)
		}
	}
	return out
}

// CheckDispatch says why a dispatch call's input, as its client sent it,
// holds more than that client needs to start the agent with its job line:
// the fields that are not its DispatchFields, and a listed one of another
// JSON type (the JSON of an object could say anything). The input is read
// from the raw payload, since Normalise may have added to it (Codex's
// prompt). "" when nothing is extra.
func CheckDispatch(p hook.Payload) string {
	in := gjson.GetBytes(p.Raw, "tool_input")
	if !in.Exists() {
		in = p.ToolInput
	}
	if !in.IsObject() {
		return "its input is not an object"
	}
	allowed := Of(p).DispatchFields()
	var extra, typed []string
	in.ForEach(func(k, v gjson.Result) bool {
		want, ok := allowed[k.String()]
		switch {
		case !ok:
			extra = append(extra, strconv.Quote(k.String()))
		case want == "string" && v.Type != gjson.String, want == "boolean" && v.Type != gjson.True && v.Type != gjson.False:
			typed = append(typed, fmt.Sprintf("%q is not a %s", k.String(), want))
		}
		return true
	})
	if len(extra) > 0 {
		typed = append(typed, strings.Join(extra, ", ")+map[bool]string{true: " is", false: " are"}[len(extra) == 1]+" not among them")
	}
	return strings.Join(typed, " and ")
}

// DispatchFieldList is a client's DispatchFields in words, sorted: "a, b
// and c".
func DispatchFieldList(c Client) string {
	names := slices.Sorted(maps.Keys(c.DispatchFields()))
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
