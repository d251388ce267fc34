package shell

import (
	"path/filepath"
	"strings"
)

// programs is the table of what agents may run, each with the function that
// judges its arguments. A program not in it is refused.
var programs map[string]func(*checker, *call)

func init() {
	programs = map[string]func(*checker, *call){
		// Shell builtins.
		":": reads, "true": reads, "false": reads, "echo": reads, "pwd": reads, "type": reads,
		"shopt": reads, "shift": reads, "exit": reads, "return": reads, "break": reads,
		"continue": reads, "sleep": reads, "times": reads, "jobs": reads, "umask": reads,
		"ulimit": reads, "caller": reads, "dirs": reads, "disown": reads,
		"printf": printfCmd, "test": testCmd, "[": testCmd, "hash": hashCmd, "read": readCmd,
		"mapfile": mapfileCmd, "readarray": mapfileCmd, "getopts": getoptsCmd, "set": setCmd,
		"unset": unsetCmd, "wait": waitCmd, "cd": cdCmd, "pushd": cdCmd, "popd": popdCmd,
		"eval": evalCmd, "exec": execCmd, "command": commandCmd, "builtin": builtinCmd, "trap": trapCmd,

		// Programs that run another: judged by what they run.
		"env": envCmd, "nice": niceCmd, "nohup": wrapper(spec{posix: true}), "timeout": timeoutCmd,
		"stdbuf":  wrapper(spec{short: "ioe", long: []string{"input", "output", "error"}, posix: true}),
		"setsid":  wrapper(spec{posix: true}),
		"ionice":  ioniceCmd, "chrt": chrtCmd, "taskset": tasksetCmd, "flock": flockCmd,
		"time":    timeCmd, "xargs": xargsCmd, "sh": shellCmd, "bash": shellCmd, "dash": shellCmd,

		// Programs that only read.
		"cat": reads, "tac": reads, "head": reads, "tail": reads, "wc": reads, "nl": reads,
		"rev": reads, "cut": reads, "tr": reads, "fold": reads, "fmt": reads, "pr": reads,
		"column": reads, "paste": reads, "join": reads, "comm": reads, "expand": reads,
		"unexpand": reads, "ls": reads, "stat": reads, "du": reads, "df": reads,
		"basename": reads, "dirname": reads, "realpath": reads, "readlink": reads,
		"which": reads, "printenv": reads, "id": reads, "whoami": reads, "groups": reads,
		"uname": reads, "uptime": reads, "nproc": reads, "getconf": reads, "locale": reads,
		"tty": reads, "seq": reads, "yes": reads, "expr": reads, "od": reads, "hexdump": reads,
		"base64": reads, "base32": reads, "md5sum": reads, "sha1sum": reads, "sha224sum": reads,
		"sha256sum": reads, "sha384sum": reads, "sha512sum": reads, "b2sum": reads,
		"cksum": reads, "sum": reads, "cmp": reads, "strings": reads, "numfmt": reads,
		"tsort": reads, "factor": reads, "jq": reads, "zcat": reads, "bzcat": reads, "xzcat": reads,
		"diff": treeReader(spec{short: "CDFIUWSxX", long: []string{"context", "unified", "ifdef", "show-function-line", "label", "width", "tabsize", "exclude", "exclude-from", "starting-file", "ignore-matching-lines", "horizon-lines", "line-format", "old-line-format", "new-line-format", "unchanged-line-format", "old-group-format", "new-group-format", "unchanged-group-format", "changed-group-format", "from-file", "to-file", "color", "palette"}}),
		"colordiff": treeReader(spec{short: "CDFIUWSxX"}),
		"grep":      grepCmd, "egrep": grepCmd, "fgrep": grepCmd, "rg": rgCmd,
		"file":      options(spec{short: "mefFP"}, map[string]string{"-C": "compiles a magic file into the current directory", "--compile": "compiles a magic file into the current directory"}),
		"tree":      options(spec{short: "LPIoHT", long: []string{"filelimit", "timefmt", "sort", "charset", "fromfile"}}, nil, "-o"),
		"sort":      options(spec{short: "kotST", long: []string{"key", "output", "field-separator", "buffer-size", "temporary-directory", "compress-program", "files0-from", "random-source", "batch-size", "parallel", "sort"}}, map[string]string{"--compress-program": "runs a program"}, "-o", "--output", "-T", "--temporary-directory"),
		"shuf":      options(spec{short: "ino", long: []string{"input-range", "head-count", "output", "random-source"}}, nil, "-o", "--output"),
		"iconv":     options(spec{short: "fto", long: []string{"from-code", "to-code", "output"}}, nil, "-o", "--output"),
		"yq":        options(spec{short: "Iops", long: []string{"indent", "output-format", "input-format", "expression", "from-file", "front-matter", "split-exp"}}, map[string]string{"-i": "edits files in place", "--inplace": "edits files in place", "-s": "writes a file per document", "--split-exp": "writes a file per document"}),
		"date":      dateCmd, "hostname": hostnameCmd, "uniq": uniqCmd, "xxd": xxdCmd,
		"find":      findCmd, "tar": tarCmd, "unzip": unzipCmd,
		"gzip":      compressCmd, "gunzip": compressCmd, "bzip2": compressCmd, "bunzip2": compressCmd,
		"xz":        compressCmd, "unxz": compressCmd,
		"awk":       awkCmd, "mawk": awkCmd, "gawk": awkCmd, "nawk": awkCmd, "sed": sedCmd, "gsed": sedCmd,
		"git":       gitCmd, "go": goCmd, "gofmt": gofmtCmd, "goimports": gofmtCmd, "whetstone": whetstoneCmd,

		// Programs that change files: only where the agent may write.
		"tee": teeCmd, "cp": copyCmd, "mv": copyCmd, "rm": removeCmd, "rmdir": removeCmd,
		"mkdir": mkdirCmd, "touch": touchCmd, "chmod": chmodCmd, "ln": lnCmd, "mktemp": mktempCmd,
	}
}

// refused are programs often reached for that whetstone never allows, with
// why.
var refused = map[string]string{
	"sudo": "runs commands as another user", "doas": "runs commands as another user",
	"su": "runs commands as another user", "pkexec": "runs commands as another user",
	"runuser": "runs commands as another user", "unshare": "runs commands in new namespaces",
	"nsenter": "runs commands in other namespaces", "chroot": "runs commands in another root",
	"strace": "traces programs and can write its log anywhere", "ltrace": "traces programs and can write its log anywhere",
	"gdb": "runs and changes programs", "watch": "runs a command repeatedly",
	"parallel": "runs commands whetstone cannot judge", "source": "runs a script whetstone cannot read",
	".": "runs a script whetstone cannot read", "alias": "defines commands whetstone cannot judge",
	"enable": "loads builtins from shared objects", "kill": "signals other processes",
	"zsh": "runs zsh code, and whetstone judges bash only", "ksh": "runs ksh code, and whetstone judges bash only",
	"mksh": "runs ksh code, and whetstone judges bash only", "fish": "runs fish code, and whetstone judges bash only",
	"csh": "runs csh code, and whetstone judges bash only", "tcsh": "runs csh code, and whetstone judges bash only",
	"python": "runs code whetstone cannot judge", "python3": "runs code whetstone cannot judge",
	"node": "runs code whetstone cannot judge", "perl": "runs code whetstone cannot judge",
	"ruby": "runs code whetstone cannot judge", "php": "runs code whetstone cannot judge",
	"less": "is interactive", "more": "is interactive", "man": "is interactive", "vi": "edits files",
	"vim": "edits files", "nano": "edits files", "emacs": "edits files", "ed": "edits files",
	"make": "runs the project's build rules", "curl": "reaches the network and can write files",
	"wget": "reaches the network and writes files", "dd": "writes files", "truncate": "truncates files",
	"install": "copies files", "rsync": "copies files", "patch": "edits files", "shred": "destroys files",
	"chown": "changes file owners", "chgrp": "changes file groups", "unlink": "deletes files",
	"npm": "runs the project's scripts", "npx": "runs packages", "pip": "installs packages",
}

// systemDirs hold the programs a command may name by path.
var systemDirs = map[string]bool{
	"/bin": true, "/usr/bin": true, "/usr/local/bin": true, "/sbin": true, "/usr/sbin": true,
	"/usr/local/sbin": true, "/opt/homebrew/bin": true, "/usr/local/go/bin": true, "/usr/lib/go/bin": true,
}

// run judges the command args, its program first.
func (c *checker) run(args []word) {
	if c.reason != "" || len(args) == 0 {
		return
	}
	w := args[0]
	if !w.known {
		if w.param == "CLAUDE_PLUGIN_ROOT" && strings.HasSuffix(w.text, "/scripts/whetstone") {
			whetstoneCmd(c, &call{name: "whetstone", args: args[1:], all: args})
			return
		}
		c.denyf("cannot tell which program %s runs; name the program literally", quote(w.src))
		return
	}
	if changesDir, ok := c.funcs[w.text]; ok {
		if changesDir {
			c.cwd = nil
		}
		return // its body was judged where it was declared
	}
	name := c.program(w.text)
	if c.reason != "" {
		return
	}
	x := &call{name: name, args: args[1:], all: args}
	if judge, ok := programs[name]; ok {
		judge(c, x)
		return
	}
	if c.verified(x) {
		for _, a := range x.args {
			if !a.known {
				c.denyf("%s runs the verification command %s with %s, only known when it runs; write its arguments literally", quote(x.part()), quote(name), quote(a.src))
				return
			}
		}
		return
	}
	c.unknown(x)
}

// program returns the name the table knows a command word by. A program
// named by path must live in a system directory, except whetstone's own.
func (c *checker) program(name string) string {
	if !strings.Contains(name, "/") {
		return name
	}
	if strings.HasSuffix(name, "/scripts/whetstone") || strings.HasSuffix(name, "/bin/whetstone") {
		if abs, ok := c.paths(name); ok && !inside(c.real(abs[0]), c.temp) {
			return "whetstone"
		}
	}
	base := filepath.Base(name)
	if systemDirs[filepath.Dir(name)] {
		return base
	}
	c.denyf("%s runs a program from %s, which whetstone cannot judge; run a program from the system's path", quote(name), filepath.Dir(name))
	return base
}

// verified reports whether x starts with one of the verification commands.
func (c *checker) verified(x *call) bool {
	for _, v := range c.verify {
		if len(v) == 0 || len(v) > len(x.all) || v[0] != x.name {
			continue
		}
		match := true
		for i := 1; i < len(v) && match; i++ {
			match = x.all[i].known && x.all[i].text == v[i]
		}
		if match {
			return true
		}
	}
	return false
}

// unknown refuses a program that is not in the table.
func (c *checker) unknown(x *call) {
	if what, ok := refused[x.name]; ok {
		c.denyf("%s %s; %s", quote(x.all[0].text), what, c.instead())
		return
	}
	var verify []string
	for _, v := range c.verify {
		verify = append(verify, strings.Join(v, " "))
	}
	list := strings.Join(verify, ", ")
	if list == "" {
		list = "none"
	}
	name := x.all[0].text
	if strings.Contains(x.name, " ") {
		name = x.name // go build
	}
	if c.p.Mode == Fixer {
		c.denyf("%s is not a command the fixer may run (whetstone allows read-only commands, the project's verification commands: %s, and cp, mv, rm, mkdir, touch, sed -i or gofmt -w inside the project); make the change with the Edit tool instead", quote(name), list)
		return
	}
	c.denyf("%s is not a command read-only agents may run (whetstone allows read-only commands and the project's verification commands: %s); describe what you would check in your report instead", quote(name), list)
}

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

// refuse returns the options of a wrapper that act on other processes.
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
	opts, rest, bad := parse(x.args, spec{short: "TPD", long: []string{"sched-runtime", "sched-period", "sched-deadline"}, posix: true})
	if bad != nil {
		c.dynamicOption(x, bad)
		return
	}
	if refuseOpts(c, x, opts, "-p", "--pid") {
		return
	}
	if len(rest) > 0 {
		c.wrapped(rest[1:]) // after the priority
	}
}

func tasksetCmd(c *checker, x *call) {
	opts, rest, bad := parse(x.args, spec{posix: true})
	if bad != nil {
		c.dynamicOption(x, bad)
		return
	}
	if refuseOpts(c, x, opts, "-p", "--pid") {
		return
	}
	if len(rest) > 0 {
		c.wrapped(rest[1:]) // after the mask
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
		if sensitiveVars.MatchString(name) && name != "CGO_ENABLED" {
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
	if repl == "" {
		cmd = append(cmd, unknownWord("(input)"))
	} else {
		for i := range cmd {
			if i > 0 && strings.Contains(cmd[i].text, repl) {
				cmd[i] = unknownWord(cmd[i].src)
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
			if w.option() {
				c.dynamicOption(x, &x.args[i])
				return
			}
			if inline {
				c.denyf("%s runs a script only known when it runs; write the commands directly", quote(x.part()))
				return
			}
			break
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
	c.inlineWord(x, args[0])
}

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
// cannot tell. The old directory stays possible, since cd may fail.
func (c *checker) chdir(dir string, physical bool) {
	c.cdRan = true
	var next []string
	if dir != "" {
		if paths, ok := c.paths(dir); ok {
			for _, p := range paths {
				p = filepath.Clean(p)
				if physical {
					p = c.real(p)
				}
				next = append(next, p)
			}
		}
	}
	c.lastCd = next
	c.cwd = union(c.cwd, next)
	if next == nil {
		c.cwd = nil
	}
}

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

// whetstoneCmd allows whetstone's read-only commands.
func whetstoneCmd(c *checker, x *call) {
	if len(x.args) > 0 && x.args[0].known {
		switch x.args[0].text {
		case "status", "report", "validate", "version", "help", "--help", "-h", "--version":
			return
		}
	}
	c.denyf("%s is not a whetstone command agents may run (status, report, validate, version and help are); %s", quote(x.part()), c.instead())
}

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

func contains(s string, list ...string) bool {
	for _, l := range list {
		if s == l {
			return true
		}
	}
	return false
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

func set(items ...string) map[string]bool {
	m := make(map[string]bool, len(items))
	for _, s := range items {
		m[s] = true
	}
	return m
}

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

// teeCmd judges tee by the files it writes.
func teeCmd(c *checker, x *call) {
	_, operands, bad := parse(x.args, spec{optional: ""})
	if bad != nil {
		c.dynamicOption(x, bad)
		return
	}
	for _, w := range operands {
		if w.known && w.text == "-" {
			continue
		}
		c.writes(w, quote("tee "+w.src))
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
			from = filepath.Join(dir, from)
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

// mktempCmd judges mktemp by where it creates its file.
func mktempCmd(c *checker, x *call) {
	opts, operands, bad := parse(x.args, spec{short: "p", long: []string{"suffix"}})
	if !c.literalOperands(x, bad, operands) {
		return
	}
	dir, inTmp := "", false
	for _, o := range opts {
		switch {
		case o.is("-t"):
			inTmp = true
		case o.is("-p", "--tmpdir") && o.has:
			dir = o.value.text
		case o.is("--tmpdir"):
			inTmp = true
		}
	}
	if len(operands) == 0 {
		return // in $TMPDIR
	}
	target := operands[0].text
	switch {
	case dir != "":
		target = filepath.Join(dir, target)
	case inTmp && !strings.Contains(target, "/"):
		return
	}
	c.writes(word{text: target, src: operands[0].src, known: true}, quote(x.part()))
}
