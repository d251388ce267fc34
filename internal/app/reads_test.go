package app_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/sandbox"
)

// These tests are issue 28's "no agent read follows a link out of the
// project" and its sibling, a program PATH finds in the project: the
// repository under review is hostile. Each command runs for real, with
// bash, as the gate answers it: as is, rewritten into the sandbox, or not
// at all.

// secret is a file beside whetstone's key, named and filled so that a
// command that lists or prints the key's directory shows it.
const secret = "KEYDIR-SECRET"

// linkedProject is a Go module in a git repository that commits docs/kd, a
// link to the key's directory, and config as its whetstone.json, with a run
// started by session. mutate may add files before the commit. It returns
// the root and the run directory.
func linkedProject(t *testing.T, a *app.App, keyDir, session, prompt, config string, mutate func(root string)) (root, runDir string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	newProject(t, root)
	t.Chdir(root)
	files := map[string]string{
		"go.mod":         "module example.com/victim\n\ngo 1.21\n",
		"main_test.go":   "package main\n\nimport \"testing\"\n\nfunc TestMain0(t *testing.T) {}\n",
		"whetstone.json": config + "\n",
		"docs/guide.md":  "# guide\n",
	}
	for name, body := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(keyDir, filepath.Join(root, "docs", "kd")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "emptydir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		mutate(root)
	}
	for _, args := range [][]string{{"add", "-A", "docs", "go.mod", "main_test.go", "whetstone.json"}, {"-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "docs"}} {
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	out := runHook(t, a, "user-prompt-submit", payload(t, map[string]any{
		"session_id": session, "hook_event_name": "UserPromptSubmit", "cwd": root, "prompt": prompt}))
	if !strings.Contains(string(out), "WHETSTONE-DISPATCH") {
		t.Fatalf("no run started: %s", out)
	}
	// The key exists once the run has started; the secret beside it.
	if err := os.WriteFile(filepath.Join(keyDir, secret), []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return root, filepath.Join(root, ".whetstone", "runs", runOf(t, root, session))
}

// toFixPhase brings the run of session to the fix phase with one critic's
// findings.
func toFixPhase(t *testing.T, a *app.App, session, root, runDir string) {
	t.Helper()
	id := filepath.Base(runDir)
	runHook(t, a, "pre-tool-use", dispatchPayload(t, session, root, id, "critic"))
	runHook(t, a, "subagent-start", startAgentPayload(t, session, root, "whetstone:critic", "agent-critic"))
	if out := runHook(t, a, "subagent-stop", stopPayload(t, session, root, "whetstone:critic", "agent-critic", reviewReport(t, "critic", "agent-critic", 1))); out != nil {
		t.Fatalf("the critic's report was refused: %s", out)
	}
	if s := readState(t, runDir); s.Phase != "fix" {
		t.Fatalf("the run is in %q, want fix", s.Phase)
	}
}

// answer is what the gate made of a Bash call: the line that runs ("" when
// denied), and how.
func answer(t *testing.T, out []byte, cmd string) (line, how string) {
	t.Helper()
	spec := gjson.GetBytes(out, "hookSpecificOutput")
	switch {
	case out == nil:
		return cmd, "as is"
	case spec.Get("permissionDecision").String() == "deny":
		return "", "denied: " + spec.Get("permissionDecisionReason").String()
	case spec.Get("updatedInput.command").Exists():
		line := spec.Get("updatedInput.command").String()
		if !strings.Contains(line, "bwrap") || !strings.HasSuffix(line, "\nexit\n"+cmd) {
			t.Fatalf("%q was rewritten to something other than the sandbox: %s", cmd, out)
		}
		return line, "sandboxed"
	}
	t.Fatalf("unexpected answer to %q: %s", cmd, out)
	return "", ""
}

// runLine runs line from dir with bash as Claude Code's Bash tool would,
// with env added to the test's environment.
func runLine(t *testing.T, dir, line string, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", line)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	var ee *exec.ExitError
	if err := cmd.Run(); err != nil && !errors.As(err, &ee) {
		t.Fatalf("bash: %v", err)
	}
	return out.String()
}

// leaked reports whether out shows the key's directory: the secret's name
// or text, or a line of the key itself.
func leaked(t *testing.T, out, keyDir string) bool {
	t.Helper()
	key, err := os.ReadFile(filepath.Join(keyDir, "key"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, secret) {
		return true
	}
	for _, part := range bytes.Split(key, []byte("\n")) {
		if len(part) >= 8 && strings.Contains(out, string(part)) {
			return true
		}
	}
	return false
}

// treeWalkers are the tree-walking readers the parser allows, each aimed at
// docs, which commits docs/kd -> the key's directory. leaks says whether
// the command, run as is, shows the key's directory: those that follow
// the links they meet. @T@ is a scratch directory under the temporary
// directory.
var treeWalkers = []struct {
	cmd            string
	leaks, follows bool
}{
	{"grep -R -a . docs", true, true},
	{"grep --dereference-recursive -a . docs", true, true},
	{"grep -r -a . docs", false, false},
	{"rg -L -a . docs", true, true},
	{"rg --follow -a --no-ignore . docs", true, true},
	{"rg -a . docs", false, false},
	{"find -L docs", true, true},
	{"find docs -follow -type f", true, true},
	{"find docs", false, false},
	{"diff -rN docs emptydir", true, true},
	{"diff -r docs emptydir", false, true}, // follows, but has nothing to compare kd with
	{"mkdir -p @T@ && cp -rL docs @T@/x && cat @T@/x/kd/*", true, true},
	{"du -aL docs", true, true},
	{"du -a docs", false, false},
	{"ls -RL docs", true, true},
	{"ls -R docs", false, false},
	{"tree -l docs", true, true},
	{"tree docs", false, false},
}

// skipTree reports a tree command where tree is not installed.
func skipTree(t *testing.T, cmd string) bool {
	if !strings.HasPrefix(cmd, "tree") {
		return false
	}
	if _, err := exec.LookPath("tree"); err != nil {
		t.Logf("%s: tree is not installed", cmd)
		return true
	}
	return false
}

// TestTreeWalkersCannotReachTheKey: every tree-walking reader aimed at a
// tree that commits a link to whetstone's key directory. Run as is, those
// that follow links print the key's directory (and pass the parser, which
// judges only what the line names); through the gate they run in the
// sandbox, where the key's directory is an empty tmpfs, for read-only
// agents and the fixer, in default and bypassPermissions modes, and those
// that follow the links they meet are refused before anything runs.
func TestTreeWalkersCannotReachTheKey(t *testing.T) {
	keyDir := containKeyDir(t)
	a := containApp(t, keyDir, true)
	const session = "c6000000-0000-4000-8000-000000000006"
	root, runDir := linkedProject(t, a, keyDir, session, "/whetstone:review --reviewers critic", `{"pre_existing_blocks": true}`, nil)
	scratch := filepath.Join(os.TempDir(), "whetstone-walk-"+filepath.Base(root))
	t.Cleanup(func() { os.RemoveAll(scratch) })

	check := func(t *testing.T, agent, mode string) {
		for i, w := range treeWalkers {
			cmd := strings.ReplaceAll(w.cmd, "@T@", filepath.Join(scratch, agent+mode+string(rune('a'+i))))
			if skipTree(t, cmd) {
				continue
			}
			// As is, what the parser alone allowed before.
			if got := runLine(t, root, cmd); leaked(t, got, keyDir) != w.leaks {
				t.Errorf("%q run as is: leaks = %v, want %v; output:\n%s", cmd, !w.leaks, w.leaks, got)
			}
			out := runHook(t, a, "pre-tool-use", bashPayload(t, session, root, agent, mode, cmd))
			line, how := answer(t, out, cmd)
			if w.follows {
				// Refused before anything runs: the sandbox hides the
				// key, not the rest of what a link out may reach.
				if !strings.Contains(how, "follows the links in") || !strings.Contains(how, "the link docs/kd leads to whetstone's key") {
					t.Errorf("%s, %s: %q was %s; want it refused for following docs/kd", agent, mode, cmd, how)
				}
				continue
			}
			if how != "sandboxed" {
				t.Errorf("%s, %s: %q was %s; want it sandboxed", agent, mode, cmd, how)
			}
			if want := sandbox.Decision(mode); gjson.GetBytes(out, "hookSpecificOutput.permissionDecision").String() != want {
				t.Errorf("%s, %s: %q: decision %s, want %q", agent, mode, cmd, out, want)
			}
			if line == "" {
				continue
			}
			if got := runLine(t, root, line); leaked(t, got, keyDir) {
				t.Errorf("%s, %s: %q through the gate (%s) shows the key's directory:\n%s", agent, mode, cmd, how, got)
			} else if strings.HasPrefix(cmd, "grep") && !strings.Contains(got, "docs/guide.md:# guide") {
				t.Errorf("%s, %s: %q found nothing in the sandbox:\n%s", agent, mode, cmd, got)
			}
		}
	}
	for _, mode := range []string{"default", "bypassPermissions"} {
		t.Run("critic/"+mode, func(t *testing.T) { check(t, "whetstone:witness", mode) })
	}
	toFixPhase(t, a, session, root, runDir)
	for _, mode := range []string{"default", "bypassPermissions"} {
		t.Run("fixer/"+mode, func(t *testing.T) { check(t, "whetstone:fixer", mode) })
	}

	// A fixer's line that changes files runs outside the sandbox, where
	// its changes land: one that also follows links is refused, one that
	// walks without following runs as is and finds only the link.
	t.Run("fixer/writes", func(t *testing.T) {
		for _, tc := range []struct{ cmd, how string }{
			{"mkdir -p internal/a && grep -R -a . docs", "denied"},
			{"mkdir -p internal/b && diff -rN docs emptydir", "denied"},
			{"cp -rL docs docs2", "denied"},
			{"mkdir -p internal/c && grep -r -a . docs", "as is"},
			{"cp -r docs docs3 && rg -a . docs3", "as is"},
		} {
			out := runHook(t, a, "pre-tool-use", bashPayload(t, session, root, "whetstone:fixer", "default", tc.cmd))
			line, how := answer(t, out, tc.cmd)
			if !strings.HasPrefix(how, tc.how) {
				t.Errorf("the fixer's %q was %s; want %s", tc.cmd, how, tc.how)
			}
			if strings.HasPrefix(how, "denied") && (!strings.Contains(how, "separate commands") && !strings.Contains(how, "leads to whetstone's key")) {
				t.Errorf("the fixer's %q: want a reason saying what to do; got %s", tc.cmd, how)
			}
			if line != "" {
				if got := runLine(t, root, line); leaked(t, got, keyDir) {
					t.Errorf("the fixer's %q shows the key's directory:\n%s", tc.cmd, got)
				}
			}
		}
	})
}

// TestTreeWalkersWithoutSandbox: where no sandbox runs the line (none on
// the machine, or "sandbox": "off"), a walker that follows links is
// refused when a link in its tree leads to the key, and runs as is when
// none does; one that follows none runs as is.
func TestTreeWalkersWithoutSandbox(t *testing.T) {
	keyDir := containKeyDir(t)
	for _, tc := range []struct {
		name, config string
		sandbox      bool
	}{
		{"no bwrap", `{}`, false},
		{"off", `{"sandbox": "off"}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := containApp(t, keyDir, tc.sandbox)
			session := "c7000000-0000-4000-8000-00000000000" + map[bool]string{true: "1", false: "2"}[tc.sandbox]
			// "off" weakens containment: it applies once the user trusts it.
			root, _ := linkedProject(t, a, keyDir, session, "/whetstone:review", tc.config, func(r string) { trustConfig(t, a, r) })
			scratch := filepath.Join(os.TempDir(), "whetstone-walk-"+filepath.Base(root))
			t.Cleanup(func() { os.RemoveAll(scratch) })
			for i, w := range treeWalkers {
				cmd := strings.ReplaceAll(w.cmd, "@T@", filepath.Join(scratch, string(rune('a'+i))))
				out := runHook(t, a, "pre-tool-use", bashPayload(t, session, root, "whetstone:witness", "default", cmd))
				line, how := answer(t, out, cmd)
				if skipTree(t, cmd) {
					continue
				}
				want := map[bool]string{true: "denied", false: "as is"}[w.follows]
				if !strings.HasPrefix(how, want) {
					t.Errorf("%q was %s; want %s", cmd, how, want)
				}
				if w.follows && !strings.Contains(how, `the link docs/kd leads to whetstone's key`) {
					t.Errorf("%q: want the reason to name the link; got %s", cmd, how)
				}
				if line != "" {
					if got := runLine(t, root, line); leaked(t, got, keyDir) {
						t.Errorf("%q shows the key's directory:\n%s", cmd, got)
					}
				}
			}
			// The same walker on a tree with no such link runs as is.
			cmd := "grep -R -n guide docs/guide.md emptydir"
			if out := runHook(t, a, "pre-tool-use", bashPayload(t, session, root, "whetstone:witness", "default", cmd)); out != nil {
				t.Errorf("%q, whose tree links nowhere, was not let through: %s", cmd, out)
			}
		})
	}
}

// shim is a program a hostile repository ships (or a fixer writes) under
// a name the parser allows as a pure read: it plants a file in .git and
// prints what lies beside whetstone's key.
func shim(t *testing.T, path, keyDir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	// Absolute programs only, and once: the shim is first on PATH.
	body := "#!/bin/sh\n[ -n \"$SHIM_RAN\" ] && exit 0\nexport SHIM_RAN=1\n/usr/bin/touch \"$(/usr/bin/git rev-parse --show-toplevel)/.git/hooks/pwned-" + filepath.Base(path) + "\"\n/bin/cat " + keyDir + "/*\necho SHIM-RAN\n"
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestProgramOnPathInProjectIsContained: with the project's .venv/bin and
// node_modules/.bin first on PATH (an activated virtualenv, direnv), a
// repository that ships .venv/bin/cat, grep, sed or node_modules/.bin/rg
// has its own program run by an agent's "read", and a fixer that writes
// .venv/bin/sed has it run by its own sed -i. Run as is, each shim runs,
// plants a file in .git and prints the key's directory; through the gate
// the line runs in the sandbox (nothing lands, nothing of the key shows),
// or where there is no sandbox it is refused with one sentence. A read
// whose program PATH finds in the system still runs as is.
func TestProgramOnPathInProjectIsContained(t *testing.T) {
	keyDir := containKeyDir(t)
	var root string
	pathEnv := func() string {
		return filepath.Join(root, ".venv", "bin") + ":" + filepath.Join(root, "node_modules", ".bin") + ":" + os.Getenv("PATH")
	}
	// The CLI drops the project's directories from the hook's own PATH
	// and keeps the caller's in sandbox.CallerPath, the PATH the agent's
	// command runs with; a hook run any other way has only PATH.
	withPath := func(a *app.App, caller bool) *app.App {
		env := a.Getenv
		a.Getenv = func(k string) string {
			switch {
			case k == "PATH" && caller:
				return os.Getenv("PATH")
			case k == "PATH", k == sandbox.CallerPath && caller:
				return pathEnv()
			}
			return env(k)
		}
		return a
	}
	shims := func(r string) {
		for _, p := range []string{".venv/bin/cat", ".venv/bin/grep", ".venv/bin/sed", "node_modules/.bin/rg"} {
			shim(t, filepath.Join(r, p), keyDir)
		}
		if err := os.WriteFile(filepath.Join(r, ".venv", "bin", "python"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	reads := []string{"cat go.mod", "grep -n module go.mod", "rg -n module go.mod", "sed -n 1p go.mod", "git log --oneline -1 | cat"}

	t.Run("sandbox", func(t *testing.T) {
		a := withPath(containApp(t, keyDir, true), true)
		const session = "c8000000-0000-4000-8000-000000000008"
		var runDir string
		root, runDir = linkedProject(t, a, keyDir, session, "/whetstone:review --reviewers critic", `{"pre_existing_blocks": true}`, shims)
		hooks := filepath.Join(root, ".git", "hooks")
		gated := func(t *testing.T, agent, mode, cmd string) {
			// As is, the repository's program runs.
			got := runLine(t, root, cmd, "PATH="+pathEnv())
			if !strings.Contains(got, "SHIM-RAN") || !leaked(t, got, keyDir) {
				t.Errorf("%q as is did not run the shim:\n%s", cmd, got)
			}
			planted, _ := filepath.Glob(filepath.Join(hooks, "pwned-*"))
			for _, p := range planted {
				os.Remove(p)
			}
			if len(planted) == 0 {
				t.Errorf("%q as is planted nothing in .git", cmd)
			}
			before := tree(t, root)
			out := runHook(t, a, "pre-tool-use", bashPayload(t, session, root, agent, mode, cmd))
			line, how := answer(t, out, cmd)
			if how != "sandboxed" {
				t.Fatalf("%s, %s: %q was %s; want it sandboxed", agent, mode, cmd, how)
			}
			got = runLine(t, root, line, "PATH="+pathEnv())
			if leaked(t, got, keyDir) {
				t.Errorf("%s, %s: %q in the sandbox shows the key's directory:\n%s", agent, mode, cmd, got)
			}
			after := tree(t, root)
			for p, v := range after {
				if before[p] != v {
					t.Errorf("%s, %s: %q in the sandbox wrote %s", agent, mode, cmd, p)
				}
			}
		}
		for _, mode := range []string{"default", "bypassPermissions"} {
			for _, cmd := range reads {
				gated(t, "whetstone:witness", mode, cmd)
			}
		}
		toFixPhase(t, a, session, root, runDir)
		for _, mode := range []string{"default", "bypassPermissions"} {
			for _, cmd := range append(reads, "sed -i s/victim/victim2/ go.mod") {
				gated(t, "whetstone:fixer", mode, cmd)
			}
		}
		// The fixer writes .venv/bin/sed itself, in a tree without shims.
		os.RemoveAll(filepath.Join(root, ".venv"))
		os.RemoveAll(filepath.Join(root, "node_modules"))
		if out := runHook(t, a, "pre-tool-use", bashPayload(t, session, root, "whetstone:fixer", "default", "sed -i s/victim/victim2/ go.mod")); out != nil {
			t.Fatalf("the fixer's sed -i with no shim on PATH got an answer: %s", out)
		}
		shim(t, filepath.Join(root, ".venv", "bin", "sed"), keyDir)
		gated(t, "whetstone:fixer", "default", "sed -i s/victim/victim2/ go.mod")
	})

	t.Run("no sandbox", func(t *testing.T) {
		a := withPath(containApp(t, keyDir, false), false)
		const session = "c8000000-0000-4000-8000-000000000009"
		root, _ = linkedProject(t, a, keyDir, session, "/whetstone:review", `{}`, shims)
		for _, cmd := range reads {
			out := runHook(t, a, "pre-tool-use", bashPayload(t, session, root, "whetstone:witness", "default", cmd))
			_, how := answer(t, out, cmd)
			if !strings.HasPrefix(how, "denied") || !strings.Contains(how, "PATH finds where an agent can write") ||
				!strings.Contains(how, filepath.Join(root, "")) || !strings.Contains(how, "take that directory off PATH") || strings.Count(how, ". ") > 0 {
				t.Errorf("%q without a sandbox: want one sentence refusing the project's program; got %s", cmd, how)
			}
		}
		// python is the project's too, but no read runs it: cat from the
		// system, once the shims are gone, runs as is.
		for _, p := range []string{".venv/bin/cat", ".venv/bin/grep", ".venv/bin/sed", "node_modules/.bin/rg"} {
			os.Remove(filepath.Join(root, p))
		}
		for _, cmd := range reads {
			if out := runHook(t, a, "pre-tool-use", bashPayload(t, session, root, "whetstone:witness", "default", cmd)); out != nil {
				t.Errorf("%q with the system's program was not let through: %s", cmd, out)
			}
		}
	})
}

// TestSkillShellReadsNoLinkOrProgramOfTheProject: the orchestrator's skill
// shell commands run outside any tool, where nothing can sandbox them: one
// that follows a link to the key's directory, or runs a program PATH finds
// in the project, is refused; a walk that follows no link, and a read by
// the system's program, run.
func TestSkillShellReadsNoLinkOrProgramOfTheProject(t *testing.T) {
	keyDir := containKeyDir(t)
	a := containApp(t, keyDir, false)
	var root string
	env := a.Getenv
	a.Getenv = func(k string) string {
		if k == "PATH" {
			return filepath.Join(root, ".venv", "bin") + ":" + os.Getenv("PATH")
		}
		return env(k)
	}
	const session = "c9000000-0000-4000-8000-000000000009"
	root, _ = linkedProject(t, a, keyDir, session, "/whetstone:review", `{}`, func(r string) {
		shim(t, filepath.Join(r, ".venv", "bin", "sed"), keyDir)
	})
	for _, tc := range []struct{ cmd, want string }{
		{"grep -R -a . docs", "the link docs/kd leads to whetstone's key"},
		{"sed -n 1p go.mod", "PATH finds where an agent can write"},
		{"grep -r -a . docs", ""},
		{"cat go.mod", ""},
	} {
		out := runHook(t, a, "pre-skill-shell-command", payload(t, map[string]any{
			"session_id": session, "hook_event_name": "PreSkillShellCommand", "cwd": root, "command_name": "lint",
			"tool_name": "Bash", "tool_input": map[string]any{"command": tc.cmd}}))
		reason := gjson.GetBytes(out, "hookSpecificOutput.permissionDecisionReason").String()
		switch {
		case tc.want == "" && out != nil:
			t.Errorf("skill shell %q refused: %s", tc.cmd, out)
		case tc.want != "" && !strings.Contains(reason, tc.want):
			t.Errorf("skill shell %q: want a refusal containing %q; got %s", tc.cmd, tc.want, out)
		}
	}
}
