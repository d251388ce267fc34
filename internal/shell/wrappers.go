package shell

import (
	"strings"
)

// This file judges the programs that run another command: env, nice,
// timeout, xargs, the shells, eval and trap. Each is judged by what it runs.

// wrapped judges the command a wrapper runs.
func (c *checker) wrapped(args []word) {
	if len(args) == 0 || c.reason != "" {
		return
	}
	if c.depth >= maxDepth {
		c.denyf("%s nests wrappers more than %d deep; run the inner command directly", quote(args[0].src), maxDepth)
		return
	}
	c.depth++
	c.run(args)
	c.depth--
}

// wrapper judges a program that runs the command after its options.
func wrapper(s spec) func(*checker, *call) {
	return func(c *checker, x *call) {
		_, rest, bad := parse(x.args, s)
		if bad != nil {
			c.dynamicOption(x, bad)
			return
		}
		c.wrapped(rest)
	}
}

// refuseOpts refuses the options of a wrapper that act on other processes.
func refuseOpts(c *checker, x *call, opts []opt, names ...string) bool {
	for _, o := range opts {
		if o.is(names...) {
			c.denyf("%s acts on other processes; %s", x.with(o.name), c.instead())
			return true
		}
	}
	return false
}

func niceCmd(c *checker, x *call) {
	args := x.args
	if len(args) > 0 && args[0].known && len(args[0].text) > 1 && args[0].text[0] == '-' && isNumber(args[0].text) {
		args = args[1:] // nice -10 cmd
	}
	wrapper(spec{short: "n", long: []string{"adjustment"}, posix: true})(c, &call{name: x.name, args: args, all: x.all})
}

func timeoutCmd(c *checker, x *call) {
	_, rest, bad := parse(x.args, spec{short: "sk", long: []string{"signal", "kill-after"}, posix: true})
	if bad != nil {
		c.dynamicOption(x, bad)
		return
	}
	if len(rest) > 0 {
		c.wrapped(rest[1:]) // after the duration
	}
}

func ioniceCmd(c *checker, x *call) {
	opts, rest, bad := parse(x.args, spec{short: "cnpPu", long: []string{"class", "classdata", "pid", "pgid", "uid"}, posix: true})
	if bad != nil {
		c.dynamicOption(x, bad)
		return
	}
	if refuseOpts(c, x, opts, "-p", "-P", "-u", "--pid", "--pgid", "--uid") {
		return
	}
	c.wrapped(rest)
}

func chrtCmd(c *checker, x *call) {
	schedWrapper(c, x, spec{short: "TPD", long: []string{"sched-runtime", "sched-period", "sched-deadline"}, posix: true})
}

func tasksetCmd(c *checker, x *call) { schedWrapper(c, x, spec{posix: true}) }

// schedWrapper judges chrt and taskset: a first operand (the priority or
// the mask), then the command they run; -p changes a running process.
func schedWrapper(c *checker, x *call, sp spec) {
	opts, rest, bad := parse(x.args, sp)
	if bad != nil {
		c.dynamicOption(x, bad)
		return
	}
	if refuseOpts(c, x, opts, "-p", "--pid") {
		return
	}
	if len(rest) > 0 {
		c.wrapped(rest[1:])
	}
}

// flockCmd judges flock: it creates its lock file, then runs a command.
func flockCmd(c *checker, x *call) {
	opts, rest, bad := parse(x.args, spec{short: "wEc", long: []string{"timeout", "conflict-exit-code", "command"}, posix: true})
	if bad != nil {
		c.dynamicOption(x, bad)
		return
	}
	if len(rest) == 0 {
		return
	}
	if lock := rest[0]; !lock.known || !isNumber(lock.text) {
		c.writes(lock, quote("flock "+lock.src)+" creates its lock file, which")
	}
	if o, ok := find(opts, "-c", "--command"); ok {
		c.inlineWord(x, o.value)
		return
	}
	c.wrapped(rest[1:])
}

// timeCmd judges GNU time, whose -o writes a file.
func timeCmd(c *checker, x *call) {
	opts, rest, bad := parse(x.args, spec{short: "of", long: []string{"output", "format"}, posix: true})
	if bad != nil {
		c.dynamicOption(x, bad)
		return
	}
	if o, ok := find(opts, "-o", "--output"); ok {
		c.writes(o.value, x.with(o.name))
	}
	c.wrapped(rest)
}

func execCmd(c *checker, x *call) {
	wrapper(spec{short: "a", posix: true})(c, x)
}

func builtinCmd(c *checker, x *call) {
	c.wrapped(x.args)
}

func commandCmd(c *checker, x *call) {
	opts, rest, bad := parse(x.args, spec{posix: true})
	if bad != nil {
		c.dynamicOption(x, bad)
		return
	}
	if _, ok := find(opts, "-v", "-V"); ok {
		return // only looks the command up
	}
	c.wrapped(rest)
}

// envCmd judges env: the variables it sets and the command it runs.
func envCmd(c *checker, x *call) {
	args := x.args
	saved := c.cwd
	defer func() { c.cwd = saved }()
	for len(args) > 0 {
		w := args[0]
		if !w.known {
			c.denyf("%s passes %s to env, which could set a variable or option; write it literally", quote(x.part()), quote(w.src))
			return
		}
		t := w.text
		switch {
		case t == "--":
			args = args[1:]
			goto vars
		case t == "-S" || strings.HasPrefix(t, "--split-string") || clusterHas(t, 'S'):
			c.denyf("%s splits a string into a command; write the command directly", x.with("-S"))
			return
		case t == "-C" || t == "--chdir" || strings.HasPrefix(t, "--chdir=") || strings.HasPrefix(t, "-C"):
			dir := strings.TrimPrefix(strings.TrimPrefix(t, "--chdir="), "-C")
			if t == "-C" || t == "--chdir" {
				if len(args) < 2 {
					return
				}
				args = args[1:]
				dir = args[0].text
				if !args[0].known {
					dir = ""
				}
			}
			c.chdir(dir, false)
			args = args[1:]
		case t == "-u" || t == "--unset":
			args = args[min(2, len(args)):]
		case t == "-" || strings.HasPrefix(t, "-"):
			args = args[1:]
		default:
			goto vars
		}
	}
vars:
	for len(args) > 0 && args[0].known && strings.Contains(args[0].text, "=") {
		name, _, _ := strings.Cut(args[0].text, "=")
		if sensitiveVars().MatchString(name) && name != "CGO_ENABLED" {
			c.denyf("%s sets %s, which changes what programs run or where they write; leave it as it is", quote(x.part()), name)
			return
		}
		args = args[1:]
	}
	if len(args) > 0 && !args[0].known {
		c.denyf("cannot tell which program %s runs; name the program literally", quote(args[0].src))
		return
	}
	c.wrapped(args)
}

// xargsCmd judges the command xargs runs, with arguments only known when it
// runs.
func xargsCmd(c *checker, x *call) {
	opts, rest, bad := parse(x.args, spec{short: "aEdILnPs", optional: "eil", long: []string{"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"}, posix: true})
	if bad != nil {
		c.dynamicOption(x, bad)
		return
	}
	repl := ""
	for _, o := range opts {
		switch {
		case o.is("-I"):
			repl = o.value.text
		case o.is("-i", "--replace"):
			repl = "{}"
			if o.has {
				repl = o.value.text
			}
		}
	}
	if len(rest) == 0 {
		rest = []word{{text: "echo", src: "echo", known: true, segs: []seg{{text: "echo"}}}}
	}
	cmd := append([]word(nil), rest...)
	input := c.stdin // the lines xargs reads, when they list the project's files
	if _, ok := find(opts, "-a", "--arg-file"); ok {
		input = nil
	}
	if repl == "" {
		in := unknownWord("(the input to xargs)")
		in.from = input
		cmd = append(cmd, in)
	} else {
		for i := range cmd {
			if i > 0 && strings.Contains(cmd[i].text, repl) {
				whole := cmd[i].known && cmd[i].text == repl
				cmd[i] = unknownWord(cmd[i].src)
				if whole {
					cmd[i].from = input
				}
			}
		}
	}
	c.wrapped(cmd)
}

// shellCmd judges bash, sh and dash: the script given with -c is judged; a
// script file or one read from standard input cannot be.
func shellCmd(c *checker, x *call) {
	inline := false
	for i := 0; i < len(x.args); i++ {
		w := x.args[i]
		if !w.known {
			if inline {
				c.denyf("%s runs a script only known when it runs; write the commands directly", quote(x.part()))
			} else if w.option() {
				c.dynamicOption(x, &x.args[i])
			} else {
				c.denyf("%s runs a script whetstone cannot read; run its commands directly", quote(x.part()))
			}
			return
		}
		t := w.text
		switch {
		case t == "--version" || t == "--help":
			return
		case t == "--":
			if i+1 < len(x.args) && inline {
				c.inlineWord(x, x.args[i+1])
				return
			}
			i = len(x.args)
		case t == "-o" || t == "+o" || t == "-O" || t == "+O":
			i++
		case t == "--rcfile" || t == "--init-file" || t == "--login" || t == "--debugger":
			c.denyf("%s runs startup files whetstone cannot read; use bash -c", x.with(t))
			return
		case strings.HasPrefix(t, "--"):
		case len(t) > 1 && (t[0] == '-' || t[0] == '+'):
			for _, l := range "ilsk" {
				if strings.ContainsRune(t[1:], l) && t[0] == '-' {
					c.denyf("%s reads startup files, standard input or keyword arguments whetstone cannot judge; use %s -c", x.with(t), x.name)
					return
				}
			}
			inline = inline || t[0] == '-' && strings.Contains(t, "c")
		default:
			if inline {
				c.inlineWord(x, w)
				return
			}
			c.denyf("%s runs the script %s, which whetstone cannot read; run its commands directly", quote(x.part()), quote(w.src))
			return
		}
	}
	if !inline {
		c.denyf("%s reads its script from standard input, which whetstone cannot judge; use %s -c", quote(x.part()), x.name)
	}
}

// inlineWord judges the script in w, given to a shell, eval or trap.
func (c *checker) inlineWord(x *call, w word) {
	if !w.known {
		c.denyf("%s runs the script %s, only known when it runs; write the commands directly", quote(x.part()), quote(w.src))
		return
	}
	c.inline(w.text)
}

func evalCmd(c *checker, x *call) {
	if !allKnown(x.args) {
		c.denyf("%s runs a script only known when it runs; write the commands directly", quote(x.part()))
		return
	}
	c.inline(strings.Join(texts(x.args), " "))
}

func trapCmd(c *checker, x *call) {
	args := x.args
	if len(args) > 0 && args[0].known && args[0].text == "--" {
		args = args[1:]
	}
	if len(args) < 2 || args[0].known && (args[0].text == "-" || args[0].text == "" || strings.HasPrefix(args[0].text, "-")) {
		return
	}
	defer c.keepCwd()() // the action runs later, wherever the shell is then
	c.cwd = nil
	c.inlineWord(x, args[0])
}
