package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
	"github.com/whetstone-dev/whetstone/internal/client"
	"github.com/whetstone-dev/whetstone/internal/hook"
	"github.com/whetstone-dev/whetstone/internal/loop"
	"github.com/whetstone-dev/whetstone/internal/safeio"
	"github.com/whetstone-dev/whetstone/internal/sandbox"
	"github.com/whetstone-dev/whetstone/internal/shell"
)

// Tools by what they can do, in Claude Code 2.1.332 (docs/design.md,
// "Every tool is gated"). During a run every tool call of the session comes
// through preToolUse; a tool in none of these lists is denied.
var (
	// readTools only read or talk to the model; they still may not name
	// whetstone's key.
	readTools = []string{"Read", "Grep", "Glob", "LS", "NotebookRead", "WebFetch", "WebSearch", "TodoWrite",
		"ToolSearch", "ListAgents", "Skill", "BashOutput", "TaskOutput", "TaskStop", "KillShell", "CronList",
		"Invalid"} // OpenCode's answer to a call of a tool the agent does not have
	// editTools change the files named in their input (hook.Payload.Paths);
	// ApplyPatch is OpenCode's apply_patch, which may name several.
	editTools = []string{"Edit", "Write", "MultiEdit", "NotebookEdit", "ApplyPatch"}
	// shellTools run a command line.
	shellTools = []string{"Bash", "Monitor"}
)

// gate is what a tool call is judged against: the run's phase and settings,
// read once from the verified state without decoding the ledger.
type gate struct {
	id    string
	phase loop.Phase
	state []byte // the verified state.json body
	name  string // whetstone agent's short name, or ""
	who   string // the caller in words
	root  string // project root, symlinks resolved
	// protected are whetstone's key, its directory and that directory
	// with symlinks resolved (nil without a key), resolved once per call.
	protected []string
	fixPhase  bool // the caller is whetstone:fixer in the fix phase
}

func (a *App) preToolUse(ctx context.Context, proj Project, id string, p hook.Payload, body []byte) (*hook.Response, error) {
	if p.ToolName == "Agent" || p.ToolName == "Task" {
		return a.dispatchGate(p, body)
	}
	g, ok := newGate(proj, id, p, body)
	if !ok {
		return nil, nil
	}
	if reason := g.namesKey(p); reason != "" {
		return hook.Deny(reason), nil
	}
	switch {
	case p.ToolName == "Skill" && subagent(p):
		// A skill can run inline shell commands outside the Bash tool
		// (skillShell); whetstone's agents never need one.
		return hook.Deny(fmt.Sprintf("whetstone run %s: %s may not use skills during a review run: a skill can run shell commands that whetstone cannot contain. Use Read, Grep, Glob and read-only Bash commands.", id, g.who)), nil
	case slices.Contains(readTools, p.ToolName):
		return nil, nil
	case slices.Contains(editTools, p.ToolName):
		return g.edit(p), nil
	case slices.Contains(shellTools, p.ToolName):
		return a.shellGate(ctx, g, p), nil
	}
	return hook.Deny(fmt.Sprintf("whetstone run %s: %s may not use %s during a review run (whetstone cannot check what it changes). Use Read, Grep, Glob and read-only Bash commands.", id, g.who, p.ToolName)), nil
}

// subagent reports whether the caller is a subagent (any, whetstone's or
// not) rather than the session's main thread.
func subagent(p hook.Payload) bool {
	return p.AgentID != "" || p.AgentType != ""
}

// newGate reads what a call is judged against; ok is false when the run
// has ended and nothing is gated.
func newGate(proj Project, id string, p hook.Payload, body []byte) (gate, bool) {
	g := gate{id: id, phase: loop.Phase(gjson.GetBytes(body, "phase").String()), state: body, name: agentName(p.AgentType)}
	if g.phase == loop.Done || g.phase == loop.Stopped {
		return g, false
	}
	g.root = resolved(proj.Root)
	if proj.keyPath != "" {
		dir := filepath.Dir(proj.keyPath)
		g.protected = []string{proj.keyPath, dir, resolved(dir)}
	}
	g.fixPhase = g.name == "fixer" && g.phase == loop.Fix
	switch {
	case g.name != "":
		g.who = "whetstone:" + g.name
	case p.AgentType != "":
		g.who = p.AgentType
	default:
		g.who = "the orchestrator"
	}
	return g, true
}

// skillShell judges one of a skill's inline shell commands (Claude Code
// 2.1.332's PreSkillShellCommand). They run outside the Bash tool, where no
// sandbox can wrap them and no rewrite applies. During a run a subagent's
// are refused outright (preToolUse refuses its Skill calls too; this covers
// skills preloaded into an agent), and the orchestrator's run only when the
// read-only parser allows them with no verification command, since those
// run the project's code.
func (a *App) skillShell(proj Project, id string, p hook.Payload, body []byte) *hook.Response {
	g, ok := newGate(proj, id, p, body)
	if !ok {
		return nil
	}
	cmd := p.ToolInput.Get("command").String()
	skill := gjson.GetBytes(p.Raw, "command_name").String()
	if skill == "" {
		skill = "a skill"
	}
	switch {
	case subagent(p):
		return hook.DenySkillShell(fmt.Sprintf("whetstone run %s: %s may not run a skill's shell commands during a review run (whetstone cannot contain them).", id, g.who))
	case !keyUnnamed(cmd, g.protected):
		return hook.DenySkillShell(fmt.Sprintf("whetstone run %s: this command names whetstone's key; no agent may read or change it.", id))
	}
	cwd, _ := g.cwd(p.Cwd, false)
	// Nothing of a skill's runs in the sandbox: a tree is checked for links
	// to the key now, and a program of the project's is refused.
	pol := shell.Policy{Mode: shell.ReadOnly, Root: g.root, Cwd: cwd, TempDir: resolved(os.TempDir()), Verify: [][]string{}, Protected: g.protected, Path: a.agentPath(), CheckLinks: true}
	v := shell.Judge(cmd, pol)
	if v.Reason == "" && v.Local != "" {
		v.Reason = fmt.Sprintf("%s runs %s, which PATH finds where an agent can write, not the system's %s", quote(cmd), v.Local, v.LocalName)
	}
	if v.Reason != "" {
		return hook.DenySkillShell(fmt.Sprintf("whetstone run %s: %s's shell command may not run during a review run: %s", id, skill, v.Reason))
	}
	return nil
}

// resolved is path with symlinks resolved, or path itself when that fails.
func resolved(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return path
}

// namesKey refuses any call, reads included, that names whetstone's key or
// a directory holding it: with the key, a model could forge state.
func (g gate) namesKey(p hook.Payload) string {
	if g.protected == nil {
		return ""
	}
	dir, real := g.protected[1], g.protected[2]
	deny := fmt.Sprintf("whetstone run %s: this %s call names whetstone's key (%s); no agent may read or change it.", g.id, p.ToolName, dir)
	if !keyUnnamed(p.ToolInput.Raw, g.protected) {
		return deny
	}
	for _, field := range []string{"file_path", "path", "notebook_path", "filePath"} {
		v := p.ToolInput.Get(field).String()
		if v == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(v, "~"); ok {
			if home, err := os.UserHomeDir(); err == nil {
				v = home + rest
			}
		}
		if !filepath.IsAbs(v) {
			v = filepath.Join(g.root, v)
		}
		v = resolvedPrefix(v)
		if safeio.Within(real, v) || safeio.Within(v, real) {
			return deny
		}
	}
	return ""
}

// resolvedPrefix resolves the symlinks of the longest existing prefix of
// path and appends the rest, so a file that does not exist yet is judged by
// where it would be created.
func resolvedPrefix(path string) string {
	path = filepath.Clean(path)
	rest := ""
	for cur := path; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return path
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// edit lets only the fixer, in the fix phase, change project files.
func (g gate) edit(p hook.Payload) *hook.Response {
	switch {
	case g.fixPhase:
		return g.fixerPath(p)
	case g.name == "fixer":
		return hook.Deny(fmt.Sprintf("whetstone run %s is in the %s phase; whetstone:fixer may edit only in the fix phase.", g.id, g.phase))
	case g.name != "":
		return hook.Deny(fmt.Sprintf("whetstone run %s: %s is a read-only agent and may not %s files. Report the problem as a finding with a suggestion; whetstone:fixer makes the changes.", g.id, g.who, strings.ToLower(p.ToolName)))
	}
	return hook.Deny(fmt.Sprintf("whetstone run %s is in progress (%s phase): only whetstone:fixer may change files, in the fix phase. Do not edit files yourself; follow whetstone's instructions and dispatch the agents they name.", g.id, g.phase))
}

// fixerPath lets the fixer edit files inside the project, but not
// whetstone's state, its configuration or the repository's own files. The
// path is judged after resolving symlinks, and case-insensitively, since
// .WHETSTONE is .whetstone on macOS and Windows.
func (g gate) fixerPath(p hook.Payload) *hook.Response {
	if len(p.Paths) == 0 {
		return hook.Deny("whetstone: this edit names no file_path")
	}
	for _, path := range p.Paths {
		if reason := ownedPath(g.root, path); reason != "" {
			return hook.Deny("whetstone: " + reason + "; the fixer changes only the project's code.")
		}
	}
	return nil
}

// ownedPath says why path may not be written by the fixer, or "".
func ownedPath(root, path string) string {
	// The OS resolves a .. after the symlink before it, which cleaning the
	// string does not: l/../x, l a symlink, is not root/x.
	if slices.Contains(strings.Split(filepath.ToSlash(path), "/"), "..") {
		return fmt.Sprintf("%s goes through .., which may not lead where it reads; write the plain path", path)
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	real := resolvedPrefix(path)
	if !safeio.Within(root, real) {
		if real != filepath.Clean(path) {
			return fmt.Sprintf("%s leads to %s, outside the project (%s)", path, real, root)
		}
		return fmt.Sprintf("%s is outside the project (%s)", path, root)
	}
	rel, _ := filepath.Rel(root, real)
	parts := strings.Split(filepath.ToSlash(rel), "/")
	switch strings.ToLower(parts[0]) {
	case ".whetstone", "whetstone.json":
		return fmt.Sprintf("%s belongs to whetstone itself", rel)
	}
	// Any .git, not only the project's: a nested repository's or a
	// submodule's hooks and config run code when the user runs git there.
	for _, part := range parts {
		if strings.EqualFold(part, ".git") {
			return fmt.Sprintf("%s is inside a repository's .git", rel)
		}
	}
	return ""
}

// shellGate judges a command line: the parser's default-deny rules, then
// containment. A command that runs the project's code (shell.RunsCode) runs
// only inside the sandbox, for every agent; a read-only agent's whole line
// does where the client runs a rewritten line under the user's own rules
// alone (contain).
func (a *App) shellGate(ctx context.Context, g gate, p hook.Payload) *hook.Response {
	cmd := p.ToolInput.Get("command").String()
	if cmd == "" {
		return hook.Deny(fmt.Sprintf("whetstone run %s: this %s call has no command to check.", g.id, p.ToolName))
	}
	// A call may name its own directory (OpenCode's bash workdir), which
	// must exist; the session's is always there unless deleted since.
	cwd, ok := g.cwd(p.Cwd, p.CwdFromCall)
	if !ok {
		return hook.Deny(fmt.Sprintf("whetstone run %s: this %s call runs in %q, which is not a directory whetstone can find, so it cannot tell what the command touches. Give an absolute directory (or none).", g.id, p.ToolName, p.Cwd))
	}
	pol := shell.Policy{Mode: shell.ReadOnly, Root: g.root, Cwd: cwd, TempDir: resolved(os.TempDir()), Protected: g.protected, Path: a.agentPath()}
	pol.Verify, pol.Exact = g.verify()
	if g.fixPhase {
		pol.Mode = shell.Fixer
	}
	v := shell.Judge(cmd, pol)
	if resp := a.contain(ctx, g, p, cmd, pol, v); resp != nil {
		return resp
	}
	if v.Reason == "" {
		return nil
	}
	return g.refuse(v.Reason)
}

// refuse denies a command line the parser refused, saying why.
func (g gate) refuse(reason string) *hook.Response {
	if g.fixPhase {
		return hook.Deny(fmt.Sprintf("whetstone run %s: whetstone:fixer may not run this: %s. Edit files with the Edit tool and run the project's tests.", g.id, reason))
	}
	return hook.Deny(fmt.Sprintf("whetstone run %s: %s is read-only and may not run this: %s", g.id, g.who, reason))
}

// agentPath is the PATH an agent's command runs with (sandbox.CallerPathOf).
func (a *App) agentPath() string { return sandbox.CallerPathOf(a.env) }

// env is the hook's environment variable k.
func (a *App) env(k string) string {
	if a.Getenv == nil {
		return os.Getenv(k)
	}
	return a.Getenv(k)
}

// verify returns the run's verification commands (docs/sandbox.md): the
// go tool's (shell.DefaultVerify, its flags judged by the parser) when the
// project is a Go module, the other detected commands word for word, and
// whetstone.json's verify_commands as prefixes. A state without a
// "verify" list (a run started before detection existed) keeps the go
// commands.
func (g gate) verify() (prefixes, exact [][]string) {
	prefixes = [][]string{}
	detected := gjson.GetBytes(g.state, "verify")
	if !detected.IsArray() {
		prefixes = shell.DefaultVerify()
	}
	for _, c := range detected.Array() {
		words := strings.Fields(c.String())
		switch {
		case len(words) == 0:
		case words[0] == "go":
			if len(prefixes) == 0 {
				prefixes = shell.DefaultVerify()
			}
		default:
			exact = append(exact, words)
		}
	}
	for _, c := range gjson.GetBytes(g.state, "settings.verify_commands").Array() {
		prefixes = append(prefixes, strings.Fields(c.String()))
	}
	return prefixes, exact
}

// cwd is where the command starts: the payload's cwd when it is a
// directory (it follows the Bash tool's cd, also out of the project, where
// relative writes are then judged), else the root. When the call itself
// names the directory (strict: OpenCode's workdir), one that cannot be
// found (relative, "~/…", missing) is not ok: judging the command as if it
// ran in the root could allow a relative write that lands elsewhere.
func (g gate) cwd(dir string, strict bool) (string, bool) {
	if dir != "" && filepath.IsAbs(dir) {
		if info, err := os.Stat(dir); err == nil && info.IsDir() {
			return resolved(dir), true
		}
	}
	return g.root, !strict
}

// Values of whetstone.json's "sandbox" (config.File.Sandbox).
const (
	SandboxAuto        = "auto"         // code runs only in the sandbox; without one it is refused
	SandboxIfAvailable = "if-available" // code runs in the sandbox where one works, unsandboxed elsewhere
	SandboxOff         = "off"          // never rewrite: the parser alone, code runs unsandboxed
)

// contain answers a command that must or may run in the sandbox, or returns
// nil when the parser's verdict stands. It must when the parser allows it
// and it runs the project's code: a verification command, or a program
// PATH finds where an agent could have written (shell.Verdict.Local). It
// must too when it walks a tree (grep -r, rg, find, diff -r, …), where a
// link committed in the repository may lead to whetstone's key, which the
// sandbox hides (walk). A read-only agent's whole line, even one the
// parser refuses, may when the client applies only the user's deny and ask
// rules to the rewritten line (rewritesAll). Naming whetstone's key is
// refused even in the sandbox. Where no sandbox works, code is refused
// with one sentence unless whetstone.json opts in, and a tree walker that
// follows links is refused when they lead to the key.
func (a *App) contain(ctx context.Context, g gate, p hook.Payload, cmd string, pol shell.Policy, v shell.Verdict) *hook.Response {
	reason := v.Reason
	setting := gjson.GetBytes(g.state, "settings.sandbox").String()
	// A walk that follows links is judged before anything runs, in the
	// sandbox or not: the sandbox hides the key, but a committed link to
	// $HOME would still lead there.
	if resp := g.checkLinks(cmd, pol, v); resp != nil || setting == SandboxOff {
		return resp
	}
	if pol.Mode == shell.ReadOnly && rewritesAll(p) && keyUnnamed(cmd, g.protected) && p.ToolName == "Bash" {
		if bwrap, ok := a.sandboxWithin(ctx); ok {
			return a.sandboxed(g, p, bwrap, cmd, pol.Cwd) // the whole line, whatever it runs
		}
		if late := outOfTime(ctx, g); late != nil {
			return late
		}
	}
	local := reason == "" && v.Local != ""
	if !local && !runsCode(cmd, pol, reason) {
		if reason != "" || v.Walks == "" {
			return nil // the parser decides a line that runs no code
		}
		return a.walk(ctx, g, p, cmd, pol, v)
	}
	bwrap, ok := a.sandboxWithin(ctx)
	if late := outOfTime(ctx, g); !ok && late != nil {
		return late
	}
	what := "the project's code,"
	if local {
		what = fmt.Sprintf("%s, which PATH finds where an agent can write (the repository's or an agent's program, not the system's %s),", v.Local, v.LocalName)
	}
	switch {
	case ok && p.ToolName == "Bash":
		return a.sandboxed(g, p, bwrap, cmd, pol.Cwd)
	case ok:
		return hook.Deny(fmt.Sprintf("whetstone run %s: %s runs %s which whetstone runs only in its sandbox, and only the Bash tool's commands can be sandboxed; run it with the Bash tool.", g.id, quote(cmd), what))
	case setting == SandboxIfAvailable || reason != "":
		return nil // the parser decides (links were judged above)
	}
	if local {
		return hook.Deny(fmt.Sprintf("whetstone run %s: %s runs %s which whetstone runs only inside a bubblewrap sandbox and there is none here (%s); take that directory off PATH, or install bubblewrap on Linux (docs/sandbox.md).", g.id, quote(cmd), what, NoSandbox()))
	}
	return hook.Deny(fmt.Sprintf("whetstone run %s: %s runs the project's code, which whetstone runs only inside a bubblewrap sandbox and there is none here (%s); %s", g.id, quote(cmd), NoSandbox(), getSandbox))
}

// walk answers a line the parser allows that runs no code but walks a
// tree: in the sandbox, where a link to whetstone's key leads nowhere.
// The fixer's line that also changes files cannot run there (its changes
// would vanish), nor can any line where there is no sandbox or through a
// tool other than Bash; those run as they are when they follow no links
// they meet, and otherwise only after the trees are walked now and no link
// in them leads to the key (checkLinks).
func (a *App) walk(ctx context.Context, g gate, p hook.Payload, cmd string, pol shell.Policy, v shell.Verdict) *hook.Response {
	writes := false
	if pol.Mode == shell.Fixer {
		ro := pol
		ro.Mode = shell.ReadOnly
		writes = shell.Check(cmd, ro) != ""
	}
	if writes && v.Follows != "" {
		return hook.Deny(fmt.Sprintf("whetstone run %s: whetstone:fixer may not run this: %s follows the links in a tree, which whetstone runs only in its sandbox (where a link cannot reach its key) and this line also changes files, which would vanish there; run the search and the change as separate commands.", g.id, quote(v.Follows)))
	}
	if !writes && p.ToolName == "Bash" {
		bwrap, ok := a.sandboxWithin(ctx)
		if ok {
			return a.sandboxed(g, p, bwrap, cmd, pol.Cwd)
		}
		if late := outOfTime(ctx, g); late != nil {
			return late
		}
	}
	return nil // as it is: contain judged its links before anything else
}

// checkLinks judges a line that follows the links of a tree: refused when
// one of them leads to whetstone's key, or out of the project.
func (g gate) checkLinks(cmd string, pol shell.Policy, v shell.Verdict) *hook.Response {
	if v.Reason != "" || v.Follows == "" {
		return nil
	}
	pol.CheckLinks = true
	if reason := shell.Check(cmd, pol); reason != "" {
		return g.refuse(reason)
	}
	return nil
}

// outOfTime denies a call whose hook ran out of time before the sandbox
// probe answered: a probe cut short says nothing of the machine, so it is
// not taken for "no sandbox here" (which may leave a line to the parser).
func outOfTime(ctx context.Context, g gate) *hook.Response {
	if ctx.Err() == nil {
		return nil
	}
	return hook.Deny(fmt.Sprintf("whetstone run %s: the hook ran out of time looking for the sandbox (%v); make the call again.", g.id, ctx.Err()))
}

// runsCode reports whether cmd runs the project's code and, in the
// sandbox, would do nothing else that lasts: a line the parser allows
// that needs a verification command, or a read-only agent's line the
// parser refuses but would allow the fixer, such as go test
// -coverprofile=c.out, whose writes inside the project vanish with the
// sandbox.
func runsCode(cmd string, pol shell.Policy, reason string) bool {
	if reason == "" {
		return shell.RunsCode(cmd, pol)
	}
	if pol.Mode != shell.ReadOnly {
		return false
	}
	pol.Mode = shell.Fixer
	return shell.Check(cmd, pol) == "" && shell.RunsCode(cmd, pol)
}

// getSandbox says how to get the sandbox, or do without it.
const getSandbox = "install bubblewrap on Linux (docs/sandbox.md; `whetstone doctor` says what is missing), or set \"sandbox\": \"if-available\" in whetstone.json, commit it and trust it (`whetstone trust`) to let code run unsandboxed where there is no sandbox."

// NoSandbox says why there is no sandbox on this machine, in a few words.
func NoSandbox() string {
	if runtime.GOOS != "linux" {
		return "bubblewrap is Linux only"
	}
	if !sandbox.Installed() {
		return "bwrap is not installed in a system directory"
	}
	return "bwrap cannot create its namespaces"
}

// quote shortens a command for a sentence.
func quote(cmd string) string {
	const max = 60
	cmd = strings.TrimSpace(cmd)
	if r := []rune(cmd); len(r) > max {
		cmd = string(r[:max-1]) + "…"
	}
	return fmt.Sprintf("%q", cmd)
}

// rewritesAll reports whether a read-only agent's whole line runs in the
// sandbox, not only the part that runs code: the client decides, by
// permission mode (docs/sandbox.md).
func rewritesAll(p hook.Payload) bool {
	return client.Of(p).RewritesWholeLine(p.PermissionMode)
}

// sandboxed answers with the command rewritten to run under bubblewrap,
// with the permission decision the client's mode calls for.
func (a *App) sandboxed(g gate, p hook.Payload, bwrap, cmd, cwd string) *hook.Response {
	var hide []string // the key's directory, as named and resolved
	if len(g.protected) > 1 {
		hide = g.protected[1:]
	}
	wrapped := sandbox.Wrap(bwrap, cmd, sandbox.Options{Root: g.root, Cwd: cwd, Hide: hide, Env: a.Getenv})
	input, err := sjson.SetBytes([]byte(p.ToolInput.Raw), "command", wrapped)
	if err != nil {
		return hook.Deny(fmt.Sprintf("whetstone run %s: cannot rewrite this %s call to run in the sandbox (%v).", g.id, p.ToolName, err))
	}
	return hook.Rewrite(client.Of(p).SandboxDecision(p.PermissionMode), "", input)
}

// keyUnnamed reports whether text (a command the parser refused, or any
// tool input) leaves whetstone's key unnamed, compared case-insensitively;
// the sandbox hides the key's directory too, for names the text does not
// show.
func keyUnnamed(text string, protected []string) bool {
	lower := strings.ToLower(text)
	for _, p := range protected {
		if strings.Contains(lower, strings.ToLower(p)) {
			return false
		}
	}
	return true
}
