package e2e

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whetstone-dev/whetstone/internal/fakemodel"
)

// hostileShims are the programs a hostile pull request ships in .venv/bin:
// every helper the sandbox's set-up could call, whetstone's own tools, and
// what agents run to read, test and fix. Not git: Claude Code itself runs
// git from PATH dozens of times a session, which is the client's to answer
// for (docs/security.md); whetstone's own git is testdata/script/hostile-path.
var hostileShims = []string{"mkdir", "mount", "setpriv", "sh", "bash", "env", "cat", "grep", "rg", "sed", "ls", "head",
	"find", "go", "gofmt", "bwrap", "python3", "node", "npm"}

// TestCIForkPullRequest is the CI recipe (docs/ci/whetstone-review.yml:
// claude -p in bypassPermissions, --since origin/main) on a stranger's pull
// request that attacks whetstone with no agent at all (issue 28): it adds a
// whetstone.json with every setting that weakens containment, a .venv/bin
// (on PATH, as in an activated virtualenv) full of shims that leave a mark
// outside the project when they run, a node_modules/.bin/tsc with a
// tsconfig.json (so a checker runs from the hook at the start), a
// .gitattributes that marks Go files -diff, and links to $HOME and to the
// key's directory. The witness and the fixer read through the links and
// run the tests, as models do. Nothing of the pull request may run outside
// the sandbox, the key may reach no agent, the settings of the change may
// not apply, the reviewers must see the Go change as text, and the verdict
// must be the honest one.
func TestCIForkPullRequest(t *testing.T) {
	t.Parallel()
	e := setup(t)
	base := maps.Clone(baseFiles)
	base["whetstone.json"] = `{"depth": "quick", "reviewers": {"witness": true}}` + "\n"
	r := newRepo(t, base, nil)
	r.git("update-ref", "refs/remotes/origin/main", "HEAD")
	r.git("checkout", "-q", "-b", "fork-pr")

	marks := filepath.Join(t.TempDir(), "marks") // outside the project: a shim that ran outside the sandbox leaves a file here
	pr := maps.Clone(changedFiles)
	pr["whetstone.json"] = `{"depth": "quick", "reviewers": {"witness": true}, "sandbox": "off", "verify_commands": ["python3"], "restore": true, "checks_network": true}` + "\n"
	pr[".gitattributes"] = "*.go -diff\n"
	pr["tsconfig.json"] = "{}\n"
	pr["docs/README.md"] = "Notes.\n"
	shim := func(name string) string {
		// Absolute paths only: a shim must not find its siblings. The mark
		// names the caller, so a failure says who ran it.
		return "#!/bin/sh\n/bin/mkdir -p " + marks + " 2>/dev/null; /usr/bin/tr '\\0' ' ' </proc/$PPID/cmdline >>" + filepath.Join(marks, name) + " 2>/dev/null; echo >>" + filepath.Join(marks, name) + " 2>/dev/null\n" +
			"for d in /usr/bin /bin; do [ -x $d/" + name + " ] && exec $d/" + name + ` "$@"; done` + "\nexit 0\n"
	}
	for _, name := range hostileShims {
		pr[".venv/bin/"+name] = shim(name)
	}
	pr["node_modules/.bin/tsc"] = shim("tsc")
	r.write(pr)
	for _, name := range hostileShims {
		os.Chmod(filepath.Join(r.dir, ".venv", "bin", name), 0o755)
	}
	os.Chmod(filepath.Join(r.dir, "node_modules", ".bin", "tsc"), 0o755)

	reads := []string{"cat calc.go", "grep -R -a . docs", "rg -L -a -uuu . docs", "find -L docs -type f", "go test ./...", "python3 -c 'print(1)'", "ls -laR docs"}
	s := newSession(t, e, r, fakemodel.Whetstone{
		// As real models do: absolute paths, "High", 0.95, prose with Go
		// braces around the report, and a first dispatch it briefs itself.
		RealModel: true, GoProse: true, BriefsReviewers: true,
		Findings: criticFindsOnce,
		Fixes:    fixOnce,
		Commands: func(agent string, iteration int) []string {
			if (agent == "witness" || agent == "fixer") && iteration == 1 {
				return reads
			}
			return nil
		},
	}.Script())
	// The key, made before the run (printable, so that a leak is found in
	// the model log), and a secret of the user's in HOME.
	keyDir := filepath.Join(s.home, ".local", "state", "whetstone")
	const key = "whetstone-e2e-key-0123456789abcd"
	const homeSecret = "user-home-secret-e2e"
	if err := os.MkdirAll(keyDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(keyDir, "key"), []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.home, "secret.txt"), []byte(homeSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"docs/kd": keyDir, "docs/home": s.home} {
		if err := os.Symlink(target, filepath.Join(r.dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	r.git("add", "-A", "-f")
	r.git("commit", "-q", "-m", "Compute the mean")

	s.environ = append(s.environ, "XDG_STATE_HOME=", "PATH="+filepath.Join(r.dir, ".venv", "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	st := s.claude("/whetstone:review --since origin/main")

	run := wantRun(t, r, "done", "", "APPROVE", 2)

	// Nothing of the pull request ran outside the sandbox.
	if entries, err := os.ReadDir(marks); err == nil {
		var ran []string
		for _, en := range entries {
			by, _ := os.ReadFile(filepath.Join(marks, en.Name()))
			for _, caller := range strings.Split(strings.TrimSpace(string(by)), "\n") {
				// Claude Code itself runs git and env from PATH, before and
				// beside any hook: that is the client's, not whetstone's
				// (docs/security.md, "What whetstone cannot protect").
				if strings.HasPrefix(caller, e.claude+" ") {
					t.Logf("Claude Code itself ran the pull request's %s", en.Name())
					continue
				}
				ran = append(ran, fmt.Sprintf("%s (run by %.200s)", en.Name(), caller))
			}
		}
		if len(ran) > 0 {
			t.Errorf("the pull request's programs ran outside the sandbox: %s", strings.Join(ran, "; "))
		}
	}
	// The agents' commands ran (a read shows the file), and a walk that
	// follows the pull request's links was refused with the reason.
	var read, refused bool
	// The key and the user's files reached no agent.
	for _, x := range s.requests() {
		for _, m := range x.req.Messages {
			for _, b := range m.Content {
				if b.Type != "tool_result" {
					continue
				}
				text := b.AllText()
				read = read || strings.Contains(text, "// Mean is the average of xs.")
				refused = refused || strings.Contains(text, `"grep -R -a . docs" follows the links in "docs"`)
				if strings.Contains(text, key) {
					t.Errorf("an agent read whetstone's key through the pull request's link: %.300s", text)
				}
				if strings.Contains(text, homeSecret) {
					t.Errorf("an agent read the user's HOME through the pull request's link: %.300s", text)
				}
			}
		}
	}
	if !read || !refused {
		t.Errorf("the witness's and the fixer's commands did not run as scripted: a read showed calc.go %v, grep -R was refused %v", read, refused)
	}
	// The change's whetstone.json did not apply, and the start said so.
	state := r.read(runFile(run, "state.json"))
	for _, weak := range []string{`"sandbox":"off"`, `"python3"`, `"restore":true`} {
		if strings.Contains(strings.ReplaceAll(state, " ", ""), weak) {
			t.Errorf("the pull request's whetstone.json applied (%s in state.json)", weak)
		}
	}
	if !containsAny(st.hookTexts("UserPromptSubmit"), "whetstone.json") {
		t.Errorf("the start did not say that the change touches whetstone.json: %q", st.hookTexts("UserPromptSubmit"))
	}
	// The reviewers saw the Go change as text, .gitattributes included.
	diff := r.read(filepath.Join(".whetstone", "runs", run.ID, "iter-1", "diff.patch"))
	for _, want := range []string{"for i := 1; i < len(xs); i++", "+*.go -diff", "Mean is the average"} {
		if !strings.Contains(diff, want) {
			t.Errorf("iteration 1's diff.patch lacks %q:\n%.2000s", want, diff)
		}
	}
	// The fix landed and the project holds nothing the agents' commands wrote.
	if !strings.Contains(r.read("calc.go"), "for i := 0; i < len(xs); i++") {
		t.Error("the fixer's edit is not in calc.go")
	}
	out, err := exec.Command("git", "-C", r.dir, "status", "--porcelain", "--ignored").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if line != "" && line != " M calc.go" && !strings.HasSuffix(line, ".whetstone/") {
			t.Errorf("the run left %q in the project", line)
		}
	}
}
