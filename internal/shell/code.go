package shell

import (
	"fmt"
	"strings"
)

// codeWrites are calls in inline Python, JavaScript, Perl or Ruby that write,
// delete or rename files, or run other programs that might. The list is a
// heuristic for code given on the command line, not a sandbox.
var codeWrites = []string{
	"writeFile", "appendFile", "createWriteStream", "copyFile", "rmSync", "unlink", "rmdir",
	"mkdir", "makedirs", "rename", "symlink", "chmod", "truncate",
	"os.remove", "os.replace", "shutil", "write_text", "write_bytes",
	"File.write", "File.delete", "FileUtils", "IO.write",
	"os.system", "subprocess", "child_process", "system(",
}

// checkPython checks the code python runs with -c or reads from a
// here-document, and the module it runs with -m. A script file is not
// inspected.
func checkPython(prog string, args []word, stdin *heredoc, depth int) string {
	name := prog[strings.LastIndexByte(prog, '/')+1:]
	for i := 0; i < len(args); i++ {
		a := args[i].text
		switch {
		case a == "--version" || a == "-V" || a == "--help" || a == "-h":
			return ""
		case a == "-":
			return stdinCode(name, stdin)
		case a == "--" || !strings.HasPrefix(a, "-"):
			return "" // a script file
		}
		l, v := shortOption(a, "cmWX")
		if l != 0 && v == "" && i+1 < len(args) {
			i++
			v = args[i].text
		}
		switch l {
		case 'c':
			return inlineCode(name+" -c", v)
		case 'm':
			return checkArgs(append([]word{{text: v}}, args[i+1:]...), stdin, depth+1)
		}
	}
	return stdinCode(name, stdin)
}

// checkNode checks the code node runs with -e or -p or reads from a
// here-document. A script file is not inspected.
func checkNode(name string, args []string, stdin *heredoc) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--version" || a == "-v" || a == "--help" || a == "-h":
			return ""
		case a == "-e" || a == "--eval" || a == "-p" || a == "--print" || a == "-pe":
			if i+1 < len(args) {
				return inlineCode(name+" "+a, args[i+1])
			}
			return ""
		case strings.HasPrefix(a, "--eval=") || strings.HasPrefix(a, "--print="):
			flag, code, _ := strings.Cut(a, "=")
			return inlineCode(name+" "+flag, code)
		case a == "-r" || a == "--require" || a == "--import" || a == "--loader":
			i++
		case a == "-":
			return stdinCode(name, stdin)
		case !strings.HasPrefix(a, "-"):
			return "" // a script file
		}
	}
	return stdinCode(name, stdin)
}

// checkPerlRuby flags perl -i and ruby -i, and checks the code given with -e
// or read from a here-document. letters are the interpreter's short options
// that take a value. A script file is not inspected.
func checkPerlRuby(name, letters string, args []string, stdin *heredoc) string {
	var code []string
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "-v" || a == "-V" || a == "--version" || a == "-h" || a == "--help" {
			return ""
		}
		if a == "--" || a == "-" || len(a) < 2 || a[0] != '-' {
			break
		}
		l, v := shortOption(a, letters)
		switch l {
		case 'i':
			return fmt.Sprintf("%q edits files in place", name+" -i")
		case 'e', 'E':
			if v == "" && i+1 < len(args) {
				i++
				v = args[i]
			}
			code = append(code, v)
		case 0:
		default:
			if v == "" {
				i++
			}
		}
	}
	switch {
	case len(code) > 0:
		return inlineCode(name+" -e", strings.Join(code, "\n"))
	case i < len(args) && args[i] != "-":
		return "" // a script file
	}
	return stdinCode(name, stdin)
}

// stdinCode checks the program an interpreter reads from standard input. Only
// a here-document or here-string can be inspected; anything else is unknown.
func stdinCode(name string, stdin *heredoc) string {
	if stdin == nil {
		return fmt.Sprintf("%q reads its program from standard input", name)
	}
	return inlineCode(name, stdin.body)
}

// inlineCode returns why the program code, run by label, looks write-shaped,
// or "".
func inlineCode(label, code string) string {
	for _, c := range codeWrites {
		if strings.Contains(code, c) {
			return fmt.Sprintf("%q code may write files (%s)", label, c)
		}
	}
	if opensForWriting(code) {
		return fmt.Sprintf("%q code may write files (open for writing)", label)
	}
	return ""
}

// opensForWriting reports whether code opens a file with a writing mode, as
// in open(p, 'w'), open(F, ">out"), File.open(p, "a") or path.open('w'): a
// string literal among the arguments of an "open" is such a mode. Only a
// method's first argument can be the mode, since a function's is the file.
func opensForWriting(code string) bool {
	for {
		i := strings.Index(code, "open")
		if i < 0 {
			return false
		}
		method := i > 0 && code[i-1] == '.'
		code = code[i+len("open"):]
		args := callArgs(code)
		if !method {
			_, args, _ = strings.Cut(args, ",")
		}
		if hasWriteMode(args) {
			return true
		}
	}
}

// callArgs returns the arguments that follow a function name at the start of
// s: up to the matching parenthesis when they are parenthesised, otherwise up
// to the end of the statement, as in Perl's open F, ">out".
func callArgs(s string) string {
	s = strings.TrimLeft(s, " ")
	if !strings.HasPrefix(s, "(") {
		if i := strings.IndexAny(s, ";\n"); i >= 0 {
			return s[:i]
		}
		return s
	}
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return s[:i]
			}
		}
	}
	return s
}

// hasWriteMode reports whether a string literal in args is a writing mode.
func hasWriteMode(args string) bool {
	for {
		i := strings.IndexAny(args, `'"`)
		if i < 0 {
			return false
		}
		j := strings.IndexByte(args[i+1:], args[i])
		if j < 0 {
			return false
		}
		if isWriteMode(args[i+1 : i+1+j]) {
			return true
		}
		args = args[i+j+2:]
	}
}

// isWriteMode reports whether s is a file mode that writes: Python's and
// Ruby's "w", "a", "x" or "r+", or Perl's ">" and "+<".
func isWriteMode(s string) bool {
	if strings.HasPrefix(s, ">") || strings.HasPrefix(s, "+<") {
		return true
	}
	return s != "" && len(s) <= 3 && strings.Trim(s, "rwaxbt+") == "" && strings.ContainsAny(s, "wax+")
}
