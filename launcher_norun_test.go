package whetstone

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The no-run path of scripts/whetstone: where Claude Code names the session
// in CLAUDE_CODE_SESSION_ID, a hook that cannot start a run, in a session
// that owns none, is answered by the launcher (exit 0, no output) without
// starting the binary; everything else, and everything it cannot settle,
// starts the binary. The hooks are run as Claude Code runs them: each
// command of hooks/hooks.json under /bin/sh -c, with the entries whose
// matcher selects the tool.

const norunSession = "5f2a9c1e-0b7d-4e3a-9c21-7d4b8e6f0a13"

// hookEntry is one command of hooks/hooks.json with its event and matcher.
type hookEntry struct{ event, matcher, command string }

func hookEntries(t *testing.T) []hookEntry {
	t.Helper()
	data, err := os.ReadFile("hooks/hooks.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	var out []hookEntry
	for event, groups := range f.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				out = append(out, hookEntry{event, g.Matcher, h.Command})
			}
		}
	}
	return out
}

// selects reports whether a matcher selects a tool, for the matcher forms
// hooks.json uses. Claude Code 2.1.332 compares a matcher of letters,
// digits, _, |, comma, space and - with the tool's name as a list of names,
// and tests any other as a JavaScript regular expression (unanchored); Go's
// regexp has no look-ahead, so the one regular expression used is spelled
// out here, and any other form fails the test.
func selects(t *testing.T, matcher, tool string) bool {
	switch matcher {
	case "", "*":
		return true
	case "Skill":
		return tool == "Skill"
	case "^(?!Skill$)":
		return tool != "Skill"
	}
	t.Fatalf("hooks.json matcher %q: this test does not know how Claude Code applies it", matcher)
	return false
}

// norunPlugin is a plugin whose binary is a fake that records each start in
// the file it returns and answers "binary <args>".
func norunPlugin(t *testing.T) (plugin, data, started string) {
	t.Helper()
	plugin, data = packageCopy(t, "none"), t.TempDir()
	started = filepath.Join(t.TempDir(), "started")
	script := "#!/bin/sh\necho \"$*\" >>'" + started + "'\necho binary \"$*\"\n"
	if err := os.WriteFile(filepath.Join(data, "whetstone-"+Version), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return plugin, data, started
}

// hookEnv is the environment without the variables the launcher reads, so
// a test run inside a Claude Code session is not steered by it.
func hookEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "CLAUDE_CODE_SESSION_ID", "WHETSTONE_LAUNCH", "WHETSTONE_DEBUG", "CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA", "PWD":
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// fire runs every hooks.json command for event (and tool, on PreToolUse) in
// dir, as Claude Code does, and returns what they printed together and how
// many times the binary was started.
func fire(t *testing.T, plugin, data, started, dir string, env []string, event, tool string) (stdout string, starts int) {
	t.Helper()
	os.Remove(started)
	payload := `{"session_id":"` + norunSession + `","hook_event_name":"` + event + `","cwd":"` + dir + `"`
	if tool != "" {
		payload += `,"tool_name":"` + tool + `","tool_input":{}`
	}
	payload += "}"
	ran := 0
	var out bytes.Buffer
	for _, h := range hookEntries(t) {
		if h.event != event || event == "PreToolUse" && !selects(t, h.matcher, tool) {
			continue
		}
		ran++
		cmd := exec.Command("/bin/sh", "-c", h.command)
		cmd.Dir = dir
		cmd.Env = append(hookEnv(env...), "CLAUDE_PLUGIN_ROOT="+plugin, "CLAUDE_PLUGIN_DATA="+data, "CLAUDE_PROJECT_DIR="+dir)
		cmd.Stdin = strings.NewReader(payload)
		var errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %s: %v, stderr %q", event, tool, err, errb.String())
		}
	}
	if ran != 1 {
		t.Fatalf("%s %s: %d hooks.json commands ran, want exactly 1", event, tool, ran)
	}
	b, _ := os.ReadFile(started)
	return out.String(), strings.Count(string(b), "\n")
}

// repo makes a git repository with a subdirectory and returns both.
func repo(t *testing.T) (root, sub string) {
	t.Helper()
	root = t.TempDir()
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	sub = filepath.Join(root, "pkg", "inner")
	os.MkdirAll(sub, 0o755)
	return root, sub
}

// own records a run for the test's session, as app.startRun does.
func own(t *testing.T, root string) {
	t.Helper()
	os.MkdirAll(filepath.Join(root, ".whetstone", "sessions"), 0o755)
	if err := os.WriteFile(filepath.Join(root, ".whetstone", "sessions", norunSession), []byte("r-20261126-0001\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

var session = "CLAUDE_CODE_SESSION_ID=" + norunSession

// hooks are the events and tools the table tests fire: every event
// hooks.json runs whetstone on, and a tool call of each PreToolUse entry.
var hooks = []struct{ event, tool string }{
	{"PreToolUse", "Edit"}, {"PreToolUse", "Bash"}, {"PreToolUse", "Skill"},
	{"PreSkillShellCommand", ""}, {"SubagentStart", ""}, {"SubagentStop", ""}, {"Stop", ""},
	{"UserPromptSubmit", ""}, {"SessionStart", ""},
}

// subcommand is the binary's hook subcommand of each event (app.Events,
// which this package cannot import: internal/app imports it).
var subcommand = map[string]string{
	"PreToolUse": "pre-tool-use", "PreSkillShellCommand": "pre-skill-shell-command", "SubagentStart": "subagent-start",
	"SubagentStop": "subagent-stop", "Stop": "stop", "UserPromptSubmit": "user-prompt-submit", "SessionStart": "session-start",
}

// mayStart are the hooks that can start a run: they always reach the binary.
func mayStart(event, tool string) bool {
	return event == "UserPromptSubmit" || event == "SessionStart" || tool == "Skill"
}

func TestLauncherNoRunPath(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the launcher is a POSIX shell script")
	}
	plugin, data, started := norunPlugin(t)

	t.Run("no run", func(t *testing.T) {
		root, sub := repo(t)
		// A run recorded in the working directory that is not the project
		// root is not this project's: the binary looks at the git root.
		own(t, sub)
		for _, h := range hooks {
			for _, dir := range []string{root, sub} {
				out, n := fire(t, plugin, data, started, dir, []string{session}, h.event, h.tool)
				switch {
				case mayStart(h.event, h.tool) && n != 1:
					t.Errorf("%s %s in %s: the binary started %d times, want once (it may start a run)", h.event, h.tool, dir, n)
				case !mayStart(h.event, h.tool) && (n != 0 || out != ""):
					t.Errorf("%s %s in %s: the binary started %d times, stdout %q; want the launcher's silent answer", h.event, h.tool, dir, n, out)
				}
			}
		}
	})

	t.Run("run", func(t *testing.T) {
		root, sub := repo(t)
		own(t, root)
		for _, h := range hooks {
			for _, dir := range []string{root, sub} {
				if out, n := fire(t, plugin, data, started, dir, []string{session}, h.event, h.tool); n != 1 || !strings.HasPrefix(out, "binary hook ") {
					t.Errorf("%s %s in %s of a session with a run: the binary started %d times, stdout %q; want once", h.event, h.tool, dir, n, out)
				}
			}
		}
	})

	// Whatever the launcher cannot settle starts the binary.
	uncertain := []struct {
		name  string
		env   []string
		setup func(root string) string // returns the hook's working directory
	}{
		{"no session in the environment", nil, nil},
		{"an empty session id", []string{"CLAUDE_CODE_SESSION_ID="}, nil},
		{"a session id that is a path", []string{"CLAUDE_CODE_SESSION_ID=../" + norunSession}, nil},
		{"a session id starting with a dot", []string{"CLAUDE_CODE_SESSION_ID=." + norunSession}, nil},
		{"a session id too long for a name", []string{"CLAUDE_CODE_SESSION_ID=" + strings.Repeat("a", 129)}, nil},
		{"debug logging", []string{session, "WHETSTONE_DEBUG=/dev/null"}, nil},
		{"a directory at the session's name", []string{session}, func(root string) string {
			os.MkdirAll(filepath.Join(root, ".whetstone", "sessions", norunSession), 0o755)
			return root
		}},
		{"a dangling symlink at the session's name", []string{session}, func(root string) string {
			os.MkdirAll(filepath.Join(root, ".whetstone", "sessions"), 0o755)
			os.Symlink("nowhere", filepath.Join(root, ".whetstone", "sessions", norunSession))
			return root
		}},
		{"an empty session file", []string{session}, func(root string) string {
			os.MkdirAll(filepath.Join(root, ".whetstone", "sessions"), 0o755)
			os.WriteFile(filepath.Join(root, ".whetstone", "sessions", norunSession), nil, 0o644)
			return root
		}},
		{".whetstone is a symlink", []string{session}, func(root string) string {
			elsewhere := t.TempDir()
			os.MkdirAll(filepath.Join(elsewhere, "sessions"), 0o755)
			os.Symlink(elsewhere, filepath.Join(root, ".whetstone"))
			return root
		}},
		{"sessions is a symlink", []string{session}, func(root string) string {
			os.MkdirAll(filepath.Join(root, ".whetstone"), 0o755)
			os.Symlink(t.TempDir(), filepath.Join(root, ".whetstone", "sessions"))
			return root
		}},
		{".whetstone is a file", []string{session}, func(root string) string {
			os.WriteFile(filepath.Join(root, ".whetstone"), nil, 0o644)
			return root
		}},
		{"sessions is a file", []string{session}, func(root string) string {
			os.MkdirAll(filepath.Join(root, ".whetstone"), 0o755)
			os.WriteFile(filepath.Join(root, ".whetstone", "sessions"), nil, 0o644)
			return root
		}},
		{"a working directory that is not clean", []string{session, "PWD_OVERRIDE"}, nil},
	}
	if os.Geteuid() != 0 { // root searches any directory
		uncertain = append(uncertain, struct {
			name  string
			env   []string
			setup func(root string) string
		}{"an unsearchable sessions directory", []string{session}, func(root string) string {
			dir := filepath.Join(root, ".whetstone", "sessions")
			os.MkdirAll(dir, 0o755)
			os.Chmod(dir, 0o600)
			t.Cleanup(func() { os.Chmod(dir, 0o755) })
			return root
		}})
	}
	for _, c := range uncertain {
		t.Run(c.name, func(t *testing.T) {
			root, _ := repo(t)
			dir := root
			if c.setup != nil {
				dir = c.setup(root)
			}
			env := c.env
			if len(env) > 1 && env[1] == "PWD_OVERRIDE" {
				// The shell keeps a PWD that names the working directory,
				// "." and ".." components included; the launcher does not
				// resolve them, the binary's os.Getwd would.
				env = []string{session, "PWD=" + filepath.Join(root, "pkg") + "/../pkg/inner/.."}
				os.MkdirAll(filepath.Join(root, "pkg", "inner"), 0o755)
				dir = filepath.Join(root, "pkg")
			}
			for _, h := range hooks {
				if _, n := fire(t, plugin, data, started, dir, env, h.event, h.tool); n != 1 {
					t.Errorf("%s %s: the binary started %d times, want once", h.event, h.tool, n)
				}
			}
		})
	}
}

// TestLauncherNoRunAnswerIsTheBinarys: for each hook the launcher answers
// itself, the real binary, in the same session and directory, also exits 0
// with nothing on stdout.
func TestLauncherNoRunAnswerIsTheBinarys(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "whetstone")
	build := exec.Command("go", "build", "-trimpath", "-tags", "urfave_cli_no_docs", "-o", bin, "./cmd/whetstone")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v %s", err, out)
	}
	plugin, data, started := norunPlugin(t)
	root, sub := repo(t)
	own(t, sub) // not the project root's: no run for the binary either
	for _, h := range hooks {
		if mayStart(h.event, h.tool) {
			continue
		}
		for _, dir := range []string{root, sub} {
			if out, n := fire(t, plugin, data, started, dir, []string{session}, h.event, h.tool); n != 0 || out != "" {
				t.Fatalf("%s %s: the launcher started the binary (%d) or answered %q", h.event, h.tool, n, out)
			}
			payload := `{"session_id":"` + norunSession + `","hook_event_name":"` + h.event + `","cwd":"` + dir + `"`
			if h.tool != "" {
				payload += `,"tool_name":"` + h.tool + `","tool_input":{}`
			}
			cmd := exec.Command(bin, "hook", subcommand[h.event])
			cmd.Dir = dir
			cmd.Env = hookEnv("WHETSTONE_STATE_DIR=" + t.TempDir())
			cmd.Stdin = strings.NewReader(payload + "}")
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil || out.Len() != 0 {
				t.Errorf("%s %s in %s: the binary answers %q, %v (stderr %q); the launcher answers nothing, exit 0", h.event, h.tool, dir, out.String(), err, errb.String())
			}
		}
	}
}
