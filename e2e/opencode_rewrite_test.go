package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whetstone-dev/whetstone/internal/fakemodel"
	"github.com/whetstone-dev/whetstone/internal/sandbox"
)

// rewriteStub is a whetstone binary that answers pre-tool-use for a bash
// call running one of cmds with a sandbox.Wrap rewrite of it (the answer
// whetstone gives a command that runs code) and {} for everything else.
func rewriteStub(t *testing.T, root string, cmds []string) string {
	t.Helper()
	bwrap, ok := sandbox.Find()
	if !ok {
		t.Skip("no bubblewrap here")
	}
	dir := t.TempDir()
	var cases strings.Builder
	for i, c := range cmds {
		input, _ := json.Marshal(map[string]any{"command": sandbox.Wrap(bwrap, c, sandbox.Options{Root: root}), "description": "step"})
		answer := fmt.Sprintf(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":%s}}`, input)
		file := filepath.Join(dir, fmt.Sprintf("a%d.json", i))
		if err := os.WriteFile(file, []byte(answer), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&cases, "*%s*) cat %s ;;\n", sandbox.Quote(c), file)
	}
	stub := filepath.Join(dir, "whetstone")
	script := "#!/bin/sh\n[ \"$1 $2\" = \"hook pre-tool-use\" ] || exit 0\nin=$(cat)\ncase $in in\n" + cases.String() + "*) echo '{}' ;;\nesac\n"
	if err := os.WriteFile(stub, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return stub
}

func TestOpenCodeRewriteFacts(t *testing.T) {
	e := setupOpenCode(t)
	r := newRepo(t, baseFiles, changedFiles)
	root, _ := filepath.EvalSymlinks(r.dir)
	cmds := []string{"echo visible; echo data > out.txt", "rm calc.go", "git status --short"}
	wcmds := []string{"rm go.mod", "echo from-witness"}
	s := newOpenCodeHome(t, e, r, func(req *fakemodel.Request) fakemodel.Reply {
		if req.IsTitle() {
			return fakemodel.Say("Rewrite")
		}
		n := req.AssistantTurns()
		if req.IsSubagent() {
			if n < len(wcmds) {
				return fakemodel.Call(fakemodel.ToolUse("bash", map[string]any{"command": wcmds[n], "description": "wstep"}))
			}
			return fakemodel.Say("Witness done.")
		}
		if n < len(cmds) {
			return fakemodel.Call(fakemodel.ToolUse("bash", map[string]any{"command": cmds[n], "description": "step"}))
		}
		if n == len(cmds) {
			return fakemodel.Call(fakemodel.ToolUse("task", map[string]any{"description": "w", "prompt": "run", "subagent_type": "whetstone-witness"}))
		}
		return fakemodel.Say("Done.")
	})
	s.install()
	s.extra = append(s.extra, "WHETSTONE_BIN="+rewriteStub(t, root, append(cmds, wcmds...)))
	for i, perm := range []any{
		map[string]any{"*": "allow", "rm *": "deny"},
	} {
		s.writeConfig(map[string]any{"permission": map[string]any{"bash": perm}})
		out := s.run("--format", "json", "Run the steps.")
		os.WriteFile(fmt.Sprintf("/tmp/h2x/run-%d.jsonl", i), []byte(out), 0o644)
		for call, res := range toolResults(s.calls(), "bash") {
			t.Logf("%v: %s → %q", perm, call, res)
		}
		t.Logf("out.txt exists: %v; calc.go exists: %v; go.mod exists: %v", r.exists("out.txt"), r.exists("calc.go"), r.exists("go.mod"))
		os.Remove(filepath.Join(r.dir, "out.txt"))
	}
}
