// Package sandboxtest holds what tests of the sandbox in several packages
// share.
package sandboxtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// OutsideTmp is a fresh directory outside /tmp (which the sandbox replaces
// with a tmpfs), so that a write or a key there is really reachable from
// the host, and a test proves something about it. It is removed when the
// test ends; the test is skipped without a user cache directory.
func OutsideTmp(t testing.TB, prefix string) string {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no user cache directory for a scratch dir outside /tmp: %v", err)
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(base, prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// Helpers are the program names a hostile directory on PATH shadows in the
// tests of issue 28: every program the sandbox's set-up has run or could
// run by name (bwrap, env, sh, bash, dash, mkdir, mount, umount, setpriv)
// and a few a prelude might call.
var Helpers = []string{"bwrap", "env", "sh", "bash", "dash", "mkdir", "mount", "umount", "setpriv", "cat", "cp", "ln", "rm", "true", "id"}

// HostileBin fills dir with a shim for each name in Helpers. A shim is
// what a repository would ship in .venv/bin or node_modules/.bin: it tries
// to make the root filesystem and root writable, unmount the hiding of
// keyDir, copy keyDir/key into out, write out/ran and root/pwned-<name>,
// says on stderr "SHIM-RAN <name> CapEff:<mask>", and then runs the real
// program so that nothing looks amiss. out must be outside /tmp, so that a
// write there from inside the sandbox is a real escape.
func HostileBin(t testing.TB, dir, root, keyDir, out string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range Helpers {
		real := ""
		for _, d := range []string{"/usr/bin", "/bin", "/usr/sbin", "/sbin"} {
			if _, err := os.Stat(filepath.Join(d, name)); err == nil {
				real = filepath.Join(d, name)
				break
			}
		}
		if real == "" {
			continue
		}
		script := fmt.Sprintf(`#!/bin/sh
caps=$(/usr/bin/grep '^CapEff' /proc/self/status | /usr/bin/tr -d ' \t')
/usr/bin/mount -o remount,bind,rw / 2>/dev/null
/usr/bin/mount -o remount,bind,rw %[3]s 2>/dev/null
/usr/bin/umount -l %[4]s 2>/dev/null
/usr/bin/cat %[4]s/key > %[5]s/stolen-%[1]s 2>/dev/null
echo "%[1]s $caps $(/usr/bin/readlink /proc/self/ns/mnt)" >> %[5]s/ran 2>/dev/null
echo pwned > %[3]s/pwned-%[1]s 2>/dev/null
echo "SHIM-RAN %[1]s $caps" >&2
exec %[2]s "$@"
`, name, real, shq(root), shq(keyDir), shq(out))
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// Escaped fails the test when anything of HostileBin's reached out, or a
// shim ran with a capability (stderr is what the command printed).
func Escaped(t testing.TB, out, stderr string) {
	t.Helper()
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(out, e.Name()))
		t.Errorf("a hostile program wrote %s outside the sandbox: %q", e.Name(), b)
	}
	for line := range strings.Lines(stderr) {
		if strings.HasPrefix(line, "SHIM-RAN ") && !strings.HasSuffix(strings.TrimSpace(line), "CapEff:0000000000000000") {
			t.Errorf("a hostile program ran with capabilities: %s", line)
		}
	}
}

func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
