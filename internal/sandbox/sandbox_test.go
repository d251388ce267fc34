package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/whetstone-dev/whetstone/internal/sandbox/sandboxtest"
)

// bwrapForTest returns bwrap when it is installed and fails the test when it
// is installed but the sandbox does not work here: `make test` installs it
// (scripts/install-bwrap), so a broken sandbox must not pass as a skip.
func bwrapForTest(t testing.TB) string {
	t.Helper()
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("bwrap (bubblewrap) is not installed; `make test` installs it with scripts/install-bwrap")
	}
	if err := (finder{}).run(context.Background(), bwrap); err != nil {
		t.Fatalf("bwrap is installed but the sandbox does not work on this machine: %v", err)
	}
	return bwrap
}

// project is a temporary directory with the given files, symlinks resolved.
func project(t *testing.T, files map[string]string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// outsideTmp is a directory outside /tmp (which the sandbox replaces), so a
// write that escaped the sandbox would really land there.
func outsideTmp(t *testing.T) string {
	return sandboxtest.OutsideTmp(t, "whetstone-sandbox-test-")
}

// run runs line with bash, the way Claude Code's Bash tool does, from dir.
func run(t *testing.T, dir, line string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command("bash", "-c", line)
	cmd.Dir = dir
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

// sandboxed runs cmd wrapped for root with opts (Root is filled in).
func sandboxed(t *testing.T, bwrap, root, cmd string, o Options) (stdout, stderr string, code int) {
	t.Helper()
	o.Root = root
	return run(t, root, Wrap(bwrap, cmd, o))
}

// snapshot records every path under dir with its mode and content hash.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		entry := info.Mode().String()
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			entry += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		snap[rel] = entry
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

const (
	goMod     = "module example.com/m\n\ngo 1.21\n"
	goMain    = "package main\n\nimport \"fmt\"\n\nfunc Add(a, b int) int { return a + b }\n\nfunc main() { fmt.Println(Add(1, 2)) }\n"
	goMainTst = "package main\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"Add\")\n\t}\n}\n"
)

func TestGoTestWithCoverprofileLeavesNoTrace(t *testing.T) {
	bwrap := bwrapForTest(t)
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on PATH")
	}
	root := project(t, map[string]string{"go.mod": goMod, "main.go": goMain, "main_test.go": goMainTst})
	before := snapshot(t, root)
	out, errOut, code := sandboxed(t, bwrap, root, "go test -count=1 -coverprofile=c.out ./... && test -s c.out && echo COVER-WRITTEN", Options{})
	if code != 0 || !strings.Contains(out, "COVER-WRITTEN") {
		t.Fatalf("wrapped go test: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if _, err := os.Lstat(filepath.Join(root, "c.out")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("c.out exists in the project after the sandboxed run (err %v)", err)
	}
	if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
		t.Errorf("project changed (-before +after):\n%s", diff)
	}
}

func TestWritesToTheProjectVanish(t *testing.T) {
	bwrap := bwrapForTest(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	root := project(t, map[string]string{"main.go": goMain, "sub/x.txt": "x\n"})
	git(t, root, "init", "-q", "-b", "main")
	git(t, root, "add", "-A")
	git(t, root, "commit", "-q", "-m", "base")
	before := snapshot(t, root)
	gitID := "git -c user.name=t -c user.email=t@example.com "
	for _, tc := range []struct {
		name, cmd, want string
	}{
		{"overwrite", "echo x > main.go && cat main.go", "x\n"},
		{"append", "echo more >> main.go && tail -n1 main.go", "more\n"},
		{"remove", "rm main.go && test ! -e main.go && echo gone", "gone\n"},
		{"create", "touch new && ls new", "new\n"},
		{"remove dir", "rm -r sub && echo gone", "gone\n"},
		{"chmod", "chmod 000 main.go && stat -c %a main.go", "0\n"},
		{"commit", "echo y > main.go && " + gitID + "commit -qam change && git log --format=%s -1", "change\n"},
		{"reset", gitID + "reset -q --hard HEAD && git clean -fdxq && echo clean", "clean\n"},
		{"gc", "git gc -q --prune=now && echo packed", "packed\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := sandboxed(t, bwrap, root, tc.cmd, Options{})
			if code != 0 || out != tc.want {
				t.Errorf("inside: exit %d, stdout %q (want %q), stderr:\n%s", code, out, tc.want, errOut)
			}
			if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
				t.Errorf("project changed (-before +after):\n%s", diff)
			}
		})
	}
}

func TestEverythingElseIsReadOnly(t *testing.T) {
	bwrap := bwrapForTest(t)
	root := project(t, map[string]string{"main.go": goMain})
	outside := outsideTmp(t)
	marker := filepath.Join(outside, "escaped")
	out, errOut, code := sandboxed(t, bwrap, root, "echo x > "+Quote(marker), Options{})
	if code == 0 || !strings.Contains(errOut, "Read-only file system") {
		t.Errorf("write outside the project: exit %d, stdout %q, stderr %q; want a read-only failure", code, out, errOut)
	}
	if _, err := os.Lstat(marker); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s exists after the sandboxed write (err %v)", marker, err)
	}
}

func TestCommandRunsWithoutCapabilities(t *testing.T) {
	bwrap := bwrapForTest(t)
	root := project(t, map[string]string{"main.go": goMain})
	out, errOut, code := sandboxed(t, bwrap, root, "grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs):' /proc/self/status", Options{})
	want := "CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\n" +
		"CapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\nNoNewPrivs:\t1\n"
	if code != 0 || out != want {
		t.Fatalf("exit %d, stderr %q, status lines (-want +got):\n%s", code, errOut, cmp.Diff(want, out))
	}
	// The ways back to the real tree: make the read-only bind writable, or
	// take the overlay away. Both need capabilities the command lacks.
	for _, attack := range []string{
		"mount -o remount,bind,rw " + Quote(root),
		"umount -l " + Quote(root),
		"unshare -rm sh -c " + Quote("mount -o remount,bind,rw "+Quote(root)),
	} {
		_, _, code := sandboxed(t, bwrap, root, attack+" && echo x > main.go", Options{})
		if code == 0 {
			t.Errorf("%s succeeded inside the sandbox", attack)
		}
	}
	if b, err := os.ReadFile(filepath.Join(root, "main.go")); err != nil || string(b) != goMain {
		t.Errorf("main.go after the attacks: %q, %v", b, err)
	}
}

func TestTmpIsFreshAndVanishes(t *testing.T) {
	bwrap := bwrapForTest(t)
	root := project(t, map[string]string{"main.go": goMain})
	hostFile := filepath.Join(t.TempDir(), "host-secret") // under the host's /tmp
	if err := os.WriteFile(hostFile, []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := sandboxed(t, bwrap, root, "echo x > /tmp/scratch && cat /tmp/scratch && test ! -e "+Quote(hostFile)+" && echo $TMPDIR", Options{})
	if code != 0 || out != "x\n/tmp\n" {
		t.Fatalf("first run: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, errOut, code = sandboxed(t, bwrap, root, "test ! -e /tmp/scratch && echo gone", Options{})
	if code != 0 || out != "gone\n" {
		t.Fatalf("second run: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestNoNetwork(t *testing.T) {
	bwrap := bwrapForTest(t)
	root := project(t, map[string]string{"main.go": goMain})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hello\n"))
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	dial := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && head -n1 <&3", port)
	// The same command outside reaches the listener, so the test can fail.
	if out, errOut, code := run(t, root, dial); code != 0 || out != "hello\n" {
		t.Fatalf("outside: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, errOut, code := sandboxed(t, bwrap, root, dial, Options{})
	if code == 0 || !strings.Contains(errOut, "Connection refused") {
		t.Errorf("inside: exit %d, stdout %q, stderr %q; want connection refused", code, out, errOut)
	}
	out, _, _ = sandboxed(t, bwrap, root, "sed 1,2d /proc/net/dev | cut -d: -f1 | tr -d ' '", Options{})
	if out != "lo\n" {
		t.Errorf("network interfaces inside: %q, want only lo", out)
	}
}

func TestHide(t *testing.T) {
	bwrap := bwrapForTest(t)
	root := project(t, map[string]string{"main.go": goMain, "secrets/key": "in-root-key", "token": "in-root-token"})
	outside := outsideTmp(t)
	keyDir := filepath.Join(outside, "whetstone-keys")
	keyFile := filepath.Join(outside, "single-key")
	for p, content := range map[string]string{filepath.Join(keyDir, "mac.key"): "outside-key", keyFile: "outside-file"} {
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A symlink to the directory hides what it points to.
	link := filepath.Join(outside, "link-to-keys")
	if err := os.Symlink(keyDir, link); err != nil {
		t.Fatal(err)
	}
	o := Options{Hide: []string{link, keyFile, filepath.Join(root, "secrets"), filepath.Join(root, "token"), "/does/not/exist"}}
	read := "cat " + strings.Join([]string{Quote(filepath.Join(keyDir, "mac.key")), Quote(keyFile), "secrets/key", "token", "main.go"}, " ") + " 2>&1; ls -A " + Quote(keyDir) + " secrets; echo end"
	out, errOut, _ := sandboxed(t, bwrap, root, read, o)
	for _, secret := range []string{"outside-key", "outside-file", "in-root-key", "in-root-token"} {
		if strings.Contains(out, secret) {
			t.Errorf("hidden content %q was readable inside:\n%s", secret, out)
		}
	}
	if !strings.Contains(out, "package main") || !strings.HasSuffix(out, "end\n") {
		t.Errorf("the rest of the project should stay readable; stdout:\n%s\nstderr:\n%s", out, errOut)
	}
	// Without Hide the same command reads them, so the test can fail.
	out, _, _ = sandboxed(t, bwrap, root, read, Options{})
	for _, secret := range []string{"outside-key", "outside-file", "in-root-key", "in-root-token"} {
		if !strings.Contains(out, secret) {
			t.Errorf("control run without Hide did not read %q:\n%s", secret, out)
		}
	}
}

// hostile are strings that break naive quoting.
var hostile = []string{
	"",
	"plain",
	"it's",
	`double "quotes"`,
	"$(touch /tmp/pwned) and `touch /tmp/pwned2`",
	"$HOME ${HOME} $'\\x41' $((1+2))",
	"line1\nline2\n\n",
	"back\\slash \\' \\\\",
	"tab\tand\rcarriage",
	"!history !! ^a^b",
	"glob * ? [a-z] ~ ~root {a,b}",
	"; rm -rf / ; && || | & > < >> 2>&1",
	"'", "''", `'\''`, `"'"'"`,
	"=cmd", "-n", "--", "%1",
	"unicode ✓ héllo 日本",
	"\x01\x7f control",
}

func TestQuoteRoundTripsThroughShells(t *testing.T) {
	for _, shell := range []string{"sh", "bash", "zsh", "dash"} {
		if _, err := exec.LookPath(shell); err != nil {
			continue
		}
		for _, s := range hostile {
			out, err := exec.Command(shell, "-c", "printf %s "+Quote(s)).Output()
			if err != nil || string(out) != s {
				t.Errorf("%s: printf %%s %s = %q, %v; want %q", shell, Quote(s), out, err, s)
			}
		}
	}
}

func TestCommandRoundTripsThroughTheSandbox(t *testing.T) {
	bwrap := bwrapForTest(t)
	root := project(t, map[string]string{"main.go": goMain})
	cmds := []string{
		`printf '%s|' "$(echo sub)" ` + "`echo tick`" + ` "a'b" 'c"d' $'e\nf'`,
		"cat <<'EOF'\n$(not expanded) `nor this`\nEOF\necho after",
		"x='multi\nline'; printf '[%s]' \"$x\"",
		"echo $((6*7)); echo \"${PWD##*/}\" | wc -c",
		"for i in 1 2 3; do printf %s $i; done; echo",
		"set -- a 'b c'; echo $#",
		"echo stdout; echo stderr >&2; exit 3",
		"false && echo never || echo fallback",
		"echo unterminated | tr a-z A-Z # comment with 'quote",
	}
	for _, s := range hostile {
		cmds = append(cmds, "printf %s "+Quote(s))
	}
	for _, c := range cmds {
		wantOut, wantErr, wantCode := run(t, root, c)
		out, errOut, code := sandboxed(t, bwrap, root, c, Options{})
		if out != wantOut || errOut != wantErr || code != wantCode {
			t.Errorf("command %q\noutside: exit %d stdout %q stderr %q\ninside:  exit %d stdout %q stderr %q",
				c, wantCode, wantOut, wantErr, code, out, errOut)
		}
	}
}

func TestTrailingCopyOfTheCommandNeverRuns(t *testing.T) {
	bwrap := bwrapForTest(t)
	root := project(t, map[string]string{"main.go": goMain})
	outside := outsideTmp(t)
	marker := filepath.Join(outside, "ran-unsandboxed")
	// Inside, the write fails (read-only); if the copy after "exit" ran, it
	// would succeed outside.
	cmd := "touch " + Quote(marker)
	line := Wrap(bwrap, cmd, Options{Root: root})
	if !strings.HasSuffix(line, "\nexit\n"+cmd) {
		t.Fatalf("line does not end with exit and the original command:\n%s", line)
	}
	if _, _, code := run(t, root, line); code == 0 {
		t.Errorf("touch outside the project succeeded inside the sandbox")
	}
	if _, err := os.Lstat(marker); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the original command ran outside the sandbox: %s exists", marker)
	}
	// A trailing copy that is not even valid shell stays unread: bash stops at exit.
	out, errOut, code := sandboxed(t, bwrap, root, "echo ok; exit 4\n;; esac ((( 'unclosed", Options{})
	if out != "ok\n" || code != 4 {
		t.Errorf("exit %d, stdout %q, stderr %q; want ok and exit 4", code, out, errOut)
	}
}

func TestCwdAndGoCache(t *testing.T) {
	bwrap := bwrapForTest(t)
	root := project(t, map[string]string{"main.go": goMain, "sub/dir/f": "f"})
	gocache := project(t, map[string]string{"README": "cache"})
	env := func(k string) string {
		if k == "GOCACHE" {
			return gocache
		}
		return os.Getenv(k)
	}
	cmd := `pwd; echo "$GOCACHE"; echo entry > "$GOCACHE/new" && cat "$GOCACHE/new"`
	out, errOut, code := sandboxed(t, bwrap, root, cmd, Options{Cwd: filepath.Join(root, "sub", "dir"), Env: env})
	want := filepath.Join(root, "sub", "dir") + "\n" + gocache + "\nentry\n"
	if code != 0 || out != want {
		t.Fatalf("exit %d, stderr %q, stdout (-want +got):\n%s", code, errOut, cmp.Diff(want, out))
	}
	if _, err := os.Lstat(filepath.Join(gocache, "new")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a write to the build cache inside reached the real cache (err %v)", err)
	}
	// A build cache that does not exist yet becomes scratch.
	missing := func(k string) string {
		if k == "GOCACHE" {
			return "/nonexistent/go-build"
		}
		return ""
	}
	out, errOut, code = sandboxed(t, bwrap, root, `echo "$GOCACHE"; test -d "$GOCACHE" && echo dir`, Options{Env: missing})
	if code != 0 || out != scratch+"/go-build\ndir\n" {
		t.Errorf("missing cache: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestWrapFailsClosed(t *testing.T) {
	root := project(t, map[string]string{"main.go": goMain})
	outside := outsideTmp(t)
	marker := filepath.Join(outside, "ran")
	cmd := "touch " + Quote(marker)
	for _, tc := range []struct {
		name  string
		bwrap string
		cmd   string
		o     Options
		look  func(string) string
	}{
		{"relative root", "/usr/bin/bwrap", cmd, Options{Root: "proj"}, lookTool},
		{"root is /", "/usr/bin/bwrap", cmd, Options{Root: "/"}, lookTool},
		{"empty root", "/usr/bin/bwrap", cmd, Options{}, lookTool},
		{"relative cwd", "/usr/bin/bwrap", cmd, Options{Root: root, Cwd: "sub"}, lookTool},
		{"relative bwrap", "bwrap", cmd, Options{Root: root}, lookTool},
		{"NUL in command", "/usr/bin/bwrap", cmd + "\x00", Options{Root: root}, lookTool},
		{"no setpriv", "/usr/bin/bwrap", cmd, Options{Root: root}, func(string) string { return "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := wrap(tc.bwrap, tc.cmd, tc.o, tc.look)
			line = strings.ReplaceAll(line, "\x00", "") // bash cannot take NUL in -c
			_, errOut, code := run(t, root, line)
			if code != 126 || !strings.Contains(errOut, "whetstone sandbox: ") {
				t.Errorf("exit %d, stderr %q; want 126 and a whetstone sandbox message", code, errOut)
			}
			if _, err := os.Lstat(marker); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the command ran: %s exists", marker)
			}
		})
	}
}

func TestHidesAddsDockerSockets(t *testing.T) {
	home := project(t, map[string]string{".docker/run/docker.sock": "", "other.sock": ""})
	env := func(k string) string {
		switch k {
		case "HOME":
			return home
		case "DOCKER_HOST":
			return "unix://" + filepath.Join(home, "other.sock")
		}
		return ""
	}
	got := hides(nil, env)
	want := []hidden{{path: filepath.Join(home, "other.sock")}, {path: filepath.Join(home, ".docker", "run", "docker.sock")}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(hidden{})); diff != "" {
		t.Errorf("hides (-want +got):\n%s", diff)
	}
}

func TestGoCacheLocation(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"GOCACHE": "/c/go"}, "/c/go"},
		{map[string]string{"GOCACHE": "off", "HOME": "/h"}, ""},
		{map[string]string{"XDG_CACHE_HOME": "/x", "HOME": "/h"}, "/x/go-build"},
		{map[string]string{"HOME": "/h"}, "/h/.cache/go-build"},
		{map[string]string{"GOCACHE": "relative", "XDG_CACHE_HOME": "rel", "HOME": "/"}, scratch + "/go-build"},
	} {
		if got := goCache(func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("goCache(%v) = %q, want %q", tc.env, got, tc.want)
		}
	}
}

// FuzzQuote checks that Quote's output is one POSIX word that reads back as
// its input: either only safe characters, or single-quoted segments joined
// by \' with nothing else. TestQuoteRoundTripsThroughShells runs real shells
// on the hostile corpus.
func FuzzQuote(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := Quote(s)
		got, ok := unquote(q)
		if !ok || got != s {
			t.Fatalf("Quote(%q) = %q, which reads back as %q (ok %v)", s, q, got, ok)
		}
	})
}

// unquote reads a word made of bare safe characters, '…' segments and \'.
func unquote(q string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(q); {
		switch {
		case q[i] == '\'':
			end := strings.IndexByte(q[i+1:], '\'')
			if end < 0 {
				return "", false
			}
			b.WriteString(q[i+1 : i+1+end])
			i += end + 2
		case strings.HasPrefix(q[i:], `\'`):
			b.WriteByte('\'')
			i += 2
		case strings.IndexByte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:@+,", q[i]) >= 0:
			b.WriteByte(q[i])
			i++
		default:
			return "", false
		}
	}
	return b.String(), q != ""
}

func TestRewriteInMode(t *testing.T) {
	for mode, want := range map[string]bool{
		"bypassPermissions": true,
		"default":           false,
		"acceptEdits":       false,
		"dontAsk":           false,
		"plan":              false,
		"auto":              false,
		"":                  false,
	} {
		if got := RewriteInMode(mode); got != want {
			t.Errorf("RewriteInMode(%q) = %v, want %v", mode, got, want)
		}
	}
}
