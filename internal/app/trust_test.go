package app_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/trust"
)

// gitIn runs git in dir as the tests' user.
func gitIn(t testing.TB, dir string, args ...string) {
	t.Helper()
	if out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.org"}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// commitConfig commits dir's whetstone.json alone: the base a review of
// the uncommitted work reads it at.
func commitConfig(t testing.TB, dir string) {
	t.Helper()
	gitIn(t, dir, "add", "whetstone.json")
	gitIn(t, dir, "commit", "-q", "--allow-empty", "-m", "config") // only whetstone.json is staged
}

// trustConfig trusts dir's whetstone.json as `whetstone trust` does.
func trustConfig(t testing.TB, a *app.App, dir string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "whetstone.json"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := a.TrustStore()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Add(trust.Entry{Root: dir, SHA256: trust.Sum(data), At: time.Now()}); err != nil {
		t.Fatal(err)
	}
}

// hostileProject is a Go module whose base commit holds base (file name →
// content) and whose change, made by change, is what a review looks at.
func hostileProject(t *testing.T, base map[string]string, change func(dir string)) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"go.mod": "module example.com/victim\n\ngo 1.21\n", "main.go": "package main\n\nfunc main() {}\n"}
	for name, body := range base {
		files[name] = body
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, dir, "init", "-q", "-b", "main")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "base")
	change(dir)
	t.Chdir(dir)
	return dir
}

func write(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// editMain is a change to review.
func editMain(dir string) {
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() { println(1) }\n"), 0o644)
}

// startIn starts a review in dir and returns the start's context.
func startIn(t *testing.T, a *app.App, dir, session, prompt string) string {
	t.Helper()
	out := runHook(t, a, "user-prompt-submit", payload(t, map[string]any{
		"session_id": session, "hook_event_name": "UserPromptSubmit", "cwd": dir, "prompt": prompt}))
	text := gjson.GetBytes(out, "hookSpecificOutput.additionalContext").String()
	if !strings.Contains(text, "WHETSTONE-DISPATCH") {
		t.Fatalf("no run started: %s", out)
	}
	return text
}

const (
	noteInChange = "Tell the user: whetstone.json is part of this change: it is reviewed as a file; its settings apply from the next review once it is on the base.\n"
	noteTrust    = "a setting that weakens containment and applies only once you trust this exact file; it is ignored in this run. To trust it, run `whetstone trust"
	noSandbox    = "runs the project's code, which whetstone runs only inside a bubblewrap sandbox and there is none here"
)

// TestRepositoryCannotSwitchOffTheSandbox: "sandbox": "off" from the
// repository (issue 28) is ignored unless the user trusts that exact file:
// committed at the base, untracked in the change, or committed on the
// branch under review, a reviewer's go test is still refused where there
// is no sandbox, and the start says why in one line.
func TestRepositoryCannotSwitchOffTheSandbox(t *testing.T) {
	off := `{"sandbox": "off"}` + "\n"
	for _, tc := range []struct {
		name    string
		base    map[string]string
		change  func(t *testing.T, dir string)
		trusted bool
		note    string // a line the start holds
	}{
		{name: "committed at the base", base: map[string]string{"whetstone.json": off}, note: noteTrust},
		{name: "untracked in the change", change: func(t *testing.T, dir string) { write(t, dir, "whetstone.json", off) }, note: noteInChange},
		{name: "committed on the branch", change: func(t *testing.T, dir string) {
			gitIn(t, dir, "checkout", "-q", "-b", "feature")
			write(t, dir, "whetstone.json", off)
			gitIn(t, dir, "add", "-A")
			gitIn(t, dir, "commit", "-q", "-m", "feature")
		}, note: noteInChange},
		{name: "at the base, trusted", base: map[string]string{"whetstone.json": off}, trusted: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := containApp(t, t.TempDir(), false)
			dir := hostileProject(t, tc.base, func(dir string) {
				editMain(dir)
				if tc.change != nil {
					tc.change(t, dir)
				}
			})
			if tc.trusted {
				trustConfig(t, a, dir)
			}
			session := "7a000000-0000-4000-8000-000000000001"
			text := startIn(t, a, dir, session, "/whetstone:review --reviewers critic")
			out := runHook(t, a, "pre-tool-use", bashPayload(t, session, dir, "whetstone:critic", "default", "go test ./..."))
			reason := gjson.GetBytes(out, "hookSpecificOutput.permissionDecisionReason").String()
			if tc.trusted {
				if out != nil || strings.Contains(text, "Tell the user") {
					t.Errorf("a trusted \"sandbox\": \"off\": go test answered %s, start %q; want it let through, no note", out, text)
				}
				return
			}
			if !strings.Contains(reason, noSandbox) {
				t.Errorf("go test by a reviewer: %s; want it refused for want of a sandbox", out)
			}
			if !strings.Contains(text, tc.note) {
				t.Errorf("the start does not say %q:\n%s", tc.note, text)
			}
		})
	}
}

// TestRepositoryVerifyCommands: "verify_commands" from the change (or an
// untrusted base) does not make python3 a command a reviewer may run.
func TestRepositoryVerifyCommands(t *testing.T) {
	verify := `{"verify_commands": ["python3"]}` + "\n"
	for name, base := range map[string]map[string]string{"in the change": nil, "at the base, untrusted": {"whetstone.json": verify}} {
		t.Run(name, func(t *testing.T) {
			a := containApp(t, t.TempDir(), false)
			dir := hostileProject(t, base, func(dir string) {
				editMain(dir)
				if base == nil {
					write(t, dir, "whetstone.json", verify)
				}
			})
			session := "7b000000-0000-4000-8000-000000000001"
			startIn(t, a, dir, session, "/whetstone:review --reviewers critic")
			out := runHook(t, a, "pre-tool-use", bashPayload(t, session, dir, "whetstone:critic", "default", `python3 -c 'import os; os.remove("main.go")'`))
			reason := gjson.GetBytes(out, "hookSpecificOutput.permissionDecisionReason").String()
			if gjson.GetBytes(out, "hookSpecificOutput.permissionDecision").String() != "deny" || !strings.Contains(reason, "is read-only and may not run this") {
				t.Errorf("python3 -c by a reviewer: %s; want the parser's refusal (python3 is no verification command)", out)
			}
		})
	}
}

// reviewRound starts a review by the critic alone in dir, lets during
// (the user's own work, while the reviewer runs) change the project, and
// ends the round with a clean report. It returns the run's directory.
func reviewRound(t *testing.T, a *app.App, dir, session string, during func()) string {
	t.Helper()
	startIn(t, a, dir, session, "/whetstone:review --reviewers critic")
	id := runOf(t, dir, session)
	if out := runHook(t, a, "pre-tool-use", dispatchPayload(t, session, dir, id, "critic")); out != nil {
		t.Fatalf("the dispatch was answered: %s", out)
	}
	runHook(t, a, "subagent-start", startAgentPayload(t, session, dir, "whetstone:critic", "agent-critic"))
	during()
	runHook(t, a, "subagent-stop", stopPayload(t, session, dir, "whetstone:critic", "agent-critic", reviewReport(t, "critic", "agent-critic", 0)))
	return filepath.Join(dir, ".whetstone", "runs", id)
}

// TestRestoreKeepsTheUserWork: "restore": true from the repository does
// nothing untrusted: the user's new file and edit made while the reviewer
// ran survive. Trusted, both are put back as the phase found them, and
// the one command the verdict names brings the user's versions back.
func TestRestoreKeepsTheUserWork(t *testing.T) {
	const edited = "package main\n\nfunc main() { println(\"mine\") }\n"
	userWork := func(dir string) func() {
		return func() {
			write(t, dir, "notes.txt", "my notes\n")
			write(t, dir, "main.go", edited)
		}
	}
	t.Run("untrusted", func(t *testing.T) {
		a := containApp(t, t.TempDir(), false)
		dir := hostileProject(t, map[string]string{"whetstone.json": `{"restore": true}` + "\n"}, editMain)
		reviewRound(t, a, dir, "7c000000-0000-4000-8000-000000000001", userWork(dir))
		if got, err := os.ReadFile(filepath.Join(dir, "notes.txt")); string(got) != "my notes\n" {
			t.Errorf("the user's new file: %q, %v; want it kept", got, err)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "main.go")); string(got) != edited {
			t.Errorf("the user's edit was reverted: main.go = %q", got)
		}
	})
	t.Run("trusted", func(t *testing.T) {
		a := containApp(t, t.TempDir(), false)
		dir := hostileProject(t, map[string]string{"whetstone.json": `{"restore": true}` + "\n"}, editMain)
		trustConfig(t, a, dir)
		runDir := reviewRound(t, a, dir, "7c000000-0000-4000-8000-000000000002", userWork(dir))
		if _, err := os.Stat(filepath.Join(dir, "notes.txt")); !os.IsNotExist(err) {
			t.Errorf("notes.txt was not restored away: %v", err)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, "main.go")); string(got) == edited {
			t.Errorf("main.go was not restored")
		}
		rel := filepath.Join(".whetstone", "runs", filepath.Base(runDir), "restored", "iter-1-review")
		for name, want := range map[string]string{"notes.txt": "my notes\n", "main.go": edited} {
			if got, err := os.ReadFile(filepath.Join(dir, rel, name)); string(got) != want {
				t.Errorf("kept %s = %q, %v; want the user's version", name, got, err)
			}
		}
		verdict, err := os.ReadFile(filepath.Join(runDir, "iter-1", "verdict.json"))
		if err != nil {
			t.Fatal(err)
		}
		cmd := "cp -a " + filepath.ToSlash(rel) + "/. ."
		var v struct {
			Tampered []struct{ Kind, Path, Detail string } `json:"tampered"`
		}
		if err := json.Unmarshal(verdict, &v); err != nil {
			t.Fatal(err)
		}
		named := false
		for _, c := range v.Tampered {
			named = named || c.Kind == app.KindRestored && strings.Contains(c.Detail, "`"+cmd+"`")
		}
		if !named {
			t.Fatalf("verdict.json does not name %q: %s", cmd, verdict)
		}
		if out, err := exec.Command("sh", "-c", cmd).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", cmd, err, out)
		}
		for name, want := range map[string]string{"notes.txt": "my notes\n", "main.go": edited} {
			if got, err := os.ReadFile(filepath.Join(dir, name)); string(got) != want {
				t.Errorf("after %s, %s = %q, %v; want the user's version back", cmd, name, got, err)
			}
		}
	})
}
