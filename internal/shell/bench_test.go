package shell

import "testing"

// BenchmarkCheck judges command lines a reviewer types: the gate's work on
// every Bash call.
func BenchmarkCheck(b *testing.B) {
	p := newProject(b)
	pol := p.policy(ReadOnly)
	for _, bc := range []struct{ name, cmd string }{
		{"diff-grep-vet", `git diff HEAD~1 | grep '^+' | head && go vet ./... 2>&1 | tail`},
		{"cat", `cat main.go internal/x/x.go`},
		{"glob", `wc -l *.go internal/*/*.go`},
		{"xargs", `git ls-files '*.go' | xargs grep -n func`},
		{"loop", `for f in $(git ls-files); do head -1 "$f"; done`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				Check(bc.cmd, pol)
			}
		})
	}
}
