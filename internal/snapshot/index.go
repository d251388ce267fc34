package snapshot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/whetstone-dev/whetstone/internal/gitrun"
)

// IndexTree writes a tree object of the user's index (what `git commit`
// would record; WorkTree records the whole work tree). It works on a
// temporary copy of the index: even `git write-tree` would otherwise
// rewrite the user's index to cache the tree.
func IndexTree(ctx context.Context, g gitrun.Git) (string, error) {
	index, err := indexPath(ctx, g) // before the quarantine's environment, which would cost a git to find it
	if err != nil {
		return "", err
	}
	var tree string
	err = owned(ctx, g, func(qg gitrun.Git) error {
		return withIndexCopy(qg, index, index, func(tg gitrun.Git, _ string) error {
			var err error
			if tree, err = tg.Str(ctx, "write-tree"); err != nil {
				return fmt.Errorf("snapshot: %w", err)
			}
			return nil
		})
	})
	return tree, err
}

// WithEmptyIndex runs fn with a copy of g whose commands use a temporary,
// empty index, removed afterwards: for reading what the user's index must
// not hold, such as the attributes of another revision.
func WithEmptyIndex(ctx context.Context, g gitrun.Git, fn func(tg gitrun.Git) error) error {
	return withTempIndex(ctx, g, false, fn)
}

// withTempIndex runs fn with a copy of g whose commands use a temporary
// index: a copy of the user's index when seed is true, else an empty one.
// The file has a unique name, so concurrent callers never share one, and it
// lives inside the git directory, never in the work tree (TMPDIR may be).
func withTempIndex(ctx context.Context, g gitrun.Git, seed bool, fn func(tg gitrun.Git) error) error {
	index, err := indexPath(ctx, g)
	if err != nil {
		return err
	}
	src := ""
	if seed {
		src = index
	}
	return withIndexCopy(g, index, src, func(tg gitrun.Git, _ string) error { return fn(tg) })
}

// withIndexCopy runs fn with g using a temporary index in the directory of
// the user's index: a copy of src, or an empty one when src is "" or does
// not exist. fn is told the temporary file's name; the file is removed
// afterwards unless fn moved it.
func withIndexCopy(g gitrun.Git, index, src string, fn func(tg gitrun.Git, name string) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(index), "whetstone-index-*")
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	name := tmp.Name()
	defer os.Remove(name)
	defer os.Remove(name + ".lock")
	var in *os.File
	if src != "" {
		in, err = os.Open(src)
	}
	switch {
	case in == nil && (err == nil || errors.Is(err, os.ErrNotExist)):
		tmp.Close()
		os.Remove(name) // git starts from an empty index
	case err != nil:
		tmp.Close()
		return fmt.Errorf("snapshot: %w", err)
	default:
		_, err = io.Copy(tmp, in)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		// Git trusts an entry's stat data only when the file is older than
		// the index file; a copy dated now would hide an edit made in the
		// second the user's index was written (same size, same mtime).
		if fi, serr := in.Stat(); err == nil && serr == nil {
			err = os.Chtimes(name, fi.ModTime(), fi.ModTime())
		}
		in.Close()
		if err != nil {
			return fmt.Errorf("snapshot: copy index: %w", err)
		}
	}
	return fn(g.With("GIT_INDEX_FILE="+name), name)
}

// indexPath returns the path of the repository's index. In the plain case
// (g.Dir holds a .git directory, and no GIT_DIR or GIT_INDEX_FILE says
// otherwise) it is .git/index, found without starting git; anything else
// (a linked worktree, a submodule, a .git file) asks git.
func indexPath(ctx context.Context, g gitrun.Git) (string, error) {
	if os.Getenv("GIT_DIR") == "" && os.Getenv("GIT_INDEX_FILE") == "" && os.Getenv("GIT_WORK_TREE") == "" && len(g.Env) == 0 {
		if fi, err := os.Lstat(filepath.Join(g.Dir, ".git")); err == nil && fi.IsDir() {
			return filepath.Join(g.Dir, ".git", "index"), nil
		}
	}
	index, err := g.Str(ctx, "rev-parse", "--git-path", "index")
	if err != nil {
		return "", fmt.Errorf("find index: %w", err)
	}
	if !filepath.IsAbs(index) {
		index = filepath.Join(g.Dir, index)
	}
	return index, nil
}
