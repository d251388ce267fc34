package brief

import "testing"

// BenchmarkLoad is one agent's brief rendered, as SubagentStart does for
// every reviewer's task: `go test -run '^$' -bench Load ./internal/brief`.
func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		if _, err := Load("security-reviewer"); err != nil {
			b.Fatal(err)
		}
	}
}
