// Package shell decides whether an agent may run a shell command line.
//
// The line is parsed as bash by mvdan.cc/sh and every command in it is
// judged: pipelines, lists, compound commands, function bodies, command and
// process substitutions, and the scripts handed to inline shells (bash -c,
// eval, xargs sh -c, trap). A word is judged by the value the program will
// see, after quote removal, ANSI-C escapes and brace expansion; a program
// named by an expansion is unknown and refused.
//
// The rules are default-deny. A read-only agent may run only the programs in
// a table of readers (cat, grep, git log, find without actions, …), the
// project's verification commands, and writes to /dev/null or under the
// temporary directory. The fixer may in addition change files inside the
// project with a few known commands (cp, mv, rm, mkdir, touch, sed -i,
// gofmt -w, …), never under .git, .whetstone or whetstone.json. Paths are
// judged after following symbolic links and the cd commands before them.
//
// No agent may name whetstone's key file, by its text or by a path or glob
// that resolves to it, and no program may read a file that is not proven
// not to be the key (computed.go): a word computed while the command runs,
// such as the output of a command substitution or the arguments xargs
// appends, is read only when it lists the project's own files.
package shell

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Mode is what kind of agent runs a command.
type Mode int

const (
	ReadOnly Mode = iota // reviewers, the validator, the orchestrator during a run
	Fixer                // the fixer in the fix phase
)

// Policy is what a command is judged against.
type Policy struct {
	Mode    Mode
	Root    string     // project root: absolute, symlinks resolved
	Cwd     string     // directory the command starts in (absolute); "" means Root
	TempDir string     // os.TempDir() resolved; read-only agents may redirect/write under it
	Verify  [][]string // verification command prefixes read-only agents may run, e.g. {"go","test"}; nil means DefaultVerify()
	// Exact are verification commands allowed only word for word and
	// only from Root, e.g. {"npm","test"}: the project's commands that
	// whetstone detected (scope.DetectVerify), whose extra arguments
	// could run anything (npm test --script-shell=…, make test SHELL=…).
	Exact     [][]string
	Protected []string // absolute paths no command may name at all, reads included (whetstone's MAC key file and its directory); compare case-insensitively, after cleaning
	// Path is the PATH the command runs with, for Verdict.Local; "" looks
	// nothing up.
	Path string
	// CheckLinks walks the trees of the parts that follow links (grep -R,
	// rg -L, find -L, diff -r, cp -rL, du -L, ls -RL, tree -l) and refuses
	// a line whose links lead to whetstone's key. The gate sets it where
	// the line will not run in the sandbox, which hides the key.
	CheckLinks bool
}

// Verdict is what Judge finds in a command line.
type Verdict struct {
	Reason string // "" when the line may run under the policy, else why not (Check)
	// Walks is the first part of the line that reads a whole tree (grep -r,
	// rg, find, diff -r, cp -r, du, ls -R, tree), and Follows the first
	// that also follows the links it meets there: a link committed in the
	// repository can lead it to whetstone's key.
	Walks, Follows string
	// Local is the first program the line runs that PATH (Policy.Path)
	// finds in a directory an agent could have written into: inside the
	// project or the temporary directory, or a relative entry. It runs the
	// project's code, whatever its name; LocalName is that name.
	Local, LocalName string
}

// DefaultVerify is what agents may run to build and test a Go module (the
// gate passes it only when the project is one: app.gate.verify). The go
// commands are still held to the rules of gotool.go: no output file
// outside the temporary directory, no -exec or -toolexec.
func DefaultVerify() [][]string {
	return [][]string{
		{"go", "test"},
		{"go", "vet"},
		{"go", "build", "-o", "/dev/null"},
		{"go", "list"},
		{"gofmt", "-l"},
		{"gofmt", "-d"},
	}
}

// Limits that keep a hostile line from costing more than a linear amount of
// work, or from overflowing the parser's stack.
const (
	maxDepth   = 32   // nested inline shells, eval and wrappers
	maxOpeners = 4096 // brackets and backquotes in one line; the parser recurses on them
)

// Check returns "" when cmd may run under p, else the reason: it names the part
// of the command that was refused and says what to do instead.
func Check(cmd string, p Policy) string {
	return Judge(cmd, p).Reason
}

// Judge checks cmd as Check does and says what else the gate must know of
// it. Walks, Follows and Local are complete only for a line it allows.
func Judge(cmd string, p Policy) Verdict {
	buildTables()
	c := newChecker(cmd, p)
	if r := c.named(cmd); r != "" {
		return Verdict{Reason: r}
	}
	if n := openers(cmd); n > maxOpeners {
		return Verdict{Reason: fmt.Sprintf("cannot parse the command: it nests or groups more than %d parts; split it into smaller commands", maxOpeners)}
	}
	c.script(cmd, 0)
	c.finish()
	return Verdict{Reason: c.reason, Walks: c.walk, Follows: c.follow, Local: c.local, LocalName: c.localName}
}

// newChecker prepares the state one call of Check works with.
func newChecker(cmd string, p Policy) *checker {
	c := &checker{
		p:        p,
		root:     clean(p.Root),
		temp:     clean(p.TempDir),
		verify:   p.Verify,
		budget:   len(cmd) + 64<<10,
		fields:   4*len(cmd) + 4096,
		funcs:    map[string]bool{},
		vars:     map[string]varState{},
		resolved: map[string]string{},
	}
	if c.verify == nil {
		c.verify = DefaultVerify()
	}
	if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) {
		c.home = filepath.Clean(home)
	}
	for _, q := range p.Protected {
		if q = clean(q); q != "" {
			c.protected = append(c.protected, strings.ToLower(q))
			if r := c.real(q); r != q {
				c.protected = append(c.protected, strings.ToLower(r))
			}
		}
	}
	switch {
	case filepath.IsAbs(p.Cwd):
		c.cwd = []string{filepath.Clean(p.Cwd)}
	case c.root != "":
		c.cwd = []string{c.root}
	}
	return c
}

// named reports a line whose text names a protected path, however the words
// around it are quoted: the plain substring, and the forms relative to the
// home directory.
func (c *checker) named(cmd string) string {
	lower := strings.ToLower(cmd)
	for _, q := range c.protected {
		forms := []string{q}
		if h := strings.ToLower(c.home); h != "" && strings.HasPrefix(q, h+"/") {
			rest := q[len(h):]
			forms = append(forms, "~"+rest, "$home"+rest, "${home}"+rest)
		}
		for _, f := range forms {
			if i := strings.Index(lower, f); i >= 0 {
				if len(lower) == len(cmd) {
					f = cmd[i : i+len(f)] // as written
				}
				return keyReason(f)
			}
		}
	}
	return ""
}

func keyReason(part string) string {
	return fmt.Sprintf("%s names whetstone's key file, which may not be read or named by any agent", quote(part))
}

// openers counts the characters that open a nested part of a command line.
func openers(s string) int {
	return strings.Count(s, "(") + strings.Count(s, "{") + strings.Count(s, "[") + strings.Count(s, "`")
}

// script parses src and judges every command in it. depth counts the inline
// shells around it.
func (c *checker) script(src string, depth int) {
	if c.reason != "" {
		return
	}
	if depth > maxDepth {
		c.denyf("%s nests inline shells, eval and wrappers more than %d deep; run the inner command directly", quote(src), maxDepth)
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		c.denyf("cannot parse %s (%v); write it as plain bash", quote(src), err)
		return
	}
	outer, outerDepth, outerLoops := c.src, c.depth, c.loops
	c.src, c.depth, c.loops = src, depth, dirChangingLoops(f, src)
	c.stmts(f.Stmts)
	c.src, c.depth, c.loops = outer, outerDepth, outerLoops
}

// inline judges a script that a command hands to a shell, eval or trap,
// within the budget of bytes that nested scripts may re-parse.
func (c *checker) inline(src string) {
	c.budget -= len(src)
	if c.budget < 0 {
		c.denyf("%s hands more script text to inline shells than whetstone judges; run the commands directly", quote(src))
		return
	}
	c.script(src, c.depth+1)
}

// quote returns s quoted for a reason, shortened when long.
func quote(s string) string {
	const max = 72
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return fmt.Sprintf("%q", s)
}

func clean(p string) string {
	if p == "" || !filepath.IsAbs(p) {
		return ""
	}
	return filepath.Clean(p)
}
