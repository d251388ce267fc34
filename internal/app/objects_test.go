package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/client"
	"github.com/whetstone-dev/whetstone/internal/gitrun"
)

// gitFiles lists the files under dir/.git.
func gitFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	root := filepath.Join(dir, ".git")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestRunsLeaveNothingInGit starts two runs at once in one project (two
// sessions), ends the first and then the second. While a run lasts its
// objects are in its own directory in .git, readable by whetstone's git
// and never in the repository's store; the first run's end leaves the
// second's trees readable; once both ended, .git is file for file what it
// was before.
func TestRunsLeaveNothingInGit(t *testing.T) {
	dir := newProject(t, t.TempDir())
	if err := os.WriteFile(filepath.Join(dir, "util.go"), []byte("package main\n\nfunc util() int { return 1 }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := gitFiles(t, dir)
	t.Chdir(dir) // the hooks' project is the one they run in
	a := &app.App{Now: time.Now, Getenv: testGetenv, Log: io.Discard, Stderr: io.Discard}
	proj, err := a.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	start := func(session string) string {
		t.Helper()
		p, err := client.Parse(payload(t, map[string]any{"session_id": session, "hook_event_name": "UserPromptSubmit", "cwd": dir,
			"prompt": "/whetstone:review --reviewers critic"}))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := a.Hook(context.Background(), "user-prompt-submit", p)
		if err != nil {
			t.Fatal(err)
		}
		id := proj.Latest()
		if id == "" {
			out, _ := exec.Command("find", dir, "-not", "-path", "*/.git/objects/*").CombinedOutput()
			t.Fatalf("no run started for %s: %s\n%s", session, resp.Encode(), out)
		}
		return id
	}
	tree := func(id string) string {
		t.Helper()
		var c struct{ Tree string }
		data, err := os.ReadFile(filepath.Join(dir, ".whetstone", "runs", id, "context.json"))
		if err == nil {
			err = json.Unmarshal(data, &c)
		}
		if err != nil || c.Tree == "" {
			t.Fatalf("run %s's tree: %q, %v", id, c.Tree, err)
		}
		return c.Tree
	}
	g := gitrun.Git{Dir: dir}
	first := start("0b1e0000-0000-4000-8000-000000000001")
	second := start("0b1e0000-0000-4000-8000-000000000002")
	if first == second {
		t.Fatalf("one run for two sessions: %s", first)
	}
	var store []string
	for _, f := range gitFiles(t, dir) {
		if strings.HasPrefix(f, "objects/") && !slices.Contains(before, f) {
			store = append(store, f)
		}
	}
	if len(store) > 0 {
		t.Errorf("the runs wrote into the repository's store: %v", store)
	}
	for _, id := range []string{first, second} {
		if fi, err := os.Stat(filepath.Join(dir, ".git", gitrun.ObjectsPrefix+id)); err != nil || !fi.IsDir() {
			t.Errorf("run %s has no object directory: %v", id, err)
		}
	}
	if pending, _ := filepath.Glob(filepath.Join(dir, ".git", gitrun.ObjectsPrefix+"start-*")); len(pending) > 0 {
		t.Errorf("a start's pending objects were not handed to its run: %v", pending)
	}

	if _, err := a.Abort(proj, first); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", gitrun.ObjectsPrefix+first)); err == nil {
		t.Errorf("run %s ended and its objects are still in .git", first)
	}
	if out, err := g.Str(context.Background(), "ls-tree", "-r", "--name-only", tree(second)); err != nil || !strings.Contains(out, "util.go") {
		t.Fatalf("the second run's tree after the first ended: %q, %v", out, err)
	}
	if _, err := a.Abort(proj, second); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, gitFiles(t, dir)); diff != "" {
		t.Errorf(".git after both runs ended differs from before them (-before +after):\n%s", diff)
	}
}

// A start refused after the change was snapshotted (past the size gate)
// leaves nothing in .git either.
func TestRefusedStartLeavesNothingInGit(t *testing.T) {
	dir := newProject(t, t.TempDir())
	if err := os.WriteFile(filepath.Join(dir, "whetstone.json"), []byte(`{"max_files": 1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", "whetstone.json"}, {"-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "gate"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "util.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := gitFiles(t, dir)
	t.Chdir(dir)
	a := &app.App{Now: time.Now, Getenv: testGetenv, Log: io.Discard, Stderr: io.Discard}
	p, err := client.Parse(payload(t, map[string]any{"session_id": "0b1e0000-0000-4000-8000-000000000003", "hook_event_name": "UserPromptSubmit", "cwd": dir,
		"prompt": "/whetstone:review --reviewers critic"}))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := a.Hook(context.Background(), "user-prompt-submit", p)
	if err != nil {
		t.Fatal(err)
	}
	if resp == nil || resp.Decision != "block" || !strings.Contains(resp.Reason, "files") {
		t.Fatalf("want the start refused by the size gate, got %s", resp.Encode())
	}
	if diff := cmp.Diff(before, gitFiles(t, dir)); diff != "" {
		t.Errorf(".git after a refused start differs (-before +after):\n%s", diff)
	}
}

// A start removes the object directories of this project's starts that
// never made a run and of runs without a state (after an hour), and leaves
// a fresh one and another project's.
func TestStartSweepsLeftObjects(t *testing.T) {
	dir := newProject(t, t.TempDir())
	left := func(owner, root string, age time.Duration) string {
		t.Helper()
		d := filepath.Join(dir, ".git", gitrun.ObjectsPrefix+owner)
		if err := os.MkdirAll(filepath.Join(d, "ab"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "root"), []byte(root+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-age)
		if err := os.Chtimes(d, old, old); err != nil {
			t.Fatal(err)
		}
		return d
	}
	stale := left("start-0123456789abcdef", dir, 2*time.Hour)
	fresh := left("start-fedcba9876543210", dir, time.Minute)
	other := left("start-00000000000000aa", filepath.Join(dir, "sub"), 2*time.Hour)
	gone := left("9one0000-1", dir, 2*time.Hour) // a run whose directory was deleted
	if err := os.MkdirAll(filepath.Join(dir, ".whetstone", "runs", "n0state0-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	unmade := left("n0state0-1", dir, 2*time.Hour) // a run whose creation failed before its state
	t.Chdir(dir)
	a := &app.App{Now: time.Now, Getenv: testGetenv, Log: io.Discard, Stderr: io.Discard}
	p, err := client.Parse(payload(t, map[string]any{"session_id": "0b1e0000-0000-4000-8000-000000000004", "hook_event_name": "UserPromptSubmit", "cwd": dir,
		"prompt": "/whetstone:review --reviewers critic"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Hook(context.Background(), "user-prompt-submit", p); err != nil {
		t.Fatal(err)
	}
	for d, want := range map[string]bool{stale: false, fresh: true, other: true, gone: false, unmade: false} {
		if _, err := os.Stat(d); (err == nil) != want {
			t.Errorf("%s: present %v, want %v", filepath.Base(d), err == nil, want)
		}
	}
}

// TestRunsLeaveNothingInGitProcesses is TestRunsLeaveNothingInGit with
// real processes racing: four sessions start at once; then two of the runs
// are aborted while two more sessions start; then the rest are aborted.
// No start is refused, every run's tree stays readable until its own end,
// and .git ends as it began.
func TestRunsLeaveNothingInGitProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildWhetstone(t)
	dir := newProject(t, t.TempDir())
	for i := range 20 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("u%02d.go", i)), []byte(fmt.Sprintf("package main\n\nconst u%d = %d\n", i, i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := gitFiles(t, dir)
	session := func(i int) string { return fmt.Sprintf("0b1e0000-0000-4000-8000-0000000001%02d", i) }
	start := func(i int) hookEvent {
		return hookEvent{fmt.Sprintf("start %d", i), "user-prompt-submit", payload(t, map[string]any{"session_id": session(i),
			"hook_event_name": "UserPromptSubmit", "cwd": dir, "prompt": "/whetstone:review --reviewers critic"})}
	}
	started := func(res []result) {
		t.Helper()
		for _, r := range res {
			if r.err != nil || !strings.Contains(r.stdout, "whetstone started review run") {
				t.Fatalf("%s: %v\n%s\n%s", r.ev.name, r.err, r.stdout, r.stderr)
			}
		}
	}
	abort := func(ids ...string) <-chan error {
		done := make(chan error, 1)
		go func() {
			for _, id := range ids {
				cmd := exec.Command(bin, "abort", "--run", id)
				cmd.Dir, cmd.Env = dir, hookEnv()
				if out, err := cmd.CombinedOutput(); err != nil {
					done <- fmt.Errorf("abort %s: %v\n%s", id, err, out)
					return
				}
			}
			done <- nil
		}()
		return done
	}
	started(runAtOnce(t, bin, dir, []hookEvent{start(1), start(2), start(3), start(4)}))
	ids := map[int]string{}
	for i := 1; i <= 4; i++ {
		ids[i] = runOf(t, dir, session(i))
	}
	aborted := abort(ids[1], ids[2])
	started(runAtOnce(t, bin, dir, []hookEvent{start(5), start(6)}))
	if err := <-aborted; err != nil {
		t.Fatal(err)
	}
	g := gitrun.Git{Dir: dir}
	for i := 3; i <= 6; i++ {
		id := runOf(t, dir, session(i))
		ids[i] = id
		data, err := os.ReadFile(filepath.Join(dir, ".whetstone", "runs", id, "context.json"))
		var c struct{ Tree string }
		if err == nil {
			err = json.Unmarshal(data, &c)
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.Run(context.Background(), "rev-list", "--objects", "--missing=error", c.Tree); err != nil {
			t.Errorf("run %s's tree after runs %s and %s ended: %v", id, ids[1], ids[2], err)
		}
	}
	if err := <-abort(ids[3], ids[4], ids[5], ids[6]); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, gitFiles(t, dir)); diff != "" {
		t.Errorf(".git after every run ended differs from before them (-before +after):\n%s", diff)
	}
}
