package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/whetstone-dev/whetstone/internal/gitrun"
)

// A run's snapshots write git objects (the blobs of untracked and edited
// files, the trees, the refs listing) that nothing in the repository
// refers to. A run spans many hook processes and diffs its trees from one
// to the next, so the objects must last as long as the run; once it ends,
// nothing of them may stay in .git. Under an owner (WithOwner: a run's
// id), every git command that writes objects writes them into the owner's
// own object directory, <git dir>/whetstone-objects-<owner>
// (GIT_OBJECT_DIRECTORY), with the repository's store as an alternate, so
// that git writes only what the store does not hold already. Every git
// command whetstone runs reads the directories of all live runs as
// alternates (internal/gitrun), so their trees can be diffed and read
// from any hook; the user's own git never sees them, and neither `git gc`
// nor `git prune` can take them away mid-run. Release removes an owner's
// directory and the indexes its snapshots kept (cache.go).
//
// The repository's store is never written and nothing in it is removed:
// the user's objects, dangling ones included, stay as they are. An owner's
// writes never find another owner's objects (its alternates are the
// repository's store alone), so two runs in one repository never depend
// on each other's directory, and one that ends removes nothing the other
// reads. Without an owner, git writes into the store, as the user's own
// `git add` would.
const (
	objectsFile = "indexes" // in an owner's directory: the kept indexes, one path a line
	rootFile    = "root"    // in an owner's directory: the project it works in
	dropPrefix  = "whetstone-drop-"
)

type ownerKey struct{}

// WithOwner returns ctx under which the git objects and kept indexes that
// snapshots write are recorded as owner's, for Release. owner names a
// file: letters, digits, '.', '_' and '-' only, else it is ignored.
func WithOwner(ctx context.Context, owner string) context.Context {
	if !validOwner(owner) {
		return ctx
	}
	return context.WithValue(ctx, ownerKey{}, owner)
}

// OwnerOf returns the owner WithOwner put in ctx, or "".
func OwnerOf(ctx context.Context) string {
	s, _ := ctx.Value(ownerKey{}).(string)
	return s
}

func validOwner(s string) bool {
	return s != "" && len(s) <= 128 && s[0] != '.' && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == ""
}

// ownDir is owner's object directory in the git directory gd.
func ownDir(gd, owner string) string { return filepath.Join(gd, gitrun.ObjectsPrefix+owner) }

// gitDir returns the git directory of root's work tree, where owners'
// directories live.
func gitDir(root string) (string, error) {
	gd := gitrun.GitDir(root)
	if gd == "" {
		return "", fmt.Errorf("%s is not in a git work tree", root)
	}
	return gd, nil
}

// objectsPath returns the repository's object store, found without
// starting git in the plain case (as indexPath).
func objectsPath(ctx context.Context, g gitrun.Git) (string, error) {
	if os.Getenv("GIT_DIR") == "" && os.Getenv("GIT_OBJECT_DIRECTORY") == "" && os.Getenv("GIT_WORK_TREE") == "" && len(g.Env) == 0 {
		if fi, err := os.Lstat(filepath.Join(g.Dir, ".git")); err == nil && fi.IsDir() {
			return filepath.Join(g.Dir, ".git", "objects"), nil
		}
	}
	p, err := g.Str(ctx, "rev-parse", "--git-path", "objects")
	if err != nil {
		return "", fmt.Errorf("find the object store: %w", err)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(g.Dir, p)
	}
	return p, nil
}

// owned runs fn with a copy of g whose commands write new objects into
// ctx's owner's directory; without an owner, fn runs with g as it is.
func owned(ctx context.Context, g gitrun.Git, fn func(og gitrun.Git) error) error {
	owner := OwnerOf(ctx)
	if owner == "" {
		return fn(g)
	}
	gd, err := gitDir(g.Dir)
	if err != nil {
		return err
	}
	store, err := objectsPath(ctx, g)
	if err != nil {
		return err
	}
	own := ownDir(gd, owner)
	if err := os.MkdirAll(own, 0o777); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	// The project the owner works in: projects in subdirectories of one
	// work tree share its git directory, and each sweeps only its own.
	if _, err := os.Lstat(filepath.Join(own, rootFile)); errors.Is(err, fs.ErrNotExist) {
		if abs, err := filepath.Abs(g.Dir); err == nil {
			_ = os.WriteFile(filepath.Join(own, rootFile), []byte(abs+"\n"), 0o644)
		}
	}
	alternates := gitrun.QuoteAlternate(store)
	if env := os.Getenv("GIT_ALTERNATE_OBJECT_DIRECTORIES"); env != "" {
		alternates += string(filepath.ListSeparator) + env
	}
	return fn(g.With("GIT_OBJECT_DIRECTORY="+own, "GIT_ALTERNATE_OBJECT_DIRECTORIES="+alternates))
}

// recordIndex notes in ctx's owner's directory that the kept index at
// path is the owner's, for Release.
func recordIndex(ctx context.Context, root, path string) {
	owner := OwnerOf(ctx)
	if owner == "" {
		return
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if gd, err := gitDir(root); err == nil {
		_ = appendLines(filepath.Join(ownDir(gd, owner), objectsFile), path+"\n")
	}
}

// appendLines appends lines to the file p in one write, so concurrent
// writers never interleave within a line.
func appendLines(p, lines string) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(lines)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Adopt makes what from (the owner a start used before its run had an
// id) wrote to's. Nothing written is not an error.
func Adopt(ctx context.Context, root, from, to string) error {
	if !validOwner(from) || !validOwner(to) {
		return fmt.Errorf("adopt objects: bad owner %q or %q", from, to)
	}
	gd, err := gitDir(root)
	if err != nil {
		return err
	}
	src, dst := ownDir(gd, from), ownDir(gd, to)
	if _, err := os.Lstat(src); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := os.Rename(src, dst); err == nil {
		return nil
	}
	// dst exists: move src's objects over, then its list of indexes.
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if rel == rootFile {
			return nil
		}
		if rel == objectsFile {
			data, err := os.ReadFile(p)
			if err == nil {
				err = appendLines(filepath.Join(dst, objectsFile), string(data))
			}
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o777); err != nil {
			return err
		}
		if err := os.Link(p, filepath.Join(dst, rel)); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		return nil
	})
	if err == nil {
		err = os.RemoveAll(src)
	}
	if err != nil {
		return fmt.Errorf("adopt objects: %w", err)
	}
	return nil
}

// Released is what Release removed.
type Released struct {
	Files   int   // object files (loose objects, packs)
	Indexes int   // kept indexes
	Bytes   int64 // their size
}

// Release removes what owner's snapshots added under root's git
// directory: its object directory and the indexes it kept. The
// repository's store is not touched.
func Release(ctx context.Context, root, owner string) (Released, error) {
	var out Released
	if !validOwner(owner) {
		return out, fmt.Errorf("release objects: bad owner %q", owner)
	}
	gd, err := gitDir(root)
	if err != nil {
		return out, err
	}
	own := ownDir(gd, owner)
	if fi, err := os.Lstat(own); err != nil || !fi.IsDir() {
		return out, nil // nothing written, or released already
	}
	// Moved aside first: a run's directory is whole or gone, never half
	// removed under its name.
	aside, err := os.MkdirTemp(gd, dropPrefix+"*")
	if err != nil {
		return out, fmt.Errorf("release objects: %w", err)
	}
	if err := os.Rename(own, filepath.Join(aside, "objects")); err != nil {
		os.Remove(aside)
		return out, fmt.Errorf("release objects: %w", err)
	}
	if data, err := os.ReadFile(filepath.Join(aside, "objects", objectsFile)); err == nil {
		for _, p := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if !strings.HasPrefix(filepath.Base(p), cachePrefix) || !filepath.IsAbs(p) {
				continue
			}
			if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && os.Remove(p) == nil {
				out.Indexes++
				out.Bytes += fi.Size()
			}
		}
	}
	_ = filepath.WalkDir(aside, func(p string, d fs.DirEntry, err error) error {
		if rel, _ := filepath.Rel(aside, p); err == nil && d.Type().IsRegular() && rel != filepath.Join("objects", objectsFile) && rel != filepath.Join("objects", rootFile) {
			if fi, err := d.Info(); err == nil {
				out.Files++
				out.Bytes += fi.Size()
			}
		}
		return nil
	})
	if err := os.RemoveAll(aside); err != nil {
		return out, fmt.Errorf("release objects: %w", err)
	}
	return out, nil
}

// Owner is an owner's object directory.
type Owner struct {
	Root    string    // the project it works in ("" when not recorded)
	Changed time.Time // when the directory last changed (an object in a new fan-out directory)
}

// Owners lists the owners with an object directory in root's git
// directory.
func Owners(ctx context.Context, root string) (map[string]Owner, error) {
	gd, err := gitDir(root)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(gd)
	if err != nil {
		return nil, err
	}
	out := map[string]Owner{}
	for _, e := range entries {
		name, ok := strings.CutPrefix(e.Name(), gitrun.ObjectsPrefix)
		if !ok || !e.IsDir() || !validOwner(name) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		o := Owner{Changed: fi.ModTime()}
		if data, err := os.ReadFile(filepath.Join(gd, e.Name(), rootFile)); err == nil {
			o.Root = strings.TrimSuffix(string(data), "\n")
		}
		out[name] = o
	}
	return out, nil
}
