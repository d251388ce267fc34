package shell

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// programs is the table of what agents may run, each with the function that
// judges its arguments. A program not in it is refused. It is built on the
// first Check, not at start-up: every hook process links this package, and
// most never check a command.
var programs map[string]func(*checker, *call)

var buildTables = sync.OnceFunc(func() {
	programs = map[string]func(*checker, *call){
		// Shell builtins.
		":": reads, "true": reads, "false": reads, "echo": reads, "pwd": reads, "type": reads,
		"shopt": shoptCmd, "shift": reads, "exit": reads, "return": reads, "break": reads,
		"continue": reads, "sleep": reads, "times": reads, "jobs": reads, "umask": reads,
		"ulimit": reads, "caller": reads, "dirs": reads, "disown": reads,
		"printf": printfCmd, "test": testCmd, "[": testCmd, "hash": hashCmd, "read": readCmd,
		"mapfile": mapfileCmd, "readarray": mapfileCmd, "getopts": getoptsCmd, "set": setCmd,
		"unset": unsetCmd, "wait": waitCmd, "cd": cdCmd, "pushd": cdCmd, "popd": popdCmd,
		"eval": evalCmd, "exec": execCmd, "command": commandCmd, "builtin": builtinCmd, "trap": trapCmd,

		// Programs that run another: judged by what they run.
		"env": envCmd, "nice": niceCmd, "nohup": wrapper(spec{posix: true}), "timeout": timeoutCmd,
		"stdbuf": wrapper(spec{short: "ioe", long: []string{"input", "output", "error"}, posix: true}),
		"setsid": wrapper(spec{posix: true}),
		"ionice": ioniceCmd, "chrt": chrtCmd, "taskset": tasksetCmd, "flock": flockCmd,
		"time": timeCmd, "xargs": xargsCmd, "sh": shellCmd, "bash": shellCmd, "dash": shellCmd,

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
		"diff":      treeReader(spec{short: "CDFIUWSxX", long: []string{"context", "unified", "ifdef", "show-function-line", "label", "width", "tabsize", "exclude", "exclude-from", "starting-file", "ignore-matching-lines", "horizon-lines", "line-format", "old-line-format", "new-line-format", "unchanged-line-format", "old-group-format", "new-group-format", "unchanged-group-format", "changed-group-format", "from-file", "to-file", "color", "palette"}}),
		"colordiff": treeReader(spec{short: "CDFIUWSxX"}),
		"grep":      grepCmd, "egrep": grepCmd, "fgrep": grepCmd, "rg": rgCmd,
		"file":  options(spec{short: "mefFP"}, map[string]string{"-C": "compiles a magic file into the current directory", "--compile": "compiles a magic file into the current directory"}),
		"tree":  options(spec{short: "LPIoHT", long: []string{"filelimit", "timefmt", "sort", "charset", "fromfile"}}, nil, "-o"),
		"sort":  options(spec{short: "kotST", long: []string{"key", "output", "field-separator", "buffer-size", "temporary-directory", "compress-program", "files0-from", "random-source", "batch-size", "parallel", "sort"}}, map[string]string{"--compress-program": "runs a program"}, "-o", "--output", "-T", "--temporary-directory"),
		"shuf":  options(spec{short: "ino", long: []string{"input-range", "head-count", "output", "random-source"}}, nil, "-o", "--output"),
		"iconv": options(spec{short: "fto", long: []string{"from-code", "to-code", "output"}}, nil, "-o", "--output"),
		"yq":    options(spec{short: "Iops", long: []string{"indent", "output-format", "input-format", "expression", "from-file", "front-matter", "split-exp"}}, map[string]string{"-i": "edits files in place", "--inplace": "edits files in place", "-s": "writes a file per document", "--split-exp": "writes a file per document"}),
		"date":  dateCmd, "hostname": hostnameCmd, "uniq": uniqCmd, "xxd": xxdCmd,
		"find": findCmd, "tar": tarCmd, "unzip": unzipCmd,
		"gzip": compressCmd, "gunzip": compressCmd, "bzip2": compressCmd, "bunzip2": compressCmd,
		"xz": compressCmd, "unxz": compressCmd,
		"awk": awkCmd, "mawk": awkCmd, "gawk": awkCmd, "nawk": awkCmd, "sed": sedCmd, "gsed": sedCmd,
		"git": gitCmd, "go": goCmd, "gofmt": gofmtCmd, "goimports": gofmtCmd, "whetstone": whetstoneCmd,

		// Programs that change files: only where the agent may write.
		"tee": teeCmd, "cp": copyCmd, "mv": copyCmd, "rm": removeCmd, "rmdir": removeCmd,
		"mkdir": mkdirCmd, "touch": touchCmd, "chmod": chmodCmd, "ln": lnCmd, "mktemp": mktempCmd,
	}
})

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
	if changesDir, ok := c.funcs[w.text]; ok && !strings.Contains(w.text, "/") {
		if changesDir {
			c.cwd = nil
		}
		return // its body was judged where it was declared
	}
	if !strings.Contains(w.text, "/") {
		c.lookPath(w.text)
	}
	if c.exact(args) {
		return
	}
	name := c.program(w.text)
	if c.reason != "" {
		return
	}
	x := &call{name: name, args: args[1:], all: args}
	if judge, ok := programs[name]; ok {
		c.stdout = c.produces(x)
		judge(c, x)
		c.judgeReads(x)
		c.noteWalk(x)
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

// exact reports whether args are one of the policy's exact commands,
// word for word, run from the project root; it refuses them run from
// anywhere else, where another package.json or Makefile would decide what
// runs.
func (c *checker) exact(args []word) bool {
	for _, e := range c.p.Exact {
		if len(e) != len(args) {
			continue
		}
		match := true
		for i := range e {
			match = match && args[i].known && args[i].text == e[i]
		}
		if !match {
			continue
		}
		if len(c.cwd) != 1 || c.root == "" || c.real(c.cwd[0]) != c.real(c.root) {
			c.denyf("%s runs the project's verification command from a directory other than the project root (%s); cd to the root first", quote(strings.Join(e, " ")), c.root)
		}
		return true
	}
	return false
}

// verifiedCommand reports whether a verification command runs the same
// program and subcommand as x, whatever its other words: the fixer may build
// and test with outputs of its own.
func (c *checker) verifiedCommand(x *call) bool {
	for _, v := range c.verify {
		if len(v) >= 2 && len(x.all) >= 2 && v[0] == x.name && x.all[1].known && x.all[1].text == v[1] {
			return true
		}
	}
	return false
}

// unknown refuses a program that is not in the table.
func (c *checker) unknown(x *call) {
	var same []string // the exact commands of this program
	for _, e := range c.p.Exact {
		if len(e) > 0 && (e[0] == x.name || e[0] == x.all[0].text) {
			same = append(same, strings.Join(e, " "))
		}
	}
	if len(same) > 0 {
		c.denyf("%s is not one of the project's verification commands, which run exactly as written, with no other words, from the project root: %s; %s", quote(x.part()), strings.Join(same, ", "), c.instead())
		return
	}
	var verify []string
	for _, v := range slices.Concat(c.verify, c.p.Exact) {
		verify = append(verify, strings.Join(v, " "))
	}
	list := strings.Join(verify, ", ")
	if what, ok := refused[x.name]; ok {
		if list != "" {
			// A model that reached for the interpreter wants to run
			// something: name what it may run, or it gives up verifying.
			c.denyf("%s %s; to build or test, run one of the project's verification commands as written: %s; otherwise %s", quote(x.all[0].text), what, list, c.instead())
			return
		}
		c.denyf("%s %s; %s", quote(x.all[0].text), what, c.instead())
		return
	}
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

func set(items ...string) map[string]bool {
	m := make(map[string]bool, len(items))
	for _, s := range items {
		m[s] = true
	}
	return m
}

func contains(s string, list ...string) bool {
	for _, l := range list {
		if s == l {
			return true
		}
	}
	return false
}
