// Package toolpath keeps the programs whetstone runs itself (git, go, bwrap,
// bash, the project's checkers) out of the repository under review. The
// caller's PATH often leads into the project: an activated virtualenv puts
// .venv/bin first, direnv adds node_modules/.bin, and an empty or relative
// entry means the working directory. A repository that ships a bin/git or a
// .venv/bin/bwrap would otherwise run, unsandboxed, from whetstone's own hook
// (docs/security.md).
package toolpath

import (
	"os"
	"path/filepath"
	"strings"
)

// Clean returns path without the entries an agent or the repository
// could control: empty and relative ones (the working directory, wherever
// the hook runs), and those at or under any of dirs (the project root, and
// the temporary directory every agent may write to), compared both as
// written and with symbolic links resolved. dropped lists what was
// removed, in order. A dir that is not absolute is ignored.
func Clean(path string, dirs ...string) (kept string, dropped []string) {
	roots := []string{}
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			continue
		}
		roots = append(roots, filepath.Clean(d))
		if r, err := filepath.EvalSymlinks(d); err == nil {
			roots = append(roots, r)
		}
	}
	var out []string
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) || inside(dir, roots) {
			dropped = append(dropped, dir)
			continue
		}
		out = append(out, dir)
	}
	return strings.Join(out, string(os.PathListSeparator)), dropped
}

// inside reports whether dir, as written or resolved, is one of roots or
// under one of them. A dir whose links cannot be resolved (a link to a
// directory not made yet) counts as inside: it may lead there later.
func inside(dir string, roots []string) bool {
	dirs := []string{filepath.Clean(dir)}
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dirs = append(dirs, r)
	} else if !os.IsNotExist(err) || dangling(dir) {
		return true
	}
	for _, d := range dirs {
		for _, r := range roots {
			if d == r || strings.HasPrefix(d, strings.TrimSuffix(r, string(filepath.Separator))+string(filepath.Separator)) {
				return true
			}
		}
	}
	return false
}

// dangling reports whether some existing prefix of dir is a symbolic link,
// which EvalSymlinks could not follow to its end.
func dangling(dir string) bool {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if fi, err := os.Lstat(d); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			return true
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}
