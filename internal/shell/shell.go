// Package shell decides whether a shell command line is write-shaped: whether
// running it could change files in the project or the state of its git
// repository. Read-only review agents may run any command that is not.
//
// The line is read by a small lexer that follows quoting, command and process
// substitutions, redirections and here-documents, and every simple command it
// finds is checked against what is known about the program it runs. The check
// leans towards denial: a line it cannot follow is write-shaped.
package shell

// maxDepth bounds the nesting of substitutions, inline shells and wrapped
// commands, so that a hostile line cannot exhaust the stack. Deeper lines
// cannot be parsed and are therefore write-shaped.
const maxDepth = 32

// WriteShaped reports whether the shell command line cmd could change files or
// git state, and if so a short reason naming the offending part, such as
// `redirection "> out.txt"`, `"rm" deletes files` or
// `"git commit" changes the repository`. A line it cannot parse, such as one
// with an unbalanced quote, is write-shaped with the reason
// "cannot parse the command".
func WriteShaped(cmd string) (reason string, ok bool) {
	reason = check(cmd, 0)
	return reason, reason != ""
}

// check returns why the command line src is write-shaped, or "" if it is not.
// depth counts the inline shells and wrappers around src.
func check(src string, depth int) string {
	cmds, err := parse(src, depth)
	if err != nil {
		return err.Error()
	}
	for _, c := range cmds {
		if r := checkCommand(c, depth); r != "" {
			return r
		}
	}
	return ""
}
