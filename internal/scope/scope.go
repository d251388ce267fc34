// Package scope works out, deterministically from git, what a review run
// reviews: the change, its diff, its files with changed line ranges, their
// triage, the specialist reviewers the change calls for and the signals of
// deterministic tools. The snapshots around a read-only phase are
// internal/snapshot's.
//
// Every git command runs through internal/gitrun (GIT_OPTIONAL_LOCKS=0, a
// time and an output bound). The working tree is recorded through a
// temporary copy of the index (snapshot.WorkTree), so neither the work tree
// nor the user's index is ever written; only git objects may be added to
// the object store.
package scope

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/whetstone-dev/whetstone/internal/brief"
	"github.com/whetstone-dev/whetstone/internal/gitrun"
	"github.com/whetstone-dev/whetstone/internal/snapshot"
)

// Modes of a review: what the change is measured against and what it is.
const (
	ModeBranch      = "branch"      // merge-base(HEAD, default branch) → working tree
	ModeUncommitted = "uncommitted" // HEAD → working tree (staged, unstaged, untracked)
	ModeStaged      = "staged"      // HEAD → index
	ModeLastCommit  = "last-commit" // HEAD~1 (or the empty tree) → HEAD
	ModeSince       = "since"       // REF → working tree
)

// Schema names the format of Context.
const Schema = "whetstone.context/v1"

// emptyTree is the object name of git's empty tree (SHA-1).
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// Defaults of the size gates and checks.
const (
	DefaultMaxFiles     = 100
	DefaultMaxTokens    = 100000
	DefaultCheckTimeout = 20 * time.Second
	// DefaultCheckBudget is what a hook gives the checks as a whole
	// (Request.Budget), so that it answers within about 3 s: a check not
	// done by then is recorded as not finished (notFinished).
	DefaultCheckBudget = 2500 * time.Millisecond
)

// Request is what the user asked to review, with the project's settings.
type Request struct {
	Since                           string   // --since REF
	Staged, Uncommitted, LastCommit bool     // at most one of the four modes is chosen
	Paths                           []string // paths or globs that narrow the change
	Force                           bool     // past the size gates
	// Skip, Deep and Normal are triage globs from whetstone.json. They win
	// over the built-in rules, in the order Normal, Skip, Deep.
	Skip, Deep, Normal []string
	Specialists        map[string][]string // path globs that select a specialist
	MaxFiles           int                 // 0 means DefaultMaxFiles
	MaxTokens          int                 // 0 means DefaultMaxTokens
	Checks             bool                // run deterministic signals
	CheckTimeout       time.Duration       // per check; 0 means DefaultCheckTimeout
	// Budget bounds all the checks together, from their start: a check
	// still running then is stopped, and one not started by then does not
	// start; both are "skipped" as not finished. 0 means no bound but
	// each check's CheckTimeout.
	Budget time.Duration
	// prev and fixed are Next's: the signals of the tree before the fix
	// and the files the fix touched. A check none of whose files the fix
	// touched keeps its finished signal (unchanged).
	prev  []Signal
	fixed []File
	// MaxUntracked is the size in bytes above which an untracked file is
	// listed and skipped, never hashed; 0 means snapshot.DefaultMaxUntracked.
	MaxUntracked int64
	// Network lets the Go checks download modules (GOPROXY as set); off,
	// they use the local module cache only.
	Network bool
	// VerifyCommands are whetstone.json's verify_commands, listed in
	// Context.Verify after the detected ones.
	VerifyCommands []string
	// Contain runs the project's configured checkers, which execute its
	// code, in the sandbox; nil skips them.
	Contain Contain
	// Agents is the registry whose specialists' triggers apply; nil is
	// brief.Agents(), the built-in one.
	Agents *brief.Registry
	// Own recognises the files whetstone's installs wrote: left out of
	// the change while they hold exactly what was written (dropOwn); nil
	// leaves nothing out.
	Own Own
}

// Hunk is a range of changed lines on the new side, inclusive.
type Hunk struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// File is one changed file.
type File struct {
	Path         string `json:"path"`
	Status       string `json:"status"` // added | modified | deleted | renamed | copied | type-changed
	OldPath      string `json:"old_path,omitempty"`
	Binary       bool   `json:"binary,omitempty"`
	Added        int    `json:"added"`
	Deleted      int    `json:"deleted"`
	Hunks        []Hunk `json:"hunks"`
	Triage       string `json:"triage"` // skip | deep | normal
	TriageReason string `json:"triage_reason,omitempty"`
}

// Specialist is a conditional reviewer the change calls for, and why.
type Specialist struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Candidate is one problem a tool reported on a changed file; reviewers
// confirm or drop it, it is never a finding by itself.
type Candidate struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

// Signal is the outcome of one deterministic check.
type Signal struct {
	Tool       string      `json:"tool"`
	Command    string      `json:"command"`
	Status     string      `json:"status"` // clean | candidates | failed | timeout | skipped
	Candidates []Candidate `json:"candidates,omitempty"`
	Output     string      `json:"output,omitempty"`
}

// Context is context.json, rewritten for every iteration.
type Context struct {
	Schema      string       `json:"schema"`
	Iteration   int          `json:"iteration"`
	Mode        string       `json:"mode"`
	Description string       `json:"description"`
	Base        string       `json:"base"`
	BaseRef     string       `json:"base_ref"`
	Branch      string       `json:"branch,omitempty"`
	Head        string       `json:"head"`
	Commits     int          `json:"commits"` // commits in base..head (1 for the last commit)
	Tree        string       `json:"tree"`
	Paths       []string     `json:"paths,omitempty"`
	Files       []File       `json:"files"`
	Skipped     []string     `json:"skipped"`
	Specialists []Specialist `json:"specialists"`
	// NotCalled are specialists a path or a line named that were not
	// called, and why (documentation, a test, a license-only change).
	NotCalled []Specialist `json:"specialists_not_called"`
	Signals   []Signal     `json:"signals"`
	// Verify are the commands the agents may run to build, test and lint
	// the project: detected from its files (ecosystem.go), then
	// whetstone.json's verify_commands. Detected again on every tree.
	Verify     []VerifyCommand `json:"verify"`
	DiffBytes  int             `json:"diff_bytes"`
	DiffTokens int             `json:"diff_tokens"`
	// MaxUntracked is the untracked-file size cap the run was started
	// with, when not the default (see internal/snapshot).
	MaxUntracked int64 `json:"max_untracked_bytes,omitempty"`
	// Intent is what the author meant: the reviewed commits' messages and
	// the pull-request description (intent.go); nil when there is neither.
	Intent *Intent `json:"intent,omitempty"`
	// Installed are the files of the change that whetstone's install
	// wrote, exactly as it wrote them (Request.Own): left out of the
	// change, listed here so that nobody wonders where they went.
	Installed []string `json:"installed,omitempty"`

	large []snapshot.LargeFile // the large untracked files of the snapshot (not stored)
}

// Error is a problem the user must act on; Msg says what is wrong and what
// to do, in one sentence.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

func userError(format string, args ...any) error {
	return &Error{Msg: fmt.Sprintf(format, args...)}
}

// Detect chooses and snapshots iteration 1's change under root, the project
// root. Root may be a subdirectory of a git work tree: then only that
// subdirectory is in scope and every path is relative to root. Detect
// returns the context and the iteration's diff.patch; errors meant for the
// user are *Error. It is Choose, then Chosen.Detect with the same request.
func Detect(ctx context.Context, root string, req Request) (Context, []byte, error) {
	ch, err := Choose(ctx, root, req)
	if err != nil {
		return Context{}, nil, err
	}
	return ch.Detect(ctx, req)
}

// Chosen is the change Choose picked (its mode, base, head and tree)
// before the project's settings apply. They are read at its base
// (config.LoadAt), never from the change: a change cannot configure its
// own review (docs/security.md).
type Chosen struct {
	g     gitrun.Git
	root  string
	req   Request // the scope words and flags it was chosen with
	specs []string
	c     Context
}

// Base is the commit the change is measured against (git's empty tree for
// a root commit).
func (ch *Chosen) Base() string { return ch.c.Base }

// Choose resolves what req's scope words and flags name: the mode, the
// base and the tree of the change, snapshotting the work tree where the
// mode reviews it (with req.MaxUntracked, the cap the command line
// knows). Errors meant for the user are *Error.
func Choose(ctx context.Context, root string, req Request) (*Chosen, error) {
	modes := 0
	for _, on := range []bool{req.Since != "", req.Staged, req.Uncommitted, req.LastCommit} {
		if on {
			modes++
		}
	}
	if modes > 1 {
		return nil, userError("--since, --staged, --uncommitted and --last-commit exclude each other: choose one")
	}
	g := gitrun.Git{Dir: root}
	if out, err := g.Str(ctx, "rev-parse", "--is-inside-work-tree"); err != nil || out != "true" {
		if ctx.Err() != nil { // out of time, which says nothing about the repository
			return nil, fmt.Errorf("no time left to choose the change: %w", ctx.Err())
		}
		return nil, userError("%s is not inside a git work tree: run whetstone in a git repository (git init, then commit)", root)
	}
	head, err := g.Str(ctx, "rev-parse", "--verify", "-q", "HEAD^{commit}")
	if err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("no time left to choose the change: %w", ctx.Err())
	}
	if err != nil {
		return nil, userError("the repository has no commits yet: commit something first, then review")
	}
	branch, _ := g.Str(ctx, "symbolic-ref", "-q", "--short", "HEAD")
	specs, err := pathspecs(root, req.Paths)
	if err != nil {
		return nil, err
	}
	if !req.LastCommit {
		if err := conflicts(ctx, g); err != nil {
			return nil, err
		}
	}
	c := Context{Schema: Schema, Iteration: 1, Head: head, Branch: branch, Paths: req.Paths, MaxUntracked: req.MaxUntracked}
	if err := choose(ctx, g, req, specs, &c); err != nil {
		return nil, err
	}
	return &Chosen{g: g, root: root, req: req, specs: specs, c: c}, nil
}

// Detect finishes iteration 1's change with req's settings (the project's,
// read at the base): its files and triage, the size gates, specialists,
// verification commands and signals. The scope words and flags stay those
// the change was chosen with. A cap on untracked files other than the one
// the work tree was snapshotted with snapshots it again.
func (ch *Chosen) Detect(ctx context.Context, req Request) (Context, []byte, error) {
	req.Since, req.Staged, req.Uncommitted, req.LastCommit, req.Paths = ch.req.Since, ch.req.Staged, ch.req.Uncommitted, ch.req.LastCommit, ch.req.Paths
	g, specs, c := ch.g, ch.specs, ch.c
	if req.MaxUntracked != c.MaxUntracked {
		c.MaxUntracked = req.MaxUntracked
		if c.Mode != ModeLastCommit && c.Mode != ModeStaged { // neither reads the work tree
			if err := snapshotInto(ctx, g, &c); err != nil {
				return Context{}, nil, err
			}
		}
	}
	changes, err := collect(ctx, g, c.Base, c.Tree, specs, req, nil)
	if err != nil {
		return Context{}, nil, err
	}
	if changes, c.Installed, err = dropOwn(ctx, g, changes, req.Own); err != nil {
		return Context{}, nil, err
	}
	large, err := largeInScope(ctx, g, c.large, specs, c.MaxUntracked)
	if err != nil {
		return Context{}, nil, err
	}
	if len(changes)+len(large) == 0 {
		if len(c.Installed) > 0 {
			return Context{}, nil, userError("nothing to review: the only changes in %s are the %d files whetstone's install wrote, which no review includes; choose another scope such as --since REF or --last-commit", c.Description, len(c.Installed))
		}
		if len(req.Paths) > 0 {
			return Context{}, nil, userError("nothing to review in %s (%s): check the paths, or choose another scope such as --since REF", strings.Join(req.Paths, " "), c.Description)
		}
		return Context{}, nil, userError("nothing to review: %s has no changes; choose another scope such as --since REF or --last-commit", c.Description)
	}
	changes = append(changes, large...)
	diff := fill(&c, changes)
	if len(c.Skipped) == len(c.Files) {
		return Context{}, nil, userError("nothing to review: every changed file of %s is skipped by triage (%s); to review such files, list them under \"triage\": {\"normal\": […]} in whetstone.json", c.Description, skipSummary(changes))
	}
	if !req.Force {
		if err := gate(c, req); err != nil {
			return Context{}, nil, err
		}
	}
	c.Specialists, c.NotCalled = specialists(changes, req)
	c.Verify = DetectVerify(ch.root, req.VerifyCommands)
	if req.Checks {
		c.Signals = checks(ctx, g, reviewed(c), req)
	}
	return c, diff, nil
}

// conflicts returns an *Error when the index has unmerged paths: the
// change would be a half-done merge, rebase or cherry-pick with conflict
// markers in it.
func conflicts(ctx context.Context, g gitrun.Git) error {
	out, err := g.Run(ctx, "ls-files", "--unmerged", "-z")
	if err != nil {
		return fmt.Errorf("list conflicts: %w", err)
	}
	var paths []string
	for _, rec := range strings.Split(string(out), "\x00") {
		if _, p, ok := strings.Cut(rec, "\t"); ok && !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return nil
	}
	named := strings.Join(paths[:min(len(paths), 3)], ", ")
	if len(paths) > 3 {
		named += fmt.Sprintf(" and %d more", len(paths)-3)
	}
	return userError("the work tree has unresolved conflicts (%s): resolve them and git add the files, or abort the merge, rebase or cherry-pick, then review (--last-commit reviews the last commit as it is)", named)
}

// skipSummary counts skipped changes by reason: "4500 vendored, 1 lockfile".
func skipSummary(changes []change) string {
	count := map[string]int{}
	var order []string
	for _, c := range changes {
		if c.Triage == "skip" {
			if count[c.TriageReason] == 0 {
				order = append(order, c.TriageReason)
			}
			count[c.TriageReason]++
		}
	}
	parts := make([]string, len(order))
	for i, r := range order {
		parts[i] = fmt.Sprintf("%d %s", count[r], r)
	}
	return strings.Join(parts, ", ")
}

// reviewed returns c with only the files that are not skipped, for the
// deterministic checks: a skipped file is not reviewed, and checking
// thousands of vendored files costs seconds.
func reviewed(c Context) Context {
	c.Files = slices.DeleteFunc(slices.Clone(c.Files), func(f File) bool { return f.Triage == "skip" })
	return c
}

// choose sets the mode, base, tree and description of c from req.
func choose(ctx context.Context, g gitrun.Git, req Request, specs []string, c *Context) error {
	short := c.Head[:7]
	switch {
	case req.Since != "":
		// A ref never starts with "-": such a --since is refused before
		// git could read it as an option.
		base, err := "", errors.New("an option, not a ref")
		if !strings.HasPrefix(req.Since, "-") {
			base, err = g.Str(ctx, "rev-parse", "--verify", "-q", req.Since+"^{commit}")
		}
		if err != nil {
			return userError("unknown ref %q: name a commit, branch or tag that exists in this repository", req.Since)
		}
		c.Mode, c.Base, c.BaseRef = ModeSince, base, req.Since
		if c.Commits, err = count(ctx, g, base); err != nil {
			return err
		}
		c.Description = fmt.Sprintf("changes since %s: %s, and uncommitted work", req.Since, commitRange(*c))
		return snapshotInto(ctx, g, c)
	case req.Uncommitted:
		return uncommitted(ctx, g, c)
	case req.Staged:
		c.Mode, c.Base, c.BaseRef = ModeStaged, c.Head, "HEAD"
		c.Description = fmt.Sprintf("staged changes against HEAD (%s)", short)
		tree, err := snapshot.IndexTree(ctx, g)
		c.Tree = tree
		return err
	case req.LastCommit:
		return lastCommit(ctx, g, c)
	}
	if c.Branch == "" {
		return userError("HEAD is detached, so there is no branch to review: check out a branch, or choose what to review with --since REF, --uncommitted, --staged or --last-commit")
	}
	def, name, err := defaultBranch(ctx, g, c.Branch)
	if err != nil {
		return err
	}
	if def == "" {
		return userError("whetstone cannot tell which branch %s was made from (no remote HEAD, no init.defaultBranch, no main, master, trunk or develop, and no single branch it forks from): name the base with --since REF, such as --since origin/main", c.Branch)
	}
	if c.Branch == name {
		if err := uncommitted(ctx, g, c); err != nil {
			return err
		}
		// Uncommitted work that is only whetstone's install is no change
		// either: the last commit is reviewed.
		changes, err := listChanges(ctx, g, c.Base, c.Tree, specs)
		if err == nil {
			changes, _, err = dropOwn(ctx, g, changes, req.Own)
		}
		if err != nil || len(changes) > 0 {
			return err
		}
		return lastCommit(ctx, g, c)
	}
	base, err := g.Str(ctx, "merge-base", "HEAD", def)
	if err != nil {
		return userError("branch %s shares no history with %s: choose what to review with --since REF, --uncommitted or --last-commit", c.Branch, def)
	}
	c.Mode, c.Base, c.BaseRef = ModeBranch, base, def
	if err := snapshotInto(ctx, g, c); err != nil {
		return err
	}
	if c.Commits, err = count(ctx, g, base); err != nil {
		return err
	}
	c.Description = fmt.Sprintf("branch %s against its merge-base with %s: %s", c.Branch, def, commitRange(*c))
	if headTree, err := g.Str(ctx, "rev-parse", "HEAD^{tree}"); err == nil && headTree != c.Tree {
		c.Description += ", plus uncommitted changes"
	}
	return nil
}

// count returns the number of commits in base..HEAD.
func count(ctx context.Context, g gitrun.Git, base string) (int, error) {
	out, err := g.Str(ctx, "rev-list", "--count", base+"..HEAD")
	if err != nil {
		return 0, fmt.Errorf("count commits: %w", err)
	}
	return strconv.Atoi(out)
}

// commitRange words c's commits: "3 commits (1a2b3c4..5d6e7f8)".
func commitRange(c Context) string {
	switch c.Commits {
	case 0:
		return fmt.Sprintf("no commits (%s is HEAD)", c.Base[:7])
	case 1:
		return fmt.Sprintf("1 commit (%s..%s)", c.Base[:7], c.Head[:7])
	}
	return fmt.Sprintf("%d commits (%s..%s)", c.Commits, c.Base[:7], c.Head[:7])
}

func uncommitted(ctx context.Context, g gitrun.Git, c *Context) error {
	c.Mode, c.Base, c.BaseRef = ModeUncommitted, c.Head, "HEAD"
	c.Description = fmt.Sprintf("uncommitted changes (staged, unstaged and untracked) against HEAD (%s)", c.Head[:7])
	return snapshotInto(ctx, g, c)
}

func lastCommit(ctx context.Context, g gitrun.Git, c *Context) error {
	tree, err := g.Str(ctx, "rev-parse", "HEAD^{tree}")
	if err != nil {
		return fmt.Errorf("resolve HEAD tree: %w", err)
	}
	c.Mode, c.Tree, c.Commits, c.large = ModeLastCommit, tree, 1, nil // no work tree, so no large untracked files
	if parent, err := g.Str(ctx, "rev-parse", "--verify", "-q", "HEAD~1^{commit}"); err == nil {
		c.Base, c.BaseRef = parent, "HEAD~1"
		c.Description = fmt.Sprintf("the last commit (%s) against its parent (%s)", c.Head[:7], parent[:7])
		return nil
	}
	c.Base, c.BaseRef = emptyTree, "empty tree"
	c.Description = fmt.Sprintf("the root commit (%s), all of it", c.Head[:7])
	return nil
}

func snapshotInto(ctx context.Context, g gitrun.Git, c *Context) (err error) {
	c.Tree, c.large, err = snapshot.WorkTree(ctx, g, c.MaxUntracked)
	return err
}

// defaultNames are the usual names of a default branch, in order.
var defaultNames = []string{"main", "master", "trunk", "develop"}

// defaultBranch finds the default branch of the repository, for branch,
// the current branch. The first that gives one: the remote's HEAD
// (refs/remotes/<remote>/HEAD); init.defaultBranch; main, master, trunk,
// develop — each on a remote, then locally; else the first-parent history:
// with no other branch, branch itself; else the one branch that holds the
// commit where branch's first-parent history forks off. Remotes are tried
// origin first, then branch's remote, then the others. It returns the ref
// to diff against ("origin/main", "main") and its branch name ("main"), or
// two empty strings when there is no telling.
func defaultBranch(ctx context.Context, g gitrun.Git, branch string) (ref, name string, err error) {
	out, err := g.Str(ctx, "for-each-ref", "--format=%(refname)%00%(symref)", "refs/heads", "refs/remotes")
	if err != nil {
		return "", "", fmt.Errorf("list branches: %w", err)
	}
	refs := map[string]string{} // short ref name → symbolic target
	known := map[string]bool{}  // remotes with branches
	for _, line := range strings.Split(out, "\n") {
		full, sym, _ := strings.Cut(line, "\x00")
		if full != "" {
			refs[shortRef(full)] = shortRef(sym)
		}
		if r, ok := strings.CutPrefix(full, "refs/remotes/"); ok {
			r, _, _ = strings.Cut(r, "/")
			known[r] = true
		}
	}
	own, _ := g.Str(ctx, "config", "--get", "branch."+branch+".remote")
	configured, _ := g.Str(ctx, "remote")
	order := append([]string{"origin", own}, strings.Split(configured, "\n")...)
	order = append(order, slices.Sorted(maps.Keys(known))...)
	var rs []string
	for _, r := range order {
		if known[r] && !slices.Contains(rs, r) {
			rs = append(rs, r)
		}
	}
	for _, r := range rs {
		if target := refs[r+"/HEAD"]; target != "" {
			if _, ok := refs[target]; ok {
				return target, strings.TrimPrefix(target, r+"/"), nil
			}
		}
	}
	find := func(name string) (string, bool) {
		for _, r := range rs {
			if _, ok := refs[r+"/"+name]; ok {
				return r + "/" + name, true
			}
		}
		_, ok := refs[name]
		return name, ok
	}
	names := defaultNames
	if init, _ := g.Str(ctx, "config", "--get", "init.defaultBranch"); init != "" {
		names = append([]string{init}, names...)
	}
	for _, n := range names {
		if ref, ok := find(n); ok {
			return ref, n, nil
		}
	}
	return forkedFrom(ctx, g, branch, refs, rs)
}

// forkedFrom is defaultBranch's last resort, the first-parent history: with
// no branch but branch (and its copies on the remotes), branch is the
// default; else the default is the one branch name holding the commit
// where branch's first-parent history meets another branch.
func forkedFrom(ctx context.Context, g gitrun.Git, branch string, refs map[string]string, remotes []string) (string, string, error) {
	nameOf := func(ref string) string {
		for _, r := range remotes {
			if n, ok := strings.CutPrefix(ref, r+"/"); ok {
				return n
			}
		}
		return ref
	}
	var others []string
	for ref, sym := range refs {
		if sym == "" && nameOf(ref) != branch && !strings.HasSuffix(ref, "/HEAD") {
			others = append(others, ref)
		}
	}
	if len(others) == 0 {
		return branch, branch, nil
	}
	slices.Sort(others)
	full := make([]string, len(others))
	for i, o := range others {
		full[i] = fullRef(o, remotes)
	}
	n, err := g.Str(ctx, append([]string{"rev-list", "--first-parent", "--count", "HEAD", "--not"}, full...)...)
	if err != nil {
		return "", "", fmt.Errorf("find the fork point: %w", err)
	}
	out, err := g.Str(ctx, append([]string{"for-each-ref", "--format=%(refname)", "--contains", "HEAD~" + n}, full...)...)
	if err != nil {
		return "", "", nil // HEAD~n does not exist: no shared history
	}
	var found []string
	ref := ""
	for _, line := range strings.Split(out, "\n") {
		if line == "" {
			continue
		}
		short := shortRef(line)
		if name := nameOf(short); !slices.Contains(found, name) {
			found = append(found, name)
			ref = short
		} else if strings.HasPrefix(line, "refs/remotes/") {
			ref = short // the remote's copy, as elsewhere
		}
	}
	if len(found) != 1 {
		return "", "", nil
	}
	return ref, found[0], nil
}

// shortRef turns refs/heads/x into x and refs/remotes/r/x into r/x.
func shortRef(full string) string {
	if s, ok := strings.CutPrefix(full, "refs/heads/"); ok {
		return s
	}
	return strings.TrimPrefix(full, "refs/remotes/")
}

// fullRef turns a short name back into its full ref name: a remote's
// branch when it starts with a remote's name, else a local branch.
func fullRef(short string, remotes []string) string {
	for _, r := range remotes {
		if strings.HasPrefix(short, r+"/") {
			return "refs/remotes/" + short
		}
	}
	return "refs/heads/" + short
}

// pathspecs turns the user's scope words into git pathspecs. A word is a
// path or a glob relative to root ("*", "?", "[…]" stay in one directory,
// "**" spans any); it matches the files it names and everything under a
// directory it names, globs included ("services/*" matches services/a/x.go).
func pathspecs(root string, words []string) ([]string, error) {
	var specs []string
	for _, w := range words {
		w = filepath.ToSlash(w)
		if filepath.IsAbs(w) {
			rel, err := filepath.Rel(root, filepath.FromSlash(w))
			if err != nil {
				return nil, userError("path %s is outside the project %s: name paths inside it", w, root)
			}
			w = filepath.ToSlash(rel)
		}
		w = path.Clean(w)
		if w == ".." || strings.HasPrefix(w, "../") {
			return nil, userError("path %s is outside the project %s: name paths inside it", w, root)
		}
		if strings.HasPrefix(w, ":") {
			return nil, userError("path %s starts with a colon: name plain paths or globs, without git pathspec magic", w)
		}
		if w == "." {
			specs = append(specs, ".")
			continue
		}
		specs = append(specs, ":(glob)"+w)
		if strings.ContainsAny(w, "*?[") && !strings.HasSuffix(w, "**") {
			specs = append(specs, ":(glob)"+w+"/**")
		}
	}
	return specs, nil
}

// skipLines is how many skipped files diff.patch names, one line each;
// context.json lists them all.
const skipLines = 20

// fill sets the files, skipped paths and sizes of c from changes and
// returns the diff.patch. A skipped file's diff was never read: the patch
// names it in one comment line (the first 20, then a count), so lockfiles,
// vendored and generated code neither crowd out the review nor count
// towards the token gate (DiffTokens counts the reviewed files' diffs).
func fill(c *Context, changes []change) []byte {
	slices.SortStableFunc(changes, func(a, b change) int { return strings.Compare(a.Path, b.Path) })
	c.Files, c.Skipped = []File{}, []string{}
	c.Specialists, c.NotCalled, c.Signals = []Specialist{}, []Specialist{}, []Signal{}
	var diff []byte
	reviewed := 0
	for _, ch := range changes {
		c.Files = append(c.Files, ch.File)
		if ch.Triage != "skip" {
			diff = append(diff, ch.patch...)
			reviewed += len(ch.patch)
			continue
		}
		if c.Skipped = append(c.Skipped, ch.Path); len(c.Skipped) <= skipLines {
			diff = fmt.Appendf(diff, "# whetstone: %s skipped (%s), %s\n", ch.Path, ch.TriageReason, ch.Status)
		}
	}
	if n := len(c.Skipped) - skipLines; n > 0 {
		diff = fmt.Appendf(diff, "# whetstone: %d more skipped files, listed in context.json (\"skipped\")\n", n)
	}
	c.DiffBytes, c.DiffTokens = len(diff), reviewed/4
	return diff
}

// gate returns an *Error when c is past the size gates of req. Skipped
// files count towards neither gate: they are not reviewed.
func gate(c Context, req Request) error {
	maxFiles, maxTokens := orDefault(req.MaxFiles, DefaultMaxFiles), orDefault(req.MaxTokens, DefaultMaxTokens)
	if n := len(c.Files) - len(c.Skipped); n > maxFiles {
		return userError("the change touches %d files (limit %d): narrow it with paths or --since, or pass --force", n, maxFiles)
	}
	if c.DiffTokens > maxTokens { // the reviewed files' diffs only
		return userError("the change's diff is about %d tokens (limit %d): narrow it with paths or --since, or pass --force", c.DiffTokens, maxTokens)
	}
	return nil
}

// orDefault returns v, or def when v is not positive.
func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Next computes the context of the iteration after prev, once the fixer has
// worked: it snapshots the working tree and diffs prev.Base against it over
// prev's files (new and old paths) and every path the fix touched. It
// returns the new context, its diff.patch and fix.patch (prev.Tree → the new
// tree, the whole project). Mode, bases, head, branch, paths and
// specialists carry over; a file keeps its triage from prev, a file new to
// the scope gets the built-in triage. Size gates do not apply. When prev
// has signals (the checks were on at the start), they run again on the new
// tree, offline: the reviewers of the fixer's work must not read the tool
// output of the tree before it, and the start filled the module cache;
// the project's checkers run through the Contain of req, when given,
// within its Budget (the only fields of req Next reads). A check none of
// whose files the fix touched is not run again: its signal carries over
// (unchanged). The verification commands are detected again from the new
// tree.
func Next(ctx context.Context, root string, prev Context, req ...Request) (next Context, diff, fix []byte, err error) {
	g := gitrun.Git{Dir: root}
	tree, large, err := snapshot.WorkTree(ctx, g, prev.MaxUntracked)
	if err != nil {
		return Context{}, nil, nil, err
	}
	fixed, err := listChanges(ctx, g, prev.Tree, tree, []string{"."})
	if err != nil {
		return Context{}, nil, nil, err
	}
	if err := judge(ctx, g, fixed, nil); err != nil {
		return Context{}, nil, nil, fmt.Errorf("fix diff: %w", err)
	}
	if err := loadPatches(ctx, g, prev.Tree, tree, fixed, true); err != nil {
		return Context{}, nil, nil, fmt.Errorf("fix diff: %w", err)
	}
	for _, c := range fixed {
		fix = append(fix, c.patch...)
	}
	var specs []string
	for _, f := range slices.Concat(prev.Files, files(fixed)) {
		specs = append(specs, ":(literal)"+f.Path)
		if f.OldPath != "" {
			specs = append(specs, ":(literal)"+f.OldPath)
		}
	}
	slices.Sort(specs)
	keep := map[string]File{}
	for _, f := range prev.Files {
		keep[f.Path] = f
	}
	var changes []change
	if len(specs) > 0 { // no pathspec at all would mean the whole project
		changes, err = collect(ctx, g, prev.Base, tree, slices.Compact(specs), Request{Force: true}, keep) // no gate after the start
		if err != nil {
			return Context{}, nil, nil, err
		}
	}
	for _, f := range large { // still large and still in scope; one the fix created is in no diff
		if slices.ContainsFunc(prev.Files, func(pf File) bool { return pf.Path == f.Path }) &&
			!slices.ContainsFunc(changes, func(ch change) bool { return ch.Path == f.Path }) {
			changes = append(changes, largeChange(f.Path, prev.MaxUntracked))
		}
	}
	next = prev
	next.Iteration, next.Tree = prev.Iteration+1, tree
	diff = fill(&next, changes)
	// An installed file the fixer touched is in the change now.
	next.Installed = slices.DeleteFunc(slices.Clone(prev.Installed), func(p string) bool {
		return slices.ContainsFunc(next.Files, func(f File) bool { return f.Path == p })
	})
	next.Specialists, next.NotCalled, next.Signals = nonNil(prev.Specialists), nonNil(prev.NotCalled), []Signal{}
	next.Verify = DetectVerify(root, configured(prev.Verify))
	if len(prev.Signals) > 0 {
		r := Request{}
		if len(req) > 0 {
			r.Contain, r.Budget = req[0].Contain, req[0].Budget
		}
		r.prev, r.fixed = prev.Signals, nonNil(files(fixed))
		next.Signals = checks(ctx, g, reviewed(next), r)
	}
	return next, diff, fix, nil
}

func files(changes []change) []File {
	var fs []File
	for _, c := range changes {
		fs = append(fs, c.File)
	}
	return fs
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
