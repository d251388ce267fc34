package shell

import (
	"path/filepath"
	"strings"
)

// This file judges the programs that change files: by where they write,
// which path.go decides.

// teeCmd judges tee by the files it writes.
func teeCmd(c *checker, x *call) {
	_, operands, bad := parse(x.args, spec{})
	if bad != nil {
		c.dynamicOption(x, bad)
		return
	}
	for _, w := range operands {
		c.writes(w, quote("tee "+w.src)) // even "-", a file to GNU tee
	}
}

var copySpec = spec{short: "St", long: []string{"suffix", "target-directory", "no-preserve", "sparse"}}

// copyCmd judges cp and mv by where they write, and mv also by what it
// removes. Copies that keep links must not bring links from outside.
func copyCmd(c *checker, x *call) {
	opts, operands, bad := parse(x.args, copySpec)
	if !c.literalOperands(x, bad, operands) {
		return
	}
	if o, ok := find(opts, "-l", "--link", "-s", "--symbolic-link"); ok {
		c.denyf("%s creates links instead of copies; %s", x.with(o.name), c.instead())
		return
	}
	var target word
	sources := operands
	if o, ok := find(opts, "-t", "--target-directory"); ok {
		target = o.value
	} else if len(operands) > 0 {
		target, sources = operands[len(operands)-1], operands[:len(operands)-1]
	}
	if len(sources) == 0 {
		c.denyf("%s names nothing to %s; cannot judge it", quote(x.part()), map[string]string{"cp": "copy", "mv": "move"}[x.name])
		return
	}
	c.writes(target, quote(x.part()))
	_, keepsLinks := find(opts, "-a", "--archive", "-d", "-P", "--no-dereference", "-r", "-R", "--recursive")
	if _, follows := find(opts, "-L", "--dereference"); follows {
		keepsLinks = false
	}
	if keepsLinks && x.name == "cp" && c.p.Mode != Fixer {
		c.denyf("%s copies links as links, which later writes could follow out of %s; copy with -L", quote(x.part()), c.tempName())
		return
	}
	for _, s := range sources {
		switch {
		case x.name == "mv":
			c.writes(s, quote(x.part())+" moves "+quote(s.src)+", which")
		case keepsLinks:
			c.linkSource(x, s)
		}
	}
}

// linkSource refuses a source whose links a copy would keep unless it lies
// inside the project.
func (c *checker) linkSource(x *call, s word) {
	paths, ok := c.paths(s.text)
	if !ok {
		c.denyf("%s copies %s, a relative path after a cd whetstone cannot follow; use a path from the project root", quote(x.part()), quote(s.src))
		return
	}
	for _, p := range paths {
		if !inside(c.real(p), c.root) {
			c.denyf("%s copies links from %s, outside the project; copy without -a, -d, -P or -r", quote(x.part()), quote(s.src))
			return
		}
	}
}

// literalOperands refuses operands of a file-changing command that are only
// known when it runs, or that are globs.
func (c *checker) literalOperands(x *call, bad *word, operands []word) bool {
	if bad != nil {
		c.dynamicOption(x, bad)
		return false
	}
	for _, w := range operands {
		if !w.known {
			c.denyf("%s changes %s, a path only known when it runs; name the files literally", quote(x.part()), quote(w.src))
			return false
		}
	}
	return c.reason == ""
}

// removeCmd judges rm and rmdir by what they remove.
func removeCmd(c *checker, x *call) {
	opts, operands, bad := parse(x.args, spec{})
	if !c.literalOperands(x, bad, operands) {
		return
	}
	if o, ok := find(opts, "--no-preserve-root"); ok {
		c.denyf("%s may remove the root directory; %s", x.with(o.name), c.instead())
		return
	}
	if _, ok := find(opts, "-p", "--parents"); ok && x.name == "rmdir" {
		for _, w := range operands {
			if filepath.IsAbs(w.text) || strings.Contains(w.text, "..") {
				c.denyf("%s removes parent directories of %s too; name each directory", x.with("-p"), quote(w.src))
				return
			}
		}
	}
	for _, w := range operands {
		c.writes(w, quote(x.part()))
	}
}

func mkdirCmd(c *checker, x *call) {
	_, operands, bad := parse(x.args, spec{short: "mZ", long: []string{"mode", "context"}})
	if !c.literalOperands(x, bad, operands) {
		return
	}
	for _, w := range operands {
		c.writes(w, quote(x.part()))
	}
}

func touchCmd(c *checker, x *call) {
	_, operands, bad := parse(x.args, spec{short: "dtr", long: []string{"date", "reference", "time"}})
	if !c.literalOperands(x, bad, operands) {
		return
	}
	for _, w := range operands {
		c.writes(w, quote(x.part()))
	}
}

// chmodCmd judges chmod by the files it changes. A mode such as -w looks like
// an option, so only chmod's own option letters are taken as options.
func chmodCmd(c *checker, x *call) {
	var operands []word
	reference := false
	for i, w := range x.args {
		if !w.known {
			c.dynamicOption(x, &x.args[i])
			return
		}
		t := w.text
		switch {
		case strings.HasPrefix(t, "--reference"):
			reference = true
		case strings.HasPrefix(t, "--"):
		case len(t) > 1 && t[0] == '-' && strings.Trim(t[1:], "cfvRhHLP") == "":
		default:
			operands = append(operands, w)
		}
	}
	if !reference && len(operands) > 0 {
		operands = operands[1:] // the mode
	}
	for _, w := range operands {
		c.writes(w, quote(x.part()))
	}
}

// lnCmd allows the fixer to link files inside the project to each other.
func lnCmd(c *checker, x *call) {
	if c.p.Mode != Fixer {
		c.denyf("%s creates links; %s", quote(x.part()), c.instead())
		return
	}
	opts, operands, bad := parse(x.args, copySpec)
	if !c.literalOperands(x, bad, operands) {
		return
	}
	var link word
	sources := operands
	dirTarget := false
	if o, ok := find(opts, "-t", "--target-directory"); ok {
		link, dirTarget = o.value, true
	} else if len(operands) > 1 {
		link, sources = operands[len(operands)-1], operands[:len(operands)-1]
		dirTarget = len(sources) > 1
	} else {
		link = word{text: ".", src: ".", known: true}
		dirTarget = true
	}
	c.writes(link, quote(x.part()))
	_, symbolic := find(opts, "-s", "--symbolic")
	for _, s := range sources {
		from := s.text
		if symbolic && !filepath.IsAbs(from) {
			dir := link.text
			if !dirTarget {
				dir = filepath.Dir(link.text)
			}
			from = dir + "/" + from // as the kernel will resolve it, links and all
		}
		paths, ok := c.paths(from)
		for _, p := range paths {
			ok = ok && inside(c.real(p), c.root) && c.reserved(c.real(p)) == "" && !c.isProtected(c.real(p))
		}
		if !ok {
			c.denyf("%s links to %s, which is not a file the fixer may change; link only files inside the project", quote(x.part()), quote(s.src))
			return
		}
	}
}

// mktempCmd judges mktemp by where it creates its file or directory: the
// template, relative to -p DIR or --tmpdir=DIR when given, or to $TMPDIR with
// -t. Without a template the name is tmp.XXXXXXXXXX in that directory.
func mktempCmd(c *checker, x *call) {
	opts, operands, bad := parse(x.args, spec{short: "p", long: []string{"suffix"}})
	if !c.literalOperands(x, bad, operands) {
		return
	}
	var dirs []word // the directories the file may be made in; none means $TMPDIR
	inTmp := false
	for _, o := range opts {
		switch {
		case o.is("-t"):
			inTmp = true
		case o.is("-p", "--tmpdir") && o.has && !(o.value.known && o.value.text == ""):
			dirs = []word{o.value}
		}
	}
	template := word{text: "tmp.XXXXXXXXXX", src: x.part(), known: true}
	if len(operands) > 0 {
		template = operands[0]
	}
	what := quote(x.part())
	switch {
	case filepath.IsAbs(template.text) && !inTmp:
		c.writes(template, what)
		return
	case len(operands) > 0 && len(dirs) == 0 && !inTmp && !hasOpt(opts, "-p", "--tmpdir"):
		c.writes(template, what) // relative to the working directory
		return
	}
	if len(dirs) == 0 || inTmp {
		dirs = append(dirs, word{text: c.temp, src: "$TMPDIR", known: c.temp != ""}) // -t prefers $TMPDIR
	}
	for _, d := range dirs {
		if !d.known {
			c.writes(d, what)
			return
		}
		c.writes(word{text: strings.TrimSuffix(d.text, "/") + "/" + template.text, src: d.src, known: true}, what)
	}
}

func hasOpt(opts []opt, names ...string) bool {
	_, ok := find(opts, names...)
	return ok
}
