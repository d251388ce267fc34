package shell

import (
	"path/filepath"
	"slices"
	"strings"
)

// This file judges the shell builtins that need more than a glance: cd and
// its kin, which move where later paths resolve, and those that take
// variable names or change how the shell runs commands.

// cdCmd follows cd and pushd, so that later relative paths resolve where
// the command runs.
func cdCmd(c *checker, x *call) {
	opts, operands, _ := parse(x.args, spec{posix: true})
	physical := false
	for _, o := range opts {
		physical = physical || o.is("-P")
	}
	switch {
	case len(operands) == 0 && x.name == "cd":
		c.chdir(c.home, physical)
	case len(operands) == 0 || !operands[0].known || operands[0].text == "-" || strings.HasPrefix(operands[0].text, "+"):
		c.chdir("", false)
	default:
		c.chdir(operands[0].text, physical)
	}
}

func popdCmd(c *checker, _ *call) {
	c.chdir("", false)
}

// chdir records a change of directory to dir; "" is a directory whetstone
// cannot tell. The old directory stays possible, since cd may fail. Both the
// logical directory (cd -L) and the physical one (cd -P, or set -P) are
// taken as possible, unless physical says which.
func (c *checker) chdir(dir string, physical bool) {
	c.cdRan = true
	var next []string
	if dir != "" {
		if paths, ok := c.paths(dir); ok {
			for _, p := range paths {
				if l := filepath.Clean(p); !physical && !slices.Contains(next, l) {
					next = append(next, l)
				}
				if r := c.real(p); !slices.Contains(next, r) {
					next = append(next, r)
				}
			}
		}
	}
	c.lastCd = next
	c.cwd = union(c.cwd, next)
	if next == nil {
		c.cwd = nil
	}
}

// shoptCmd allows the shell options that do not change where commands run
// or what they run: cdable_vars, for one, makes cd follow variables.
func shoptCmd(c *checker, x *call) {
	setting := false
	for _, a := range x.args {
		switch {
		case !a.known:
			c.dynamicOption(x, &a)
			return
		case a.text == "-s" || a.text == "-u" || a.text == "-su" || a.text == "-us":
			setting = true
		case strings.HasPrefix(a.text, "-"):
		case setting && a.text == "globstar":
			c.globstar = true
		case setting && !safeShopts[a.text]:
			c.denyf("%s changes how bash finds directories or runs commands; leave it off", quote("shopt -s "+a.text))
			return
		}
	}
}

var safeShopts = set("nullglob", "failglob", "dotglob", "extglob", "globstar", "nocaseglob", "nocasematch",
	"lastpipe", "inherit_errexit", "xpg_echo", "globasciiranges", "checkwinsize", "patsub_replacement",
	"expand_aliases", "globskipdots", "shift_verbose", "sourcepath")

func printfCmd(c *checker, x *call) {
	if len(x.args) >= 2 && x.args[0].known && x.args[0].text == "-v" {
		c.identifiers(x, x.args[1:2], varTainted)
	}
}

// testCmd refuses test -v with a name that holds an array subscript, which
// bash evaluates as code.
func testCmd(c *checker, x *call) {
	for i, a := range x.args {
		if a.known && a.text == "-v" && i+1 < len(x.args) {
			c.identifiers(x, x.args[i+1:i+2], varUnset)
		}
	}
}

func hashCmd(c *checker, x *call) {
	for _, a := range x.args {
		if !a.known || clusterHas(a.text, 'p') {
			c.denyf("%s can make a name run another program; %s", quote(x.part()), c.instead())
			return
		}
	}
}

func readCmd(c *checker, x *call) {
	opts, operands, bad := parse(x.args, spec{short: "adinNptu"})
	if bad != nil {
		c.dynamicOption(x, bad)
		return
	}
	for _, o := range opts {
		if o.is("-a") {
			c.identifiers(x, []word{o.value}, varTainted)
		}
	}
	if _, raw := find(opts, "-r"); raw && len(operands) == 1 && len(opts) == 1 {
		c.nextOrigin = c.stdin // read -r f takes a whole line: one of the listed files
	}
	c.identifiers(x, operands, varTainted)
}

func mapfileCmd(c *checker, x *call) {
	opts, operands, bad := parse(x.args, spec{short: "dnOsuCc"})
	if bad != nil {
		c.dynamicOption(x, bad)
		return
	}
	if _, ok := find(opts, "-C"); ok {
		c.denyf("%s runs a callback whetstone cannot judge; read the lines and act on them instead", x.with("-C"))
		return
	}
	c.identifiers(x, operands, varTainted)
}

func getoptsCmd(c *checker, x *call) {
	if len(x.args) >= 2 {
		c.identifiers(x, x.args[1:2], varTainted)
		c.setVar("OPTARG", varTainted)
	}
}

func waitCmd(c *checker, x *call) {
	opts, _, _ := parse(x.args, spec{short: "p"})
	for _, o := range opts {
		if o.is("-p") {
			c.identifiers(x, []word{o.value}, varSafe)
		}
	}
}

func unsetCmd(c *checker, x *call) {
	_, operands, _ := parse(x.args, spec{})
	c.identifiers(x, operands, varUnset)
}

// setCmd refuses set -k, which makes every NAME=value word an assignment
// for the command, whatever its position.
func setCmd(c *checker, x *call) {
	for i, a := range x.args {
		if a.known && a.text == "--" {
			return
		}
		if !a.known && a.option() {
			c.dynamicOption(x, &x.args[i])
			return
		}
		if a.known && (clusterHas(a.text, 'k') || a.text == "keyword" && i > 0 && x.args[i-1].text == "-o") {
			c.denyf("%s turns arguments into assignments whetstone cannot judge; leave it off", quote(x.part()))
			return
		}
	}
}
