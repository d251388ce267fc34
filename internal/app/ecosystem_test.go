package app_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/sandbox"
)

// ecosystemProject is a git repository holding files, with a run started
// by session; it returns the root (symlinks resolved) and the run's
// directory.
func ecosystemProject(t *testing.T, a *app.App, session string, files map[string]string) (root, runDir string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	newProject(t, root)
	t.Chdir(root)
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.Contains(name, ".bin/") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	out := runHook(t, a, "user-prompt-submit", payload(t, map[string]any{
		"session_id": session, "hook_event_name": "UserPromptSubmit", "cwd": root, "prompt": "/whetstone:review"}))
	if !strings.Contains(string(out), "WHETSTONE-DISPATCH") {
		t.Fatalf("no run started: %s", out)
	}
	return root, filepath.Join(root, ".whetstone", "runs", runOf(t, root, session))
}

// forgerScript is what a hostile test of each language does: read the key,
// reseal every run's state.json, plant a pre-commit hook, write into
// .whetstone and change a project file; it prints what happened. It runs
// from the project root.
func forgerScript(lang, key string) string {
	if lang == "node" {
		return fmt.Sprintf(`const fs = require("fs");
const r = [];
const states = fs.readdirSync(".whetstone/runs").map(id => ".whetstone/runs/" + id + "/state.json");
for (const [what, f] of [["key", () => fs.readFileSync(%q)], ["state", () => states.forEach(s => fs.writeFileSync(s, '{"phase":"done"}'))],
  ["hook", () => fs.writeFileSync(".git/hooks/pre-commit", "#!/bin/sh\necho PWNED\n")], ["whetstone", () => fs.writeFileSync(".whetstone/forged", "x")],
  ["project", () => fs.writeFileSync("README.md", "pwned")]]) {
  try { const v = f(); r.push(what + "=ok" + (v ? "(" + v.toString("hex") + ")" : "")); } catch (e) { r.push(what + "=" + e.code); }
}
console.log("TEST-RAN " + r.join(" "));
`, key)
	}
	return fmt.Sprintf(`import glob, unittest

class Forge(unittest.TestCase):
    def test_forge(self):
        r = []
        targets = [("key", %q, "rb"), ("hook", ".git/hooks/pre-commit", "w"), ("whetstone", ".whetstone/forged", "w"), ("project", "README.md", "w")]
        targets += [("state", s, "w") for s in glob.glob(".whetstone/runs/*/state.json")]
        for what, path, mode in targets:
            try:
                with open(path, mode) as f:
                    r.append(what + "=ok(" + (f.read().hex() if mode == "rb" else str(f.write("pwned"))) + ")")
            except OSError as e:
                r.append(what + "=" + type(e).__name__)
        print("TEST-RAN " + " ".join(r))
`, key)
}

// TestNodeAndPythonTestsAreContained: in a Node project and a Python
// project the witness runs the command context.json names (npm test,
// python3 -m unittest discover -s tests); whetstone rewrites it into the
// sandbox, the project's hostile test runs there and nothing it writes
// reaches the project, .git, .whetstone or the key. Extra words on the
// command, and the go tool in a project that is not Go, are refused.
func TestNodeAndPythonTestsAreContained(t *testing.T) {
	keyDir := containKeyDir(t)
	a := containApp(t, keyDir, true)
	key := filepath.Join(keyDir, "key")
	for i, tc := range []struct {
		lang, tool, cmd, escape string
		files                   map[string]string
	}{
		{"node", "npm", "npm test", "npm test --script-shell=/bin/sh", map[string]string{
			"package.json": `{"name":"victim","scripts":{"test":"node forge.test.js"}}` + "\n", "package-lock.json": "{}\n",
			"forge.test.js": forgerScript("node", key)}},
		{"python", "python3", "python3 -m unittest discover -s tests", "python3 -m unittest discover -s tests -t /", map[string]string{
			"pyproject.toml": "[project]\nname = \"victim\"\n", "tests/test_forge.py": forgerScript("python", key)}},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			if _, err := exec.LookPath(tc.tool); err != nil {
				t.Skipf("%s is not installed", tc.tool)
			}
			session := fmt.Sprintf("c6000000-0000-4000-8000-00000000000%d", i)
			tc.files["README.md"] = "victim\n"
			root, runDir := ecosystemProject(t, a, session, tc.files)
			context, err := os.ReadFile(filepath.Join(runDir, "context.json"))
			if err != nil {
				t.Fatal(err)
			}
			if got := gjson.GetBytes(context, "verify.0.command").String(); got != tc.cmd {
				t.Fatalf("context.json's first verify command is %q, want %q: %s", got, tc.cmd, gjson.GetBytes(context, "verify").Raw)
			}
			before := tree(t, root)
			for _, mode := range []string{"default", "bypassPermissions"} {
				out := runHook(t, a, "pre-tool-use", bashPayload(t, session, root, "whetstone:witness", mode, tc.cmd))
				line := rewritten(t, out, tc.cmd, sandbox.Decision(mode))
				got, code := bash(t, root, line)
				if code != 0 || !strings.Contains(got, "TEST-RAN") || !strings.Contains(got, "project=ok") {
					t.Fatalf("%s: the project's test did not run, or could not write its overlay, in the sandbox (exit %d):\n%s", mode, code, got)
				}
				t.Logf("%s: %s", mode, got)
				if strings.Contains(got, "key=ok") {
					t.Errorf("%s: the test read the key:\n%s", mode, got)
				}
				untouched(t, got, keyDir, before, root)
			}
			for _, cmd := range []string{tc.escape, "go test ./..."} {
				out := runHook(t, a, "pre-tool-use", bashPayload(t, session, root, "whetstone:witness", "default", cmd))
				if gjson.GetBytes(out, "hookSpecificOutput.permissionDecision").String() != "deny" {
					t.Errorf("%q was not refused in a %s project: %s", cmd, tc.lang, out)
				}
			}
		})
	}
}

// TestProjectCheckerRunsInTheSandbox: eslint from the project's
// node_modules is the project's code; at the start of a run it runs in the
// sandbox, so its report reaches context.json while its writes to the
// project vanish. Without a sandbox it is skipped, saying why.
func TestProjectCheckerRunsInTheSandbox(t *testing.T) {
	keyDir := containKeyDir(t)
	eslint := "#!/bin/sh\necho pwned > README.md\necho \"src/a.js:1:7: 'x' is assigned a value but never used. [Error/no-unused-vars]\"\nexit 1\n"
	files := map[string]string{"README.md": "victim\n", "eslint.config.js": "export default [];\n", "src/a.js": "const x = 1;\n",
		"node_modules/.bin/eslint": eslint, ".gitignore": "node_modules/\n"}
	for i, withSandbox := range []bool{true, false} {
		a := containApp(t, keyDir, withSandbox)
		root, runDir := ecosystemProject(t, a, fmt.Sprintf("c7000000-0000-4000-8000-00000000000%d", i), files)
		context, err := os.ReadFile(filepath.Join(runDir, "context.json"))
		if err != nil {
			t.Fatal(err)
		}
		s := gjson.GetBytes(context, `signals.#(tool=="eslint")`)
		if withSandbox && (s.Get("status").String() != "candidates" || s.Get("candidates.0.file").String() != "src/a.js") {
			t.Errorf("with a sandbox, eslint's signal is %s", s.Raw)
		}
		if !withSandbox && (s.Get("status").String() != "skipped" || !strings.Contains(s.Get("output").String(), "there is none here")) {
			t.Errorf("without a sandbox, eslint's signal is %s, want skipped with why", s.Raw)
		}
		if b, _ := os.ReadFile(filepath.Join(root, "README.md")); string(b) != "victim\n" {
			t.Errorf("eslint's write reached the project: README.md is %q", b)
		}
	}
}
