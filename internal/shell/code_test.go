package shell

import "testing"

// TestRunsCode: the lines that run the project's code are told apart from
// the ones that only read, for both kinds of agent, through every way the
// parser follows a command (lists, pipelines, substitutions, inline shells,
// wrappers).
func TestRunsCode(t *testing.T) {
	root := t.TempDir()
	verify := append(DefaultVerify(), []string{"npm", "test"}, []string{"make", "check"})
	code := []string{
		"go test ./...",
		"go test -overlay=/tmp/w/overlay.json ./...",
		"go test -count=1 -coverprofile=/tmp/c.out ./...",
		"go vet ./...",
		"go build -o /dev/null ./...",
		"npm test",
		"make check",
		"cat go.mod && go test ./...",
		"bash -c 'go test ./...'",
		"timeout 60 go test ./...",
		"echo $(go test ./...)",
		"nice go test ./...",
		"g''o test ./...",
		`g\o test ./...`,
		"g\\\no test ./...",
		`"go" test ./...`,
	}
	reads := []string{
		"cat main.go", "rg -n TODO .", "git log --oneline -5", "git diff HEAD~1",
		"ls -la", "go version", "go env GOPATH", "go list ./...", "gofmt -l .",
		"find . -name '*.go' | head", "go doc fmt.Println",
	}
	for _, mode := range []Mode{ReadOnly, Fixer} {
		p := Policy{Mode: mode, Root: root, Cwd: root, TempDir: "/tmp", Verify: verify}
		for _, cmd := range code {
			if r := Check(cmd, p); r != "" {
				t.Errorf("mode %d: Check(%q) = %q, want allowed", mode, cmd, r)
				continue
			}
			if !RunsCode(cmd, p) {
				t.Errorf("mode %d: RunsCode(%q) = false, want true", mode, cmd)
			}
		}
		for _, cmd := range reads {
			if r := Check(cmd, p); r != "" {
				t.Errorf("mode %d: Check(%q) = %q, want allowed", mode, cmd, r)
				continue
			}
			if RunsCode(cmd, p) && cmd != "gofmt -l ." {
				t.Errorf("mode %d: RunsCode(%q) = true, want false", mode, cmd)
			}
		}
	}
	// The shortcut for lines that cannot name a verification program
	// agrees with parsing them again.
	for _, cmd := range append(append([]string{}, code...), reads...) {
		p := Policy{Mode: ReadOnly, Root: root, Cwd: root, TempDir: "/tmp", Verify: verify}
		slow := Check(cmd, Policy{Mode: ReadOnly, Root: root, Cwd: root, TempDir: "/tmp", Verify: [][]string{}}) != ""
		if RunsCode(cmd, p) != slow {
			t.Errorf("RunsCode(%q) = %v, parsing again says %v", cmd, !slow, slow)
		}
	}
	fixer := Policy{Mode: Fixer, Root: root, Cwd: root, TempDir: "/tmp"}
	for _, cmd := range []string{"go test -run TestX -v ./pkg/...", "go build ./..."} {
		if r := Check(cmd, fixer); r != "" || !RunsCode(cmd, fixer) {
			t.Errorf("fixer: Check(%q) = %q, RunsCode = %v; want allowed, true", cmd, r, RunsCode(cmd, fixer))
		}
	}
}
