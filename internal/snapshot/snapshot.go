// Package snapshot records the repository around a read-only phase (Take)
// to find (Changes, Compare) and undo (Restore) what the phase changed, the
// tamper backstop. It also records the work tree as a tree object for
// internal/scope (WorkTree, IndexTree).
//
// The work tree is recorded through a temporary copy of the index, so
// neither the work tree nor the user's index is ever written; only git
// objects are added, under a run (WithOwner) to the run's own object
// directory, removed when it ends (objects.go). Restore alone writes the
// work tree, and only to put back what a snapshot recorded.
package snapshot

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/whetstone-dev/whetstone/internal/gitrun"
)

// Kinds of Change.
const (
	KindAdded    = "added"    // a file that was not in the snapshot
	KindModified = "modified" // other content, or another type (file ↔ symlink)
	KindDeleted  = "deleted"  // a file of the snapshot that is gone
	KindMode     = "mode"     // same content, executable bit flipped
	KindRef      = "ref"      // a ref created, deleted or moved
	KindHead     = "head"     // HEAD points elsewhere
	KindStaged   = "staged"   // the user's index changed (git add, rm, reset)
	KindMore     = "more"     // the last entry of a capped list: how many more
)

// maxChanges caps the list Changes returns; a phase that changed more than
// this has done something no list will make clearer.
const maxChanges = 200

// Snapshot is the recorded state of the work tree and the repository's refs
// at the start of a read-only phase. It is stored in state.json, so it is
// small: object names only, the content lives in git's object store.
type Snapshot struct {
	// Tree is the tree of the files under the root, tracked and untracked
	// but not ignored, .whetstone/ excluded, built in a temporary index.
	Tree string `json:"tree"`
	// Index is the tree of the user's index as it was (what `git commit`
	// would record), or "" when it had unmerged entries.
	Index string `json:"index,omitempty"`
	// Head is HEAD's symbolic target ("ref: refs/heads/main") or, detached,
	// its commit.
	Head string `json:"head"`
	// Refs is the blob of the `git for-each-ref` listing ("object name"
	// lines), so a later compare can name the refs that changed.
	Refs string `json:"refs"`
	// Large are the untracked files above MaxUntracked bytes, left out of
	// Tree and recorded by size, modification time and mode only.
	Large []LargeFile `json:"large,omitempty"`
	// MaxUntracked is the size cap Take used (0: DefaultMaxUntracked); a
	// comparison uses the same.
	MaxUntracked int64 `json:"max_untracked,omitempty"`
	// Cache is the checksum of the temporary index this snapshot kept for
	// the next one (cache.go), or "".
	Cache string `json:"cache,omitempty"`
}

// Change is one difference found after the phase.
type Change struct {
	Path   string `json:"path"` // file path relative to the root, or the ref name, or "HEAD"
	Kind   string `json:"kind"` // one of the Kind constants
	Detail string `json:"detail,omitempty"`
}

// RestoreError lists the changes Restore could not undo; each Detail says
// why.
type RestoreError struct{ Failed []Change }

func (e *RestoreError) Error() string {
	var parts []string
	for _, c := range e.Failed {
		parts = append(parts, fmt.Sprintf("%s (%s)", c.Path, c.Detail))
	}
	what := fmt.Sprintf("%d files", len(e.Failed))
	if len(e.Failed) == 1 {
		what = "1 file"
	}
	return fmt.Sprintf("could not restore %s: %s", what, strings.Join(parts, "; "))
}

// tamperGit is git for the backstop (gitrun.Git.Command turns off hooks and the
// fsmonitor for every command).
func tamperGit(root string) gitrun.Git { return gitrun.Git{Dir: root} }

// Take records the work tree under root, the user's index, HEAD and the
// refs. It writes git objects (the trees, the refs listing) and nothing
// else: neither the user's index nor the work tree is touched. Untracked
// files larger than maxUntracked bytes (0: DefaultMaxUntracked) are not
// hashed: their size and modification time are recorded instead. now is
// the caller's clock: kept indexes older than cacheAge then are pruned.
func Take(ctx context.Context, root string, maxUntracked int64, now time.Time) (Snapshot, error) {
	g := tamperGit(root)
	s := Snapshot{MaxUntracked: max(maxUntracked, 0)}
	if index, err := indexPath(ctx, g); err == nil {
		pruneIndexes(filepath.Dir(index), now)
	}
	err := both(func() (err error) {
		s.Tree, s.Index, s.Large, s.Cache, err = worktree(ctx, g, s.MaxUntracked, "", true)
		return err
	}, func() error {
		h, refs, err := refState(ctx, g)
		if err != nil {
			return err
		}
		id, err := hashObject(ctx, g, refs)
		if err != nil {
			return fmt.Errorf("record refs: %w", err)
		}
		s.Head, s.Refs = h, strings.TrimSpace(string(id))
		return nil
	})
	if err != nil {
		return Snapshot{}, err
	}
	return s, nil
}

// Changes compares the current work tree, index, HEAD and refs with s; nil
// when nothing changed. HEAD and refs come first, then files in path order,
// then index entries; past maxChanges the list ends with one KindMore entry.
// A file staged without a change in the work tree is KindStaged only: the
// work tree content is what Tree records, the index is reported apart.
//
// Only files under root are watched, not .git itself (its config, hooks or
// info/exclude). Objects recorded without an owner are unreachable, so a
// `git gc --prune=now` in between removes them (an owner's directory is
// out of gc's reach, but may be deleted by hand): then Changes returns an
// error, and a caller must treat it as "cannot tell", never as "nothing
// changed".
func (s Snapshot) Changes(ctx context.Context, root string) ([]Change, error) {
	_, out, err := s.Compare(ctx, root)
	return out, err
}

// Compare is Changes that also returns the current snapshot, so that the
// next phase's baseline costs nothing more when the project did not change.
func (s Snapshot) Compare(ctx context.Context, root string) (Snapshot, []Change, error) {
	if s.Tree == "" || s.Refs == "" {
		return Snapshot{}, nil, errors.New("compare snapshot: the snapshot is empty")
	}
	g := tamperGit(root)
	now := Snapshot{Refs: s.Refs, MaxUntracked: s.MaxUntracked}
	var refs []byte
	err := both(func() (err error) {
		now.Tree, now.Index, now.Large, now.Cache, err = worktree(ctx, g, s.MaxUntracked, s.Cache, true)
		return err
	}, func() (err error) {
		now.Head, refs, err = refState(ctx, g)
		return err
	})
	if err != nil {
		return Snapshot{}, nil, err
	}
	var out []Change
	if now.Head != s.Head {
		out = append(out, Change{Path: "HEAD", Kind: KindHead, Detail: fmt.Sprintf("HEAD changed %s → %s", short(s.Head), short(now.Head))})
	}
	if blobID(refs, len(s.Refs)) != s.Refs {
		old, err := g.Run(ctx, "cat-file", "blob", s.Refs)
		if err != nil {
			return Snapshot{}, nil, fmt.Errorf("read recorded refs %s: %w", s.Refs, err)
		}
		out = append(out, refChanges(old, refs)...)
		id, err := hashObject(ctx, g, refs)
		if err != nil {
			return Snapshot{}, nil, fmt.Errorf("record refs: %w", err)
		}
		now.Refs = strings.TrimSpace(string(id))
	}
	var entries []entry
	if now.Tree != s.Tree {
		if entries, err = treeDiff(ctx, g, s.Tree, now.Tree); err != nil {
			return Snapshot{}, nil, err
		}
	}
	out = append(out, fileChanges(s, now, entries)...)
	if s.Index != "" && now.Index != s.Index {
		staged, err := indexChanges(ctx, g, s.Index, now.Index)
		if err != nil {
			return Snapshot{}, nil, err
		}
		out = append(out, staged...)
	}
	if len(out) > maxChanges {
		n := len(out) - maxChanges
		out = append(out[:maxChanges], Change{Kind: KindMore, Detail: fmt.Sprintf("%d more changes not listed", n)})
	}
	if index, err := indexPath(ctx, g); err == nil && now.Cache != s.Cache {
		dropIndex(filepath.Dir(index), s.Cache) // now's replaces it
	}
	return now, out, nil
}

// Restore puts the files of changes back as s recorded them. Before a
// file is removed or overwritten, it is copied as it is now into keep (a
// directory outside the snapshot's scope, created when needed), and the
// copies' paths, relative to root and keep alike, are returned: a restore
// never loses the user's work, and `cp -a keep/. root` brings it back. A
// file no copy could be kept of is left alone (RestoreError says so).
func (s Snapshot) Restore(ctx context.Context, root string, changes []Change, keep string) ([]string, error) {
	if keep == "" {
		return nil, errors.New("restore: no directory to keep the user's files in")
	}
	want, all := map[string]bool{}, false
	for _, c := range changes {
		switch c.Kind {
		case KindAdded, KindModified, KindDeleted, KindMode:
			want[c.Path] = true
		case KindMore:
			all = true
		}
	}
	if len(want) == 0 && !all {
		return nil, nil
	}
	g := tamperGit(root)
	wasLarge := map[string]bool{}
	for _, f := range s.Large {
		wasLarge[f.Path] = true
	}
	// pending returns the tree entries Restore can act on and the changes
	// of large files, both limited to the changes asked for.
	pending := func() ([]entry, []Change, string, error) {
		tree, index, large, _, err := worktree(ctx, g, s.MaxUntracked, s.Cache, false)
		if err != nil {
			return nil, nil, index, err
		}
		var entries []entry
		if tree != s.Tree {
			if entries, err = treeDiff(ctx, g, s.Tree, tree); err != nil {
				return nil, nil, index, err
			}
		}
		changes, _ := largeChanges(s.Large, large, entries, s.MaxUntracked)
		keep := func(p string) bool { return all || want[p] }
		entries = slices.DeleteFunc(entries, func(e entry) bool { return !keep(e.path) || wasLarge[e.path] })
		changes = slices.DeleteFunc(changes, func(c Change) bool { return !keep(c.Path) })
		return entries, changes, index, nil
	}
	entries, large, index, err := pending()
	if err != nil || len(entries)+len(large) == 0 {
		return nil, err
	}
	fsys, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	defer fsys.Close()
	k := &keeper{src: fsys, dir: keep}

	why := map[string]string{}
	for _, c := range large {
		switch {
		case wasLarge[c.Path]:
			why[c.Path] = fmt.Sprintf("larger than %s when the phase began: its content was not recorded", MiB(Cap(s.MaxUntracked)))
		case c.Kind == KindAdded:
			if err := k.keep(c.Path); err != nil {
				why[c.Path] = err.Error()
			} else if err := removeFile(fsys, c.Path); err != nil {
				why[c.Path] = err.Error()
			}
		}
	}
	var newlyStaged map[string]bool
	if s.Index != "" && index != "" && index != s.Index {
		idx, err := treeDiff(ctx, g, s.Index, index)
		if err != nil {
			return k.kept, err
		}
		newlyStaged = map[string]bool{}
		for _, e := range idx {
			if e.oldMode == nullMode {
				newlyStaged[e.path] = true
			}
		}
	}
	// Removals first and deepest first, so a file that replaced a directory
	// (or a symlink that replaced one) is gone before anything is written
	// there.
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(b.path, a.path) })
	parents := map[string]bool{}
	for _, e := range entries {
		if e.oldMode != nullMode {
			continue
		}
		if newlyStaged[e.path] {
			why[e.path] = "the index now tracks it; Restore leaves the index and its files alone"
			continue
		}
		if err := k.keep(e.path); err != nil {
			why[e.path] = err.Error()
			continue
		}
		if err := removeFile(fsys, e.path); err != nil {
			why[e.path] = err.Error()
			continue
		}
		for d := path.Dir(e.path); d != "."; d = path.Dir(d) {
			parents[d] = true
		}
	}
	if err := pruneDirs(ctx, g, fsys, s.Tree, parents); err != nil {
		return k.kept, err
	}
	var writes []entry
	for _, e := range slices.Backward(entries) {
		switch {
		case e.oldMode == nullMode:
		case e.oldMode == gitlinkMode:
			why[e.path] = "a submodule: check it out yourself"
		default:
			if err := k.keep(e.path); err != nil {
				why[e.path] = err.Error()
				continue
			}
			if err := clearForWrite(fsys, e.path); err != nil {
				why[e.path] = err.Error()
				continue
			}
			writes = append(writes, e)
		}
	}
	if err := checkout(ctx, g, writes); err != nil {
		for _, e := range writes {
			why[e.path] = err.Error()
		}
	}

	left, leftLarge, _, err := pending()
	if err != nil {
		return k.kept, err
	}
	if len(left)+len(leftLarge) == 0 {
		return k.kept, nil
	}
	failed := &RestoreError{}
	for _, e := range left {
		failed.Failed = append(failed.Failed, e.change())
	}
	for _, c := range leftLarge {
		if !slices.ContainsFunc(failed.Failed, func(f Change) bool { return f.Path == c.Path }) {
			failed.Failed = append(failed.Failed, c)
		}
	}
	for i, c := range failed.Failed {
		failed.Failed[i].Detail = why[c.Path]
		if why[c.Path] == "" {
			failed.Failed[i].Detail = "still differs after restoring"
		}
	}
	slices.SortStableFunc(failed.Failed, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	return k.kept, failed
}

// worktree snapshots the work tree under g's directory and the user's
// index, as trees written from two temporary copies of the index at once
// (write-tree updates the copy it reads). An index with unmerged entries
// has no tree: then index is "". The untracked files above max bytes are
// left out of the tree and returned. The work tree's snapshot starts from
// the index an earlier one kept (seed) and, with keep, keeps its own
// (kept, its checksum).
func worktree(ctx context.Context, g gitrun.Git, max int64, seed string, keep bool) (tree, index string, large []LargeFile, kept string, err error) {
	err = both(func() (err error) {
		tree, large, kept, err = keptWorkTree(ctx, g, max, seed, keep, false)
		return err
	}, func() (err error) {
		index, err = IndexTree(ctx, g)
		if err != nil && strings.Contains(err.Error(), "unmerged") {
			return nil // write-tree refuses an index in the middle of a merge
		}
		return err
	})
	return tree, index, large, kept, err
}

// fileChanges lists the file changes from snapshot s to now: the tree
// entries between them and the changes of large untracked files, in path
// order, each file once.
func fileChanges(s, now Snapshot, entries []entry) []Change {
	large, covered := largeChanges(s.Large, now.Large, entries, s.MaxUntracked)
	var out []Change
	for _, e := range entries {
		if !covered[e.path] {
			out = append(out, e.change())
		}
	}
	if len(large) == 0 {
		return out
	}
	out = append(out, large...)
	slices.SortStableFunc(out, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// both runs f and, concurrently, g; it returns f's error, else g's. The
// snapshot's cost is mostly waiting on git processes, so reading HEAD and
// the refs while `git add` walks the tree saves their latency.
func both(f, g func() error) error {
	done := make(chan error, 1)
	go func() { done <- g() }()
	err := f()
	if gerr := <-done; err == nil {
		err = gerr
	}
	return err
}

// hashObject writes data as a blob and returns its name.
func hashObject(ctx context.Context, g gitrun.Git, data []byte) (id []byte, err error) {
	err = owned(ctx, g, func(qg gitrun.Git) error {
		id, err = qg.RunInput(ctx, bytes.NewReader(data), "hash-object", "-w", "--no-filters", "--stdin")
		return err
	})
	return id, err
}

// refState returns HEAD and the ref listing.
func refState(ctx context.Context, g gitrun.Git) (string, []byte, error) {
	h, err := head(ctx, g)
	if err != nil {
		return "", nil, err
	}
	refs, err := listRefs(ctx, g)
	return h, refs, err
}

// head returns HEAD as "ref: <name>" or, detached, its commit.
func head(ctx context.Context, g gitrun.Git) (string, error) {
	ref, err := g.Str(ctx, "symbolic-ref", "-q", "HEAD")
	if err == nil {
		return "ref: " + ref, nil
	}
	// Exit status 1 is "not a symbolic ref" (detached); anything else (git
	// could not even start) must not read as HEAD having moved.
	if exit := (*exec.ExitError)(nil); !errors.As(err, &exit) || exit.ExitCode() != 1 {
		return "", fmt.Errorf("read HEAD: %w", err)
	}
	h, err := g.Str(ctx, "rev-parse", "-q", "--verify", "HEAD")
	if err != nil {
		return "", fmt.Errorf("read HEAD: %w", err)
	}
	return h, nil
}

// listRefs lists every ref as "object name" lines, sorted by name. Ref
// names hold neither spaces nor newlines.
func listRefs(ctx context.Context, g gitrun.Git) ([]byte, error) {
	out, err := g.Run(ctx, "for-each-ref", "--format=%(objectname) %(refname)")
	if err != nil {
		return nil, fmt.Errorf("list refs: %w", err)
	}
	return out, nil
}

// refChanges names the refs created, deleted or moved from listing old to
// listing now, in name order.
func refChanges(old, now []byte) []Change {
	parse := func(b []byte) map[string]string {
		m := map[string]string{}
		for line := range strings.Lines(string(b)) {
			if obj, name, ok := strings.Cut(strings.TrimSuffix(line, "\n"), " "); ok {
				m[name] = obj
			}
		}
		return m
	}
	before, after := parse(old), parse(now)
	var names []string
	for n := range before {
		names = append(names, n)
	}
	for n := range after {
		if _, ok := before[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var out []Change
	for _, n := range names {
		b, a := before[n], after[n]
		switch {
		case b == a:
			continue
		case b == "":
			out = append(out, Change{Path: n, Kind: KindRef, Detail: fmt.Sprintf("%s created at %s", n, short(a))})
		case a == "":
			out = append(out, Change{Path: n, Kind: KindRef, Detail: fmt.Sprintf("%s deleted (was %s)", n, short(b))})
		default:
			out = append(out, Change{Path: n, Kind: KindRef, Detail: fmt.Sprintf("%s moved %s → %s", n, short(b), short(a))})
		}
	}
	return out
}

// indexChanges names the paths whose index entries differ between the
// index trees before and now; now is "" when the index has unmerged entries.
func indexChanges(ctx context.Context, g gitrun.Git, before, now string) ([]Change, error) {
	if now == "" {
		return []Change{{Kind: KindStaged, Detail: "the index now has unmerged entries"}}, nil
	}
	entries, err := treeDiff(ctx, g, before, now)
	if err != nil {
		return nil, err
	}
	var out []Change
	for _, e := range entries {
		detail := "changed in the index"
		switch {
		case e.oldMode == nullMode:
			detail = "added to the index"
		case e.newMode == nullMode:
			detail = "removed from the index"
		}
		out = append(out, Change{Path: e.path, Kind: KindStaged, Detail: detail})
	}
	return out, nil
}

const (
	nullMode    = "000000"
	gitlinkMode = "160000"
)

// entry is one record of `git diff-tree --raw`.
type entry struct {
	oldMode, newMode string
	oldBlob, newBlob string
	path             string // relative to the root, slash-separated
}

// treeDiff lists the files that differ between two trees under g's
// directory, relative to it, .whetstone/ excluded. Raw output runs no diff
// driver; the flags only make that explicit.
func treeDiff(ctx context.Context, g gitrun.Git, before, after string) ([]entry, error) {
	out, err := g.Run(ctx, "diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", "--relative",
		before, after, "--", ".", ExcludeState)
	if err != nil {
		return nil, fmt.Errorf("compare snapshot: %w", err)
	}
	fields := strings.Split(string(out), "\x00")
	var entries []entry
	for i := 0; i+1 < len(fields); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(fields[i], ":"))
		if len(meta) != 5 {
			return nil, fmt.Errorf("compare snapshot: bad record %q", fields[i])
		}
		entries = append(entries, entry{oldMode: meta[0], newMode: meta[1], oldBlob: meta[2], newBlob: meta[3], path: fields[i+1]})
	}
	return entries, nil
}

// change describes e for the user.
func (e entry) change() Change {
	c := Change{Path: e.path, Kind: KindModified}
	switch oldType, newType := fileType(e.oldMode), fileType(e.newMode); {
	case e.oldMode == nullMode:
		c.Kind = KindAdded
		if newType != "file" {
			c.Detail = newType
		}
	case e.newMode == nullMode:
		c.Kind = KindDeleted
	case oldType != newType:
		c.Detail = oldType + " → " + newType
	case e.oldBlob == e.newBlob:
		c.Kind, c.Detail = KindMode, e.oldMode+" → "+e.newMode
	case e.oldMode != e.newMode:
		c.Detail = "content, and mode " + e.oldMode + " → " + e.newMode
	}
	return c
}

// fileType names what a git mode records.
func fileType(mode string) string {
	switch mode {
	case "120000":
		return "symlink"
	case gitlinkMode:
		return "submodule"
	}
	return "file"
}

// checkout writes the recorded content of entries into the work tree with
// `git checkout-index` from a temporary index that holds only them: git
// applies the modes, symlinks, smudge filters and line endings.
func checkout(ctx context.Context, g gitrun.Git, entries []entry) error {
	if len(entries) == 0 {
		return nil
	}
	prefix, err := g.Str(ctx, "rev-parse", "--show-prefix")
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	var info, paths bytes.Buffer
	for _, e := range entries {
		fmt.Fprintf(&info, "%s %s\t%s%s\x00", e.oldMode, e.oldBlob, prefix, e.path) // index paths are from the top
		fmt.Fprintf(&paths, "%s\x00", e.path)                                       // checkout-index's are relative
	}
	return withTempIndex(ctx, g, false, func(tg gitrun.Git) error {
		if _, err := tg.RunInput(ctx, &info, "update-index", "-z", "--index-info"); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		if _, err := tg.RunInput(ctx, &paths, "checkout-index", "-f", "-z", "--stdin"); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		return nil
	})
}

// removeFile removes the file or symlink p.
func removeFile(fsys *os.Root, p string) error {
	if err := checkParents(fsys, p); err != nil {
		return err
	}
	fi, err := fsys.Lstat(filepath.FromSlash(p))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.IsDir():
		return errors.New("a directory (an embedded repository?): not removed")
	}
	return fsys.Remove(filepath.FromSlash(p))
}

// clearForWrite makes sure checkout-index may write p: no parent is a
// symlink or a file, and p is not a directory (an empty one is removed).
func clearForWrite(fsys *os.Root, p string) error {
	if err := checkParents(fsys, p); err != nil {
		return err
	}
	if fi, err := fsys.Lstat(filepath.FromSlash(p)); err == nil && fi.IsDir() {
		if err := fsys.Remove(filepath.FromSlash(p)); err != nil {
			return errors.New("a directory that is not empty: not replaced")
		}
	}
	return nil
}

// checkParents refuses p when it is not a plain path inside the root or
// when one of its parents is a symlink or not a directory.
func checkParents(fsys *os.Root, p string) error {
	if !filepath.IsLocal(filepath.FromSlash(p)) || p != path.Clean(p) {
		return errors.New("not a path inside the root")
	}
	for _, part := range strings.Split(p, "/") {
		if strings.EqualFold(part, ".git") {
			return errors.New("inside a .git directory")
		}
	}
	if p == ".whetstone" || strings.HasPrefix(p, ".whetstone/") {
		return errors.New("inside .whetstone")
	}
	parts := strings.Split(p, "/")
	for i := 1; i < len(parts); i++ {
		dir := strings.Join(parts[:i], "/")
		fi, err := fsys.Lstat(filepath.FromSlash(dir))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil // git creates the rest
		case err != nil:
			return err
		case fi.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("parent %s is a symlink: not followed", dir)
		case !fi.IsDir():
			return fmt.Errorf("parent %s is not a directory", dir)
		}
	}
	return nil
}

// pruneDirs removes the directories among dirs that are empty and that
// tree does not have, deepest first.
func pruneDirs(ctx context.Context, g gitrun.Git, fsys *os.Root, tree string, dirs map[string]bool) error {
	if len(dirs) == 0 {
		return nil
	}
	prefix, err := g.Str(ctx, "rev-parse", "--show-prefix")
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	out, err := g.Run(ctx, "ls-tree", "-r", "-d", "-z", "--full-tree", "--name-only", tree)
	if err != nil {
		return fmt.Errorf("restore: list directories: %w", err)
	}
	recorded := map[string]bool{}
	for _, d := range strings.Split(string(out), "\x00") {
		if rel, ok := strings.CutPrefix(d, prefix); ok {
			recorded[rel] = true
		}
	}
	for _, d := range slices.Backward(slices.Sorted(maps.Keys(dirs))) {
		if recorded[d] || checkParents(fsys, d) != nil {
			continue
		}
		if fi, err := fsys.Lstat(filepath.FromSlash(d)); err == nil && fi.IsDir() {
			_ = fsys.Remove(filepath.FromSlash(d)) // fails when not empty: then it stays
		}
	}
	return nil
}

// blobID is git's object name of a blob holding data, in the hash whose
// hex length is n (40 for SHA-1, 64 for SHA-256).
func blobID(data []byte, n int) string {
	var h hash.Hash = sha1.New()
	if n == 64 {
		h = sha256.New()
	}
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// short abbreviates an object name for a message; anything else is kept.
func short(s string) string {
	if len(s) >= 40 && strings.Trim(s, "0123456789abcdef") == "" {
		return s[:12]
	}
	return s
}
