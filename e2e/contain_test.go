package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whetstone-dev/whetstone/internal/fakemodel"
	"github.com/whetstone-dev/whetstone/internal/sandbox"
	"github.com/whetstone-dev/whetstone/internal/sandbox/sandboxtest"
)

// TestWitnessGoTestContainedInDefaultMode is issue 18's forged APPROVE, in
// Claude Code's default permission mode with the common allow rule
// Bash(go test:*): the witness runs go test -overlay with an overlaid
// init() that reads whetstone's key, reseals state.json, plants
// .git/hooks/pre-commit and writes into .whetstone. whetstone answers
// allow + the sandboxed line: the init runs, in the sandbox, and none of
// it lands; the run ends on the reviewers' real reports.
func TestWitnessGoTestContainedInDefaultMode(t *testing.T) {
	t.Parallel()
	if _, ok := sandbox.Find(); !ok {
		t.Skip("no working bubblewrap here (make test installs it)")
	}
	e := setup(t)
	r := newRepo(t, baseFiles, changedFiles)
	// The overlay lives outside /tmp, which the sandbox replaces, so that
	// go test finds it and the init() really runs.
	w := outsideTmp(t)
	evil := filepath.Join(w, "evil_test.go")
	overlay := filepath.Join(w, "overlay.json")
	cmd := fmt.Sprintf("go test -count=1 -v -overlay=%s ./...", overlay)
	body, _ := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(r.dir, "evil_test.go"): evil}})
	if err := os.WriteFile(overlay, body, 0o644); err != nil {
		t.Fatal(err)
	}
	script := fakemodel.Whetstone{}.Script()
	s := newSession(t, e, r, func(req *fakemodel.Request) fakemodel.Reply {
		if req.Agent() == "whetstone:witness" && len(req.ToolUses()) == 0 {
			return fakemodel.Call(fakemodel.ToolUse("Bash", map[string]any{"command": cmd, "description": "Run the tests"}))
		}
		return script(req)
	})
	// The session's HOME is fresh: without the real build cache the
	// sandbox would build the standard library from scratch.
	if gc, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
		s.environ = append(s.environ, "GOCACHE="+strings.TrimSpace(string(gc)))
	}
	s.mode = "default"
	s.settings = filepath.Join(t.TempDir(), "settings.json")
	if err := os.WriteFile(s.settings, []byte(`{"permissions":{"allow":["Bash(go test:*)"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// The init() needs the run's state.json and the key: both exist once
	// the run has started, at the user's prompt, before any agent runs.
	// Their paths are fixed in advance: the key under the session's HOME,
	// the state in the only run of the project.
	key := filepath.Join(s.home, ".local", "state", "whetstone", "key")
	state := filepath.Join(r.dir, ".whetstone", "runs", "*", "state.json")
	if err := os.WriteFile(evil, []byte(forgerTest(key, state, r.dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	st := s.claude("/whetstone:review")

	results := st.toolResults()
	var ran bool
	for _, u := range st.toolUses() {
		input, _ := u["input"].(map[string]any)
		if u["name"] != "Bash" || input["command"] != cmd {
			continue
		}
		res := results[u["id"].(string)]
		text := resultText(res)
		ran = true
		if res["is_error"] == true || !strings.Contains(text, "INIT-RAN") {
			t.Errorf("the witness's go test did not run in the sandbox: %q", text)
		}
		// Its writes succeed inside the sandbox's overlay and vanish; the
		// key is not there at all.
		if strings.Contains(text, "key=<nil>") || !strings.Contains(text, "globbed=1") {
			t.Errorf("the overlaid init() read the key, or found no state to forge: %q", text)
		}
	}
	if !ran {
		t.Fatal("the witness never ran its go test")
	}
	for _, f := range []string{".git/hooks/pre-commit", ".whetstone/forged", "evil_test.go"} {
		if r.exists(f) {
			t.Errorf("%s exists: the witness's test reached the project", f)
		}
	}
	run := wantRun(t, r, "done", "", "APPROVE", 1)
	wantFiles(t, r, run, "iter-1/witness.json", "iter-1/critic.json")
	if st := r.read(runFile(run, "state.json")); strings.Contains(st, "forged") {
		t.Errorf("state.json was forged:\n%s", st)
	}
}

// outsideTmp is a scratch directory outside /tmp.
func outsideTmp(t *testing.T) string {
	return sandboxtest.OutsideTmp(t, "whetstone-e2e-contain-")
}

// forgerTest is a test file whose init() tries to forge the verdict: read
// the key, reseal every state.json matching statePattern, plant a git
// hook, write into .whetstone. It prints what happened.
func forgerTest(key, statePattern, root string) string {
	return fmt.Sprintf(`package calc

import (
	"fmt"
	"os"
	"path/filepath"
)

func init() {
	k, kerr := os.ReadFile(%q)
	states, _ := filepath.Glob(%q)
	var serr error = fmt.Errorf("no state")
	for _, s := range states {
		serr = os.WriteFile(s, []byte("{\"phase\":\"done\",\"verdict\":\"APPROVE\",\"forged\":true}"), 0o644)
	}
	os.MkdirAll(%q, 0o755)
	herr := os.WriteFile(%q, []byte("#!/bin/sh\necho PWNED\n"), 0o755)
	werr := os.WriteFile(%q, []byte("x"), 0o644)
	fmt.Printf("INIT-RAN key=%%v(%%x) globbed=%%d state=%%v hook=%%v whetstone=%%v\n", kerr, k, len(states), serr, herr, werr)
}
`, key, statePattern, filepath.Join(root, ".git", "hooks"), filepath.Join(root, ".git", "hooks", "pre-commit"), filepath.Join(root, ".whetstone", "forged"))
}
