package whetstone

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// pluginCopy makes a plugin directory that has whetstone's sources but no
// bin/, so the launcher must find or build its binary.
func pluginCopy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	wd, _ := os.Getwd()
	for _, name := range []string{"cmd", "internal"} {
		if err := os.Symlink(filepath.Join(wd, name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"go.mod", "go.sum", "version.go", "opencode.go", "codex.go", "VERSION"} { // go:embed refuses symlinks
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	if out, err := exec.Command("cp", "-R", "opencode", filepath.Join(dir, "opencode")).CombinedOutput(); err != nil { // embedded too
		t.Fatalf("cp opencode: %v %s", err, out)
	}
	if out, err := exec.Command("cp", "-R", "codex", filepath.Join(dir, "codex")).CombinedOutput(); err != nil { // embedded too
		t.Fatalf("cp codex: %v %s", err, out)
	}
	os.MkdirAll(filepath.Join(dir, "scripts"), 0o755)
	script, err := os.ReadFile("scripts/whetstone")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "scripts", "whetstone"), script, 0o755)
	return dir
}

func launch(t *testing.T, plugin, data, path, event, payload string) (stdout, stderr string, err error) {
	cmd := exec.Command(filepath.Join(plugin, "scripts", "whetstone"), "hook", event)
	cmd.Dir = t.TempDir()
	cmd.Env = append(hookEnv(), "CLAUDE_PLUGIN_DATA="+data, "PATH="+path)
	cmd.Stdin = strings.NewReader(payload)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

const noRunPayload = `{"session_id":"launcher-test","hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{}}`

// TestLauncherBuildsOnceUnderParallelHooks: eight hooks start at once on a
// machine with no binary; one builds it, all answer, none blocks the session.
func TestLauncherBuildsOnceUnderParallelHooks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	plugin, data := pluginCopy(t), t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	outs := make([]string, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var stderr string
			outs[i], stderr, errs[i] = launch(t, plugin, data, os.Getenv("PATH"), "pre-tool-use", noRunPayload)
			if errs[i] != nil {
				t.Logf("launcher %d stderr: %s", i, stderr)
			}
		}()
	}
	wg.Wait()
	for i := range errs {
		if errs[i] != nil || outs[i] != "" {
			t.Errorf("launcher %d: err %v, stdout %q; want success and no answer", i, errs[i], outs[i])
		}
	}
	entries, _ := os.ReadDir(data)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := "whetstone-" + Version; len(names) != 1 || names[0] != want {
		t.Errorf("plugin data holds %v; want exactly [%s] (no temp files, no lock)", names, want)
	}
}

// TestLauncherWithoutGo: no binary and no Go toolchain is a clear message,
// exit 0, and — for /whetstone:review — a line the model can relay.
func TestLauncherWithoutGo(t *testing.T) {
	plugin, data := pluginCopy(t), t.TempDir()
	stdout, stderr, err := launch(t, plugin, data, "/usr/bin:/bin", "pre-tool-use", noRunPayload)
	if err != nil || stdout != "" || !strings.Contains(stderr, "no Go toolchain to build it") {
		t.Errorf("pre-tool-use: err %v, stdout %q, stderr %q", err, stdout, stderr)
	}
	stdout, _, err = launch(t, plugin, data, "/usr/bin:/bin", "user-prompt-submit", `{"session_id":"s","prompt":"/whetstone:review"}`)
	if err != nil || !strings.Contains(stdout, "the review loop is not running") {
		t.Errorf("user-prompt-submit: err %v, stdout %q", err, stdout)
	}
	stdout, _, err = launch(t, plugin, data, "/usr/bin:/bin", "user-prompt-submit", `{"session_id":"s","prompt":"hello"}`)
	if err != nil || stdout != "" {
		t.Errorf("user-prompt-submit of another prompt: err %v, stdout %q; want silence", err, stdout)
	}
	// Once per session: the user sees it as a system message at startup, not
	// again when the context is compacted.
	stdout, _, err = launch(t, plugin, data, "/usr/bin:/bin", "session-start", `{"session_id":"s","source":"startup"}`)
	var m struct{ SystemMessage string }
	if err != nil || json.Unmarshal([]byte(stdout), &m) != nil ||
		!strings.Contains(m.SystemMessage, "no Go toolchain to build it") || !strings.Contains(m.SystemMessage, "Install Go 1.26.8") {
		t.Errorf("session-start: err %v, stdout %q; want one systemMessage saying what to do", err, stdout)
	}
	stdout, _, err = launch(t, plugin, data, "/usr/bin:/bin", "session-start", `{"session_id":"s","source":"compact"}`)
	if err != nil || stdout != "" {
		t.Errorf("session-start after compact: err %v, stdout %q; want silence", err, stdout)
	}
}

// fakeBinary writes an executable shell script at path that answers
// `version` with "whetstone <v>" and anything else with "<name> <args>",
// and appends each `version` call to path.calls.
func fakeBinary(t *testing.T, path, name, v string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	script := "#!/bin/sh\nif [ \"$1\" = version ]; then echo x >>\"$0.calls\"; echo \"whetstone " + v + "\"; exit 0; fi\necho " + name + " \"$@\"\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

func calls(path string) int {
	b, _ := os.ReadFile(path + ".calls")
	return strings.Count(string(b), "x")
}

// TestLauncherChecksCheckoutVersion: a source checkout's bin/whetstone runs
// only when the version it reports is VERSION; its answer is remembered, so
// the binary is asked once, and asked again when it is replaced.
func TestLauncherChecksCheckoutVersion(t *testing.T) {
	plugin, data := pluginCopy(t), t.TempDir()
	bin := filepath.Join(plugin, "bin", "whetstone")
	fakeBinary(t, bin, "stale", "0.0.1")
	for range 2 {
		stdout, stderr, err := launch(t, plugin, data, "/usr/bin:/bin", "pre-tool-use", noRunPayload)
		if err != nil || stdout != "" || !strings.Contains(stderr, "is version 0.0.1, not "+Version) || !strings.Contains(stderr, "no Go toolchain to build it") {
			t.Fatalf("stale bin/whetstone without Go: err %v, stdout %q, stderr %q; want it refused, a message, exit 0", err, stdout, stderr)
		}
	}
	if n := calls(bin); n != 1 {
		t.Errorf("the stale binary was asked its version %d times in two hooks, want 1 (remembered)", n)
	}

	// Later, `make build` replaces the binary: it is newer than the answer.
	past := time.Now().Add(-time.Minute)
	os.Chtimes(bin+".version", past, past)
	fakeBinary(t, bin, "fresh", Version)
	for range 2 {
		stdout, _, err := launch(t, plugin, data, "/usr/bin:/bin", "pre-tool-use", noRunPayload)
		if err != nil || stdout != "fresh hook pre-tool-use\n" {
			t.Fatalf("bin/whetstone of version %s: err %v, stdout %q; want it run", Version, err, stdout)
		}
	}
	if n := calls(bin); n != 2 {
		t.Errorf("the binary was asked its version %d times in all, want 2 (once per binary)", n)
	}
}

// TestLauncherStaleCheckoutRebuilds: with Go, a stale bin/whetstone is
// passed over and the right version is built into the plugin data.
func TestLauncherStaleCheckoutRebuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	plugin, data := pluginCopy(t), t.TempDir()
	fakeBinary(t, filepath.Join(plugin, "bin", "whetstone"), "stale", "0.0.1")
	stdout, stderr, err := launch(t, plugin, data, os.Getenv("PATH"), "pre-tool-use", noRunPayload)
	if err != nil || stdout != "" {
		t.Fatalf("err %v, stdout %q, stderr %q; want the rebuilt binary's empty answer", err, stdout, stderr)
	}
	out, err := exec.Command(filepath.Join(data, "whetstone-"+Version), "version").Output()
	if err != nil || string(out) != "whetstone "+Version+"\n" {
		t.Errorf("built binary: %q, %v", out, err)
	}
}

// packageCopy makes an npm-package-shaped plugin: the launcher, VERSION and
// bin/<platform>/whetstone, no Go sources.
func packageCopy(t *testing.T, platform string) string {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "scripts"), 0o755)
	script, _ := os.ReadFile("scripts/whetstone")
	os.WriteFile(filepath.Join(dir, "scripts", "whetstone"), script, 0o755)
	os.WriteFile(filepath.Join(dir, "VERSION"), []byte(Version+"\n"), 0o644)
	fakeBinary(t, filepath.Join(dir, "bin", platform, "whetstone"), "packaged", Version)
	return dir
}

// TestLauncherPackaged: in a package the binary for this platform runs
// without Go; the first hook links it into the plugin data and later hooks
// take that link.
func TestLauncherPackaged(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the launcher is a POSIX shell script")
	}
	plugin, data := packageCopy(t, runtime.GOOS+"-"+runtime.GOARCH), t.TempDir()
	for range 2 {
		stdout, stderr, err := launch(t, plugin, data, "/usr/bin:/bin", "pre-tool-use", noRunPayload)
		if err != nil || stdout != "packaged hook pre-tool-use\n" {
			t.Fatalf("err %v, stdout %q, stderr %q; want the packaged binary run", err, stdout, stderr)
		}
	}
	link, err := os.Readlink(filepath.Join(data, "whetstone-"+Version))
	if want := filepath.Join(plugin, "bin", runtime.GOOS+"-"+runtime.GOARCH, "whetstone"); err != nil || link != want {
		t.Errorf("plugin data link: %q, %v; want %s", link, err, want)
	}
	if entries, _ := os.ReadDir(data); len(entries) != 1 {
		t.Errorf("plugin data holds %d entries, want the link alone", len(entries))
	}
}

// TestLauncherPackagedOtherPlatform: a package without this platform's
// binary says so at session start, and never blocks a tool call.
func TestLauncherPackagedOtherPlatform(t *testing.T) {
	plugin, data := packageCopy(t, "plan9-amd64"), t.TempDir()
	stdout, _, err := launch(t, plugin, data, os.Getenv("PATH"), "session-start", `{"session_id":"s","source":"startup"}`)
	var m struct{ SystemMessage string }
	if err != nil || json.Unmarshal([]byte(stdout), &m) != nil || !strings.Contains(m.SystemMessage, "no prebuilt binary for "+runtime.GOOS+"/"+runtime.GOARCH) {
		t.Errorf("session-start: err %v, stdout %q", err, stdout)
	}
	stdout, _, err = launch(t, plugin, data, os.Getenv("PATH"), "pre-tool-use", noRunPayload)
	if err != nil || stdout != "" {
		t.Errorf("pre-tool-use: err %v, stdout %q; want exit 0 and no answer", err, stdout)
	}
}

// TestLauncherParallelVersionCheck: sixteen hooks meet a new bin/whetstone
// at once; while some write the remembered version, none reads it half
// written and passes the binary over (which, without Go, would leave the
// tool call ungated).
func TestLauncherParallelVersionCheck(t *testing.T) {
	plugin, data := pluginCopy(t), t.TempDir()
	fakeBinary(t, filepath.Join(plugin, "bin", "whetstone"), "fresh", Version)
	var wg sync.WaitGroup
	outs := make([]string, 16)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], _, _ = launch(t, plugin, data, "/usr/bin:/bin", "pre-tool-use", noRunPayload)
		}()
	}
	wg.Wait()
	for i, out := range outs {
		if out != "fresh hook pre-tool-use\n" {
			t.Errorf("hook %d: stdout %q; want bin/whetstone run", i, out)
		}
	}
}

// TestLauncherCheckoutIgnoresPackedBinaries: bin/<goos>-<goarch>/ in a
// source checkout is left over from some `make pack`, of unknown version,
// and is never run.
func TestLauncherCheckoutIgnoresPackedBinaries(t *testing.T) {
	plugin, data := pluginCopy(t), t.TempDir()
	fakeBinary(t, filepath.Join(plugin, "bin", runtime.GOOS+"-"+runtime.GOARCH, "whetstone"), "leftover", "0.0.1")
	stdout, stderr, err := launch(t, plugin, data, "/usr/bin:/bin", "pre-tool-use", noRunPayload)
	if err != nil || stdout != "" || !strings.Contains(stderr, "no Go toolchain to build it") {
		t.Errorf("err %v, stdout %q, stderr %q; want the leftover passed over and the no-Go message", err, stdout, stderr)
	}
}

// TestLauncherPackagedUnderGitBash: under Git for Windows' bash, uname says
// MINGW64_NT-… and x86_64 or aarch64; the launcher picks
// bin/windows-<arch>/whetstone.exe (uname is faked here; the .exe is a
// script, as the launcher only execs it).
func TestLauncherPackagedUnderGitBash(t *testing.T) {
	for machine, arch := range map[string]string{"x86_64": "amd64", "aarch64": "arm64"} {
		plugin, data := packageCopy(t, "windows-"+arch), t.TempDir()
		os.Rename(filepath.Join(plugin, "bin", "windows-"+arch, "whetstone"), filepath.Join(plugin, "bin", "windows-"+arch, "whetstone.exe"))
		fake := t.TempDir()
		uname := "#!/bin/sh\ncase $1 in -s) echo MINGW64_NT-10.0-26100 ;; -m) echo " + machine + " ;; esac\n"
		os.WriteFile(filepath.Join(fake, "uname"), []byte(uname), 0o755)
		stdout, stderr, err := launch(t, plugin, data, fake+":/usr/bin:/bin", "pre-tool-use", noRunPayload)
		if err != nil || stdout != "packaged hook pre-tool-use\n" {
			t.Errorf("%s: err %v, stdout %q, stderr %q; want bin/windows-%s/whetstone.exe run", machine, err, stdout, stderr, arch)
		}
	}
}

// launchIn runs the launcher as a hook in dir with the extra environment
// env, and returns its exit code.
func launchIn(t *testing.T, plugin, data, path, dir string, env []string, event, payload string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(filepath.Join(plugin, "scripts", "whetstone"), "hook", event)
	cmd.Dir = dir
	cmd.Env = append(hookEnv(env...), "CLAUDE_PLUGIN_DATA="+data, "PATH="+path)
	cmd.Stdin = strings.NewReader(payload)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("%s: %v", event, err)
		}
		return out.String(), errb.String(), exit.ExitCode()
	}
	return out.String(), errb.String(), 0
}

// activeRun records, as whetstone does, that session owns run r-1 in the
// git repository root and, if active, that the run is in progress.
func activeRun(t *testing.T, root, session string, active bool) {
	t.Helper()
	for _, d := range []string{"sessions", "active"} {
		os.MkdirAll(filepath.Join(root, ".whetstone", d), 0o755)
	}
	os.WriteFile(filepath.Join(root, ".whetstone", "sessions", session), []byte("r-1\n"), 0o644)
	if active {
		os.WriteFile(filepath.Join(root, ".whetstone", "active", session), []byte("r-1\n"), 0o644)
	}
}

// TestLauncherFailsClosedDuringARun: with no binary to be found or built,
// a gated hook of a session whose review run is in progress is refused
// (exit 2, Claude Code's PreToolUse refusal) with the reason and the fix,
// in a source checkout without Go and in a package without this platform's
// binary; every other hook, and every hook of a session without a run in
// progress, exits 0 and blocks nothing.
func TestLauncherFailsClosedDuringARun(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the launcher is a POSIX shell script")
	}
	const sess = "9b1d5c2e-7a4f-4e21-8c3d-2f6a0b9e1d47"
	write := `{"session_id":"` + sess + `","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"main.go","content":"x"}}`
	bash := `{"session_id":"` + sess + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf .git"}}`
	for _, install := range []struct {
		name   string
		plugin string
		fix    string
	}{
		{"checkout without Go", pluginCopy(t), "Install Go 1.26.8 or newer"},
		{"package without this platform's binary", packageCopy(t, "plan9-amd64"), "Build it from source with Go"},
	} {
		t.Run(install.name, func(t *testing.T) {
			data := t.TempDir()
			root, sub := repo(t)
			activeRun(t, root, sess, true)
			env := []string{"CLAUDE_CODE_SESSION_ID=" + sess}
			for _, dir := range []string{root, sub} {
				for _, call := range []struct{ event, payload string }{{"pre-tool-use", write}, {"pre-tool-use", bash}, {"pre-skill-shell-command", `{"session_id":"` + sess + `"}`}} {
					stdout, stderr, code := launchIn(t, install.plugin, data, "/usr/bin:/bin", dir, env, call.event, call.payload)
					if code != 2 || stdout != "" || !strings.Contains(stderr, "review run is in progress, so this call is refused") || !strings.Contains(stderr, install.fix) {
						t.Errorf("%s in %s: exit %d, stdout %q, stderr %q; want exit 2 and the reason with the fix (%q)", call.event, dir, code, stdout, stderr, install.fix)
					}
				}
				// Hooks that gate nothing are not refused: the user learns why
				// from the refused calls.
				for _, event := range []string{"subagent-start", "subagent-stop", "stop"} {
					if stdout, stderr, code := launchIn(t, install.plugin, data, "/usr/bin:/bin", dir, env, event, `{"session_id":"`+sess+`"}`); code != 0 || stdout != "" {
						t.Errorf("%s in %s: exit %d, stdout %q, stderr %q; want exit 0", event, dir, code, stdout, stderr)
					}
				}
			}

			// No session in the environment (a client that names none): any
			// run in progress in the project counts.
			if _, stderr, code := launchIn(t, install.plugin, data, "/usr/bin:/bin", root, nil, "pre-tool-use", write); code != 2 {
				t.Errorf("no session id, a run in progress: exit %d, stderr %q; want 2", code, stderr)
			}

			// The session's run has ended: whetstone removed its active file;
			// the session file stays. Nothing is refused.
			os.Remove(filepath.Join(root, ".whetstone", "active", sess))
			for _, env := range [][]string{env, nil} {
				if stdout, stderr, code := launchIn(t, install.plugin, data, "/usr/bin:/bin", sub, env, "pre-tool-use", bash); code != 0 || stdout != "" {
					t.Errorf("env %v, the run ended: exit %d, stdout %q, stderr %q; want exit 0 and no answer", env, code, stdout, stderr)
				}
			}

			// Another session's run is in progress: this session owns none and
			// is not refused (it never reaches the launcher's search for a
			// binary: the no-run path answers it).
			activeRun(t, root, "other-session", true)
			other := []string{"CLAUDE_CODE_SESSION_ID=fresh-session"}
			if stdout, stderr, code := launchIn(t, install.plugin, data, "/usr/bin:/bin", root, other, "pre-tool-use", write); code != 0 || stdout != "" || stderr != "" {
				t.Errorf("another session's run: exit %d, stdout %q, stderr %q; want a silent exit 0", code, stdout, stderr)
			}
			// A session whose run ended, while another's is in progress.
			if stdout, stderr, code := launchIn(t, install.plugin, data, "/usr/bin:/bin", root, env, "pre-tool-use", write); code != 0 || stdout != "" {
				t.Errorf("this session's run ended, another's runs: exit %d, stdout %q, stderr %q; want exit 0", code, stdout, stderr)
			}
		})
	}
}

// TestLauncherNoRunPathForksNothing: a hook of a session without a run is
// answered by the shell alone, with no fork and no exec but the script's
// own, also now that the launcher can refuse during a run (strace).
func TestLauncherNoRunPathForksNothing(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil || runtime.GOOS != "linux" {
		t.Skip("needs strace")
	}
	plugin, data := pluginCopy(t), t.TempDir()
	root, sub := repo(t)
	activeRun(t, root, "other-session", true)
	trace := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command(strace, "-f", "-qq", "-e", "trace=process", "-o", trace, filepath.Join(plugin, "scripts", "whetstone"), "hook", "pre-tool-use")
	cmd.Dir = sub
	cmd.Env = append(hookEnv("CLAUDE_CODE_SESSION_ID=fresh-session", "PWD="+sub), "CLAUDE_PLUGIN_DATA="+data, "PATH=/usr/bin:/bin")
	cmd.Stdin = strings.NewReader(noRunPayload)
	if out, err := cmd.CombinedOutput(); err != nil || len(out) != 0 {
		t.Skipf("strace cannot trace here: %v %s", err, out)
	}
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if f := strings.Fields(line); len(f) > 1 && !strings.HasPrefix(f[1], "exit") {
			calls = append(calls, f[1])
		}
	}
	if len(calls) != 1 || !strings.HasPrefix(calls[0], "execve(") {
		t.Errorf("the no-run path made these process calls, want the script's execve alone:\n%s", strings.Join(calls, "\n"))
	}
}

// TestLauncherIgnoresTheRepositorysPrograms: the helpers the launcher runs
// off its fast paths (uname, mkdir, ln, mv, rm, cat, sed, sleep, rmdir, go)
// never come from the repository under review, whichever way its
// directories are on PATH: an activated .venv/bin, a relative or empty
// entry, a link into it. Shims of each write a mark and run the real one.
func TestLauncherIgnoresTheRepositorysPrograms(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the launcher is a POSIX shell script")
	}
	root, sub := repo(t)
	marks := t.TempDir()
	shims := filepath.Join(root, ".venv", "bin")
	os.MkdirAll(shims, 0o755)
	for _, name := range []string{"uname", "mkdir", "ln", "mv", "rm", "cat", "sed", "sleep", "rmdir", "go"} {
		script := "#!/bin/sh\necho \"$0\" >>'" + filepath.Join(marks, name) + "'\nPATH=/usr/bin:/bin exec " + name + " \"$@\"\n"
		for _, dir := range []string{shims, sub} { // sub: for the relative and empty entries
			if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	link := filepath.Join(t.TempDir(), "tools")
	os.Symlink(shims, link)
	paths := map[string]string{
		"an activated virtualenv": shims + ":/usr/bin:/bin",
		"a link into the project": link + ":/usr/bin:/bin",
		"a relative entry":        ".:/usr/bin:/bin",
		"an empty entry":          ":/usr/bin:/bin",
	}
	for name, path := range paths {
		t.Run(name, func(t *testing.T) {
			os.RemoveAll(marks)
			os.MkdirAll(marks, 0o755)
			env := []string{"CLAUDE_CODE_SESSION_ID=" + norunSession}
			// A package's first hook finds its binary with uname and links it.
			pkg, data := packageCopy(t, runtime.GOOS+"-"+runtime.GOARCH), t.TempDir()
			if stdout, stderr, code := launchIn(t, pkg, data, path, sub, env, "session-start", `{"source":"startup"}`); code != 0 || stdout != "packaged hook session-start\n" {
				t.Errorf("package: exit %d, stdout %q, stderr %q; want the packaged binary run", code, stdout, stderr)
			}
			// A checkout's new bin/whetstone: the remembered version is renamed
			// into place.
			checkout := pluginCopy(t)
			fakeBinary(t, filepath.Join(checkout, "bin", "whetstone"), "fresh", Version)
			if stdout, stderr, code := launchIn(t, checkout, t.TempDir(), path, sub, env, "session-start", `{"source":"startup"}`); code != 0 || stdout != "fresh hook session-start\n" {
				t.Errorf("checkout: exit %d, stdout %q, stderr %q; want bin/whetstone run", code, stdout, stderr)
			}
			// A checkout without a binary, with a go of the repository's on
			// PATH: no Go, said with cat and sed.
			stdout, stderr, code := launchIn(t, pluginCopy(t), t.TempDir(), path, sub, env, "session-start", `{"source":"startup"}`)
			if code != 0 || !strings.Contains(stdout, "no Go toolchain to build it") {
				t.Errorf("checkout without a binary: exit %d, stdout %q, stderr %q; want the no-Go message", code, stdout, stderr)
			}
			if entries, _ := os.ReadDir(marks); len(entries) > 0 {
				for _, e := range entries {
					b, _ := os.ReadFile(filepath.Join(marks, e.Name()))
					t.Errorf("the repository's %s ran: %s", e.Name(), b)
				}
			}
		})
	}
}
