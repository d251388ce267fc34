package shell

import (
	"strings"
)

// This file judges the programs that read, but write files or run others
// when given some options or operands.

func dateCmd(c *checker, x *call) {
	opts, operands, bad := parse(x.args, spec{short: "dfr", optional: "I", long: []string{"date", "file", "reference"}})
	if bad != nil {
		c.dynamicOption(x, bad)
		return
	}
	if _, ok := find(opts, "-s", "--set"); ok {
		c.denyf("%s sets the system clock; %s", x.with("-s"), c.instead())
		return
	}
	for _, w := range operands {
		if !w.known || !strings.HasPrefix(w.text, "+") {
			c.denyf("%s sets the system clock unless its operand is a +FORMAT; %s", quote(x.part()), c.instead())
			return
		}
	}
}

func hostnameCmd(c *checker, x *call) {
	for _, a := range x.args {
		switch {
		case !a.known || !strings.HasPrefix(a.text, "-"):
			c.denyf("%s sets the host name; %s", quote(x.part()), c.instead())
			return
		case clusterHas(a.text, 'F') || clusterHas(a.text, 'b') || strings.HasPrefix(a.text, "--file") || strings.HasPrefix(a.text, "--boot"):
			c.denyf("%s sets the host name; %s", quote(x.part()), c.instead())
			return
		}
	}
}

// uniqCmd judges uniq, whose second operand is a file it writes.
func uniqCmd(c *checker, x *call) {
	_, operands, bad := parse(x.args, spec{short: "fsw", long: []string{"skip-fields", "skip-chars", "check-chars"}})
	if bad != nil {
		c.dynamicOption(x, bad)
		return
	}
	if len(operands) > 2 {
		c.denyf("%s has more operands than uniq takes; cannot judge it", quote(x.part()))
		return
	}
	if len(operands) == 2 && !(operands[1].known && operands[1].text == "-") {
		c.writes(operands[1], quote(x.part()))
	}
}

// xxdCmd judges xxd, whose second operand is a file it writes.
func xxdCmd(c *checker, x *call) {
	var operands []word
	for i := 0; i < len(x.args); i++ {
		w := x.args[i]
		if !w.known {
			c.dynamicOption(x, &x.args[i])
			return
		}
		switch t := w.text; {
		case contains(t, "-c", "-g", "-l", "-n", "-o", "-s", "-R", "-cols", "-groupsize", "-len", "-name", "-offset", "-seek"):
			i++
		case len(t) > 1 && t[0] == '-':
		default:
			operands = append(operands, w)
		}
	}
	if len(operands) > 2 {
		c.denyf("%s has more operands than xxd takes; cannot judge it", quote(x.part()))
		return
	}
	if len(operands) == 2 && operands[1].text != "-" {
		c.writes(operands[1], quote(x.part()))
	}
}

// grepCmd judges grep: it only reads, but a recursive search must not reach
// whetstone's key.
func grepCmd(c *checker, x *call) {
	opts, operands, _ := parse(x.args, spec{short: "efmABCdD", long: []string{"regexp", "file", "max-count", "after-context", "before-context", "context", "directories", "devices", "label", "include", "exclude", "exclude-from", "exclude-dir", "binary-files", "group-separator"}})
	recursive := false
	pattern := true
	for _, o := range opts {
		switch {
		case o.is("-r", "-R", "--recursive", "--dereference-recursive"), o.is("-d", "--directories") && o.value.text == "recurse":
			recursive = true
		case o.is("-e", "-f", "--regexp", "--file"):
			pattern = false
		}
	}
	if pattern && len(operands) > 0 {
		operands = operands[1:]
	}
	if recursive {
		c.trees(x, operands)
	}
}

// rgCmd judges ripgrep, which searches trees and runs --pre programs.
func rgCmd(c *checker, x *call) {
	opts, operands, bad := parse(x.args, spec{short: "efgtTmABCMjEr", long: []string{"regexp", "file", "glob", "iglob", "type", "type-not", "type-add", "type-clear", "max-count", "after-context", "before-context", "context", "max-columns", "threads", "encoding", "replace", "max-depth", "max-filesize", "colors", "color", "path-separator", "sort", "sortr", "pre-glob", "context-separator", "field-match-separator", "field-context-separator", "dfa-size-limit", "regex-size-limit", "ignore-file", "engine", "pre", "hostname-bin"}})
	if bad != nil {
		c.dynamicOption(x, bad)
		return
	}
	pattern := true
	for _, o := range opts {
		switch {
		case o.is("--pre", "--hostname-bin"):
			c.denyf("%s runs a program on every file; %s", x.with(o.name), c.instead())
			return
		case o.is("-e", "-f", "--regexp", "--file"):
			pattern = false
		}
	}
	if pattern && len(operands) > 0 {
		operands = operands[1:]
	}
	c.trees(x, operands)
}

// treeReader judges a program that may read whole trees, such as diff -r.
func treeReader(s spec) func(*checker, *call) {
	return func(c *checker, x *call) {
		_, operands, _ := parse(x.args, s)
		c.trees(x, operands)
	}
}

// trees refuses tree operands that hold whetstone's key; no operand is the
// working directory.
func (c *checker) trees(x *call, operands []word) {
	if len(operands) == 0 {
		operands = []word{{text: ".", src: ".", known: true, segs: []seg{{text: "."}}}}
	}
	for _, w := range operands {
		c.protectTree(w)
	}
}

// findCmd judges find, refusing the actions that delete, write or run
// programs.
func findCmd(c *checker, x *call) {
	args := x.args
	i := 0
	for i < len(args) && args[i].known { // options before the starting points
		t := args[i].text
		if t == "-H" || t == "-L" || t == "-P" || strings.HasPrefix(t, "-O") {
			i++
		} else if t == "-D" {
			i += 2
		} else {
			break
		}
	}
	for ; i < len(args); i++ { // starting points
		w := args[i]
		if w.known && (strings.HasPrefix(w.text, "-") || contains(w.text, "(", "!", ",")) {
			break
		}
		if w.option() {
			c.dynamicOption(x, &args[i])
			return
		}
	}
	for ; i < len(args); i++ { // the expression
		w := args[i]
		if !w.known {
			c.dynamicOption(x, &args[i])
			return
		}
		t := w.text
		switch {
		case contains(t, "-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"):
			c.denyf("%s deletes, writes or runs programs; list the files with find and %s", x.with(t), c.instead())
			return
		case findValue[t] || len(t) == 8 && strings.HasPrefix(t, "-newer"):
			i++
		case findFlag[t]:
		default:
			c.denyf("%s is not a find primary whetstone knows; use -name, -path, -type and the like", x.with(t))
			return
		}
	}
}

var findValue = set("-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
	"-lname", "-ilname", "-newer", "-anewer", "-cnewer", "-samefile", "-type", "-xtype", "-user", "-group",
	"-perm", "-size", "-mtime", "-atime", "-ctime", "-mmin", "-amin", "-cmin", "-used", "-links", "-inum",
	"-uid", "-gid", "-maxdepth", "-mindepth", "-fstype", "-regextype", "-printf", "-context", "-files0-from")

var findFlag = set("-print", "-print0", "-ls", "-prune", "-quit", "-true", "-false", "-empty", "-executable",
	"-readable", "-writable", "-nouser", "-nogroup", "-depth", "-d", "-mount", "-xdev", "-noleaf",
	"-ignore_readdir_race", "-noignore_readdir_race", "-daystart", "-follow", "-not", "-a", "-and", "-o",
	"-or", "-help", "--help", "-version", "--version", "(", ")", "!", ",")

// tarCmd allows tar only to list an archive.
func tarCmd(c *checker, x *call) {
	list := false
	for i := 0; i < len(x.args); i++ {
		w := x.args[i]
		if !w.known {
			c.dynamicOption(x, &x.args[i])
			return
		}
		t := w.text
		letters := ""
		switch {
		case strings.HasPrefix(t, "--"):
			name, value, attached := strings.Cut(t, "=")
			switch name {
			case "--list":
				list = true
			case "--file":
				if !attached && i+1 < len(x.args) {
					i++
					value = x.args[i].text
				}
				if strings.Contains(value, ":") {
					c.denyf("%s names a remote archive; %s", x.with(t), c.instead())
					return
				}
			case "--verbose", "--gzip", "--gunzip", "--bzip2", "--xz", "--zstd", "--auto-compress", "--numeric-owner", "--wildcards", "--no-wildcards", "--exclude", "--anchored", "--no-anchored", "--ignore-case", "--full-time", "--utc", "--quoting-style", "--show-transformed-names":
			default:
				c.denyf("%s is not a tar option whetstone allows; tar may only list archives (tar -tf FILE)", x.with(name))
				return
			}
			continue
		case strings.HasPrefix(t, "-"):
			letters = t[1:]
		case i == 0:
			letters = t // the old style: tar tzf a.tgz
		default:
			continue // a member name
		}
		for j := 0; j < len(letters); j++ {
			switch l := letters[j]; l {
			case 't':
				list = true
			case 'v', 'z', 'j', 'J', 'a':
			case 'f':
				if j == len(letters)-1 && i+1 < len(x.args) {
					i++
					if strings.Contains(x.args[i].text, ":") || !x.args[i].known {
						c.denyf("%s names an archive whetstone cannot tell is local; %s", quote(x.part()), c.instead())
						return
					}
				}
				j = len(letters)
			default:
				c.denyf("%s is not a tar option whetstone allows; tar may only list archives (tar -tf FILE)", x.with("-"+string(l)))
				return
			}
		}
	}
	if !list {
		c.denyf("%s creates, changes or extracts an archive; tar may only list archives (tar -tf FILE)", quote(x.part()))
	}
}

// unzipCmd allows unzip only to list, test or print an archive.
func unzipCmd(c *checker, x *call) {
	reading := false
	for i, w := range x.args {
		if !w.known {
			c.dynamicOption(x, &x.args[i])
			return
		}
		if !strings.HasPrefix(w.text, "-") || w.text == "-" {
			continue
		}
		for _, l := range w.text[1:] {
			switch {
			case strings.ContainsRune("lptvZcz", l):
				reading = true
			case strings.ContainsRune("qC123456789", l):
			default:
				c.denyf("%s is not an unzip option whetstone allows; unzip may only list (-l), test (-t) or print (-p)", x.with("-"+string(l)))
				return
			}
		}
	}
	if !reading {
		c.denyf("%s extracts files; unzip may only list (-l), test (-t) or print (-p)", quote(x.part()))
	}
}

// compressCmd allows a compressor only to write to standard output, list or
// test, or to filter standard input.
func compressCmd(c *checker, x *call) {
	opts, operands, bad := parse(x.args, spec{short: "S", long: []string{"suffix", "files"}})
	if bad != nil {
		c.dynamicOption(x, bad)
		return
	}
	if _, ok := find(opts, "-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test"); ok || len(operands) == 0 {
		return
	}
	c.denyf("%s replaces the files it is given; use %s -c or zcat to print them", quote(x.part()), x.name)
}
