package shell

import (
	"fmt"
	"slices"
	"strings"
)

// fileCommands are the programs whose every use writes, with what they do.
var fileCommands = map[string]string{
	"rm": "deletes files", "rmdir": "deletes directories", "unlink": "deletes files",
	"shred": "destroys files", "truncate": "truncates files",
	"mv": "moves files", "cp": "copies files", "install": "copies files", "rsync": "copies files",
	"dd": "writes files", "patch": "edits files", "touch": "creates files",
	"mkdir": "creates directories", "ln": "creates links",
	"mkfifo": "creates special files", "mknod": "creates special files",
	"chmod": "changes file modes", "chown": "changes file owners", "chgrp": "changes file groups",
	"sponge": "writes files", "split": "writes files", "csplit": "writes files",
	"ed": "edits files", "ex": "edits files", "vi": "edits files", "vim": "edits files",
	"nvim": "edits files", "nano": "edits files", "emacs": "edits files",
}

// shells are the programs that run a command line given with -c.
var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true}

// checkCommand returns why the simple command c is write-shaped, or "".
func checkCommand(c *command, depth int) string {
	if r := checkArgs(c.words, c.stdin, depth); r != "" {
		return r
	}
	if len(c.writes) > 0 {
		return c.writes[0]
	}
	return ""
}

// checkArgs returns why running the command args is write-shaped, or "".
// stdin is the here-document it reads, if any.
func checkArgs(args []word, stdin *heredoc, depth int) string {
	if depth > maxDepth {
		return errSyntax.Error()
	}
	args = unwrap(args)
	if len(args) == 0 {
		return ""
	}
	if args[0].dynamic {
		return fmt.Sprintf("command name %q is only known when it runs", args[0].text)
	}
	name := canonical(args[0].text)
	rest := texts(args[1:])
	if what, ok := fileCommands[name]; ok {
		return fmt.Sprintf("%q %s", name, what)
	}
	switch {
	case name == "git":
		return checkGit(rest)
	case name == "tee":
		return checkTee(rest)
	case name == "sed" || name == "gsed":
		return checkSed(name, rest)
	case name == "awk" || name == "gawk":
		return checkAwk(name, rest)
	case name == "find":
		return checkFind(args[1:], depth)
	case name == "curl":
		return checkCurl(rest)
	case name == "wget":
		return checkWget(rest)
	case name == "tar":
		return checkTar(rest)
	case name == "unzip":
		return checkUnzip(rest)
	case compressors[name]:
		return checkCompressor(name, rest)
	case name == "sort":
		return checkSort(rest)
	case name == "uniq":
		return checkUniq(rest)
	case name == "eval":
		return check(strings.Join(rest, " "), depth+1)
	case name == "trap" && len(rest) > 0:
		return check(rest[0], depth+1) // runs later, on a signal or exit
	case name == "watch":
		return check(strings.Join(texts(skipOptions(args[1:], "n", "--interval")), " "), depth+1)
	case shells[name]:
		return checkShell(name, args[1:], stdin, depth)
	case name == "python":
		return checkPython(args[0].text, args[1:], stdin, depth)
	case name == "node" || name == "nodejs":
		return checkNode(name, rest, stdin)
	case name == "perl":
		return checkPerlRuby(name, "ieEIMm", rest, stdin)
	case name == "ruby":
		return checkPerlRuby(name, "ieIrC", rest, stdin)
	}
	return checkTool(name, rest)
}

// unwrap drops what comes before the command word: reserved words, variable
// assignments and wrappers such as sudo, env, timeout and xargs, which run the
// command that follows them. It returns nil when nothing would run.
func unwrap(args []word) []word {
	for len(args) > 0 {
		w := args[0]
		if (!w.quoted && keywords[w.text]) || isAssignment(w.text) {
			args = args[1:]
			continue
		}
		if w.dynamic {
			return args
		}
		switch canonical(w.text) {
		case "sudo", "doas":
			args = skipOptions(args[1:], "ugCDprtUTRh", "--user", "--group", "--chdir", "--prompt", "--role", "--type", "--other-user", "--command-timeout", "--chroot", "--host")
		case "env":
			args = unwrapEnv(args[1:])
		case "command":
			if len(args) > 1 && (args[1].text == "-v" || args[1].text == "-V") {
				return nil // only looks the command up
			}
			args = skipOptions(args[1:], "")
		case "builtin", "nohup", "setsid":
			args = skipOptions(args[1:], "")
		case "exec":
			args = skipOptions(args[1:], "a")
		case "nice":
			args = skipOptions(args[1:], "n", "--adjustment")
		case "time":
			args = skipOptions(args[1:], "fo", "--format", "--output")
		case "stdbuf":
			args = skipOptions(args[1:], "ioe", "--input", "--output", "--error")
		case "npx", "bunx", "uvx":
			args = skipOptions(args[1:], "p", "--package", "--from")
		case "timeout":
			args = skipOptions(args[1:], "sk", "--signal", "--kill-after")
			args = drop(args, 1) // the duration
		case "xargs":
			args = skipOptions(args[1:], "adEILnPs", "--arg-file", "--delimiter", "--max-lines", "--max-args", "--max-procs", "--max-chars", "--process-slot-var")
		default:
			return args
		}
	}
	return nil
}

// unwrapEnv drops env's options and, for -S, splits its string into words.
func unwrapEnv(args []word) []word {
	for len(args) > 0 {
		t := args[0].text
		switch {
		case t == "--":
			return args[1:]
		case t == "-S" || t == "--split-string":
			if len(args) < 2 {
				return nil
			}
			return append(fields(args[1].text), args[2:]...)
		case strings.HasPrefix(t, "--split-string="):
			return append(fields(strings.TrimPrefix(t, "--split-string=")), args[1:]...)
		case strings.HasPrefix(t, "-S"):
			return append(fields(t[2:]), args[1:]...)
		case t == "-u" || t == "-C" || t == "--unset" || t == "--chdir":
			args = drop(args, 2)
		case strings.HasPrefix(t, "-"):
			args = args[1:]
		default:
			return args
		}
	}
	return args
}

// skipOptions drops the leading options of a wrapper. Short options whose
// letter is in withArg, and the long options in longWithArg, take the next
// word as their value unless one is attached.
func skipOptions(args []word, withArg string, longWithArg ...string) []word {
	for len(args) > 0 {
		t := args[0].text
		switch {
		case t == "--":
			return args[1:]
		case len(t) < 2 || t[0] != '-':
			return args
		case strings.HasPrefix(t, "--"):
			if slices.Contains(longWithArg, t) {
				args = drop(args, 2)
			} else {
				args = args[1:]
			}
		default:
			if l, v := shortOption(t, withArg); l != 0 && v == "" {
				args = drop(args, 2)
			} else {
				args = args[1:]
			}
		}
	}
	return args
}

// shortOption finds the first letter of the short-option cluster opt, such as
// "-ni", that is in letters, and returns it with the value attached after it.
// letters must include every letter that takes a value, since a value ends
// the cluster.
func shortOption(opt, letters string) (letter byte, value string) {
	if len(opt) < 2 || opt[0] != '-' || opt[1] == '-' {
		return 0, ""
	}
	for j := 1; j < len(opt); j++ {
		if strings.IndexByte(letters, opt[j]) >= 0 {
			return opt[j], opt[j+1:]
		}
	}
	return 0, ""
}

// isAssignment reports whether s, as a command's leading word, sets a
// variable: NAME=value, NAME+=value or NAME[i]=value.
func isAssignment(s string) bool {
	i := strings.IndexByte(s, '=')
	if i <= 0 {
		return false
	}
	name := strings.TrimSuffix(s[:i], "+")
	if j := strings.IndexByte(name, '['); j > 0 && strings.HasSuffix(name, "]") {
		name = name[:j]
	}
	if name == "" || '0' <= name[0] && name[0] <= '9' {
		return false
	}
	for k := 0; k < len(name); k++ {
		if !isNameByte(name[k]) {
			return false
		}
	}
	return true
}

// canonical returns the program a command word names: its base name, without
// the version suffix of interpreters such as python3.12.
func canonical(s string) string {
	s = s[strings.LastIndexByte(s, '/')+1:]
	switch t := strings.TrimRight(s, "0123456789."); t {
	case "python", "pip", "perl", "ruby", "node":
		return t
	}
	return s
}

func texts(words []word) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = w.text
	}
	return out
}

func fields(s string) []word {
	var out []word
	for _, f := range strings.Fields(s) {
		out = append(out, word{text: f})
	}
	return out
}

func drop(args []word, n int) []word {
	return args[min(n, len(args)):]
}

// hasFlag reports whether args holds one of flags, or a long flag with its
// value attached after '='.
func hasFlag(args []string, flags ...string) bool {
	return firstFlag(args, flags...) != ""
}

// firstFlag returns the first of flags found in args, or "".
func firstFlag(args []string, flags ...string) string {
	for _, a := range args {
		for _, f := range flags {
			if a == f || strings.HasPrefix(f, "--") && strings.HasPrefix(a, f+"=") {
				return f
			}
		}
	}
	return ""
}

// checkTee flags tee unless it only copies its input to harmless files.
func checkTee(args []string) string {
	options := true
	for _, a := range args {
		if a == "--" && options {
			options = false
			continue
		}
		if options && len(a) > 1 && a[0] == '-' {
			continue
		}
		if !safeTargets[a] {
			return `"tee" writes files`
		}
	}
	return ""
}

// checkSed flags sed -i in all its spellings: -i, -i.bak, -ni, --in-place.
func checkSed(name string, args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch l, v := shortOption(a, "iefl"); {
		case a == "--in-place" || strings.HasPrefix(a, "--in-place="), l == 'i':
			return fmt.Sprintf("%q edits files in place", name+" -i")
		case a == "--expression" || a == "--file" || a == "--line-length", l != 0 && v == "":
			i++ // skip the value, which may start with '-'
		}
	}
	return ""
}

// checkAwk flags gawk's in-place extension, loaded with -i inplace.
func checkAwk(name string, args []string) string {
	for i, a := range args {
		lib := ""
		switch {
		case a == "-i" || a == "--include":
			if i+1 < len(args) {
				lib = args[i+1]
			}
		case strings.HasPrefix(a, "--include="):
			lib = strings.TrimPrefix(a, "--include=")
		case strings.HasPrefix(a, "-i"):
			lib = a[2:]
		}
		if strings.TrimSuffix(lib, ".awk") == "inplace" {
			return fmt.Sprintf("%q edits files in place", name+" -i inplace")
		}
	}
	return ""
}

// checkFind flags find's actions that write, and checks the commands run by
// its -exec family of actions.
func checkFind(args []word, depth int) string {
	for i := 0; i < len(args); i++ {
		switch a := args[i].text; a {
		case "-delete":
			return `"find -delete" deletes files`
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			return fmt.Sprintf("%q writes files", "find "+a)
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j].text != ";" && args[j].text != "+" {
				j++
			}
			if r := checkArgs(args[i+1:j], nil, depth+1); r != "" {
				return r
			}
			i = j
		}
	}
	return ""
}

// checkShell checks the command line a shell runs: the string given with -c,
// or the here-document it reads. A script file is not inspected.
func checkShell(name string, args []word, stdin *heredoc, depth int) string {
	inline := false
	for i := 0; i < len(args); i++ {
		a := args[i].text
		switch {
		case a == "--version" || a == "--help":
			return ""
		case a == "-o" || a == "+o" || a == "-O" || a == "+O" || a == "--rcfile" || a == "--init-file":
			i++
		case a == "-":
			i = len(args) // commands come from standard input
		case a == "--" && i+1 < len(args):
			return runShell(args[i+1].text, inline, depth)
		case strings.HasPrefix(a, "--"):
		case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
			inline = inline || a[0] == '-' && strings.IndexByte(a, 'c') > 0
		default:
			return runShell(a, inline, depth)
		}
	}
	if stdin != nil {
		return check(stdin.body, depth+1)
	}
	if inline {
		return ""
	}
	return fmt.Sprintf("%q reads commands from standard input", name)
}

// runShell checks the first operand of a shell: the command line itself with
// -c, otherwise a script file, which is not inspected.
func runShell(operand string, inline bool, depth int) string {
	if inline {
		return check(operand, depth+1)
	}
	return ""
}

// Tools that write into the project are flagged only for the uses that do,
// so that a reviewer can still build, vet and test.
var (
	// toolWrites lists the subcommands that change the project or its
	// dependencies; "" stands for running the tool with no arguments.
	toolWrites = map[string][]string{
		"go":     {"get", "fmt", "generate", "fix", "clean", "mod tidy", "mod vendor", "mod init", "mod edit", "work init", "work use", "work edit", "work sync", "work vendor"},
		"npm":    {"install", "i", "in", "ci", "add", "uninstall", "un", "remove", "rm", "update", "up", "upgrade", "link", "ln", "prune", "dedupe", "init", "version", "audit fix", "pkg set", "pkg delete"},
		"yarn":   {"", "install", "add", "remove", "upgrade", "up", "dedupe", "init", "link"},
		"pnpm":   {"install", "i", "add", "remove", "rm", "uninstall", "update", "up", "prune", "link", "import", "init", "dedupe"},
		"bun":    {"install", "i", "add", "remove", "rm", "update", "link", "init"},
		"pip":    {"install", "uninstall", "download"},
		"uv":     {"add", "remove", "sync", "lock", "init", "pip install", "pip uninstall"},
		"poetry": {"add", "remove", "install", "lock", "update", "init", "new"},
		"cargo":  {"fmt", "add", "remove", "rm", "update", "fix", "init", "new", "generate-lockfile", "vendor"},
		"ruff":   {"format"},
	}
	// dryRunFlags turn a subcommand from toolWrites into a check.
	dryRunFlags = []string{"--check", "--diff", "--dry-run"}

	// flagWrites lists formatters and linters that write only with a flag.
	flagWrites = map[string][]string{
		"gofmt": {"-w"}, "goimports": {"-w"}, "gofumpt": {"-w"}, "golines": {"-w"},
		"shfmt": {"-w", "--write"}, "prettier": {"-w", "--write"}, "clang-format": {"-i"},
		"eslint": {"--fix"}, "ruff": {"--fix"}, "golangci-lint": {"--fix"}, "stylelint": {"--fix"},
		"autopep8": {"-i", "--in-place"}, "biome": {"--write", "--fix", "--apply"},
	}

	// checkWrites lists formatters that write unless told only to check.
	checkWrites = map[string][]string{
		"black":   {"--check", "--diff", "--version", "--help", "-h"},
		"rustfmt": {"--check", "--version", "--help", "-h", "-V"},
		"isort":   {"--check", "--check-only", "-c", "--diff", "--version", "--help", "-h"},
	}
)

// checkTool flags the writing uses of package managers, build tools and
// formatters.
func checkTool(name string, args []string) string {
	if sub, ok := matchSubcommand(toolWrites[name], args); ok && !hasFlag(args, dryRunFlags...) {
		return fmt.Sprintf("%q rewrites project files", strings.TrimSpace(name+" "+sub))
	}
	if f := firstFlag(args, flagWrites[name]...); f != "" {
		return fmt.Sprintf("%q rewrites files", name+" "+f)
	}
	if exempt, ok := checkWrites[name]; ok && !hasFlag(args, exempt...) {
		return fmt.Sprintf("%q rewrites files", name)
	}
	return ""
}

// matchSubcommand returns the entry of subs that the leading operands of
// args spell out.
func matchSubcommand(subs, args []string) (string, bool) {
	for _, s := range subs {
		if s == "" && len(args) == 0 || s != "" && spells(s, args) {
			return s, true
		}
	}
	return "", false
}

// spells reports whether the operands of args, ignoring options, begin with
// the space-separated words of s.
func spells(s string, args []string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		w, rest, _ := strings.Cut(s, " ")
		if a != w {
			return false
		}
		if rest == "" {
			return true
		}
		s = rest
	}
	return false
}
