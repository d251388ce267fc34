package shell

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// gitReads are the git subcommands agents may run, each with the function
// that judges its arguments. Any other subcommand, including aliases and
// external git-* programs, is refused.
var gitReads = map[string]func(*checker, *call, []word){
	"status": gitAny, "log": gitAny, "show": gitAny, "diff": gitAny, "diff-tree": gitAny,
	"diff-index": gitAny, "diff-files": gitAny, "rev-parse": gitAny, "rev-list": gitAny,
	"ls-files": gitAny, "ls-tree": gitAny, "blame": gitAny, "annotate": gitAny, "shortlog": gitAny,
	"describe": gitAny, "show-ref": gitAny, "name-rev": gitAny, "merge-base": gitAny, "var": gitAny,
	"version": gitAny, "whatchanged": gitAny, "count-objects": gitAny, "check-ignore": gitAny,
	"check-attr": gitAny, "check-ref-format": gitAny, "verify-commit": gitAny, "verify-tag": gitAny,
	"for-each-ref": gitAny, "cherry": gitAny, "range-diff": gitAny, "show-branch": gitAny,
	"check-mailmap": gitAny, "stripspace": gitAny, "column": gitAny,
	"grep":         gitRefuse("-O", "--open-files-in-pager"),
	"cat-file":     gitRefuse("--filters", "--textconv"),
	"fsck":         gitRefuse("--lost-found"),
	"archive":      gitRefuse("-o", "--output", "--remote", "--exec"),
	"hash-object":  gitRefuse("-w"),
	"help":         gitRefuse("-w", "--web", "-i", "--info"),
	"format-patch": gitFormatPatch,
	"branch":       gitBranch,
	"tag":          gitTag,
	"config":       gitConfig,
	"remote":       gitSub("", "get-url"),
	"stash":        gitSub("list", "show"),
	"worktree":     gitSub("list"),
	"notes":        gitSub("", "list", "show"),
	"submodule":    gitSub("", "status", "summary"),
	"reflog":       gitReflog,
	"symbolic-ref": gitSymbolicRef,
	"checkout":     gitCheckout,
}

// gitRefused are options no git subcommand may have: they write files or
// run programs.
var gitRefused = []string{"--output", "--ext-diff", "--extcmd", "--upload-pack", "--receive-pack", "--exec", "--open-files-in-pager", "-x"}

// gitGlobal are git's options before the subcommand that only change how it
// prints or matches.
var gitGlobal = set("-P", "--no-pager", "--no-replace-objects", "--literal-pathspecs", "--glob-pathspecs",
	"--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks", "--no-lazy-fetch", "--no-advice", "--list-cmds")

// gitCmd allows git's read-only subcommands inside the project.
func gitCmd(c *checker, x *call) {
	saved := c.cwd
	defer func() { c.cwd = saved }()
	args := x.args
	for len(args) > 0 {
		w := args[0]
		if !w.known {
			c.dynamicOption(x, &args[0])
			return
		}
		t := w.text
		if !strings.HasPrefix(t, "-") {
			break
		}
		name, _, attached := strings.Cut(t, "=")
		switch {
		case t == "-C" && len(args) > 1 && args[1].known:
			c.gitDir(x, args[1])
			args = args[2:]
		case contains(t, "--version", "--help", "-h", "--html-path", "--man-path", "--info-path") || t == "--exec-path":
			return
		case gitGlobal[name] && (!attached || name == "--list-cmds"):
			args = args[1:]
		default:
			c.denyf("%s changes git's configuration, repository or the programs it runs; run git without it", x.with(name))
			return
		}
	}
	if len(args) == 0 || c.reason != "" {
		return
	}
	sub := args[0]
	judge, ok := gitReads[sub.text]
	if !sub.known || !ok {
		c.gitUnknown(sub)
		return
	}
	c.gitInside(x)
	rest := args[1:]
	for i, a := range rest {
		if c.reason != "" {
			return
		}
		if a.known && a.text == "--" {
			break
		}
		if !a.known {
			if a.option() {
				c.dynamicOption(x, &rest[i])
			}
			continue
		}
		if r := refusedOption(a.text, gitRefused); r != "" && !toDevice(a.text, r) {
			c.denyf("%s writes files or runs programs; %s", quote("git "+sub.text+" "+r), c.instead())
			return
		}
	}
	if c.reason == "" {
		judge(c, &call{name: "git " + sub.text, args: rest, all: x.all}, rest)
	}
	if sub.text == "grep" || sub.text == "diff" { // --no-index reads whole trees
		for _, a := range rest {
			if a.known && !strings.HasPrefix(a.text, "-") {
				c.protectTree(a)
			}
		}
	}
}

// toDevice reports whether the option t, found as the refused option r, is
// --output=/dev/stdout, /dev/stderr or /dev/null: it writes no file.
func toDevice(t, r string) bool {
	_, v, ok := strings.Cut(t, "=")
	return ok && r == "--output" && contains(v, "/dev/stdout", "/dev/stderr", "/dev/null")
}

// refusedOption returns which of names the argument t is: short options
// exactly or in a cluster, long ones also abbreviated, with or without a
// value.
func refusedOption(t string, names []string) string {
	name, _, _ := strings.Cut(t, "=")
	for _, n := range names {
		switch {
		case strings.HasPrefix(n, "--"):
			if name == n || len(name) > 3 && strings.HasPrefix(name, "--") && strings.HasPrefix(n, name) {
				return n
			}
		case t == n || len(n) == 2 && strings.HasPrefix(t, n) && !strings.HasPrefix(t, "--"):
			return n
		}
	}
	return ""
}

// gitDir follows git -C, which must stay inside the project.
func (c *checker) gitDir(x *call, dir word) {
	paths, ok := c.paths(dir.text)
	if !ok {
		c.denyf("%s runs git in a directory whetstone cannot tell after a cd; use a path from the project root", quote(x.part()))
		return
	}
	c.cwd = paths
}

// gitInside refuses to run git outside the project: another repository's
// configuration may run programs.
func (c *checker) gitInside(x *call) {
	if c.root == "" {
		return
	}
	if c.cwd == nil {
		c.denyf("%s runs git in a directory whetstone cannot tell after a cd; run it from the project", quote(x.part()))
		return
	}
	for _, d := range c.cwd {
		if r := c.real(d); r != c.root && !inside(r, c.root) {
			c.denyf("%s runs git in %s, outside the project; run it from the project", quote(x.part()), r)
			return
		}
	}
}

// gitUnknown refuses a git subcommand that is not known to only read.
func (c *checker) gitUnknown(sub word) {
	if c.p.Mode == Fixer {
		c.denyf("%s is not a git command the fixer may run: it may change the repository or run programs; the fixer edits files with the Edit tool and leaves git to the user", quote("git "+sub.src))
		return
	}
	c.denyf("%s is not a git command read-only agents may run: it may change the repository or run programs (status, log, show, diff, grep, blame and other reads are allowed); describe what you would check in your report instead", quote("git "+sub.src))
}

func gitAny(*checker, *call, []word) {}

// gitRefuse judges a subcommand that reads unless given one of names.
func gitRefuse(names ...string) func(*checker, *call, []word) {
	return func(c *checker, x *call, args []word) {
		for _, a := range args {
			if a.known && a.text == "--" {
				return
			}
			if r := refusedOption(a.text, names); r != "" && a.known {
				c.denyf("%s writes files or runs programs; %s", x.with(r), c.instead())
				return
			}
			if a.known && names[0] == "-O" && clusterHas(a.text, 'O') {
				c.denyf("%s runs a pager; %s", x.with("-O"), c.instead())
				return
			}
		}
	}
}

// gitOperands returns the operands of a git subcommand: the words before
// "--" that are not options, and the values of the options in valued.
func gitOperands(args []word, valued ...string) (operands []word, opts []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a.known && a.text == "--":
			return append(operands, args[i+1:]...), opts
		case a.known && strings.HasPrefix(a.text, "-") && a.text != "-":
			opts = append(opts, a.text)
			if contains(a.text, valued...) {
				i++
			}
		default:
			operands = append(operands, a)
		}
	}
	return operands, opts
}

// gitSub allows the listed first operands of a subcommand that has its own
// subcommands; "" stands for none.
func gitSub(allowed ...string) func(*checker, *call, []word) {
	return func(c *checker, x *call, args []word) {
		operands, opts := gitOperands(args, "--ref")
		first := ""
		if len(operands) > 0 {
			first = operands[0].text
			if !operands[0].known {
				first = "?"
			}
		}
		if x.name == "git remote" && first == "" {
			for _, o := range opts {
				if o != "-v" && o != "--verbose" {
					first = o
				}
			}
		}
		if !contains(first, allowed...) {
			c.denyf("%s changes the repository or reaches other repositories; %s", quote(x.part()), c.instead())
		}
	}
}

// gitCheckout allows a bare git checkout, which only prints how the branch
// stands, to read-only agents, and only when no post-checkout hook would run:
// git runs that hook even then. Anything else switches branches or
// overwrites files.
func gitCheckout(c *checker, x *call, args []word) {
	if len(args) > 0 || c.p.Mode == Fixer {
		c.gitUnknown(word{text: "checkout", src: "checkout", known: true})
		return
	}
	if hook := c.checkoutHook(); hook != "" {
		c.denyf("%s would run the hook %s; use git status instead", quote(x.part()), hook)
	}
}

// checkoutHook returns the post-checkout hook git would run in the
// directories the command may run in, or "" when there is none. A hook in a
// directory the agent may write to counts even before it exists.
func (c *checker) checkoutHook() string {
	for _, d := range c.cwd {
		cmd := exec.Command("git", "rev-parse", "--path-format=absolute", "--git-path", "hooks/post-checkout")
		cmd.Dir = d
		out, err := cmd.Output()
		hook := strings.TrimSpace(string(out))
		if err != nil || !filepath.IsAbs(hook) {
			return "post-checkout (whetstone could not tell where git keeps its hooks)"
		}
		if _, err := os.Lstat(hook); err == nil || inside(c.real(hook), c.temp) {
			return hook
		}
	}
	return ""
}

func gitReflog(c *checker, x *call, args []word) {
	operands, _ := gitOperands(args)
	if len(operands) > 0 && (!operands[0].known || contains(operands[0].text, "expire", "delete", "drop", "write")) {
		c.denyf("%s changes the reflog; %s", quote(x.part()), c.instead())
	}
}

func gitSymbolicRef(c *checker, x *call, args []word) {
	operands, opts := gitOperands(args, "-m")
	for _, o := range opts {
		if !contains(o, "-q", "--quiet", "--short", "--no-recurse", "--recurse") {
			c.denyf("%s changes a ref; %s", x.with(o), c.instead())
			return
		}
	}
	if len(operands) != 1 {
		c.denyf("%s sets a ref; %s", quote(x.part()), c.instead())
	}
}

func gitFormatPatch(c *checker, x *call, args []word) {
	_, opts := gitOperands(args)
	stdout := false
	for _, o := range opts {
		if r := refusedOption(o, []string{"-o", "--output-directory"}); r != "" {
			c.denyf("%s writes patch files; use git format-patch --stdout", x.with(r))
			return
		}
		stdout = stdout || o == "--stdout"
	}
	if !stdout {
		c.denyf("%s writes patch files; use git format-patch --stdout", quote(x.part()))
	}
}

// gitBranch allows git branch only to list branches.
func gitBranch(c *checker, x *call, args []word) {
	operands, opts := gitOperands(args, "--sort", "--format", "--points-at", "--abbrev")
	listing := false
	for _, o := range opts {
		name, _, _ := strings.Cut(o, "=")
		switch {
		case contains(name, "--list", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at"):
			listing = true // operands are patterns, not branches to create
		case contains(name, "--all", "--remotes", "--verbose", "--color", "--no-color", "--column", "--no-column", "--sort", "--format", "--abbrev", "--no-abbrev", "--ignore-case", "--omit-empty", "--quiet", "--show-current"):
		case !strings.HasPrefix(o, "--") && strings.Trim(o[1:], "larvqi") == "":
			listing = listing || strings.Contains(o[1:], "l")
		default:
			c.denyf("%s creates, deletes, renames or configures branches; %s", x.with(name), c.instead())
			return
		}
	}
	if len(operands) > 0 && !listing {
		c.denyf("%s creates a branch; list branches with git branch --list PATTERN", quote(x.part()))
	}
}

// gitTag allows git tag only to list or verify tags.
func gitTag(c *checker, x *call, args []word) {
	operands, opts := gitOperands(args, "--sort", "--format", "--points-at")
	listing := false
	for _, o := range opts {
		name, _, _ := strings.Cut(o, "=")
		switch {
		case contains(name, "--list", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--verify", "-l", "-v"), strings.HasPrefix(name, "-n") && isNumber(name[2:]):
			listing = true
		case contains(name, "--sort", "--format", "--color", "--column", "--no-column", "--ignore-case", "-i", "--omit-empty"):
		default:
			c.denyf("%s creates, deletes or signs tags; %s", x.with(name), c.instead())
			return
		}
	}
	if len(operands) > 0 && !listing {
		c.denyf("%s creates a tag; list tags with git tag --list PATTERN", quote(x.part()))
	}
}

// gitConfig allows git config only to read values.
func gitConfig(c *checker, x *call, args []word) {
	operands, opts := gitOperands(args, "-f", "--file", "--blob", "--type", "--default", "--comment")
	if len(operands) > 0 && operands[0].known && contains(operands[0].text, "get", "list") {
		for _, o := range opts {
			if o == "-e" || strings.HasPrefix(o, "--edit") {
				c.denyf("%s opens an editor; %s", x.with(o), c.instead())
				return
			}
		}
		return
	}
	reading := len(operands) == 1 // git config NAME prints the value
	for _, o := range opts {
		name, _, _ := strings.Cut(o, "=")
		switch {
		case contains(name, "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "--list", "-l"):
			reading = true
		case contains(name, "--global", "--system", "--local", "--worktree", "-f", "--file", "--blob", "--show-origin", "--show-scope", "--null", "-z", "--name-only", "--includes", "--no-includes", "--type", "--bool", "--int", "--bool-or-int", "--path", "--expiry-date", "--default", "--fixed-value"):
		default:
			c.denyf("%s changes git's configuration; %s", x.with(name), c.instead())
			return
		}
	}
	if !reading {
		c.denyf("%s sets a value; read values with git config --get NAME", quote(x.part()))
	}
}
