package shell

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"
)

// This file finds the parts of a line that walk whole trees, and those told
// to follow the links they meet there. A link committed in the repository
// (docs/kd -> the key's directory) is no name on the line: grep -R, rg -L,
// find -L, diff -r or cp -rL walk into it. Naming it is refused (path.go);
// walking into it is what the gate keeps from happening, by running such a
// line in the sandbox, where the key's directory is hidden, or where there
// is none, by walking the tree first (Policy.CheckLinks).

// A walk is a part of the line that reads a tree.
type walk struct {
	part    string // the command as written, for reasons
	trees   []word // the trees it walks
	follows bool   // it follows the links it meets, not only those it is given
}

// walks returns how x walks trees, if it does. Programs that only follow
// the links given as operands (grep -r, rg, find -H, cp -rH) are walkers
// too: the gate runs every walker in the sandbox, where the user's aliases
// and rg's configuration (which could add --follow) are not in force.
// git grep and git diff --no-index never follow links; gofmt's walk reads
// only .go files and follows none.
func (c *checker) walks(x *call) (walk, bool) {
	var trees []word
	follows := false
	switch x.name {
	case "grep", "egrep", "fgrep", "rg", "diff", "colordiff", "cp":
		files, recursive, _ := c.readers(x)
		if !recursive {
			return walk{}, false
		}
		trees = files
		opts, _, _ := parse(x.args, spec{})
		switch x.name {
		case "grep", "egrep", "fgrep":
			_, follows = find(opts, "-R", "--dereference-recursive")
		case "rg":
			_, follows = find(opts, "-L", "--follow")
		case "diff", "colordiff":
			_, noDeref := find(opts, "--no-dereference")
			follows = !noDeref // diff -r follows links unless told not to
		case "cp":
			_, follows = find(opts, "-L", "--dereference")
		}
	case "find":
		trees, follows = findTrees(x.args)
	case "du":
		opts, operands, _ := parse(x.args, spec{short: "BdtX", long: []string{"block-size", "max-depth", "threshold", "exclude", "exclude-from", "files0-from", "time", "time-style"}})
		trees = operands
		_, follows = find(opts, "-L", "--dereference")
	case "ls":
		opts, operands, _ := parse(x.args, spec{short: "ITpw", long: []string{"block-size", "color", "format", "hide", "ignore", "indicator-style", "quoting-style", "sort", "tabsize", "time", "time-style", "width"}})
		if _, ok := find(opts, "-R", "--recursive"); !ok {
			return walk{}, false
		}
		trees = operands
		_, follows = find(opts, "-L", "--dereference")
	case "tree":
		opts, operands, _ := parse(x.args, spec{short: "LPIoHT", long: []string{"filelimit", "timefmt", "sort", "charset", "fromfile"}})
		if _, ok := find(opts, "--fromfile"); ok {
			return walk{}, false
		}
		trees = operands
		_, follows = find(opts, "-l", "--follow")
	default:
		return walk{}, false
	}
	if len(trees) == 0 {
		trees = []word{dot()}
	}
	return walk{part: x.part(), trees: trees, follows: follows}, true
}

// findTrees returns find's starting points and whether it follows links
// (-L, -follow); -H follows only the starting points, which are judged as
// named.
func findTrees(args []word) (trees []word, follows bool) {
	i := 0
	for ; i < len(args) && args[i].known; i++ {
		t := args[i].text
		switch {
		case t == "-L":
			follows = true
		case t == "-H" || t == "-P" || strings.HasPrefix(t, "-O"):
		case t == "-D":
			i++
		default:
			goto points
		}
	}
points:
	for ; i < len(args); i++ {
		w := args[i]
		if w.known && (strings.HasPrefix(w.text, "-") || contains(w.text, "(", "!", ",")) {
			break
		}
		trees = append(trees, w)
	}
	for ; i < len(args); i++ {
		if args[i].known && args[i].text == "-follow" {
			follows = true
		}
	}
	return trees, follows
}

// noteWalk records a part of the line that walks trees, and with
// Policy.CheckLinks refuses one that follows links to whetstone's key.
func (c *checker) noteWalk(x *call) {
	if c.reason != "" {
		return
	}
	w, ok := c.walks(x)
	if !ok {
		return
	}
	if c.walk == "" {
		c.walk = w.part
	}
	if !w.follows {
		return
	}
	if c.follow == "" {
		c.follow = w.part
	}
	if !c.p.CheckLinks {
		return
	}
	for _, t := range w.trees {
		if why := c.linksOut(t); why != "" {
			c.denyf("%s follows the links in %s, and %s; read without following links (grep -r, rg or find without -L, diff --no-dereference, cp -r without -L), or name the directory the link leads to", quote(w.part), quote(t.src), why)
			return
		}
	}
}

// maxLinkWalk bounds the entries linksOut looks at for one line.
const maxLinkWalk = 50000

// linksOut walks the tree w names as a program that follows links would,
// and returns why it may reach whetstone's key or leave the project, or
// "": a link to the key, to its directory or to a directory holding it,
// anywhere the walk goes, or a link inside the project that leads out of
// it (a committed docs/home -> $HOME). Links met outside the project, in a
// tree the agent named there, are the system's, not the repository's.
// A tree it cannot see whole (not there yet, unreadable, too large, named
// by a word only known when the command runs) is refused: whetstone cannot
// tell where its links lead.
func (c *checker) linksOut(w word) string {
	if !w.known {
		return "it is only known when the command runs"
	}
	paths, ok := c.paths(w.text)
	if !ok {
		return "whetstone cannot tell where it is after a cd"
	}
	for _, a := range paths {
		start := c.real(a)
		info, err := os.Stat(start)
		switch {
		case err != nil:
			return "it does not exist yet, so whetstone cannot tell where its links will lead"
		case !info.IsDir():
			continue // a file, judged as named
		}
		seen := map[string]bool{start: true}
		stack := []string{start}
		for len(stack) > 0 {
			dir := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			entries, err := os.ReadDir(dir)
			if err != nil {
				return fmt.Sprintf("whetstone cannot read %s in it (%v)", dir, err)
			}
			for _, e := range entries {
				if c.walked++; c.walked > maxLinkWalk {
					return fmt.Sprintf("it holds more than %d files, too many for whetstone to check where their links lead", maxLinkWalk)
				}
				p := filepath.Join(dir, e.Name())
				switch {
				case e.Type()&os.ModeSymlink != 0:
					r := c.real(p)
					if c.isProtected(r) || c.holdsKey(r) {
						return fmt.Sprintf("the link %s leads to whetstone's key, which no agent may read", named(c.rel(p)))
					}
					if c.inRoot(p) && !c.inRoot(r) {
						return fmt.Sprintf("the link %s leads out of the project, to %s, where no read of the repository's choosing may go", named(c.rel(p)), named(r))
					}
					if fi, err := os.Stat(r); err == nil && fi.IsDir() && !seen[r] {
						seen[r] = true
						stack = append(stack, r)
					}
				case e.IsDir():
					if !seen[p] {
						seen[p] = true
						stack = append(stack, p)
					}
				}
			}
		}
	}
	return ""
}

// inRoot reports whether the resolved path p is the project root or inside
// it; false when the root is unknown.
func (c *checker) inRoot(p string) bool { return c.root != "" && under(p, c.root) }

// named is a path the repository chose, for a reason the model reads: as
// it is when it is plain printable text, else quoted, so that a name with
// a newline or an instruction in it reads as one name.
func named(p string) string {
	if len(p) <= 200 && strings.IndexFunc(p, func(r rune) bool { return !unicode.IsPrint(r) || r == '"' }) < 0 {
		return p
	}
	return quote(p)
}
