package shell

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ecosystems are the commands scope.DetectVerify writes into context.json,
// one project kind each, as the gate passes them (Policy.Exact).
var ecosystems = []string{
	"npm test", "npm run build", "npm run lint", "npm run typecheck", "pnpm test", "pnpm run build", "yarn test",
	"yarn run lint", "bun run test", "python3 -m pytest", "python3 -m unittest", "python3 -m unittest discover -s tests",
	"cargo build", "cargo test", "cargo clippy", "mvn -q test", "./gradlew test", "gradle test",
	"make test", "make check", "make lint",
}

func exactPolicy(mode Mode, root string) Policy {
	var exact [][]string
	for _, c := range ecosystems {
		exact = append(exact, strings.Fields(c))
	}
	return Policy{Mode: mode, Root: root, Cwd: root, TempDir: "/tmp", Verify: [][]string{}, Exact: exact}
}

// TestExactVerifyCommands: the detected commands run word for word, from
// the project root, in the ways a line may hold them; every extra word,
// variable or other directory that would let the line run something else
// is refused, for reviewers and the fixer alike.
func TestExactVerifyCommands(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	allowed := append(append([]string{}, ecosystems...),
		"npm test 2>&1 | tail -30", "timeout 300 npm test", "cd "+root+" && make test", "npm test; echo $?",
		"python3 -m unittest 2>&1 | head -50", `"npm" 'test'`, "make check || true", "time cargo test")
	refused := map[string]string{
		"npm test --script-shell=/bin/sh":                    "an npm option that runs another shell",
		"npm test -- --watch":                                "arguments to the script",
		"npm run test -- -t x":                               "npm run test is not the detected npm test",
		"npm run-script test":                                "another spelling",
		"npm exec -- touch x":                                "npm exec",
		"npx jest":                                           "npx",
		"npm_config_script_shell=/bin/sh npm test":           "npm's configuration from the environment",
		"env npm_config_script_shell=/bin/sh npm test":       "the same through env",
		"export NPM_CONFIG_SCRIPT_SHELL=/x; npm test":        "the same through export",
		"NODE_OPTIONS=--require=/tmp/x.js npm test":          "node's options",
		"make -f /tmp/other test":                            "another makefile",
		"make test SHELL=/tmp/sh":                            "a make variable on the line",
		"MAKEFLAGS=-f/tmp/m make test":                       "make's flags from the environment",
		"make -C /tmp test":                                  "another directory",
		"make":                                               "the default goal, not a detected target",
		"python3 -m pytest -p evil":                          "a pytest plugin",
		"python3 -m pytest --rootdir /":                      "another root",
		"PYTEST_ADDOPTS='-p evil' python3 -m pytest":         "pytest's options from the environment",
		"PYTHONPATH=/tmp python3 -m unittest":                "another import path",
		"python3 -c 'import os'":                             "python code on the line",
		"python3 -m unittest discover -s /tmp":               "tests from elsewhere",
		"cargo test --config build.rustc-wrapper=\"/tmp/x\"": "cargo configuration on the line",
		"RUSTC_WRAPPER=/tmp/x cargo build":                   "a compiler wrapper",
		"CARGO_HOME=/tmp cargo test":                         "cargo's home",
		"mvn -q test -Dexec.executable=/tmp/x":               "a maven property",
		"MAVEN_OPTS=-javaagent:/tmp/a.jar mvn -q test":       "a java agent",
		"./gradlew test --init-script /tmp/i.gradle":         "an init script",
		"/tmp/gradlew test":                                  "another gradlew",
		"cd sub && npm test":                                 "a directory with its own package.json",
		"cd /tmp && npm test":                                "a directory outside the project",
		"(cd sub; make test)":                                "the same in a subshell",
		"ls | xargs npm test":                                "arguments xargs appends",
		"npm $CMD":                                           "a word known only when it runs",
		"yarn test --cwd /tmp":                               "another project for yarn",
		"bun test":                                           "bun's own runner, not the detected script",
	}
	for _, mode := range []Mode{ReadOnly, Fixer} {
		p := exactPolicy(mode, root)
		for _, cmd := range allowed {
			if r := Check(cmd, p); r != "" {
				t.Errorf("mode %d: Check(%q) = %q, want allowed", mode, cmd, r)
			} else if !RunsCode(cmd, p) {
				t.Errorf("mode %d: RunsCode(%q) = false, want true: it must run in the sandbox", mode, cmd)
			}
		}
		for cmd, why := range refused {
			if r := Check(cmd, p); r == "" {
				t.Errorf("mode %d: Check(%q) allowed %s", mode, cmd, why)
			}
		}
	}
	p := exactPolicy(ReadOnly, root)
	p.Cwd = filepath.Join(root, "sub")
	if r := Check("npm test", p); !strings.Contains(r, "project root") {
		t.Errorf("npm test from a subdirectory: %q, want a refusal naming the project root", r)
	}
	if r := Check("go test ./...", exactPolicy(ReadOnly, root)); r == "" {
		t.Errorf("go test is allowed in a project whose detected commands are not Go")
	}
}

// TestExactCommandsRun runs, where the tools are installed, the commands
// detection writes for a small Node, Python and make project, and the
// escapes the table above refuses, to show that each refusal stops
// something real: every escape runs a program of the caller's choosing.
func TestExactCommandsRun(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "escaped")
	script := filepath.Join(dir, "evil.sh")
	write := func(name, body string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("evil.sh", "#!/bin/sh\ntouch "+marker+"\n", 0o755)
	write("package.json", `{"scripts":{"test":"node -e \"process.exit(0)\""}}`, 0o644)
	write("Makefile", "test:\n\t@true\n", 0o644)
	write("other.mk", "test:\n\t@touch "+marker+"\n", 0o644)
	write("Cargo.toml", "[package]\nname = \"victim\"\nversion = \"0.1.0\"\nedition = \"2021\"\n", 0o644)
	write("src/lib.rs", "#[test]\nfn t() {}\n", 0o644)
	write("tests/test_a.py", "import unittest\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        pass\n", 0o644)
	runs := []struct {
		tool, cmd string
		escapes   bool
	}{
		{"npm", "npm test", false},
		{"npm", "npm test --script-shell=" + script, true},
		{"npm", "npm_config_script_shell=" + script + " npm test", true},
		{"make", "make test", false},
		{"make", "make -f other.mk test", true},
		{"make", "make test SHELL=" + script, true},
		{"python3", "python3 -m unittest discover -s tests", false},
		{"cargo", "cargo test", false},
		{"cargo", "cargo test --config build.rustc-wrapper='\"" + script + "\"'", true},
	}
	for _, r := range runs {
		if _, err := exec.LookPath(r.tool); err != nil {
			t.Logf("%s is not installed: %q not run", r.tool, r.cmd)
			continue
		}
		os.Remove(marker)
		cmd := exec.Command("bash", "-c", r.cmd)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "npm_config_update_notifier=false", "npm_config_cache="+filepath.Join(dir, ".npm"))
		out, err := cmd.CombinedOutput()
		_, statErr := os.Stat(marker)
		escaped := statErr == nil
		switch {
		case !r.escapes && err != nil:
			t.Errorf("%q failed: %v\n%s", r.cmd, err, out)
		case r.escapes != escaped:
			t.Errorf("%q ran another program: %v, want %v\n%s", r.cmd, escaped, r.escapes, out)
		}
		p := exactPolicy(ReadOnly, dir)
		if allowed := Check(r.cmd, p) == ""; allowed == r.escapes {
			t.Errorf("Check(%q) allowed = %v, want %v", r.cmd, allowed, !r.escapes)
		}
	}
}

// TestExactRefusalNamesTheCommands: a near miss is told the exact forms.
func TestExactRefusalNamesTheCommands(t *testing.T) {
	root := t.TempDir()
	r := Check("npm test -- -t parser", exactPolicy(ReadOnly, root))
	if !strings.Contains(r, "exactly as written") || !strings.Contains(r, "npm test, npm run build, npm run lint, npm run typecheck") {
		t.Errorf("refusal of npm test with extra words: %q", r)
	}
}
