package shell

// RunsCode reports whether cmd, a line Check allows under p, is allowed only
// because it runs one of the verification commands (go test, go vet, go
// build, whetstone.json's verify_commands, the fixer's builds and tests):
// the commands that run the project's own code, which whoever controls the
// project wrote. Every other command Check allows runs only programs from
// its table, none of which executes the project's files, so whetstone may
// run it outside the sandbox (docs/sandbox.md). The answer for a line Check
// refuses means nothing.
func RunsCode(cmd string, p Policy) bool {
	p.Verify = [][]string{} // not nil: nil means DefaultVerify
	return Check(cmd, p) != ""
}
