package snapshot

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/whetstone-dev/whetstone/internal/gitrun"
)

// emptyTree is the object name of git's empty tree (SHA-1).
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// Attributes returns the values of the attributes names for each of
// paths (relative to g's directory) as git check-attr prints them ("set",
// "unset", "unspecified" or a value), with the .gitattributes files of
// tree, never the work tree's or the index's, and the repository's
// info/attributes and the user's attributes file. tree "" or the empty
// tree means no .gitattributes at all. Git 2.39 reads .gitattributes only
// from the work tree or the index (no --source), so tree's files that can
// apply, those in the directories above a path, go into a temporary index
// that `check-attr --cached` reads.
func Attributes(ctx context.Context, g gitrun.Git, tree string, paths, names []string) (map[string]map[string]string, error) {
	out, err := g.Run(ctx, "rev-parse", "--show-cdup", "--show-prefix")
	if err != nil {
		return nil, fmt.Errorf("read attributes: %w", err)
	}
	cdup, prefix, _ := strings.Cut(string(out), "\n")
	prefix = strings.TrimSuffix(prefix, "\n")
	var files []string // the .gitattributes that may apply, relative to the top
	seen := map[string]bool{}
	for _, p := range paths {
		for dir := path.Dir(prefix + p); !seen[dir]; dir = path.Dir(dir) {
			seen[dir] = true
			if !strings.Contains(dir, "\n") { // a name cat-file cannot read: no attributes of tree
				files = append(files, path.Join(dir, ".gitattributes"))
			}
			if dir == "." {
				break
			}
		}
	}
	var info bytes.Buffer
	if tree != "" && tree != emptyTree {
		specs := make([]string, len(files))
		for i, f := range files {
			specs[i] = tree + ":" + f
		}
		oids, err := g.Resolve(ctx, specs)
		if err != nil {
			return nil, fmt.Errorf("read attributes: %w", err)
		}
		for i, oid := range oids {
			if oid != "" {
				fmt.Fprintf(&info, "100644 blob %s\t%s\x00", oid, files[i])
			}
		}
	}
	var in strings.Builder
	for _, p := range paths {
		in.WriteString(prefix + p + "\x00")
	}
	top := g
	top.Dir = filepath.Join(g.Dir, cdup)
	err = WithEmptyIndex(ctx, top, func(tg gitrun.Git) error {
		if info.Len() > 0 {
			if _, err := tg.RunInput(ctx, &info, "update-index", "-z", "--index-info"); err != nil {
				return err
			}
		}
		out, err = tg.RunInput(ctx, strings.NewReader(in.String()), append([]string{"check-attr", "--cached", "-z", "--stdin"}, names...)...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read attributes: %w", err)
	}
	return parseAttrs(out, prefix), nil
}

// parseAttrs reads `git check-attr -z` output, "path NUL attribute NUL
// value NUL" records, into values by path (prefix cut) and attribute.
func parseAttrs(out []byte, prefix string) map[string]map[string]string {
	m := map[string]map[string]string{}
	f := strings.Split(string(out), "\x00")
	for i := 0; i+2 < len(f); i += 3 {
		p := strings.TrimPrefix(f[i], prefix)
		if m[p] == nil {
			m[p] = map[string]string{}
		}
		m[p][f[i+1]] = f[i+2]
	}
	return m
}

// conversions are the attributes that make `git add` record other bytes
// than the file's: end-of-line conversion, $Id$ collapsing, a clean
// filter, a re-encoding.
var conversions = []string{"text", "eol", "crlf", "ident", "filter", "working-tree-encoding"}

// asOnDisk makes the snapshot in tg's index record the bytes on disk of
// every regular file under tg's directory whose conversions (text, eol,
// crlf, ident, filter, working-tree-encoding) the work tree's
// .gitattributes set otherwise than HEAD's: a change, or a fixer, that adds
// `*.go ident` would else have `/*$Id: */ evil() /*$*/` recorded as
// `/*$Id$*/`, and `working-tree-encoding`, a filter or an end-of-line rule
// would show reviewers other code than the one on disk. The conversions
// HEAD's attributes ask for (the user's git-lfs, say) stay. Without a
// changed .gitattributes this costs a `git diff-index` and a listing of
// the ignored .gitattributes (one directory walk that skips ignored
// directories).
func asOnDisk(ctx context.Context, tg gitrun.Git) error {
	changed, base, prefix, err := changedAttributes(ctx, tg)
	if err != nil || len(changed) == 0 {
		return err
	}
	cdup, err := tg.Str(ctx, "rev-parse", "--show-cdup")
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	top := tg
	top.Dir = filepath.Join(tg.Dir, cdup)
	specs := []string{"--"}
	for _, f := range changed {
		if dir := path.Dir(f); dir == "." {
			specs = append(specs, ".")
		} else {
			specs = append(specs, ":(literal)"+dir+"/")
		}
	}
	out, err := top.Run(ctx, append([]string{"ls-files", "--stage", "-z"}, specs...)...)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	modes := map[string]string{}
	var paths []string
	for _, rec := range strings.Split(string(out), "\x00") {
		meta, p, ok := strings.Cut(rec, "\t")
		if f := strings.Fields(meta); ok && len(f) == 3 && (f[0] == "100644" || f[0] == "100755") && strings.HasPrefix(p, prefix) {
			modes[p] = f[0]
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return nil
	}
	before, err := Attributes(ctx, top, base, paths, conversions)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	var in strings.Builder
	for _, p := range paths {
		in.WriteString(p + "\x00")
	}
	out, err = top.RunInput(ctx, strings.NewReader(in.String()), append([]string{"check-attr", "-z", "--stdin"}, conversions...)...)
	if err != nil {
		return fmt.Errorf("snapshot: read attributes: %w", err)
	}
	now := parseAttrs(out, "")
	var raw []string
	for _, p := range paths {
		// An entry with no regular file behind it (skip-worktree, in a
		// sparse checkout) was not read by git add either.
		if fi, err := os.Lstat(filepath.Join(top.Dir, filepath.FromSlash(p))); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		for _, a := range conversions {
			if now[p][a] != before[p][a] {
				raw = append(raw, p)
				break
			}
		}
	}
	var info bytes.Buffer
	for len(raw) > 0 {
		chunk := raw[:min(len(raw), 512)] // bounded command lines
		raw = raw[len(chunk):]
		oids, err := top.Str(ctx, append([]string{"hash-object", "-w", "--no-filters", "--"}, chunk...)...)
		if err != nil {
			return fmt.Errorf("snapshot: record files as on disk: %w", err)
		}
		lines := strings.Split(oids, "\n")
		if len(lines) != len(chunk) {
			return fmt.Errorf("snapshot: record files as on disk: %d names for %d files", len(lines), len(chunk))
		}
		for i, p := range chunk {
			fmt.Fprintf(&info, "%s %s\t%s\x00", modes[p], lines[i], p)
		}
	}
	if info.Len() == 0 {
		return nil
	}
	if _, err := top.RunInput(ctx, &info, "update-index", "-z", "--index-info"); err != nil {
		return fmt.Errorf("snapshot: record files as on disk: %w", err)
	}
	return nil
}

// changedAttributes lists the .gitattributes files, relative to the top
// of the work tree, that `git add` in tg's directory read and that differ
// from HEAD's (base, the empty tree without a commit): those tg's index
// holds and HEAD does not hold alike, the ignored ones (git add reads them
// but records none, so a fixer that ignores its .gitattributes is still
// seen) and those in the directories above tg's (compared on disk). prefix
// is tg's directory relative to the top ("" or "dir/").
func changedAttributes(ctx context.Context, tg gitrun.Git) (changed []string, base, prefix string, err error) {
	base = "HEAD"
	diff := func(base string) ([]byte, error) {
		return tg.Run(ctx, "diff-index", "--cached", "--name-only", "-z", "--no-renames", base, "--", ":(top,glob)**/.gitattributes")
	}
	out, err := diff(base)
	if err != nil { // no commit yet: every .gitattributes is new
		base = emptyTree
		out, err = diff(base)
	}
	if err != nil {
		return nil, "", "", fmt.Errorf("snapshot: compare attributes: %w", err)
	}
	changed = names(out)
	out, err = tg.Run(ctx, "ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "--full-name", "-z", "--", ":(glob)**/.gitattributes")
	if err != nil {
		return nil, "", "", fmt.Errorf("snapshot: list ignored attributes: %w", err)
	}
	for _, f := range names(out) {
		if path.Base(f) == ".gitattributes" {
			changed = append(changed, f)
		}
	}
	if _, err := os.Lstat(filepath.Join(tg.Dir, ".git")); err == nil {
		return changed, base, "", nil // the top: nothing above it
	}
	if prefix, err = tg.Str(ctx, "rev-parse", "--show-prefix"); err != nil || prefix == "" {
		return changed, base, prefix, err
	}
	var above []string
	for dir := path.Dir(strings.TrimSuffix(prefix, "/")); ; dir = path.Dir(dir) {
		above = append(above, path.Join(dir, ".gitattributes"))
		if dir == "." {
			break
		}
	}
	cdup := strings.Repeat("../", strings.Count(prefix, "/"))
	heads := make([]string, len(above))
	if base != emptyTree {
		specs := make([]string, len(above))
		for i, f := range above {
			specs[i] = base + ":" + f
		}
		if heads, err = tg.Resolve(ctx, specs); err != nil {
			return nil, "", "", fmt.Errorf("snapshot: %w", err)
		}
	}
	for i, f := range above {
		disk := ""
		if fi, err := os.Lstat(filepath.Join(tg.Dir, cdup, f)); err == nil && !fi.Mode().IsRegular() {
			// A link, FIFO or device is never read (it may lead out of the
			// repository, or never end); git uses no such .gitattributes,
			// so it counts as changed and the snapshot keeps files as on disk.
			disk = "not a regular file"
		} else if err == nil {
			if disk, err = tg.Str(ctx, "hash-object", "--no-filters", "--", cdup+f); err != nil {
				return nil, "", "", fmt.Errorf("snapshot: %w", err)
			}
		}
		if disk != heads[i] {
			changed = append(changed, f)
		}
	}
	return changed, base, prefix, nil
}

// names splits NUL-terminated names.
func names(out []byte) []string {
	if len(out) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
}
