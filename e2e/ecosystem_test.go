package e2e

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/whetstone-dev/whetstone/internal/fakemodel"
	"github.com/whetstone-dev/whetstone/internal/sandbox"
)

// ecosystem is a small project in another language than Go, with a change
// that breaks its own tests, for issue 19's verification scenario.
type ecosystem struct {
	base, change map[string]string
	verify       string // the project's test command whetstone detects
	direct       string // the test runner called directly: not the project's command, refused
	failed       string // in the verify command's output when a test fails
	passed       string // … and when every test passes
	bug          fakemodel.Finding
	fix          fakemodel.Edit
}

// escape is what every test file of these projects tries when it runs: a
// file in the project and a git hook. In the sandbox neither lands.
var escapes = []string{"pwned.txt", ".git/hooks/pre-commit"}

var node = ecosystem{
	base: map[string]string{
		"package.json":      `{"name":"calc","version":"1.0.0","private":true,"scripts":{"test":"node --test"}}` + "\n",
		"package-lock.json": `{"name":"calc","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{"":{"name":"calc","version":"1.0.0"}}}` + "\n",
		"sum.js":            "function sum(xs) {\n  let s = 0;\n  for (let i = 0; i < xs.length; i++) s += xs[i];\n  return s;\n}\n\nmodule.exports = { sum };\n",
		"test/sum.test.js": `const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { sum } = require('../sum.js');

test('sum adds every element', () => {
  for (const f of ['pwned.txt', '.git/hooks/pre-commit']) {
    try { fs.writeFileSync(path.join(__dirname, '..', f), 'x'); console.log('WROTE ' + f); } catch (e) { console.log('REFUSED ' + f + ' ' + e.code); }
  }
  assert.strictEqual(sum([1, 2, 3]), 6);
});
`,
	},
	change: map[string]string{
		"sum.js": "function sum(xs) {\n  let s = 0;\n  for (let i = 1; i < xs.length; i++) s += xs[i];\n  return s;\n}\n\nmodule.exports = { sum };\n",
	},
	verify: "npm test",
	direct: "node --test",
	failed: "# fail 1",
	passed: "# fail 0",
	bug: fakemodel.Finding{Severity: "high", Category: "correctness", File: "sum.js", Line: 3,
		Title: "sum skips the first element; npm test fails", Rule: "failing-test"},
	fix: fakemodel.Edit{File: "sum.js", Old: "let i = 1;", New: "let i = 0;"},
}

var python = ecosystem{
	base: map[string]string{
		"calc.py":           "def total(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s\n",
		"tests/__init__.py": "",
		"tests/test_calc.py": `import os
import unittest

from calc import total

ROOT = os.path.join(os.path.dirname(__file__), "..")


class TotalTest(unittest.TestCase):
    def test_total(self):
        for f in ("pwned.txt", ".git/hooks/pre-commit"):
            try:
                with open(os.path.join(ROOT, f), "w") as out:
                    out.write("x")
                print("WROTE", f)
            except OSError as e:
                print("REFUSED", f, e)
        self.assertEqual(total([1, 2, 3]), 6)


if __name__ == "__main__":
    unittest.main()
`,
	},
	change: map[string]string{
		"calc.py": "def total(xs):\n    s = 0\n    for x in xs[1:]:\n        s += x\n    return s\n",
	},
	verify: "python3 -m unittest discover -s tests",
	direct: "python3 tests/test_calc.py",
	failed: "FAILED (failures=1)",
	passed: "\nOK",
	bug: fakemodel.Finding{Severity: "high", Category: "correctness", File: "calc.py", Line: 3,
		Title: "total drops the first element; the unit tests fail", Rule: "failing-test"},
	fix: fakemodel.Edit{File: "calc.py", Old: "xs[1:]", New: "xs"},
}

// TestNodeProjectTestsVerified and TestPythonProjectTestsVerified are issue
// 19's verification in a project that is not Go: whetstone detects the
// project's own test command, the witness runs it (in the sandbox) after
// trying the test runner directly, which is refused with the command it
// may run (acceptEdits mode); the failing test becomes a finding, the fixer edits and runs the
// tests itself, and the witness's rerun on the fixed tree passes.
func TestNodeProjectTestsVerified(t *testing.T) { testEcosystem(t, node) }

func TestPythonProjectTestsVerified(t *testing.T) { testEcosystem(t, python) }

func testEcosystem(t *testing.T, eco ecosystem) {
	t.Parallel()
	if _, ok := sandbox.Find(); !ok {
		t.Skip("no working bubblewrap here (make test installs it)")
	}
	e := setup(t)
	r := newRepo(t, eco.base, eco.change)
	s := newSession(t, e, r, verifyingScript(eco))
	// acceptEdits, as a user who lets the agents edit and keeps being
	// asked about commands: whetstone allows the project's command into
	// the sandbox and refuses the rest (in bypassPermissions a read-only
	// agent's every line runs in the sandbox instead).
	s.mode = "acceptEdits"
	st := s.claude("/whetstone:review")

	// Every run of the project's command, in order: the witness's in
	// iteration 1, the fixer's, the witness's in iteration 2.
	results := st.toolResults()
	var outputs []string
	var refused string
	for _, u := range st.toolUses() {
		input, _ := u["input"].(map[string]any)
		if u["name"] != "Bash" {
			continue
		}
		text := resultText(results[u["id"].(string)])
		switch input["command"] {
		case eco.verify:
			outputs = append(outputs, text)
		case eco.direct:
			refused = text
		}
	}
	if !strings.Contains(refused, eco.verify) {
		t.Errorf("%q was not refused with a reason naming %q: %q", eco.direct, eco.verify, refused)
	}
	if len(outputs) != 3 {
		t.Fatalf("%q ran %d times, want 3 (witness, fixer, witness): %q", eco.verify, len(outputs), outputs)
	}
	for i, want := range []string{eco.failed, eco.passed, eco.passed} {
		if !strings.Contains(outputs[i], want) {
			t.Errorf("run %d of %q: no %q in its output:\n%s", i+1, eco.verify, want, outputs[i])
		}
	}
	for _, f := range escapes {
		if r.exists(f) {
			t.Errorf("%s exists: the project's test code reached the project", f)
		}
	}
	run := wantRun(t, r, "done", "", "APPROVE", 2)
	if !strings.Contains(r.read(eco.fix.File), eco.fix.New) {
		t.Errorf("the fixer's edit did not reach %s", eco.fix.File)
	}
	var ctx struct {
		Verify []struct {
			Command string `json:"command"`
		} `json:"verify"`
	}
	if err := json.Unmarshal([]byte(r.read(runFile(run, "context.json"))), &ctx); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, v := range ctx.Verify {
		found = found || v.Command == eco.verify
	}
	if !found {
		t.Errorf("context.json's verify does not list %q: %+v", eco.verify, ctx.Verify)
	}
	verdict := r.read(runFile(run, "iter-1/verdict.json"))
	if !strings.Contains(verdict, eco.bug.Title) {
		t.Errorf("iteration 1's verdict lacks the witness's finding %q:\n%s", eco.bug.Title, verdict)
	}
}

// refusalNames finds the commands a refusal says may be run.
var refusalNames = regexp.MustCompile(`verification commands(?: as written|, which run exactly as written, with no other words, from the project root): ([^;]+);`)

// verifyingScript is a well-behaved run in which the witness verifies as a
// real model does: it first calls the test runner itself, then the command
// the refusal names, and reports a finding only when that output shows a
// failing test (with the file's absolute path, as Claude Code tells
// subagents to write them). The fixer edits, runs the tests, then reports.
func verifyingScript(eco ecosystem) fakemodel.Script {
	base := fakemodel.Whetstone{Fixes: func(it int) []fakemodel.Edit {
		if it == 1 {
			return []fakemodel.Edit{eco.fix}
		}
		return nil
	}}.Script()
	return func(req *fakemodel.Request) fakemodel.Reply {
		uses := req.ToolUses()
		switch req.Agent() {
		case "whetstone:witness":
			switch len(uses) {
			case 0:
				return fakemodel.Call(fakemodel.ToolUse("Bash", map[string]any{"command": eco.direct, "description": "Run the tests"}))
			case 1:
				// As a real model must: the command to run is the one the
				// refusal names, not one the script knows.
				res, _ := req.ToolResult(uses[0].ID)
				m := refusalNames.FindStringSubmatch(res.AllText())
				if m == nil {
					return fakemodel.Say("The tests cannot be run here.\n\n```json\n{\"schema\":\"whetstone.review/v1\",\"reviewer\":\"witness\",\"verdict\":\"clean\",\"findings\":[]}\n```")
				}
				return fakemodel.Call(fakemodel.ToolUse("Bash", map[string]any{"command": strings.TrimSpace(strings.Split(m[1], ",")[0]), "description": "Run the project's tests"}))
			}
			res, _ := req.ToolResult(uses[len(uses)-1].ID)
			failing := strings.Contains(res.AllText(), eco.failed)
			return fakemodel.Whetstone{RealModel: true, Findings: func(string, int) []fakemodel.Finding {
				if failing {
					return []fakemodel.Finding{eco.bug}
				}
				return nil
			}}.Script()(req)
		case "whetstone:fixer":
			if len(uses) == 1 {
				return fakemodel.Call(fakemodel.ToolUse("Bash", map[string]any{"command": eco.verify, "description": "Run the tests after the fix"}))
			}
		}
		return base(req)
	}
}
