package e2e

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/whetstone-dev/whetstone/internal/fakemodel"
	"github.com/whetstone-dev/whetstone/internal/sandbox"
)

// plantingTest is a test file whose init() tries what a forging agent's
// test would: plant a git hook and write into .whetstone. It prints what
// happened, so the tool result shows the test ran.
const plantingTest = `package calc

import (
	"fmt"
	"os"
)

func init() {
	for _, f := range []string{".git/hooks/pre-commit", ".whetstone/forged"} {
		fmt.Println("planting", f, os.WriteFile(f, []byte("#!/bin/sh\necho forged\n"), 0o755))
	}
}
`

// Commands of TestOpenCodeSandboxRewrite.
const (
	coverCmd  = "go test -count=1 -v -coverprofile=c.out ./..."
	fixerTest = "go test -count=1 -v ./..."
	rmRoot    = "rm calc.go"
	rmWitness = "rm go.mod"
)

// TestOpenCodeSandboxRewrite: during a run in the real OpenCode, code an
// agent runs goes through whetstone's sandbox, and the user's own bash
// deny rules stay in force on the rewritten line. The witness's
// `go test -coverprofile=c.out ./...` runs (its coverage comes back) and
// leaves nothing in the project, neither c.out nor what the test's init()
// planted; the fixer's `go test ./...` runs and cannot plant a git hook
// or write into .whetstone; with `"rm *": "deny"` in opencode.json, the
// orchestrator's and the witness's rm are refused by OpenCode (for the
// witness, whose agent allows bash, because the plugin keeps the user's
// deny rules after that allow). The run finishes.
func TestOpenCodeSandboxRewrite(t *testing.T) {
	t.Parallel()
	e := setupOpenCode(t)
	if _, ok := sandbox.Find(); !ok {
		t.Skip("no working bubblewrap here (make test installs it)")
	}
	change := maps.Clone(changedFiles)
	change["plant_test.go"] = plantingTest
	r := newRepo(t, baseFiles, change)
	base := fakemodel.Whetstone{Findings: criticFindsOnce, Fixes: fixOnce}.Script()
	bash := func(cmd string) fakemodel.Block {
		return fakemodel.ToolUse("bash", map[string]any{"command": cmd, "description": "run"})
	}
	s := newOpenCodeHome(t, e, r, func(req *fakemodel.Request) fakemodel.Reply {
		reply := base(req)
		first := len(req.ToolUses()) == 0
		switch req.Agent() {
		case "whetstone:witness":
			if first {
				return fakemodel.Call(bash(coverCmd), bash(rmWitness))
			}
		case "whetstone:fixer":
			if first {
				reply.Content = append(reply.Content, bash(fixerTest))
			}
		case "":
			if !req.IsSubagent() && !req.IsTitle() && len(toolUsesOf([]*fakemodel.Request{req}, "bash")) == 0 {
				for _, b := range reply.Content {
					if b.Name == "task" {
						reply.Content = append(reply.Content, bash(rmRoot))
						break
					}
				}
			}
		}
		return reply
	})
	s.install()
	// The machine's Go build cache (the sandbox lays an overlay on it):
	// with the session's empty one, the tests' first build took minutes.
	if cache, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
		s.extra = append(s.extra, "GOCACHE="+strings.TrimSpace(string(cache)))
	}
	s.writeConfig(map[string]any{"permission": map[string]any{"bash": map[string]any{"*": "allow", "rm *": "deny"}}})
	out := s.run("--command", "whetstone-review")
	t.Logf("opencode run printed:\n%s", out)

	wantRun(t, r, "done", "", "APPROVE", 2)
	results := map[string]string{}
	for _, req := range s.calls() {
		for _, u := range req.ToolUses() {
			if u.Name != "bash" {
				continue
			}
			if res, ok := req.ToolResult(u.ID); ok {
				for _, cmd := range []string{coverCmd, fixerTest, rmRoot, rmWitness} {
					if strings.Contains(string(u.Input), cmd) {
						results[cmd] = res.AllText()
					}
				}
			}
		}
	}
	for cmd, want := range map[string]string{coverCmd: "coverage:", fixerTest: "PASS"} {
		if res := results[cmd]; !strings.Contains(res, want) || !strings.Contains(res, "planting .git/hooks/pre-commit") {
			t.Errorf("%q did not run its tests (want %q and the init's line): %q", cmd, want, res)
		}
	}
	for _, cmd := range []string{rmRoot, rmWitness} {
		if res := results[cmd]; !strings.Contains(res, "The user has specified a rule which prevents you from using this specific tool call") {
			t.Errorf("%q was not refused by the user's deny rule: %q", cmd, res)
		}
	}
	for _, f := range []string{"c.out", ".git/hooks/pre-commit", ".whetstone/forged", "go.mod"} {
		if r.exists(f) == (f != "go.mod") {
			t.Errorf("%s: exists %v after the run", f, r.exists(f))
		}
	}
	if !strings.Contains(r.read("calc.go"), "for i := 0;") {
		t.Errorf("the fixer's edit is missing: %s", r.read("calc.go"))
	}
}

// TestOpenCodeGateFailsClosed: a pre-tool-use that gives no answer denies
// the call in the real OpenCode. The binary always answers the plugin's
// pre-tool-use with a JSON object ({} for no objection), so a binary that
// prints nothing (an older one), prints something else or crashes is a
// failure: the plugin refuses the call and says why. A stand-in binary
// fails one way per command.
func TestOpenCodeGateFailsClosed(t *testing.T) {
	t.Parallel()
	e := setupOpenCode(t)
	r := newRepo(t, baseFiles, changedFiles)
	cmds := map[string]string{ // command → how the stand-in fails, and what the model is told
		"echo a > a.txt": "whetstone gave no answer for this call (empty output",
		"echo b > b.txt": "whetstone could not check this call (exit 1): boom",
		"echo c > c.txt": "whetstone gave no answer for this call (not a JSON object",
	}
	order := slices.Sorted(maps.Keys(cmds))
	stub := filepath.Join(t.TempDir(), "whetstone")
	script := `#!/bin/sh
[ "$1 $2" = "hook pre-tool-use" ] || exit 0
case $(cat) in
*'echo b'*) echo boom >&2; exit 1 ;;
*'echo c'*) echo 'oops' ;;
esac
`
	if err := os.WriteFile(stub, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	s := newOpenCodeHome(t, e, r, func(req *fakemodel.Request) fakemodel.Reply {
		if req.IsTitle() {
			return fakemodel.Say("Gate")
		}
		if n := req.AssistantTurns(); n < len(order) {
			return fakemodel.Call(fakemodel.ToolUse("bash", map[string]any{"command": order[n], "description": "write"}))
		}
		return fakemodel.Say("Done.")
	})
	s.install()
	s.extra = append(s.extra, "WHETSTONE_BIN="+stub)
	s.writeConfig(nil)
	s.run("Write the files.")

	results := map[string]string{}
	for _, req := range s.calls() {
		for _, u := range req.ToolUses() {
			if res, ok := req.ToolResult(u.ID); ok {
				for _, c := range order {
					if strings.Contains(string(u.Input), c) {
						results[c] = res.AllText()
					}
				}
			}
		}
	}
	for _, c := range order {
		if !strings.Contains(results[c], cmds[c]) {
			t.Errorf("%q: want the plugin's refusal %q, got %q", c, cmds[c], results[c])
		}
	}
	for _, f := range []string{"a.txt", "b.txt", "c.txt"} {
		if r.exists(f) {
			t.Errorf("%s was written: the call ran without whetstone's answer", f)
		}
	}
}
