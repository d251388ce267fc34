package shell

import (
	"path/filepath"
	"strings"
)

// This file judges the go command and gofmt. Building and testing run the
// project's code, which is the point of a verification command; what is
// refused is writing outside the places the agent may write to, and flags
// that run other programs.

// A goFlag tells how the go command takes one of its flags.
type goFlag uint8

const (
	goBool   goFlag = iota + 1 // -v, or -v=true
	goValue                    // -run X, or -run=X
	goOutput                   // a file the command writes
	goRefuse                   // runs programs or changes the module
)

var goBuildFlags = map[string]goFlag{
	"a": goBool, "n": goBool, "race": goBool, "msan": goBool, "asan": goBool, "cover": goBool,
	"v": goBool, "work": goBool, "x": goBool, "trimpath": goBool, "modcacherw": goBool, "json": goBool,
	"p": goValue, "asmflags": goValue, "buildmode": goValue, "buildvcs": goValue, "compiler": goValue,
	"covermode": goValue, "coverpkg": goValue, "gcflags": goValue, "installsuffix": goValue,
	"ldflags": goValue, "mod": goValue, "overlay": goValue, "pgo": goValue, "tags": goValue,
	"modfile": goOutput, "pkgdir": goOutput, "o": goOutput,
	"toolexec": goRefuse, "exec": goRefuse, "gccgoflags": goRefuse, "linkshared": goRefuse, "vettool": goRefuse,
}

var goTestFlags = map[string]goFlag{
	"c": goBool, "benchmem": goBool, "failfast": goBool, "short": goBool, "fullpath": goBool,
	"bench": goValue, "benchtime": goValue, "blockprofilerate": goValue, "count": goValue, "cpu": goValue,
	"fuzztime": goValue, "fuzzminimizetime": goValue, "list": goValue, "memprofilerate": goValue,
	"mutexprofilefraction": goValue, "parallel": goValue, "run": goValue, "skip": goValue,
	"shuffle": goValue, "timeout": goValue, "vet": goValue, "paniconexit0": goBool,
	"coverprofile": goOutput, "cpuprofile": goOutput, "memprofile": goOutput, "blockprofile": goOutput,
	"mutexprofile": goOutput, "trace": goOutput, "outputdir": goOutput, "fuzz": goOutput,
	"gocoverdir": goOutput, "testlogfile": goOutput, "fuzzcachedir": goOutput,
}

var goListFlags = map[string]goFlag{
	"f": goValue, "reuse": goValue, "json": goBool, "m": goBool, "u": goBool, "versions": goBool,
	"retracted": goBool, "deps": goBool, "test": goBool, "e": goBool, "export": goBool, "find": goBool,
	"compiled": goBool,
}

// goCmd judges the go command.
func goCmd(c *checker, x *call) {
	saved := c.cwd
	defer func() { c.cwd = saved }()
	args := x.args
	if len(args) > 0 && args[0].known && (args[0].text == "-C" || strings.HasPrefix(args[0].text, "-C=")) {
		dir := strings.TrimPrefix(args[0].text, "-C=")
		args = args[1:]
		if dir == "-C" && len(args) > 0 {
			dir, args = args[0].text, args[1:]
		}
		paths, ok := c.paths(dir)
		if !ok {
			paths = nil
		}
		c.cwd = paths
	}
	if len(args) == 0 {
		return
	}
	sub := args[0]
	if !sub.known {
		c.dynamicOption(x, &args[0])
		return
	}
	rest := args[1:]
	g := &call{name: "go " + sub.text, args: rest, all: x.all}
	switch sub.text {
	case "version", "help":
		return
	case "doc":
		c.goFlags(g, rest, map[string]goFlag{"http": goRefuse}, true)
	case "env":
		c.goFlags(g, rest, map[string]goFlag{"w": goRefuse, "u": goRefuse, "json": goBool, "changed": goBool}, false)
	case "list":
		c.goFlags(g, rest, goListFlags, false)
	case "mod":
		c.goMod(x, rest)
	case "tool":
		c.goTool(g, rest)
	case "fmt":
		c.goFmt(g, rest)
	case "test", "vet", "build":
		if !c.verified(x) && !(c.p.Mode == Fixer && c.verifiedCommand(x)) && !c.buildsToTemp(x) {
			c.unknown(g)
			return
		}
		c.goFlags(g, rest, nil, sub.text == "vet")
	default:
		c.denyf("%s is not a go command agents may run: it may change the module, install programs or run code (go test, go vet, go build -o /dev/null, go list, go doc and go env are allowed); %s", quote(g.name), c.instead())
	}
}

// buildsToTemp reports whether x is a verification command once an -o value
// under the temporary directory is read as /dev/null: go build -o /dev/null
// also stands for building into the temporary directory.
func (c *checker) buildsToTemp(x *call) bool {
	var all []word
	for i := 0; i < len(x.all); i++ {
		w := x.all[i]
		value, isO := "", false
		switch {
		case w.known && (w.text == "-o" || w.text == "--o") && i+1 < len(x.all):
			value, isO = x.all[i+1].text, x.all[i+1].known
			i++
		case w.known && (strings.HasPrefix(w.text, "-o=") || strings.HasPrefix(w.text, "--o=")):
			_, value, isO = strings.Cut(w.text, "=")
		}
		if !isO {
			all = append(all, w)
			continue
		}
		if !c.underTemp(value) {
			return false
		}
		all = append(all, word{text: "-o", known: true}, word{text: "/dev/null", known: true})
	}
	return c.verified(&call{name: x.name, args: all[1:], all: all})
}

// underTemp reports whether the literal path p lies inside the temporary
// directory and outside the project.
func (c *checker) underTemp(p string) bool {
	paths, ok := c.paths(p)
	for _, a := range paths {
		r := c.real(a)
		ok = ok && inside(r, c.temp) && !inside(r, c.root)
	}
	return ok
}

// goFlags judges the flags of a go subcommand: its own (extra), the build
// flags, and for go test the test flags. unknownOK lets flags the table does
// not know through, as go vet's analyzer flags.
func (c *checker) goFlags(x *call, args []word, extra map[string]goFlag, unknownOK bool) {
	test := x.name == "go test"
	outputDir := ""
	var outputs []opt
	hasO := false
	binary := false // go test -c, or profiling, writes the test binary unless -o says where
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.known {
			if w.option() {
				c.dynamicOption(x, &args[i])
				return
			}
			continue
		}
		t := w.text
		if test && t == "-args" {
			c.goTestArgs(x, args[i+1:])
			break
		}
		if !strings.HasPrefix(t, "-") || t == "-" || t == "--" {
			continue
		}
		name, value, attached := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(t, "-"), "-"), "=")
		if test {
			name = strings.TrimPrefix(name, "test.")
		}
		kind := extra[name]
		if kind == 0 && x.name != "go doc" && x.name != "go env" {
			kind = goBuildFlags[name]
		}
		if kind == 0 && test {
			kind = goTestFlags[name]
		}
		switch kind {
		case 0:
			if unknownOK {
				continue
			}
			c.denyf("%s is not a flag whetstone knows for %s; tests may write files when given their own flags, so leave it off", x.with("-"+name), x.name)
			return
		case goRefuse:
			c.denyf("%s runs another program or changes how go runs; %s", x.with("-"+name), c.instead())
			return
		case goBool:
			continue
		}
		v := word{text: value, src: t, known: true}
		if !attached {
			if i+1 >= len(args) {
				return
			}
			i++
			v = args[i]
		}
		if !c.goValue(x, name, v) {
			return
		}
		switch {
		case kind != goOutput:
		case name == "outputdir":
			outputDir = v.text
			c.writes(v, x.with("-outputdir"))
		case name == "fuzz":
			if c.p.Mode != Fixer {
				c.denyf("%s adds failing inputs to testdata; %s", x.with("-fuzz"), c.instead())
				return
			}
		default:
			outputs = append(outputs, opt{name: "-" + name, value: v, has: true})
		}
		hasO = hasO || name == "o"
		binary = binary || strings.HasSuffix(name, "profile") && name != "coverprofile"
	}
	for _, a := range args {
		binary = binary || test && a.known && (a.text == "-c" || a.text == "--c")
	}
	for _, o := range outputs {
		v := o.value
		if outputDir != "" && v.known && !filepath.IsAbs(v.text) && o.name != "-o" {
			v.text = filepath.Join(outputDir, v.text)
		}
		c.writes(v, x.with(o.name))
	}
	if (x.name == "go build" || binary) && !hasO {
		if c.p.Mode != Fixer {
			c.denyf("%s writes its binary into the working directory; add -o /dev/null", quote(x.part()))
			return
		}
		c.writes(word{text: "a.out", src: ".", known: true}, quote(x.part()))
	}
}

// goValue judges the value of a go flag; flags that pass options to the
// compiler and linker must not make them write files or run programs.
func (c *checker) goValue(x *call, name string, v word) bool {
	if !v.known && name != "run" && name != "skip" && name != "bench" && name != "list" {
		switch name {
		case "gcflags", "ldflags", "asmflags", "mod", "buildmode", "compiler", "o", "modfile", "pkgdir", "coverprofile", "cpuprofile", "memprofile", "blockprofile", "mutexprofile", "trace", "outputdir", "fuzz":
			c.denyf("%s is only known when the command runs; write it literally", x.with("-"+name))
			return false
		}
	}
	t := strings.ToLower(v.text)
	switch name {
	case "gcflags", "ldflags", "asmflags":
		for _, bad := range []string{"profile", "asmhdr", "linkobj", "bench", "json", "trace", "-o", "extld", "extar", "tmpdir", "plugin", "dumpdep"} {
			if strings.Contains(t, bad) {
				c.denyf("%s makes the compiler or linker write files or run programs; leave it off", x.with("-"+name+"="+v.text))
				return false
			}
		}
	case "mod":
		if t == "mod" && c.p.Mode != Fixer {
			c.denyf("%s lets go rewrite go.mod and go.sum; %s", x.with("-mod=mod"), c.instead())
			return false
		}
	case "buildmode":
		if t == "shared" || t == "plugin" {
			c.denyf("%s installs or loads shared code; leave it off", x.with("-buildmode="+t))
			return false
		}
	case "compiler":
		if t != "gc" {
			c.denyf("%s runs another compiler; leave it off", x.with("-compiler="+t))
			return false
		}
	}
	return true
}

// goTestArgs judges what go test passes to the test binary after -args:
// only the testing package's own flags.
func (c *checker) goTestArgs(x *call, args []word) {
	var test []word
	for _, a := range args {
		if !a.known || !strings.HasPrefix(strings.TrimLeft(a.text, "-"), "test.") || !strings.HasPrefix(a.text, "-") {
			c.denyf("%s passes %s to the test binary, which may write files; leave it off", quote(x.part()), quote(a.src))
			return
		}
		test = append(test, a)
	}
	c.goFlags(&call{name: x.name, args: test, all: x.all}, test, nil, false)
}

// goMod allows the go mod commands that only read, and go mod tidy for the
// fixer.
func (c *checker) goMod(x *call, args []word) {
	if len(args) == 0 || !args[0].known {
		c.denyf("%s is not a go mod command whetstone allows; go mod graph, why, verify and tidy -diff are", quote(x.part()))
		return
	}
	g := &call{name: "go mod " + args[0].text, args: args[1:], all: x.all}
	switch args[0].text {
	case "graph", "why", "verify":
		c.goFlags(g, args[1:], map[string]goFlag{"m": goBool, "vendor": goBool, "go": goValue, "x": goBool}, false)
	case "tidy":
		flags := map[string]goFlag{"v": goBool, "e": goBool, "x": goBool, "diff": goBool, "go": goValue, "compat": goValue}
		c.goFlags(g, args[1:], flags, false)
		diff := false
		for _, a := range args[1:] {
			diff = diff || a.known && (a.text == "-diff" || a.text == "--diff")
		}
		if !diff {
			c.writes(word{text: "go.mod", src: "go.mod", known: true}, quote(x.part())+" rewrites go.mod and go.sum, so it")
		}
	default:
		c.denyf("%s changes the module or downloads; %s", quote(g.name), c.instead())
	}
}

// goTool allows go tool cover -func, which prints a coverage profile's
// totals; other tools may write files or open a browser.
func (c *checker) goTool(x *call, args []word) {
	if len(args) >= 2 && allKnown(args) && args[0].text == "cover" {
		rest := texts(args[1:])
		flag := strings.TrimPrefix(rest[0], "-")
		if len(rest) == 1 && strings.HasPrefix(flag, "func=") || len(rest) == 2 && flag == "func" {
			return
		}
	}
	c.denyf("%s is not a go tool agents may run (go tool cover -func=FILE is); %s", quote(x.part()), c.instead())
}

// goFmt judges go fmt, which rewrites the packages it is given.
func (c *checker) goFmt(x *call, args []word) {
	var pkgs []word
	for i, a := range args {
		switch {
		case !a.known:
			c.dynamicOption(x, &args[i])
			return
		case a.text == "-n" || a.text == "-x" || strings.HasPrefix(a.text, "-mod="):
		case strings.HasPrefix(a.text, "-"):
			c.denyf("%s is not a go fmt flag whetstone knows; leave it off", x.with(a.text))
			return
		default:
			pkgs = append(pkgs, a)
		}
	}
	if len(pkgs) == 0 {
		pkgs = []word{{text: ".", src: ".", known: true}}
	}
	for _, p := range pkgs {
		dir := strings.TrimSuffix(strings.TrimSuffix(p.text, "..."), "/")
		if !strings.HasPrefix(dir, ".") && !filepath.IsAbs(dir) {
			c.denyf("%s names the package %s by import path; name it by its directory, such as ./...", quote(x.part()), quote(p.src))
			return
		}
		c.writesTree(word{text: dir, src: p.src, known: true}, quote(x.part()))
	}
}

// writesTree judges a command that rewrites the files of a directory, which
// may be the project root itself.
func (c *checker) writesTree(w word, what string) {
	if w.known {
		if paths, ok := c.paths(w.text); ok && c.p.Mode == Fixer {
			all := true
			for _, p := range paths {
				all = all && c.real(p) == c.root
			}
			if all {
				return
			}
		}
	}
	c.writes(w, what)
}

// gofmtCmd judges gofmt and goimports: -w rewrites the files they are given.
func gofmtCmd(c *checker, x *call) {
	var operands []word
	write := false
	for i := 0; i < len(x.args); i++ {
		a := x.args[i]
		if !a.known {
			if a.option() {
				c.dynamicOption(x, &x.args[i])
				return
			}
			operands = append(operands, a)
			continue
		}
		name, _, attached := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a.text, "-"), "-"), "=")
		switch {
		case !strings.HasPrefix(a.text, "-") || a.text == "-":
			operands = append(operands, a)
		case name == "w":
			write = true
		case contains(name, "l", "d", "s", "e", "v", "format-only"):
		case contains(name, "r", "srcdir", "local", "lang"):
			if !attached {
				i++
			}
		case contains(name, "cpuprofile", "memprofile", "trace"):
			_, value, _ := strings.Cut(a.text, "=")
			v := word{text: value, src: a.src, known: true}
			if !attached && i+1 < len(x.args) {
				i++
				v = x.args[i]
			}
			c.writes(v, x.with("-"+name))
		default:
			c.denyf("%s is not a %s flag whetstone knows; leave it off", x.with(a.text), x.name)
			return
		}
	}
	if !write {
		return
	}
	if len(operands) == 0 {
		return // rewrites nothing: reads standard input
	}
	for _, o := range operands {
		if !o.known {
			c.denyf("%s rewrites %s, a path only known when it runs; name the files literally", x.with("-w"), quote(o.src))
			return
		}
		c.writesTree(o, x.with("-w"))
	}
}
