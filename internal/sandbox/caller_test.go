package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/whetstone-dev/whetstone/internal/sandbox/sandboxtest"
)

// These tests are issue 28's: the caller's environment (its PATH, and what
// it sets for shells, the dynamic loader and interpreters) is the
// repository's to choose when the user activated its virtualenv or allowed
// its .envrc. Nothing of it may run while the sandbox's set-up holds
// capabilities, nor change what the command runs.

// callerEnv is the caller's environment: os.Environ with vars set over it.
func callerEnv(vars map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); vars[k] == "" {
			env = append(env, kv)
		}
	}
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return env
}

// lookup is Options.Env over an environment list.
func lookup(env []string) func(string) string {
	return func(k string) string {
		for _, kv := range slices.Backward(env) {
			if name, v, _ := strings.Cut(kv, "="); name == k {
				return v
			}
		}
		return ""
	}
}

// runAs runs line from dir as the caller's shell would: the system bash
// (the user's shell is not the repository's) with env.
func runAs(t *testing.T, dir, line string, env []string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command("/bin/bash", "-c", line)
	cmd.Dir, cmd.Env = dir, env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run bash: %v", err)
	}
	return o.String(), e.String(), code
}

// hostileSetUp is a project whose .venv/bin and node_modules/.bin shadow
// every helper, both first on the caller's PATH, and a key outside /tmp.
func hostileSetUp(t *testing.T) (root, keyDir, out string, env []string) {
	root = project(t, map[string]string{"main.go": goMain})
	outside := outsideTmp(t)
	keyDir, out = filepath.Join(outside, "keys"), filepath.Join(outside, "out")
	for _, d := range []string{keyDir, out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(keyDir, "key"), []byte("SECRET-KEY-28"), 0o600); err != nil {
		t.Fatal(err)
	}
	venv, nm := filepath.Join(root, ".venv", "bin"), filepath.Join(root, "node_modules", ".bin")
	sandboxtest.HostileBin(t, venv, root, keyDir, out)
	sandboxtest.HostileBin(t, nm, root, keyDir, out)
	env = callerEnv(map[string]string{"PATH": venv + ":" + nm + ":" + os.Getenv("PATH"), "VIRTUAL_ENV": filepath.Dir(venv)})
	return root, keyDir, out, env
}

// TestCallerPathCannotReachTheSetUp: the attack of issue 28. The caller's
// PATH starts with the project's .venv/bin and node_modules/.bin, each a
// shim of every helper the set-up runs or could run by name; the shims try
// to remount the project writable, unhide the key and copy it out. None
// runs before the capabilities are dropped; after the drop they may run
// (the command's PATH is the caller's), with no capability, and nothing
// they do lands.
func TestCallerPathCannotReachTheSetUp(t *testing.T) {
	bwrap := bwrapForTest(t)
	root, keyDir, out, env := hostileSetUp(t)
	before := snapshot(t, root)
	cmd := "mkdir -p made && cat " + Quote(filepath.Join(keyDir, "key")) + "; echo DONE"
	for _, tc := range []struct {
		name string
		line func() string
	}{
		{"Wrap", func() string {
			return Wrap(bwrap, cmd, Options{Root: root, Hide: []string{keyDir}, Env: lookup(env)})
		}},
		{"Command", func() string {
			argv, why := Command(bwrap, []string{"sh", "-c", cmd}, Options{Root: root, Hide: []string{keyDir}, Env: lookup(env)})
			if why != "" {
				t.Fatalf("Command: %s", why)
			}
			return join(argv)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runAs(t, root, tc.line(), env)
			if code != 0 || !strings.Contains(stdout, "DONE") {
				t.Errorf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
			}
			if strings.Contains(stdout+stderr, "SECRET-KEY-28") {
				t.Errorf("the key was read:\n%s\n%s", stdout, stderr)
			}
			sandboxtest.Escaped(t, out, stderr)
			if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
				t.Errorf("project changed (-before +after):\n%s", diff)
			}
		})
	}
}

// TestHelpersComeFromSystemDirectories: every program the line starts by
// path is absolute and in toolDirs, whatever the caller's PATH; bwrap too
// (Find).
func TestHelpersComeFromSystemDirectories(t *testing.T) {
	root := project(t, map[string]string{"main.go": goMain})
	venv := filepath.Join(root, ".venv", "bin")
	sandboxtest.HostileBin(t, venv, root, root, root)
	t.Setenv("PATH", venv+":"+os.Getenv("PATH"))
	line := Wrap("/usr/bin/bwrap", "true", Options{Root: root})
	if !strings.HasPrefix(line, lookTool("env")+" -i ") {
		t.Errorf("the line does not start with an absolute env -i: %.80s", line)
	}
	for _, name := range sandboxtest.Helpers {
		if strings.Contains(line, filepath.Join(venv, name)) {
			t.Errorf("the line names %s of the caller's PATH:\n%s", name, line)
		}
	}
	for _, h := range helpers {
		p := lookTool(h)
		if p == "" || !slices.Contains(toolDirs, filepath.Dir(p)) || !strings.Contains(line, " "+p+" ") {
			t.Errorf("helper %s: %q, not a system path in the line", h, p)
		}
	}
	if b, err := lookBwrap("bwrap"); err == nil && !slices.Contains(toolDirs, filepath.Dir(b)) {
		t.Errorf("Find's bwrap is %s", b)
	}
}

// hostileShell and hostileC are what the variables point at: code that
// says on stderr where it ran (its mount namespace) and with which
// capabilities.
const hostileShell = `echo "HOSTILE-RAN %s mntns=$(/usr/bin/readlink /proc/self/ns/mnt) $(/usr/bin/grep '^CapEff' /proc/self/status | /usr/bin/tr -d ' \t')" >&2` + "\n"

const hostileC = `#include <stdio.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void hostile(void) {
	char ns[128] = "", exe[256] = "", line[256], caps[64] = "?";
	ssize_t n = readlink("/proc/self/ns/mnt", ns, sizeof ns - 1);
	if (n > 0) ns[n] = 0;
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) exe[n] = 0;
	FILE *f = fopen("/proc/self/status", "r");
	if (f) {
		while (fgets(line, sizeof line, f))
			if (!strncmp(line, "CapEff:", 7)) sscanf(line + 7, "%63s", caps);
		fclose(f);
	}
	fprintf(stderr, "HOSTILE-RAN LD_PRELOAD(%s) mntns=%s CapEff:%s\n", exe, ns, caps);
}
`

// TestCallerEnvironmentDoesNotReachTheSandbox: variables that make a
// shell, the dynamic loader or an interpreter run code of the caller's
// choosing are not passed in. The hostile code may run in the caller's own
// processes (the shell that reads the line, env), never in the sandbox: not
// with the set-up's capabilities, not in the command.
func TestCallerEnvironmentDoesNotReachTheSandbox(t *testing.T) {
	bwrap := bwrapForTest(t)
	host, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		t.Fatal(err)
	}
	root := project(t, map[string]string{
		"main.go":                  goMain,
		"hostile/bash_env.sh":      fmt.Sprintf(hostileShell, "BASH_ENV"),
		"hostile/env.sh":           fmt.Sprintf(hostileShell, "ENV"),
		"hostile/sitecustomize.py": "import os, sys\nsys.stderr.write('HOSTILE-RAN PYTHONPATH mntns=%s\\n' % os.readlink('/proc/self/ns/mnt'))\n",
		"hostile/require.js":       "process.stderr.write('HOSTILE-RAN NODE_OPTIONS mntns=' + require('fs').readlinkSync('/proc/self/ns/mnt') + '\\n')\n",
	})
	h := filepath.Join(root, "hostile")
	type tc struct {
		name string
		vars map[string]string
		cmd  string
		tool string
	}
	cases := []tc{
		{"BASH_ENV and ENV", map[string]string{"BASH_ENV": filepath.Join(h, "bash_env.sh"), "ENV": filepath.Join(h, "env.sh")}, "echo DONE", ""},
		{"PYTHONPATH", map[string]string{"PYTHONPATH": h}, "/usr/bin/python3 -c 'print(\"DONE\")'", "/usr/bin/python3"},
		{"NODE_OPTIONS", map[string]string{"NODE_OPTIONS": "--require " + filepath.Join(h, "require.js")}, "node -e 'console.log(\"DONE\")'", "node"},
	}
	if cc, err := exec.LookPath("cc"); err == nil {
		so := filepath.Join(h, "hostile.so")
		if err := os.WriteFile(filepath.Join(h, "hostile.c"), []byte(hostileC), 0o644); err != nil {
			t.Fatal(err)
		}
		if b, err := exec.Command(cc, "-shared", "-fPIC", "-o", so, filepath.Join(h, "hostile.c")).CombinedOutput(); err != nil {
			t.Fatalf("cc: %v\n%s", err, b)
		}
		cases = append(cases, tc{"LD_PRELOAD", map[string]string{"LD_PRELOAD": so}, "echo DONE", ""})
	} else {
		t.Log("no C compiler: the LD_PRELOAD case is not run")
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.tool != "" {
				if _, err := exec.LookPath(c.tool); err != nil {
					t.Skipf("%s is not installed", c.tool)
				}
			}
			env := callerEnv(c.vars)
			// The same command outside runs the hostile code, so the test can fail.
			_, stderr, _ := runAs(t, root, c.cmd, env)
			if !strings.Contains(stderr, "HOSTILE-RAN") {
				t.Fatalf("outside the sandbox %v ran nothing hostile; stderr:\n%s", c.vars, stderr)
			}
			stdout, stderr, code := runAs(t, root, Wrap(bwrap, c.cmd, Options{Root: root, Env: lookup(env)}), env)
			if code != 0 || !strings.Contains(stdout, "DONE") {
				t.Errorf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
			}
			for line := range strings.Lines(stderr) {
				if strings.HasPrefix(line, "HOSTILE-RAN") && !strings.Contains(line, "mntns="+host) {
					t.Errorf("hostile code ran in the sandbox: %s", line)
				}
			}
		})
	}
}

// TestPathUnderTmpIsBoundBack: a tool directory on the caller's PATH under
// /tmp or /run (fnm's per-shell directories, a virtualenv in /tmp) exists
// in the sandbox, read-only, as named and through a symlink; a hidden file
// inside one stays hidden.
func TestPathUnderTmpIsBoundBack(t *testing.T) {
	bwrap := bwrapForTest(t)
	root := project(t, map[string]string{"main.go": goMain})
	tools := project(t, map[string]string{"bin/tmptool": "#!/bin/sh\necho TMPTOOL-RAN\n", "bin/secret": "HIDDEN-IN-TMP"})
	linked := project(t, map[string]string{"bin/linkedtool": "#!/bin/sh\necho LINKEDTOOL-RAN\n"})
	for _, p := range []string{filepath.Join(tools, "bin", "tmptool"), filepath.Join(linked, "bin", "linkedtool")} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(t.TempDir(), "per-shell")
	if err := os.Symlink(filepath.Join(linked, "bin"), link); err != nil {
		t.Fatal(err)
	}
	env := callerEnv(map[string]string{"PATH": filepath.Join(tools, "bin") + ":" + link + "::relative/bin:" + os.Getenv("PATH")})
	o := Options{Root: root, Env: lookup(env), Hide: []string{filepath.Join(tools, "bin", "secret")}}
	cmd := "tmptool && linkedtool && cat " + Quote(filepath.Join(tools, "bin", "secret")) + "; touch " + Quote(filepath.Join(tools, "bin", "new")) + " || echo READ-ONLY"
	stdout, stderr, code := runAs(t, root, Wrap(bwrap, cmd, o), env)
	want := "TMPTOOL-RAN\nLINKEDTOOL-RAN\nREAD-ONLY\n"
	if code != 0 || stdout != want {
		t.Errorf("exit %d, stderr %q, stdout (-want +got):\n%s", code, stderr, cmp.Diff(want, stdout))
	}
	if why := Unreachable(filepath.Join(tools, "bin", "tmptool"), o); why != "" {
		t.Errorf("Unreachable(tmptool) = %q, want reachable", why)
	}
	// A program outside /tmp that is a symlink into a /tmp directory no
	// PATH entry binds back is not there inside: Unreachable says so.
	elsewhere := project(t, map[string]string{"ruff": "#!/bin/sh\n"})
	named := filepath.Join(outsideTmp(t), "ruff")
	if err := os.Symlink(filepath.Join(elsewhere, "ruff"), named); err != nil {
		t.Fatal(err)
	}
	if why := Unreachable(named, o); !strings.Contains(why, "(empty in the sandbox)") {
		t.Errorf("Unreachable(%s) = %q, want why", named, why)
	}
	if why := Unreachable(filepath.Join(tools, "bin", "secret"), o); !strings.Contains(why, "hidden") {
		t.Errorf("Unreachable(hidden) = %q", why)
	}
}

// TestCommandEnvironment: the command's environment is passEnv from the
// caller, PATH's absolute entries, and the sandbox's own settings.
func TestCommandEnvironment(t *testing.T) {
	caller := map[string]string{
		"HOME": "/home/u", "LANG": "C.UTF-8", "LC_ALL": "/work/proj/locale", "GOPATH": "/home/u/go",
		"PATH": "/home/u/.venv/bin::rel:/usr/bin:/usr/bin/", "LD_PRELOAD": "/x.so", "BASH_ENV": "/x", "PYTHONPATH": "/x",
		"NODE_OPTIONS": "--require /x", "GOFLAGS": "-toolexec=/x", "GITHUB_TOKEN": "t", "TMPDIR": "/tmp/claude", "GOPROXY": "https://proxy",
	}
	got := commandEnv(func(k string) string { return caller[k] }, "/home/u/.cache/go-build")
	want := []string{"HOME=/home/u", "LANG=C.UTF-8", "GOPATH=/home/u/go",
		"PATH=/home/u/.venv/bin:/usr/bin", "TMPDIR=/tmp", "GOTMPDIR=/tmp", "GOPROXY=off"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("commandEnv (-want +got):\n%s", diff)
	}
	if got := commandEnv(func(string) string { return "" }, ""); !slices.Contains(got, "PATH="+systemPath) || !slices.Contains(got, "GOCACHE=off") {
		t.Errorf("commandEnv with nothing: %q", got)
	}
	// whetstone's own PATH lost the project's directories (internal/toolpath);
	// the command's starts from the caller's as it was.
	caller[CallerPath] = "/work/proj/.venv/bin:/usr/bin"
	if got := commandEnv(func(k string) string { return caller[k] }, "/c"); !slices.Contains(got, "PATH=/work/proj/.venv/bin:/usr/bin") {
		t.Errorf("commandEnv with %s: %q", CallerPath, got)
	}
}
