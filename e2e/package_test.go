package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/whetstone-dev/whetstone/internal/fakemodel"
)

// The npm package (`make pack`), tested as a user gets it: unpacked from
// the tarball, on a PATH without Go. The tests skip unless
// WHETSTONE_PACKAGE names the tarball (`make e2e` sets it).

// packageFiles is everything the tarball must hold, and nothing else.
var packageFiles = []string{
	".claude-plugin/icon.png", ".claude-plugin/marketplace.json", ".claude-plugin/plugin.json",
	"LICENSE", "README.md", "VERSION",
	"bin/darwin-amd64/whetstone", "bin/darwin-arm64/whetstone", "bin/linux-amd64/whetstone",
	"bin/linux-arm64/whetstone", "bin/windows-amd64/whetstone.exe", "bin/windows-arm64/whetstone.exe",
	"commands/review.md", "hooks/hooks.json", "package.json", "scripts/whetstone", "skills/guide/SKILL.md",
	// OpenCode's plugin, command and skill (the check for files the package
	// should not hold lets any opencode/ file pass).
	"opencode/whetstone.ts", "opencode/command/whetstone-review.md", "opencode/skill/whetstone-review/SKILL.md",
}

// unpack extracts WHETSTONE_PACKAGE with tar, as npm and OpenCode do, and
// returns the package directory.
func unpack(t *testing.T) string {
	t.Helper()
	tgz := os.Getenv("WHETSTONE_PACKAGE")
	if tgz == "" {
		t.Skip("WHETSTONE_PACKAGE is not set; `make e2e` sets it to the `make pack` tarball")
	}
	dir := t.TempDir()
	if out, err := exec.Command("tar", "-xzf", tgz, "-C", dir).CombinedOutput(); err != nil {
		t.Fatalf("tar -xzf %s: %v\n%s", tgz, err, out)
	}
	// Resolve symlinks so paths match what Claude Code reports.
	pkg, err := filepath.EvalSymlinks(filepath.Join(dir, "package"))
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

// pathWithoutGo is PATH with every directory holding a `go` removed.
func pathWithoutGo(t *testing.T) string {
	t.Helper()
	var keep []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "go")); err != nil && d != "" {
			keep = append(keep, d)
		}
	}
	path := strings.Join(keep, string(filepath.ListSeparator))
	cmd := exec.Command("sh", "-c", "command -v go")
	cmd.Env = append(os.Environ(), "PATH="+path)
	if out, err := cmd.Output(); err == nil {
		t.Fatalf("go is still found on the reduced PATH: %s", out)
	}
	return path
}

// TestPackageContents: the tarball holds the plugin for both clients and
// the six binaries, executable, and no install script; the launcher runs
// this platform's binary without Go.
func TestPackageContents(t *testing.T) {
	pkg := unpack(t)
	var files []string
	filepath.WalkDir(pkg, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(pkg, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	for _, f := range files {
		if strings.HasPrefix(f, "agents/") || strings.HasPrefix(f, "opencode/") {
			continue
		}
		if !slices.Contains(packageFiles, f) {
			t.Errorf("the package holds %s, which it should not", f)
		}
	}
	for _, f := range packageFiles {
		if !slices.Contains(files, f) {
			t.Errorf("the package lacks %s", f)
		}
	}
	for _, f := range files {
		if !strings.HasPrefix(f, "bin/") && f != "scripts/whetstone" {
			continue
		}
		if fi, err := os.Stat(filepath.Join(pkg, f)); err != nil || fi.Mode().Perm() != 0o755 {
			t.Errorf("%s: mode %v, %v; want 0755 (the clients run it as extracted)", f, fi.Mode(), err)
		}
	}

	var manifest struct {
		Version string            `json:"version"`
		Exports map[string]string `json:"exports"`
		Scripts map[string]string `json:"scripts"`
	}
	b, _ := os.ReadFile(filepath.Join(pkg, "package.json"))
	if err := json.Unmarshal(b, &manifest); err != nil {
		t.Fatal(err)
	}
	if manifest.Exports["./server"] != "./opencode/whetstone.ts" {
		t.Errorf(`exports["./server"] = %q, want the OpenCode plugin ./opencode/whetstone.ts`, manifest.Exports["./server"])
	}
	for _, s := range []string{"preinstall", "install", "postinstall"} {
		if manifest.Scripts[s] != "" {
			t.Errorf("package.json has a %s script; the clients install with scripts off", s)
		}
	}

	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return
	}
	want := "whetstone " + manifest.Version + "\n"
	out, err := exec.Command(filepath.Join(pkg, "bin", "linux-amd64", "whetstone"), "version").Output()
	if err != nil || string(out) != want {
		t.Errorf("bin/linux-amd64/whetstone version: %q, %v; want %q", out, err, want)
	}
	data := t.TempDir()
	cmd := exec.Command(filepath.Join(pkg, "scripts", "whetstone"), "version")
	cmd.Env = append(os.Environ(), "PATH="+pathWithoutGo(t), "CLAUDE_PLUGIN_DATA="+data)
	if out, err := cmd.CombinedOutput(); err != nil || string(out) != want {
		t.Errorf("scripts/whetstone version without Go: %q, %v; want %q", out, err, want)
	}
	if link, err := os.Readlink(filepath.Join(data, "whetstone-"+manifest.Version)); err != nil || link != filepath.Join(pkg, "bin", "linux-amd64", "whetstone") {
		t.Errorf("the launcher linked %q (%v), want the packaged binary", link, err)
	}
}

// TestPackagedPluginLoop: Claude Code installs the plugin from the tarball
// the way a user does, through a marketplace whose entry is an npm source
// (served here over HTTP as the npm registry would), and on a PATH without
// Go runs a whole loop to DONE: findings, a fix, a clean round.
func TestPackagedPluginLoop(t *testing.T) {
	claude := os.Getenv("WHETSTONE_CLAUDE")
	if claude == "" {
		t.Skip("WHETSTONE_CLAUDE is not set; `make e2e` sets it to the pinned claude binary")
	}
	t.Parallel()
	pkg := unpack(t)
	v := version(t, pkg)
	tgz := os.Getenv("WHETSTONE_PACKAGE")
	registry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/whetstone.tgz" {
			http.NotFound(w, r)
			return
		}
		http.ServeFile(w, r, tgz)
	}))
	t.Cleanup(registry.Close)
	market := t.TempDir()
	os.MkdirAll(filepath.Join(market, ".claude-plugin"), 0o755)
	os.WriteFile(filepath.Join(market, ".claude-plugin", "marketplace.json"), []byte(`{"name":"local","owner":{"name":"test"},
		"plugins":[{"name":"whetstone","source":{"source":"npm","package":"`+registry.URL+`/whetstone.tgz"}}]}`), 0o644)

	r := newRepo(t, baseFiles, changedFiles)
	s := newSession(t, env{claude: claude}, r, fakemodel.Whetstone{
		Findings: criticFindsOnce, Fixes: fixOnce, ReviewerDelay: 500 * time.Millisecond,
	}.Script())
	// Claude Code installs an npm source over plain HTTP only from the npm
	// registry's own host.
	s.environ = append(s.environ, "PATH="+pathWithoutGo(t), "npm_config_registry="+registry.URL+"/")
	for _, args := range [][]string{{"plugin", "marketplace", "add", market}, {"plugin", "install", "whetstone@local"}} {
		cmd := exec.Command(claude, args...)
		cmd.Dir = r.dir
		cmd.Env = append(append(cleanEnv(), "HOME="+s.home, "TMPDIR="+s.tmp), s.environ...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("claude %v: %v\n%s", args, err, out)
		}
	}
	installed := filepath.Join(s.home, ".claude", "plugins", "cache", "local", "whetstone", v)
	if _, err := os.Stat(filepath.Join(installed, "bin", runtime.GOOS+"-"+runtime.GOARCH, "whetstone")); err != nil {
		t.Fatalf("the installed plugin has no binary for this platform: %v", err)
	}
	st := s.claude("/whetstone:review")

	run := wantRun(t, r, "done", "", "APPROVE", 2)
	wantFiles(t, r, run, "iter-1/critic.json", "iter-1/fix.json", "iter-2/verdict.json", "report.md")
	if !strings.Contains(r.read("calc.go"), fixOffByOne.New) {
		t.Error("the fixer's Edit did not reach calc.go")
	}
	wantSummary(t, st, "DONE")
	// The hooks ran the packaged binary, linked into the plugin data on
	// first use; nothing was built.
	data := filepath.Join(s.home, ".claude", "plugins", "data", "whetstone-local")
	entries, _ := os.ReadDir(data)
	var names []string
	for _, en := range entries {
		names = append(names, en.Name())
	}
	link, err := os.Readlink(filepath.Join(data, "whetstone-"+v))
	want := filepath.Join(installed, "bin", runtime.GOOS+"-"+runtime.GOARCH, "whetstone")
	if err != nil || link != want || len(names) != 1 {
		t.Errorf("plugin data %s holds %v, link %q (%v); want only the link to %s", data, names, link, err, want)
	}
}

func version(t *testing.T, pkg string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(pkg, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestPackagedCodexInstall: the tarball is also how a user without Go
// installs whetstone into Codex: `package/scripts/whetstone install codex
// --global` on a PATH without Go writes hooks.json running the packaged
// binary of this platform, the agents and the skill, and `uninstall`
// removes exactly them.
func TestPackagedCodexInstall(t *testing.T) {
	pkg := unpack(t)
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the packaged binary is checked on linux/amd64")
	}
	codexHome, project := t.TempDir(), t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(pkg, "scripts", "whetstone"), args...)
		cmd.Dir = project
		cmd.Env = append(os.Environ(), "PATH="+pathWithoutGo(t), "CODEX_HOME="+codexHome, "CLAUDE_PLUGIN_DATA="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("scripts/whetstone %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("install", "codex", "--global")
	hooks, err := os.ReadFile(filepath.Join(codexHome, "hooks.json"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(pkg, "bin", "linux-amd64", "whetstone")
	if !strings.Contains(string(hooks), bin+" hook pre-tool-use --client=codex") {
		t.Errorf("hooks.json does not run the packaged binary %s:\n%s", bin, hooks)
	}
	for _, f := range []string{"agents/whetstone-critic.toml", "agents/whetstone-fixer.toml", "skills/whetstone-review/SKILL.md"} {
		if _, err := os.Stat(filepath.Join(codexHome, f)); err != nil {
			t.Errorf("install codex wrote no %s: %v", f, err)
		}
	}
	run("uninstall", "codex", "--global")
	var left []string
	filepath.WalkDir(codexHome, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	if len(left) != 0 {
		t.Errorf("uninstall codex left %v", left)
	}
}
