// Package doctor checks a whetstone installation for `whetstone doctor`:
// the binary against its plugin, the plugin's files, Go, the clients, the
// project's whetstone.json and its trust, the sandbox, the signing key,
// .whetstone/ and git. It reads the project through internal/app and
// changes nothing (a probe file it creates it removes); the hooks never
// call it.
package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	goversion "go/version"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/whetstone-dev/whetstone"
	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/brief"
	"github.com/whetstone-dev/whetstone/internal/client"
	"github.com/whetstone-dev/whetstone/internal/config"
	"github.com/whetstone-dev/whetstone/internal/gitrun"
	"github.com/whetstone-dev/whetstone/internal/paint"
	"github.com/whetstone-dev/whetstone/internal/review"
	"github.com/whetstone-dev/whetstone/internal/safeio"
	"github.com/whetstone-dev/whetstone/internal/sandbox"
	"github.com/whetstone-dev/whetstone/internal/state"
)

// Check is one line of `whetstone doctor`.
type Check struct {
	Name   string
	Level  string // ok, warn (works, but less well) or fail (something is wrong)
	Detail string
	Fix    string // how to fix it; empty when ok
}

// Check levels.
const (
	OK   = "ok"
	Warn = "warn"
	Fail = "fail"
)

// toolTimeout bounds each `<tool> --version` doctor runs.
const toolTimeout = 10 * time.Second

// Run checks the installation as seen from dir: the binary against the
// plugin it belongs to, the plugin's files, Go when the plugin is built
// from source, the clients, bubblewrap, the key, .whetstone/ and git.
// Everything it runs is found on PATH, so a test controls what it finds.
func Run(a *app.App, dir string) []Check {
	plugin, root := pluginRoot(a.Getenv), app.FindRoot(dir)
	checks := []Check{versionCheck(plugin), pluginCheck(plugin, brief.Agents()), goCheck(plugin)}
	checks = append(checks, clientChecks(a, root)...)
	file, trustChecks := configChecks(a, root)
	checks = append(checks, trustChecks...)
	checks = append(checks, sandboxCheck(a, file), keyCheck(a, root), writeCheck(root), gitCheck(dir))
	return checks
}

// configChecks reads the project's whetstone.json as committed at HEAD
// (a run reads it at its change's base: the same file unless the change
// touches it; never the work tree) and says which of its settings weaken
// containment and whether the user trusts them (docs/security.md). It
// returns the settings a run would apply from it, and no line when there
// is no committed file.
func configChecks(a *app.App, root string) (config.File, []Check) {
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	if _, err := (gitrun.Git{Dir: root}).Str(ctx, "rev-parse", "--verify", "-q", "HEAD^{commit}"); err != nil {
		return config.File{}, nil // no repository, or no commit yet: nothing is committed
	}
	src, err := config.LoadAt(ctx, root, "HEAD")
	if err != nil {
		return config.File{}, []Check{{Name: "config", Level: Fail, Detail: err.Error(), Fix: "fix whetstone.json and commit it: a review whose base has this file does not start"}}
	}
	if !src.Found() {
		return config.File{}, nil
	}
	weak := src.File.Weakening()
	if len(weak) == 0 {
		return src.File, []Check{{Name: "config", Level: OK, Detail: "whetstone.json at HEAD enables no setting that weakens containment"}}
	}
	ok, err := a.Trusted(root, src)
	if ok {
		return src.File, []Check{{Name: "config", Level: OK, Detail: "whetstone.json at HEAD is trusted (whetstone trust) and enables " + strings.Join(weak, ", ")}}
	}
	c := Check{Name: "config", Level: Warn,
		Detail: fmt.Sprintf("whetstone.json at HEAD asks for %s (%s containment); the file is not trusted, so runs ignore %s", strings.Join(weak, ", "), map[bool]string{true: "weakens", false: "weaken"}[len(weak) == 1], map[bool]string{true: "it", false: "them"}[len(weak) == 1]),
		Fix:    "read the file, then run `whetstone trust` to apply it; or take the setting out of whetstone.json (docs/security.md)"}
	if err != nil {
		c.Detail += " (" + err.Error() + ")"
	}
	return src.File.Contained(), []Check{c}
}

// Healthy reports whether no check failed.
func Healthy(checks []Check) bool {
	return !slices.ContainsFunc(checks, func(c Check) bool { return c.Level == Fail })
}

// Text renders the checks, one line each and the fix below a
// problem, then a one-line verdict.
func Text(checks []Check, colour bool) string {
	p := paint.Painter(colour)
	var b strings.Builder
	fmt.Fprintf(&b, "whetstone doctor (whetstone %s)\n", whetstone.Version)
	fails, warns := 0, 0
	for _, c := range checks {
		level := fmt.Sprintf("%-4s", c.Level)
		switch c.Level {
		case OK:
			level = p.Green(level)
		case Warn:
			level = p.Yellow(level)
			warns++
		case Fail:
			level = p.Red(level)
			fails++
		}
		fmt.Fprintf(&b, "  %s  %-9s %s\n", level, c.Name, c.Detail)
		if c.Fix != "" {
			fmt.Fprintf(&b, "        %-9s fix: %s\n", "", c.Fix)
		}
	}
	switch {
	case fails > 0:
		fmt.Fprintf(&b, "%s found", review.Plural(fails, "problem"))
		if warns > 0 {
			fmt.Fprintf(&b, " (and %s)", review.Plural(warns, "warning"))
		}
		b.WriteString(".\n")
	case warns > 0:
		fmt.Fprintf(&b, "No problems; %s.\n", review.Plural(warns, "warning"))
	default:
		b.WriteString("No problems found.\n")
	}
	return b.String()
}

// pluginRoot is the plugin directory this binary belongs to:
// $CLAUDE_PLUGIN_ROOT (hooks run with it), else the directory above the
// executable's (bin/whetstone) when it holds .claude-plugin/plugin.json.
func pluginRoot(getenv func(string) string) string {
	if r := getenv("CLAUDE_PLUGIN_ROOT"); r != "" {
		return r
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	for _, dir := range []string{filepath.Dir(filepath.Dir(exe)), filepath.Dir(exe)} {
		if _, err := os.Stat(filepath.Join(dir, ".claude-plugin", "plugin.json")); err == nil {
			return dir
		}
	}
	return ""
}

const reinstall = "reinstall the plugin (claude plugin install whetstone), or run `make build` in a source checkout"

// maxPluginFile caps a plugin file doctor reads.
const maxPluginFile = 1 << 20

func versionCheck(root string) Check {
	c := Check{Name: "version"}
	if root == "" {
		c.Level, c.Detail = Fail, fmt.Sprintf("binary %s; no plugin found next to it and CLAUDE_PLUGIN_ROOT is not set", whetstone.Version)
		c.Fix = "run the plugin's own launcher (<plugin>/scripts/whetstone doctor) or set CLAUDE_PLUGIN_ROOT to the plugin directory"
		return c
	}
	var versions []string
	file, err := safeio.ReadFile(filepath.Join(root, "VERSION"), maxPluginFile, false)
	if err == nil {
		versions = append(versions, "VERSION "+strings.TrimSpace(string(file)))
	}
	var manifest struct {
		Version string `json:"version"`
	}
	data, merr := safeio.ReadFile(filepath.Join(root, ".claude-plugin", "plugin.json"), maxPluginFile, false)
	if merr == nil && json.Unmarshal(data, &manifest) == nil && manifest.Version != "" {
		versions = append(versions, "plugin.json "+manifest.Version)
	}
	c.Detail = fmt.Sprintf("binary %s; plugin at %s: %s", whetstone.Version, root, strings.Join(versions, ", "))
	mismatch := err != nil || strings.TrimSpace(string(file)) != whetstone.Version || (manifest.Version != "" && manifest.Version != whetstone.Version)
	if len(versions) == 0 {
		c.Level, c.Detail, c.Fix = Fail, fmt.Sprintf("binary %s; plugin at %s has no VERSION and no version in plugin.json", whetstone.Version, root), reinstall
		return c
	}
	c.Level = OK
	if mismatch {
		c.Level = Fail
		c.Fix = "the binary and the plugin differ: delete the stale binary (bin/whetstone or $CLAUDE_PLUGIN_DATA/whetstone-*) so the launcher builds or fetches the matching one, or " + reinstall
	}
	return c
}

// pluginCheck checks what Claude Code loads: the manifest, hooks.json
// naming the launcher for every event, the agents of reg and the command.
func pluginCheck(root string, reg brief.Registry) Check {
	c := Check{Name: "plugin", Level: OK}
	if root == "" {
		c.Level, c.Detail, c.Fix = Fail, "not found", "see the version check"
		return c
	}
	var problems []string
	var manifest struct {
		Name string `json:"name"`
	}
	data, err := safeio.ReadFile(filepath.Join(root, ".claude-plugin", "plugin.json"), maxPluginFile, false)
	if err == nil {
		err = json.Unmarshal(data, &manifest)
	}
	if err != nil {
		problems = append(problems, fmt.Sprintf(".claude-plugin/plugin.json: %v", err))
	} else if manifest.Name != "whetstone" {
		problems = append(problems, fmt.Sprintf(".claude-plugin/plugin.json names %q, not whetstone", manifest.Name))
	}
	var hooks struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	data, err = safeio.ReadFile(filepath.Join(root, "hooks", "hooks.json"), maxPluginFile, false)
	if err == nil {
		err = json.Unmarshal(data, &hooks)
	}
	if err != nil {
		problems = append(problems, fmt.Sprintf("hooks/hooks.json: %v", err))
	} else {
		var unhooked []string
		for _, sub := range slices.Sorted(maps.Keys(app.Events)) {
			event := app.Events[sub]
			found := false
			for _, m := range hooks.Hooks[event] {
				for _, h := range m.Hooks {
					found = found || strings.Contains(h.Command, "scripts/whetstone\" hook "+sub)
				}
			}
			if !found {
				unhooked = append(unhooked, event)
			}
		}
		if len(unhooked) > 0 {
			problems = append(problems, "hooks/hooks.json does not run whetstone on "+strings.Join(unhooked, ", "))
		}
	}
	files := []string{"scripts/whetstone", "commands/review.md"}
	for _, a := range reg.All() {
		files = append(files, "agents/"+a.Name+".md")
	}
	var missing []string
	for _, f := range files {
		if info, err := os.Stat(filepath.Join(root, f)); err != nil || !info.Mode().IsRegular() {
			missing = append(missing, f)
		} else if f == "scripts/whetstone" && runtime.GOOS != "windows" && info.Mode()&0o111 == 0 {
			problems = append(problems, "scripts/whetstone is not executable")
		}
	}
	if len(missing) > 0 {
		problems = append(problems, "missing "+strings.Join(missing, ", "))
	}
	if len(problems) > 0 {
		c.Level, c.Detail, c.Fix = Fail, strings.Join(problems, "; "), reinstall
		return c
	}
	c.Detail = fmt.Sprintf("manifest, hooks for %d events, %d agents and the review command in place", len(app.Events), len(reg.All()))
	return c
}

var goDirective = regexp.MustCompile(`(?m)^go ([0-9.]+)\s*$`)

// goCheck: Go matters only for a plugin built from source (it has go.mod
// and the launcher builds the binary); prebuilt plugins need none.
func goCheck(root string) Check {
	c := Check{Name: "go", Level: OK}
	mod, err := safeio.ReadFile(filepath.Join(root, "go.mod"), maxPluginFile, false)
	if root == "" || err != nil {
		c.Detail = "not needed: the plugin ships its binary"
		return c
	}
	want := ""
	if m := goDirective.FindSubmatch(mod); m != nil {
		want = string(m[1])
	}
	out, path, err := version("go", "version")
	if err != nil {
		c.Level, c.Detail = Fail, "the plugin is built from source, and "+err.Error()
		c.Fix = fmt.Sprintf("install Go %s or later (https://go.dev/dl)", want)
		return c
	}
	have := firstField(out, "go1") // go1.26.8, as go/version spells it
	c.Detail = fmt.Sprintf("%s (%s); the plugin is built from source and needs %s", out, path, want)
	if want != "" && goversion.IsValid(have) && goversion.Compare(have, "go"+want) < 0 {
		c.Level, c.Fix = Fail, fmt.Sprintf("install Go %s or later (https://go.dev/dl)", want)
	}
	return c
}

// clientChecks finds each client's program and each `whetstone install
// <client>` of it. whetstone needs one client: when none is found that is
// one problem, and an absent client is otherwise a warning. A client's
// install follows its program's line; a client installed but not found
// is one line that says both.
func clientChecks(a *app.App, root string) []Check {
	type found struct {
		check    Check
		ok       bool
		installs []Check
	}
	var all []found
	var titles, fixes, missing, broken []string
	var have []string // the clients found
	for _, cl := range client.All() {
		name, fix := cl.Binary()
		titles = append(titles, cl.Title())
		fixes = append(fixes, fix)
		f := found{check: Check{Name: name, Level: OK}}
		out, path, err := version(name, "--version")
		switch {
		case err != nil && path == "":
			missing = append(missing, name)
			f.check.Level, f.check.Detail, f.check.Fix = Warn, err.Error(), fix
		case err != nil:
			broken = append(broken, err.Error())
			f.check.Level, f.check.Detail, f.check.Fix = Warn, err.Error(), fix
		default:
			f.check.Detail = fmt.Sprintf("%s (%s)", out, path)
			f.ok = true
			have = append(have, cl.Title())
		}
		if in, ok := cl.(client.Installer); ok {
			f.installs = installChecks(a, root, in)
			if !f.ok {
				// Installed, not runnable: the install's line says both.
				for i, c := range f.installs {
					if c.Level == OK {
						c.Level, c.Fix = Warn, fix
					}
					c.Detail += fmt.Sprintf("; but %s, so nothing runs this install", err)
					f.installs[i] = c
				}
			}
		}
		all = append(all, f)
	}
	var checks []Check
	if len(have) == 0 {
		why := broken
		if len(missing) > 0 {
			why = append(why, strings.Join(missing, ", ")+" not found on PATH")
		}
		checks = append(checks, Check{Name: "clients", Level: Fail,
			Detail: fmt.Sprintf("no client: %s; whetstone runs in %s", strings.Join(why, "; "), joinList(titles, "or")),
			Fix:    strings.Join(fixes, "; or ")})
	}
	for _, f := range all {
		if len(have) > 0 && (f.ok || len(f.installs) == 0) {
			if !f.ok {
				verb := map[bool]string{true: "is", false: "are"}[len(have) == 1]
				f.check.Detail += fmt.Sprintf(" (optional: one client is enough, and %s %s found)", joinList(have, "and"), verb)
			}
			checks = append(checks, f.check)
		}
		checks = append(checks, f.installs...)
	}
	return checks
}

// joinList joins words as "a, b or c" (with conj "or").
func joinList(words []string, conj string) string {
	if n := len(words); n > 1 {
		return strings.Join(words[:n-1], ", ") + " " + conj + " " + words[n-1]
	}
	return strings.Join(words, "")
}

// installChecks check each `whetstone install <client>` of in found in
// the project's or the user's config directory: its files as written,
// the binary its hooks run there and of this version. No install is no
// line.
func installChecks(a *app.App, root string, in client.Installer) []Check {
	var checks []Check
	for _, global := range []bool{false, true} {
		dir, err := in.ConfigDir(root, global, a.Getenv)
		if err != nil {
			continue
		}
		flag := map[bool]string{true: " --global"}[global]
		c := Check{Name: in.Name(), Level: OK}
		fix := fmt.Sprintf("run `whetstone install %s%s` again (`whetstone uninstall %s%s` removes it)", in.Name(), flag, in.Name(), flag)
		st, err := in.Inspect(dir)
		switch {
		case err != nil:
			c.Level, c.Detail, c.Fix = Fail, fmt.Sprintf("the install in %s cannot be read: %v", dir, err), fix
		case !st.Installed:
			continue
		case len(st.Problems) > 0:
			c.Level, c.Detail = Fail, fmt.Sprintf("installed in %s, but %s", dir, strings.Join(st.Problems, "; "))
			c.Fix = "move a changed file away (install never overwrites one), then " + fix
		case st.Version != whetstone.Version:
			c.Level, c.Detail, c.Fix = Warn, fmt.Sprintf("installed in %s by whetstone %s, this is %s", dir, st.Version, whetstone.Version), fix
		default:
			c.Detail = fmt.Sprintf("installed in %s (%d files), hooks run %s", dir, st.Files, st.Binary)
			// A client that runs only hooks the user trusted says
			// whether it trusts these.
			if tc, ok := in.(interface {
				Trust(ctx context.Context, dir, project string, getenv func(string) string) (problem, fix string, ok bool)
			}); ok {
				if problem, fix, ok := tc.Trust(context.Background(), dir, root, a.Getenv); ok && problem != "" {
					c.Level, c.Detail, c.Fix = Warn, c.Detail+"; but "+problem, fix
				}
			}
		}
		checks = append(checks, c)
	}
	return checks
}

// sandboxCheck says whether the sandbox works here and, with the
// project's whetstone.json as a run applies it (file: committed, and its
// weakening settings only when trusted), what happens during a run to the
// commands that run the project's code: sandboxed, refused, or run
// unsandboxed.
func sandboxCheck(a *app.App, file config.File) Check {
	c := Check{Name: "sandbox", Level: OK}
	setting := app.SandboxAuto
	if file.Sandbox != "" {
		setting = file.Sandbox
	}
	bwrap, ok := a.FindSandbox()
	switch {
	case ok && setting == app.SandboxOff:
		c.Level = Warn
		c.Detail = "bubblewrap works (" + bwrap + "), but whetstone.json says \"sandbox\": \"off\": agents' tests, builds and verification commands run unsandboxed during a run"
		c.Fix = "remove \"sandbox\": \"off\" from whetstone.json, or stop trusting it (whetstone trust --remove), see docs/sandbox.md"
		return c
	case ok:
		c.Detail = "bubblewrap works (" + bwrap + "): agents' tests, builds and verification commands run in the sandbox during a run"
		return c
	}
	c.Level = Warn
	why := app.NoSandbox()
	switch {
	case runtime.GOOS != "linux":
		c.Fix = "run whetstone on Linux with bubblewrap for the sandbox"
	case !sandbox.Installed():
		c.Fix = "install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap)"
	default:
		c.Fix = "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or the AppArmor bwrap profile)"
	}
	c.Fix += ", see docs/sandbox.md"
	if setting == app.SandboxAuto {
		c.Detail = "no sandbox here (" + why + "): during a run, agents' tests, builds and verification commands are refused"
		c.Fix += "; or set \"sandbox\": \"if-available\" in whetstone.json, commit it and trust it (whetstone trust) to run them unsandboxed"
		return c
	}
	c.Detail = fmt.Sprintf("no sandbox here (%s): whetstone.json says \"sandbox\": %q, so agents' tests, builds and verification commands run unsandboxed during a run", why, setting)
	return c
}

// keyCheck checks whetstone's own signing key, the one that seals the
// state under .whetstone/ (not an API key): it can be read or created, and
// it verifies the project's latest run, when there is one. A run sealed
// under another HOME or WHETSTONE_STATE_DIR (`make demo` makes one) reads
// as changed outside whetstone, and this says which key was used instead.
func keyCheck(a *app.App, root string) Check {
	proj, err := a.Open(root)
	if err != nil {
		return Check{Name: "key", Level: Fail, Detail: "whetstone's signing key for its state files (not an API key): " + err.Error(),
			Fix: "make the key's directory yours and private (chmod 700), or set WHETSTONE_STATE_DIR to one that is"}
	}
	c := Check{Name: "key", Level: OK, Detail: "whetstone's signing key for its state files (not an API key): " + proj.KeyPath()}
	if id := proj.Latest(); id != "" {
		if _, err := proj.Load(id); errors.Is(err, state.ErrTampered) {
			c.Level = Warn
			c.Detail = fmt.Sprintf("whetstone's signing key %s (not an API key) does not verify this project's latest run %s: it was sealed with another key or changed since", proj.KeyPath(), id)
			c.Fix = "read it with the environment that made it (WHETSTONE_STATE_DIR, HOME or XDG_STATE_HOME; the demo prints its command), or start a new run"
		}
	}
	return c
}

// writeCheck makes sure whetstone can write .whetstone/ in the project:
// it is a real directory (no symlink) and a file can be created in it, or
// in the project when it does not exist yet. What it creates it removes.
func writeCheck(root string) Check {
	c := Check{Name: "write", Level: OK}
	dir := filepath.Join(root, ".whetstone")
	target := dir
	if err := safeio.NoSymlinks(root, dir); err != nil {
		c.Level, c.Detail, c.Fix = Fail, err.Error(), "remove the symlink: whetstone keeps its state inside the project"
		return c
	}
	if info, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		target = root
	} else if err != nil || !info.IsDir() {
		c.Level, c.Detail, c.Fix = Fail, dir+" is not a directory", "move it away; whetstone creates .whetstone/ itself"
		return c
	}
	f, err := os.CreateTemp(target, ".whetstone-doctor-*")
	if err != nil {
		c.Level, c.Detail = Fail, fmt.Sprintf("cannot write in %s: %v", target, err)
		c.Fix = "make " + target + " writable by you (chmod u+w), or run whetstone as its owner"
		return c
	}
	f.Close()
	os.Remove(f.Name())
	c.Detail = dir + " is writable"
	if target == root {
		c.Detail = dir + " will be created (the project is writable)"
	}
	return c
}

func gitCheck(dir string) Check {
	c := Check{Name: "git", Level: OK}
	out, path, err := version("git", "--version")
	if err != nil {
		c.Level, c.Detail, c.Fix = Fail, err.Error()+"; whetstone reviews git changes", "install git (https://git-scm.com/downloads)"
		return c
	}
	c.Detail = fmt.Sprintf("%s (%s)", out, path)
	if _, err := os.Lstat(filepath.Join(app.FindRoot(dir), ".git")); err != nil {
		c.Level = Warn
		c.Detail += "; " + dir + " is not inside a git repository"
		c.Fix = "run /whetstone:review inside a git repository (git init)"
	}
	return c
}

// version runs `name args` found on PATH and returns the first line of its
// output and its path.
func version(name string, args ...string) (string, string, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return "", "", fmt.Errorf("%s not found on PATH", name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, args...).Output()
	line, _, _ := strings.Cut(string(bytes.TrimSpace(out)), "\n")
	if err != nil || line == "" {
		return "", path, fmt.Errorf("%s %s failed (%v)", path, strings.Join(args, " "), err)
	}
	return strings.TrimSpace(line), path, nil
}

// firstField returns the first space-separated field starting with prefix.
func firstField(s, prefix string) string {
	for _, f := range strings.Fields(s) {
		if strings.HasPrefix(f, prefix) {
			return f
		}
	}
	return ""
}
