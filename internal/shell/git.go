package shell

import (
	"fmt"
	"slices"
	"strings"
)

// gitWrites maps each git subcommand that can change the work tree, the
// index, refs, config or history to a test of its arguments; a nil test means
// every use writes. Subcommands not listed, such as status, diff, log, show,
// blame, grep and rev-parse, only read.
var gitWrites = map[string]func(args []string) bool{
	"add": nil, "am": nil, "checkout": nil, "cherry-pick": nil, "clone": nil, "commit": nil,
	"fetch": nil, "filter-branch": nil, "gc": nil, "init": nil, "merge": nil, "mergetool": nil,
	"mv": nil, "pull": nil, "push": nil, "rebase": nil, "reset": nil, "restore": nil,
	"revert": nil, "rm": nil, "switch": nil, "update-ref": nil, "update-index": nil,
	"checkout-index": nil, "read-tree": nil, "commit-tree": nil, "write-tree": nil,
	"mktag": nil, "mktree": nil, "pack-refs": nil, "repack": nil, "maintenance": nil,

	"apply":        unless("--check", "--stat", "--numstat", "--summary"),
	"clean":        unless("-n", "--dry-run"),
	"prune":        unless("-n", "--dry-run"),
	"format-patch": unless("--stdout"),
	"hash-object":  with("-w"),
	"archive":      with("-o", "--output"),

	"stash":           except("list", "show"),
	"worktree":        except("list"),
	"sparse-checkout": except("list"),
	"notes":           only("add", "append", "copy", "edit", "merge", "prune", "remove"),
	"submodule":       only("add", "update", "init", "deinit", "sync", "set-branch", "set-url", "absorbgitdirs", "foreach"),
	"reflog":          only("expire", "delete"),
	"remote":          only("add", "remove", "rm", "rename", "set-url", "set-head", "set-branches", "prune", "update"),
	"bisect":          only("start", "good", "bad", "new", "old", "skip", "reset", "run", "replay"),

	"branch":       branchWrites,
	"tag":          tagWrites,
	"replace":      listOrWrite("-l", "--list"),
	"config":       configWrites,
	"symbolic-ref": symbolicRefWrites,
}

// gitGlobalsWithValue are git's options before the subcommand that take the
// next word as their value.
var gitGlobalsWithValue = []string{"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"}

// checkGit flags git subcommands that change the repository.
func checkGit(args []string) string {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		if slices.Contains(gitGlobalsWithValue, args[i]) {
			i++
		}
		i++
	}
	if i >= len(args) {
		return ""
	}
	sub, rest := args[i], args[i+1:]
	if test, ok := gitWrites[sub]; ok && (test == nil || test(rest)) {
		return fmt.Sprintf("%q changes the repository", "git "+sub)
	}
	if hasFlag(rest, "--output") {
		return fmt.Sprintf("%q writes a file", "git "+sub+" --output")
	}
	return ""
}

// unless writes unless one of flags is given.
func unless(flags ...string) func([]string) bool {
	return func(args []string) bool { return !hasFlag(args, flags...) }
}

// with writes only when one of flags is given.
func with(flags ...string) func([]string) bool {
	return func(args []string) bool { return hasFlag(args, flags...) }
}

// except writes unless its first operand is one of subs; with no operand it
// writes, as git stash does.
func except(subs ...string) func([]string) bool {
	return func(args []string) bool { return !slices.Contains(subs, firstOperand(args)) }
}

// only writes when its first operand is one of subs.
func only(subs ...string) func([]string) bool {
	return func(args []string) bool { return slices.Contains(subs, firstOperand(args)) }
}

// listOrWrite writes when given operands, unless one of listing is given.
func listOrWrite(listing ...string) func([]string) bool {
	return func(args []string) bool { return firstOperand(args) != "" && !hasFlag(args, listing...) }
}

func firstOperand(args []string) string {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// branchListing are the options that make git branch list branches, so that
// its operands are patterns or commits rather than a branch to create.
var branchListing = []string{
	"-l", "--list", "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "--show-current",
	"--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--format", "--sort",
}

// branchWrites reports whether git branch deletes, renames, copies or
// creates a branch or changes its upstream; listing only reads.
func branchWrites(args []string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, "--") {
			if hasFlag([]string{a}, "--delete", "--move", "--copy", "--force", "--set-upstream-to", "--unset-upstream", "--edit-description", "--track", "--no-track", "--create-reflog") {
				return true
			}
		} else if len(a) > 1 && a[0] == '-' && strings.ContainsAny(a[1:], "dDmMcCfut") {
			return true
		}
	}
	return listOrWrite(branchListing...)(args)
}

// tagWrites reports whether git tag deletes or creates a tag; listing only
// reads.
func tagWrites(args []string) bool {
	if hasFlag(args, "-d", "--delete") {
		return true
	}
	for _, a := range args {
		if strings.HasPrefix(a, "-n") && (a == "-n" || isDigits(a[2:])) {
			return false
		}
	}
	return listOrWrite("-l", "--list", "-v", "--verify", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format")(args)
}

// configWrites reports whether git config sets, unsets or edits a value;
// getting and listing only read.
func configWrites(args []string) bool {
	if len(args) > 0 {
		switch args[0] {
		case "get", "list":
			return false
		case "set", "unset", "edit", "rename-section", "remove-section":
			return true
		}
	}
	operands := 0
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case hasFlag([]string{a}, "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "--list", "-l"):
			return false
		case hasFlag([]string{a}, "--unset", "--unset-all", "--add", "--replace-all", "--rename-section", "--remove-section", "--edit", "-e"):
			return true
		case a == "-f" || a == "--file" || a == "--blob" || a == "--type" || a == "--default" || a == "--comment":
			i++
		case !strings.HasPrefix(a, "-"):
			operands++
		}
	}
	return operands >= 2
}

// symbolicRefWrites reports whether git symbolic-ref sets or deletes a ref
// rather than reading one.
func symbolicRefWrites(args []string) bool {
	operands := 0
	for _, a := range args {
		if a == "-d" || a == "--delete" {
			return true
		}
		if !strings.HasPrefix(a, "-") {
			operands++
		}
	}
	return operands >= 2
}
