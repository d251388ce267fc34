// Package scope works out, deterministically from git, what a review run
// reviews: the change, its diff, its files with changed line ranges, their
// triage, the specialist reviewers the change calls for and the signals of
// deterministic tools. It also snapshots the repository around a read-only
// phase (Take) to find (Changes) and undo (Restore) what the phase changed.
//
// Every git command runs with GIT_OPTIONAL_LOCKS=0 and a time and output
// bound. The working tree is snapshotted through a temporary copy of the
// index, so neither the work tree nor the user's index is ever written; only
// git objects may be added to the object store. Restore alone writes the
// work tree, and only to put back what a snapshot recorded.
package scope

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
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

// Defaults of the size gates and checks.
const (
	DefaultMaxFiles     = 100
	DefaultMaxTokens    = 100000
	DefaultCheckTimeout = 20 * time.Second
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
	// MaxUntracked is the size in bytes above which an untracked file is
	// listed and skipped, never hashed; 0 means DefaultMaxUntracked.
	MaxUntracked int64
	// Network lets the Go checks download modules (GOPROXY as set); off,
	// they use the local module cache only.
	Network bool
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
	Tree        string       `json:"tree"`
	Paths       []string     `json:"paths,omitempty"`
	Files       []File       `json:"files"`
	Skipped     []string     `json:"skipped"`
	Specialists []Specialist `json:"specialists"`
	Signals     []Signal     `json:"signals"`
	DiffBytes   int          `json:"diff_bytes"`
	DiffTokens  int          `json:"diff_tokens"`
	// MaxUntracked is the untracked-file size cap the run was started
	// with, when not the default (see untracked.go).
	MaxUntracked int64 `json:"max_untracked_bytes,omitempty"`

	large []LargeFile // the large untracked files of the snapshot (not stored)
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
// user are *Error.
func Detect(ctx context.Context, root string, req Request) (Context, []byte, error) {
	modes := 0
	for _, on := range []bool{req.Since != "", req.Staged, req.Uncommitted, req.LastCommit} {
		if on {
			modes++
		}
	}
	if modes > 1 {
		return Context{}, nil, userError("--since, --staged, --uncommitted and --last-commit exclude each other: choose one")
	}
	g := git{dir: root}
	if out, err := g.str(ctx, "rev-parse", "--is-inside-work-tree"); err != nil || out != "true" {
		return Context{}, nil, userError("%s is not inside a git work tree: run whetstone in a git repository (git init, then commit)", root)
	}
	head, err := g.str(ctx, "rev-parse", "--verify", "-q", "HEAD^{commit}")
	if err != nil {
		return Context{}, nil, userError("the repository has no commits yet: commit something first, then review")
	}
	branch, _ := g.str(ctx, "symbolic-ref", "-q", "--short", "HEAD")
	specs, err := pathspecs(root, req.Paths)
	if err != nil {
		return Context{}, nil, err
	}
	c := Context{Schema: Schema, Iteration: 1, Head: head, Branch: branch, Paths: req.Paths, MaxUntracked: req.MaxUntracked}
	if err := choose(ctx, g, req, specs, &c); err != nil {
		return Context{}, nil, err
	}
	changes, err := diffTrees(ctx, g, c.Base, c.Tree, specs)
	if err != nil {
		return Context{}, nil, err
	}
	large, err := largeInScope(ctx, g, c.large, specs, c.MaxUntracked)
	if err != nil {
		return Context{}, nil, err
	}
	if len(changes)+len(large) == 0 {
		if len(req.Paths) > 0 {
			return Context{}, nil, userError("nothing to review in %s (%s): check the paths, or choose another scope such as --since REF", strings.Join(req.Paths, " "), c.Description)
		}
		return Context{}, nil, userError("nothing to review: %s has no changes; choose another scope such as --since REF or --last-commit", c.Description)
	}
	if err := triageAll(ctx, g, changes, req); err != nil {
		return Context{}, nil, err
	}
	changes = append(changes, large...)
	diff := fill(&c, changes)
	if !req.Force {
		if err := gate(c, req); err != nil {
			return Context{}, nil, err
		}
	}
	c.Specialists = specialists(changes, req)
	if req.Checks {
		c.Signals = checks(ctx, g, c, req)
	}
	return c, diff, nil
}

// choose sets the mode, base, tree and description of c from req.
func choose(ctx context.Context, g git, req Request, specs []string, c *Context) error {
	short := c.Head[:7]
	switch {
	case req.Since != "":
		base, err := g.str(ctx, "rev-parse", "--verify", "-q", req.Since+"^{commit}")
		if err != nil || strings.HasPrefix(req.Since, "-") {
			return userError("unknown ref %q: name a commit, branch or tag that exists in this repository", req.Since)
		}
		c.Mode, c.Base, c.BaseRef = ModeSince, base, req.Since
		c.Description = fmt.Sprintf("changes since %s (%s), including uncommitted work", req.Since, base[:7])
		return snapshotInto(ctx, g, c)
	case req.Uncommitted:
		return uncommitted(ctx, g, c)
	case req.Staged:
		c.Mode, c.Base, c.BaseRef = ModeStaged, c.Head, "HEAD"
		c.Description = fmt.Sprintf("staged changes against HEAD (%s)", short)
		tree, err := writeTree(ctx, g, false)
		c.Tree = tree
		return err
	case req.LastCommit:
		return lastCommit(ctx, g, c)
	}
	if c.Branch == "" {
		return userError("HEAD is detached, so there is no branch to review: check out a branch, or choose what to review with --since REF, --uncommitted, --staged or --last-commit")
	}
	def := defaultBranch(ctx, g)
	upstream, _ := g.str(ctx, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}")
	if def == "" || c.Branch == strings.TrimPrefix(def, "origin/") || upstream == def {
		if err := uncommitted(ctx, g, c); err != nil {
			return err
		}
		names, err := g.run(ctx, append([]string{"diff", "--name-only", "-z", "--relative", c.Base, c.Tree, "--"}, append(specs, excludeState)...)...)
		if err != nil || len(names) > 0 {
			return err
		}
		return lastCommit(ctx, g, c)
	}
	base, err := g.str(ctx, "merge-base", "HEAD", def)
	if err != nil {
		return userError("branch %s shares no history with %s: choose what to review with --since REF, --uncommitted or --last-commit", c.Branch, def)
	}
	c.Mode, c.Base, c.BaseRef = ModeBranch, base, def
	if err := snapshotInto(ctx, g, c); err != nil {
		return err
	}
	c.Description = fmt.Sprintf("branch %s against its merge-base with %s (%s)", c.Branch, def, base[:7])
	if headTree, err := g.str(ctx, "rev-parse", "HEAD^{tree}"); err == nil && headTree != c.Tree {
		c.Description += ", plus uncommitted changes"
	}
	return nil
}

func uncommitted(ctx context.Context, g git, c *Context) error {
	c.Mode, c.Base, c.BaseRef = ModeUncommitted, c.Head, "HEAD"
	c.Description = fmt.Sprintf("uncommitted changes (staged, unstaged and untracked) against HEAD (%s)", c.Head[:7])
	return snapshotInto(ctx, g, c)
}

func lastCommit(ctx context.Context, g git, c *Context) error {
	tree, err := g.str(ctx, "rev-parse", "HEAD^{tree}")
	if err != nil {
		return fmt.Errorf("resolve HEAD tree: %w", err)
	}
	c.Mode, c.Tree, c.large = ModeLastCommit, tree, nil // no work tree, so no large untracked files
	if parent, err := g.str(ctx, "rev-parse", "--verify", "-q", "HEAD~1^{commit}"); err == nil {
		c.Base, c.BaseRef = parent, "HEAD~1"
		c.Description = fmt.Sprintf("the last commit (%s) against its parent (%s)", c.Head[:7], parent[:7])
		return nil
	}
	c.Base, c.BaseRef = emptyTree, "empty tree"
	c.Description = fmt.Sprintf("the root commit (%s), all of it", c.Head[:7])
	return nil
}

func snapshotInto(ctx context.Context, g git, c *Context) (err error) {
	c.Tree, c.large, err = workTree(ctx, g, c.MaxUntracked)
	return err
}

// defaultBranch returns the name of the default branch ("origin/main",
// "main", …) or "" when there is none.
func defaultBranch(ctx context.Context, g git) string {
	if ref, err := g.str(ctx, "symbolic-ref", "-q", "refs/remotes/origin/HEAD"); err == nil && ref != "" {
		if _, err := g.str(ctx, "rev-parse", "--verify", "-q", ref+"^{commit}"); err == nil {
			return strings.TrimPrefix(ref, "refs/remotes/")
		}
	}
	candidates := []string{"refs/remotes/origin/main", "refs/heads/main", "refs/remotes/origin/master", "refs/heads/master"}
	out, _ := g.str(ctx, append([]string{"for-each-ref", "--format=%(refname)"}, candidates...)...)
	found := strings.Split(out, "\n")
	for _, ref := range candidates {
		if slices.Contains(found, ref) {
			return strings.TrimPrefix(strings.TrimPrefix(ref, "refs/remotes/"), "refs/heads/")
		}
	}
	return ""
}

// writeTree writes a tree object of the index, or with all true of the
// whole working tree (workTree with the default size cap). It works on a
// temporary copy of the index: even `git write-tree` would otherwise
// rewrite the user's index to cache the tree.
func writeTree(ctx context.Context, g git, all bool) (string, error) {
	if all {
		tree, _, err := workTree(ctx, g, 0)
		return tree, err
	}
	var tree string
	err := withTempIndex(ctx, g, true, func(tg git) error {
		var err error
		if tree, err = tg.str(ctx, "write-tree"); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		return nil
	})
	return tree, err
}

// withTempIndex runs fn with a copy of g whose commands use a temporary
// index: a copy of the user's index when seed is true, else an empty one.
// The file has a unique name, so concurrent callers never share one, and it
// lives inside the git directory, never in the work tree (TMPDIR may be).
func withTempIndex(ctx context.Context, g git, seed bool, fn func(tg git) error) error {
	index, err := indexPath(ctx, g)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(index), "whetstone-index-*")
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	name := tmp.Name()
	defer os.Remove(name)
	defer os.Remove(name + ".lock")
	var src *os.File
	if seed {
		src, err = os.Open(index)
	}
	switch {
	case src == nil && (err == nil || errors.Is(err, os.ErrNotExist)):
		tmp.Close()
		os.Remove(name) // git starts from an empty index
	case err != nil:
		tmp.Close()
		return fmt.Errorf("snapshot: %w", err)
	default:
		_, err = io.Copy(tmp, src)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		// Git trusts an entry's stat data only when the file is older than
		// the index file; a copy dated now would hide an edit made in the
		// second the user's index was written (same size, same mtime).
		if fi, serr := src.Stat(); err == nil && serr == nil {
			err = os.Chtimes(name, fi.ModTime(), fi.ModTime())
		}
		src.Close()
		if err != nil {
			return fmt.Errorf("snapshot: copy index: %w", err)
		}
	}
	return fn(g.with("GIT_INDEX_FILE=" + name))
}

// indexPath returns the path of the repository's index. In the plain case
// (g.dir holds a .git directory, and no GIT_DIR or GIT_INDEX_FILE says
// otherwise) it is .git/index, found without starting git; anything else
// (a linked worktree, a submodule, a .git file) asks git.
func indexPath(ctx context.Context, g git) (string, error) {
	if os.Getenv("GIT_DIR") == "" && os.Getenv("GIT_INDEX_FILE") == "" && os.Getenv("GIT_WORK_TREE") == "" && len(g.env) == 0 {
		if fi, err := os.Lstat(filepath.Join(g.dir, ".git")); err == nil && fi.IsDir() {
			return filepath.Join(g.dir, ".git", "index"), nil
		}
	}
	index, err := g.str(ctx, "rev-parse", "--git-path", "index")
	if err != nil {
		return "", fmt.Errorf("find index: %w", err)
	}
	if !filepath.IsAbs(index) {
		index = filepath.Join(g.dir, index)
	}
	return index, nil
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

// fill sets the files, skipped paths and sizes of c from changes and
// returns the diff.patch. A skipped file's diff is replaced by one comment
// line, so lockfiles and generated code do not crowd out the review.
func fill(c *Context, changes []change) []byte {
	slices.SortStableFunc(changes, func(a, b change) int { return strings.Compare(a.Path, b.Path) })
	c.Files, c.Skipped = []File{}, []string{}
	c.Specialists, c.Signals = []Specialist{}, []Signal{}
	var diff []byte
	for _, ch := range changes {
		c.Files = append(c.Files, ch.File)
		if ch.Triage == "skip" {
			c.Skipped = append(c.Skipped, ch.Path)
			diff = fmt.Appendf(diff, "# whetstone: %s skipped (%s), %s, +%d -%d\n", ch.Path, ch.TriageReason, ch.Status, ch.Added, ch.Deleted)
			continue
		}
		diff = append(diff, ch.patch...)
	}
	c.DiffBytes, c.DiffTokens = len(diff), len(diff)/4
	return diff
}

// gate returns an *Error when c is past the size gates of req. Skipped
// files count towards neither gate: they are not reviewed.
func gate(c Context, req Request) error {
	maxFiles, maxTokens := orDefault(req.MaxFiles, DefaultMaxFiles), orDefault(req.MaxTokens, DefaultMaxTokens)
	if n := len(c.Files) - len(c.Skipped); n > maxFiles {
		return userError("the change touches %d files (limit %d): narrow it with paths or --since, or pass --force", n, maxFiles)
	}
	if c.DiffTokens > maxTokens {
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
// tree, the whole project). Mode, bases, head, branch, paths, specialists
// and signals carry over; a file keeps its triage from prev, a file new to
// the scope gets the built-in triage. Size gates do not apply.
func Next(ctx context.Context, root string, prev Context) (next Context, diff, fix []byte, err error) {
	g := git{dir: root}
	tree, large, err := workTree(ctx, g, prev.MaxUntracked)
	if err != nil {
		return Context{}, nil, nil, err
	}
	fix, err = g.run(ctx, append(append([]string{"diff"}, diffArgs...), prev.Tree, tree, "--", ".", excludeState)...)
	if err != nil {
		return Context{}, nil, nil, fmt.Errorf("fix diff: %w", err)
	}
	fixed, err := diffTrees(ctx, g, prev.Tree, tree, []string{"."})
	if err != nil {
		return Context{}, nil, nil, err
	}
	var specs []string
	for _, f := range slices.Concat(prev.Files, files(fixed)) {
		specs = append(specs, ":(literal)"+f.Path)
		if f.OldPath != "" {
			specs = append(specs, ":(literal)"+f.OldPath)
		}
	}
	slices.Sort(specs)
	var changes []change
	if len(specs) > 0 { // no pathspec at all would mean the whole project
		changes, err = diffTrees(ctx, g, prev.Base, tree, slices.Compact(specs))
		if err != nil {
			return Context{}, nil, nil, err
		}
	}
	if err := triageAll(ctx, g, changes, Request{}); err != nil {
		return Context{}, nil, nil, err
	}
	for i, ch := range changes {
		if j := slices.IndexFunc(prev.Files, func(f File) bool { return f.Path == ch.Path }); j >= 0 {
			changes[i].Triage, changes[i].TriageReason = prev.Files[j].Triage, prev.Files[j].TriageReason
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
	next.Specialists, next.Signals = nonNil(prev.Specialists), nonNil(prev.Signals)
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
