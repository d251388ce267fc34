package e2e

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whetstone-dev/whetstone/internal/fakemodel"
)

// mcpWriteServer builds testdata/mcpwrite, a stdio MCP server whose one
// tool, write_file, writes a file, and returns the --mcp-config that
// gives it to Claude Code as the server "files".
func mcpWriteServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcpwrite")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/mcpwrite").CombinedOutput(); err != nil {
		t.Fatalf("build the MCP server: %v\n%s", err, out)
	}
	config, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"files": map[string]any{"type": "stdio", "command": bin}}})
	return string(config)
}

// nested is v inside depth arrays.
func nested(depth int, v string) json.RawMessage {
	return json.RawMessage(strings.Repeat("[", depth) + v + strings.Repeat("]", depth))
}

// TestDeepMCPInputDenied: during a run, the orchestrator calls an MCP
// write tool twice, once plainly and once with its content nested 257
// levels deep (one more than whetstone decodes). Both are denied: the
// plain one as a tool whetstone cannot check, the nested one because
// whetstone cannot read it while the session's run is in progress (it
// used to pass with no answer, which Claude Code 2.1.329 takes as no
// objection, and write). The run still finishes.
func TestDeepMCPInputDenied(t *testing.T) {
	t.Parallel()
	e := setup(t)
	r := newRepo(t, baseFiles, changedFiles)
	const tool = "mcp__files__write_file"
	plain := fakemodel.ToolUse(tool, map[string]any{"path": "plain.txt", "content": "written"})
	deep := fakemodel.ToolUse(tool, map[string]any{"path": "deep.txt", "content": nested(257, `"written"`)})
	// A finding keeps the run going after the review phase: Claude Code
	// runs the MCP calls after the dispatched agents have returned.
	base := fakemodel.Whetstone{Findings: criticFindsOnce, Fixes: fixOnce}.Script()
	s := newSession(t, e, r, func(req *fakemodel.Request) fakemodel.Reply {
		reply := base(req)
		if req.IsSubagent() || req.IsTitle() {
			return reply
		}
		for _, u := range req.ToolUses() {
			if u.Name == tool {
				return reply
			}
		}
		// Alongside its first dispatch, during the run.
		for _, b := range reply.Content {
			if b.Name == "Agent" {
				reply.Content = append(reply.Content, plain, deep)
				break
			}
		}
		return reply
	})
	st := s.claude("/whetstone:review", "--mcp-config", mcpWriteServer(t), "--strict-mcp-config")

	results := st.toolResults()
	seen := 0
	for _, u := range st.toolUses() {
		if u["name"] != tool {
			continue
		}
		seen++
		res := results[u["id"].(string)]
		text := resultText(res)
		input, _ := u["input"].(map[string]any)
		want := "may not use " + tool
		if input["path"] == "deep.txt" {
			want = "nests deeper than 256 levels"
		}
		if res["is_error"] != true || !strings.Contains(text, "PreToolUse:"+tool+" hook error") || !strings.Contains(text, want) {
			t.Errorf("the orchestrator's %s of %v was not denied by whetstone (want %q): %q", tool, input["path"], want, text)
		}
	}
	if seen != 2 {
		t.Errorf("the model's 2 MCP calls reached Claude Code %d times", seen)
	}
	for _, f := range []string{"plain.txt", "deep.txt"} {
		if r.exists(f) {
			t.Errorf("the MCP tool wrote %s during the run", f)
		}
	}
	wantRun(t, r, "done", "", "APPROVE", 2)
}
