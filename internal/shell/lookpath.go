package shell

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// This file finds the programs a line runs that are not the system's: a
// name the table allows as a pure read (cat, grep, sed -n, git log) runs
// whatever file PATH finds first. With the project's .venv/bin or
// node_modules/.bin on PATH (an activated virtualenv, direnv), a repository
// that ships .venv/bin/cat, or a fixer that writes one, would have its own
// code run by an agent's read. Such a program is the project's code
// (Verdict.Local), which the gate runs only in the sandbox.

// bashBuiltins are the names in the table that bash runs itself, whatever
// PATH holds (enable, which could turn one off, is refused).
var bashBuiltins = set(":", "true", "false", "echo", "pwd", "type", "shopt", "shift", "exit", "return",
	"break", "continue", "times", "jobs", "umask", "ulimit", "caller", "dirs", "disown", "printf", "test",
	"[", "hash", "read", "mapfile", "readarray", "getopts", "set", "unset", "wait", "cd", "pushd", "popd",
	"eval", "exec", "command", "builtin", "trap", "time", "kill", "enable", "source", ".", "alias")

// A pathDir is an entry of PATH that comes before any program of the system
// could be found.
type pathDir struct {
	dir      string // as written; relative to the working directory when not absolute
	writable bool   // an agent may write there: inside the project or the temporary directory, or relative
}

// searchPath returns the entries of Policy.Path up to the last one an agent
// could have written into: a program found after it is the system's, so
// the common PATH with no such entry costs no stat per program at all. The
// answer is kept for the next check in the same process (the gate checks a
// line more than once).
func (c *checker) searchPath() []pathDir {
	if c.pathDone {
		return c.pathDirs
	}
	c.pathDone = true
	if c.p.Path == "" {
		return nil
	}
	key := c.p.Path + "\x00" + c.root + "\x00" + c.temp
	pathCache.Lock()
	defer pathCache.Unlock()
	if pathCache.key != key {
		pathCache.key, pathCache.dirs = key, c.pathDirsOf(c.p.Path)
	}
	c.pathDirs = pathCache.dirs
	return c.pathDirs
}

// pathCache is the last searchPath answer.
var pathCache struct {
	sync.Mutex
	key  string
	dirs []pathDir
}

// pathDirsOf judges the entries of path.
func (c *checker) pathDirsOf(path string) []pathDir {
	var dirs []pathDir
	last := -1
	for _, d := range strings.Split(path, ":") {
		e := pathDir{dir: d, writable: !filepath.IsAbs(d) || c.agentWrites(filepath.Clean(d))}
		if !e.writable && !systemDirs[filepath.Clean(d)] {
			// An entry that is itself a link is judged by where it leads
			// (a user's ~/bin -> the project's .venv/bin). Resolving every
			// component of every entry would cost a dozen stats per entry
			// on every call; a link among an entry's parents is the user's
			// own making, never an agent's.
			if fi, err := os.Lstat(d); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				e.writable = c.agentWrites(c.real(d))
			}
		}
		dirs = append(dirs, e)
		if e.writable {
			last = len(dirs) - 1
		}
	}
	return dirs[:last+1]
}

// agentWrites reports whether an agent may write at or under the absolute
// path p: the project (the fixer), the temporary directory (every agent).
func (c *checker) agentWrites(p string) bool {
	return c.inRoot(p) || c.temp != "" && under(p, c.temp)
}

// lookPath notes name when PATH finds it, as bash would, in a directory an
// agent could have written into; the first such program is Verdict.Local.
// Each distinct name is looked up once per check.
func (c *checker) lookPath(name string) {
	if c.local != "" || bashBuiltins[name] || c.looked[name] {
		return
	}
	dirs := c.searchPath()
	if len(dirs) == 0 {
		return
	}
	if c.looked == nil {
		c.looked = map[string]bool{}
	}
	c.looked[name] = true
	for _, d := range dirs {
		var cands []string
		switch {
		case filepath.IsAbs(d.dir):
			cands = []string{filepath.Join(d.dir, name)}
		case c.cwd == nil:
			c.local, c.localName = filepath.Join(d.dir, name), name // somewhere whetstone cannot tell
			return
		default:
			for _, cwd := range c.cwd {
				cands = append(cands, filepath.Join(cwd, d.dir, name))
			}
		}
		for _, p := range cands {
			if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0 {
				if d.writable {
					c.local, c.localName = p, name
				}
				return
			}
		}
	}
}
