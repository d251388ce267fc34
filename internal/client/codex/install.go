package codex

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/whetstone-dev/whetstone"
	"github.com/whetstone-dev/whetstone/internal/install"
	"mvdan.cc/sh/v3/syntax"
)

// layout is where whetstone's files live in Codex's config directory: the
// agents and the skill folder, and hooks.json, which Codex reads whole
// (one per config layer), so whetstone owns it: a user's own hooks.json
// makes the install refuse, naming it.
var layout = install.Layout{Owned: []string{"agents", "skills"}, Deep: []string{"skills"}, Whole: []string{"hooks.json"}, Ours: oursHooks}

// whetstoneHook is a command of whetstone's hooks.json (Hooks), whatever
// the binary's path.
// Compiled on first use: every hook process loads this package.
var whetstoneHook = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^.+ hook [a-z-]+ --client=codex( \|\| exit 2)?$`)
})

// oursHooks reports whether a hooks.json is whetstone's: its description
// and every command are as Hooks writes them. Another is the user's, even
// when a manifest in the directory names it.
func oursHooks(_ string, data []byte) bool {
	var f struct {
		Description string `json:"description"`
		Hooks       map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if json.Unmarshal(data, &f) != nil || !strings.HasPrefix(f.Description, "whetstone:") || len(f.Hooks) == 0 {
		return false
	}
	for _, groups := range f.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				if !whetstoneHook().MatchString(h.Command) {
					return false
				}
			}
		}
	}
	return true
}

// ConfigDir is Codex's config directory whetstone installs into: the
// project's .codex, or with global the user's ($CODEX_HOME, else ~/.codex).
func (Client) ConfigDir(project string, global bool, getenv func(string) string) (string, error) {
	if !global {
		return filepath.Join(project, ".codex"), nil
	}
	if h := getenv("CODEX_HOME"); h != "" && filepath.IsAbs(h) {
		return h, nil
	}
	home := getenv("HOME")
	if home == "" || !filepath.IsAbs(home) {
		return "", errors.New("cannot find Codex's config directory: neither CODEX_HOME nor HOME is set")
	}
	return filepath.Join(home, ".codex"), nil
}

// GlobalDir names the global config directory in the --global flag's help.
func (Client) GlobalDir() string { return "$CODEX_HOME (~/.codex)" }

// events are the hook events whetstone answers in Codex, with the hook's
// timeout in seconds, as in hooks/hooks.json (cli.HookDeadline's margins;
// TestHookTimeoutsAgree).
var events = []struct {
	name, arg string
	timeout   int
}{
	{"SessionStart", "session-start", 120},
	{"UserPromptSubmit", "user-prompt-submit", 120},
	{"PreToolUse", "pre-tool-use", 120},
	{"SubagentStart", "subagent-start", 60},
	{"SubagentStop", "subagent-stop", 120},
	{"Stop", "stop", 120},
}

// Hooks is hooks.json running binary on every event whetstone answers, as
// `whetstone hook <event> --client=codex`. Codex lets a call through when
// its hook fails (docs/codex.md §5: onFailure is ignored), so the gate's
// command turns a failure into exit 2, Codex's deny, and a missing binary
// with it; a timeout would still pass, so the binary refuses a call it has
// not decided 5 s before Codex's timeout (cli.GateGrace).
func Hooks(binary string) ([]byte, error) {
	bin, err := syntax.Quote(binary, syntax.LangBash)
	if err != nil {
		return nil, fmt.Errorf("the binary's path %q cannot be quoted for a shell: %w", binary, err)
	}
	type handler struct {
		Type    string `json:"type"`
		Command string `json:"command"`
		Timeout int    `json:"timeout"`
	}
	type group struct {
		Matcher string    `json:"matcher,omitempty"`
		Hooks   []handler `json:"hooks"`
	}
	hooks := map[string][]group{}
	for _, e := range events {
		g := group{Hooks: []handler{{Type: "command", Command: bin + " hook " + e.arg + " --client=codex", Timeout: e.timeout}}}
		if e.arg == "pre-tool-use" {
			g.Matcher, g.Hooks[0].Command = "*", g.Hooks[0].Command+" || exit 2"
		}
		hooks[e.name] = []group{g}
	}
	raw, err := json.MarshalIndent(map[string]any{
		"description": "whetstone: gates every tool call during a review run, validates reviewer reports and drives the review→fix loop (written by `whetstone install codex`).",
		"hooks":       hooks,
	}, "", "  ")
	return append(raw, '\n'), err
}

// Files are the files to write, by slash path relative to the config dir:
// hooks.json running binary, agents/whetstone-*.toml and
// skills/whetstone-review/SKILL.md.
func Files(binary string) (map[string][]byte, error) {
	out, err := install.Embedded(whetstone.Codex, "codex")
	if err != nil {
		return nil, err
	}
	out["hooks.json"], err = Hooks(binary)
	return out, err
}

// Install writes Codex's files into dir, the hooks running binary
// (install.Install's rules).
func Install(dir, binary string) ([]string, error) {
	files, err := Files(binary)
	if err != nil {
		return nil, err
	}
	return install.Install(dir, layout, files, binary)
}

// Uninstall removes exactly what Install wrote into dir.
func Uninstall(dir string) (removed, kept []string, err error) {
	return install.Uninstall(dir, layout)
}

// Install is the package's Install.
func (Client) Install(dir, binary string) ([]string, error) { return Install(dir, binary) }

// Inspect reads and checks an install in dir.
func (Client) Inspect(dir string) (install.Status, error) { return install.Inspect(dir, layout) }

// Written is what Install writes for binary, for recognising it in a
// project's change (install.Own).
func (Client) Written(binary string) (install.Set, error) {
	files, err := Files(binary)
	return install.Set{Layout: layout, Files: files, Binary: binary}, err
}

// Uninstall is the package's Uninstall.
func (Client) Uninstall(dir string) (removed, kept []string, err error) { return Uninstall(dir) }

// InstallNotes are what the user must do after an install, one short
// line each: Codex runs a hook only once its hash is trusted
// (docs/codex.md §3), and whetstone does not write trust for the user,
// whose review that is; nor can whetstone's sandbox run inside Codex's.
func (Client) InstallNotes(global bool) []string {
	notes := []string{
		"Trust the hooks: start `codex`, type /hooks, trust whetstone's (again after each upgrade or reinstall).",
		"For `codex exec`, pass --dangerously-bypass-hook-trust instead.",
	}
	if !global {
		notes = append(notes, "Trust the project: Codex reads .codex/ only in a trusted project (`codex exec --trust`, or `codex`'s prompt).")
	}
	return append(notes,
		"Run Codex with its sandbox off (`codex --dangerously-bypass-approvals-and-sandbox`): whetstone's sandbox cannot start inside it.",
		"Run `whetstone uninstall codex"+map[bool]string{true: " --global"}[global]+"` before you remove this binary: the gate's hook denies every call without it.")
}
