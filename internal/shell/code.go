package shell

import "strings"

// RunsCode reports whether cmd, a line Check allows under p, is allowed only
// because it runs one of the verification commands (go test, go vet, go
// build, the project's detected commands such as npm test or make test,
// whetstone.json's verify_commands, the fixer's builds and tests):
// the commands that run the project's own code, which whoever controls the
// project wrote. Every other command Check allows runs only programs from
// its table, none of which executes the project's files, so whetstone may
// run it outside the sandbox (docs/sandbox.md). The answer for a line Check
// refuses means nothing.
func RunsCode(cmd string, p Policy) bool {
	if p.Verify == nil {
		p.Verify = DefaultVerify()
	}
	if !mayName(cmd, append(p.Exact, p.Verify...)) {
		return false
	}
	p.Verify, p.Exact = [][]string{}, nil // not nil: nil means DefaultVerify
	return Check(cmd, p) != ""
}

// mayName reports whether cmd could name the program of a verification
// command, so that RunsCode must parse it again. A program word Check
// allows is a literal after quote removal, backslash escapes and line
// continuations; only expansions ($, braces, globs) can build one that the
// text does not show once those are taken out.
func mayName(cmd string, verify [][]string) bool {
	if strings.ContainsAny(cmd, "${*?[") {
		return true
	}
	plain := strings.NewReplacer("\\\n", "", `\`, "", `'`, "", `"`, "").Replace(cmd)
	for _, v := range verify {
		if len(v) > 0 && strings.Contains(plain, v[0]) {
			return true
		}
	}
	return false
}
