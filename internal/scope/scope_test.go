package scope

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestMain(m *testing.M) {
	// Git must not read the machine's configuration; the Go tools keep
	// their real caches so the signal test stays fast.
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		if os.Getenv(k) == "" {
			if out, err := exec.Command("go", "env", k).Output(); err == nil {
				os.Setenv(k, strings.TrimSpace(string(out)))
			}
		}
	}
	home, err := os.MkdirTemp("", "scope-home-*")
	if err != nil {
		panic(err)
	}
	for k, v := range map[string]string{
		"HOME": home, "XDG_CONFIG_HOME": home, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": filepath.Join(home, "gitconfig"),
		"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com",
		"GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
	} {
		os.Setenv(k, v)
	}
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// repo is a temporary git repository on branch main.
type repo struct {
	t   *testing.T
	dir string
}

func newRepo(t *testing.T) *repo {
	t.Helper()
	r := &repo{t: t, dir: t.TempDir()}
	r.git("-c", "init.defaultBranch=main", "init", "-q")
	return r
}

func (r *repo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", r.dir}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *repo) write(name, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *repo) commit(msg string) {
	r.t.Helper()
	r.git("add", "-A")
	r.git("commit", "-q", "--allow-empty", "-m", msg)
}

// state is what Detect and Next must leave alone: the status and the
// index's bytes.
func (r *repo) state() string {
	r.t.Helper()
	cmd := exec.Command("git", "-C", r.dir, "status", "--porcelain=v1", "-uall", "--ignored")
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0") // status would refresh the index
	status, err := cmd.Output()
	if err != nil {
		r.t.Fatal(err)
	}
	index, _ := os.ReadFile(filepath.Join(r.dir, ".git", "index"))
	return fmt.Sprintf("%s\nindex %x", status, index)
}

// untouched checks that the index and the work tree are as before and that
// no temporary index is left behind.
func (r *repo) untouched(before string) {
	r.t.Helper()
	if after := r.state(); after != before {
		r.t.Errorf("the index or the work tree changed:\n%s\n→\n%s", before, after)
	}
	if left, _ := filepath.Glob(filepath.Join(r.dir, ".git", "whetstone-index-*")); len(left) > 0 {
		r.t.Errorf("temporary index left behind: %v", left)
	}
}

func (r *repo) detect(req Request) (Context, []byte) {
	r.t.Helper()
	before := r.state()
	c, diff, err := Detect(context.Background(), r.dir, req)
	if err != nil {
		r.t.Fatalf("Detect: %v", err)
	}
	if after := r.state(); after != before {
		r.t.Fatalf("Detect changed the work tree or index:\n%s\n---\n%s", before, after)
	}
	return c, diff
}

func (r *repo) detectErr(req Request) string {
	r.t.Helper()
	before := r.state()
	_, _, err := Detect(context.Background(), r.dir, req)
	var e *Error
	if !errors.As(err, &e) {
		r.t.Fatalf("Detect error = %v, want *Error", err)
	}
	if after := r.state(); after != before {
		r.t.Fatalf("Detect changed the work tree or index")
	}
	return e.Msg
}

func lines(n int, prefix string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s %d\n", prefix, i)
	}
	return b.String()
}

func paths(c Context) []string {
	out := []string{}
	for _, f := range c.Files {
		out = append(out, f.Path)
	}
	return out
}

func file(t *testing.T, c Context, p string) File {
	t.Helper()
	for _, f := range c.Files {
		if f.Path == p {
			return f
		}
	}
	t.Fatalf("%s not in %v", p, paths(c))
	return File{}
}

// branchRepo is a feature branch with a commit, staged, unstaged and
// untracked work, forked from main, which moved on after the fork.
func branchRepo(t *testing.T) *repo {
	r := newRepo(t)
	r.write("a.txt", lines(10, "a"))
	r.write(".gitignore", "ignored.txt\n")
	r.commit("base")
	r.git("checkout", "-q", "-b", "feature/x")
	r.write("feature.go", "package feature\n\nfunc F() {\n\tgo func() {}()\n}\n")
	r.commit("feature")
	r.git("checkout", "-q", "main")
	r.write("main-only.txt", "later on main\n")
	r.commit("main moves on")
	r.git("checkout", "-q", "feature/x")
	r.write("staged.txt", "staged\n")
	r.git("add", "staged.txt")
	r.write("a.txt", strings.Replace(lines(10, "a"), "a 5\n", "a five\n", 1))
	r.write("new.txt", "untracked\n")
	r.write("ignored.txt", "ignored\n")
	r.write(".whetstone/.gitignore", "*\n")
	r.write(".whetstone/runs/x/state.json", "{}\n")
	return r
}

func TestDetectBranch(t *testing.T) {
	r := branchRepo(t)
	c, diff := r.detect(Request{})
	if c.Mode != ModeBranch || c.BaseRef != "main" || c.Branch != "feature/x" {
		t.Errorf("mode %s base_ref %s branch %s", c.Mode, c.BaseRef, c.Branch)
	}
	if want := r.git("merge-base", "HEAD", "main"); c.Base != want {
		t.Errorf("base = %s, want merge-base %s", c.Base, want)
	}
	if diff := cmp.Diff([]string{"a.txt", "feature.go", "new.txt", "staged.txt"}, paths(c)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if !strings.Contains(c.Description, "plus uncommitted changes") {
		t.Errorf("description %q", c.Description)
	}
	if got := file(t, c, "a.txt").Hunks; !cmp.Equal(got, []Hunk{{5, 5}}) {
		t.Errorf("a.txt hunks = %v", got)
	}
	golden(t, "branch", c, diff)
}

func TestDetectOriginDefault(t *testing.T) {
	r := branchRepo(t)
	r.git("update-ref", "refs/remotes/origin/main", "main")
	r.git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
	c, _ := r.detect(Request{})
	if c.Mode != ModeBranch || c.BaseRef != "origin/main" {
		t.Errorf("mode %s base_ref %s", c.Mode, c.BaseRef)
	}
}

func TestDetectDefaultBranch(t *testing.T) {
	r := newRepo(t)
	r.write("a.txt", "one\n")
	r.commit("root")
	t.Run("root commit", func(t *testing.T) {
		c, _ := r.detect(Request{})
		if c.Mode != ModeLastCommit || c.Base != emptyTree {
			t.Fatalf("mode %s base %s", c.Mode, c.Base)
		}
		if f := file(t, c, "a.txt"); f.Status != "added" || !cmp.Equal(f.Hunks, []Hunk{{1, 1}}) {
			t.Errorf("a.txt = %+v", f)
		}
	})
	r.write("a.txt", "one\ntwo\n")
	r.commit("second")
	t.Run("clean: last commit", func(t *testing.T) {
		c, _ := r.detect(Request{})
		if c.Mode != ModeLastCommit || c.Base != r.git("rev-parse", "HEAD~1") || c.BaseRef != "HEAD~1" {
			t.Fatalf("mode %s base %s (%s)", c.Mode, c.Base, c.BaseRef)
		}
		if got := file(t, c, "a.txt").Hunks; !cmp.Equal(got, []Hunk{{2, 2}}) {
			t.Errorf("hunks %v", got)
		}
	})
	t.Run("uncommitted", func(t *testing.T) {
		r.write("b.txt", "b\n")
		defer os.Remove(filepath.Join(r.dir, "b.txt"))
		c, _ := r.detect(Request{})
		if c.Mode != ModeUncommitted || c.Base != r.git("rev-parse", "HEAD") {
			t.Fatalf("mode %s base %s", c.Mode, c.Base)
		}
		if diff := cmp.Diff([]string{"b.txt"}, paths(c)); diff != "" {
			t.Errorf("files (-want +got):\n%s", diff)
		}
	})
}

func TestDetectNoDefaultBranch(t *testing.T) {
	r := newRepo(t)
	r.git("checkout", "-q", "-b", "work")
	r.write("a.txt", "one\n")
	r.commit("root")
	r.write("a.txt", "two\n")
	r.write(".whetstone/runs/r/state.json", "{}\n") // no .gitignore: excluded all the same
	c, _ := r.detect(Request{})
	if c.Mode != ModeUncommitted || !cmp.Equal(paths(c), []string{"a.txt"}) {
		t.Errorf("mode %s, files %v; want uncommitted, a.txt", c.Mode, paths(c))
	}
}

func TestDetectErrors(t *testing.T) {
	r := newRepo(t)
	if msg := r.detectErr(Request{}); !strings.Contains(msg, "no commits") {
		t.Errorf("unborn: %s", msg)
	}
	r.write("a.txt", "one\n")
	r.commit("one")
	r.write("a.txt", "two\n")
	r.commit("two")
	for _, tc := range []struct {
		name string
		req  Request
		want string
	}{
		{"unknown ref", Request{Since: "nope"}, `unknown ref "nope"`},
		{"option as ref", Request{Since: "--all"}, `unknown ref "--all"`},
		{"empty", Request{Uncommitted: true}, "nothing to review: uncommitted changes"},
		{"empty paths", Request{LastCommit: true, Paths: []string{"docs"}}, "nothing to review in docs (the last commit"},
		{"outside", Request{Paths: []string{"../x"}}, "outside the project"},
		{"magic", Request{Paths: []string{":(exclude)a.txt"}}, "starts with a colon"},
		{"two modes", Request{Staged: true, LastCommit: true}, "exclude each other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if msg := r.detectErr(tc.req); !strings.Contains(msg, tc.want) {
				t.Errorf("error %q, want it to contain %q", msg, tc.want)
			}
		})
	}
	t.Run("detached", func(t *testing.T) {
		r.git("checkout", "-q", "--detach", "HEAD")
		if msg := r.detectErr(Request{}); !strings.Contains(msg, "detached") {
			t.Errorf("error %q", msg)
		}
		c, _ := r.detect(Request{Since: "HEAD~1"})
		if c.Mode != ModeSince || c.BaseRef != "HEAD~1" || c.Branch != "" {
			t.Errorf("since on detached HEAD: %+v", c)
		}
	})
	t.Run("not a repository", func(t *testing.T) {
		_, _, err := Detect(context.Background(), t.TempDir(), Request{})
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(e.Msg, "not inside a git work tree") {
			t.Errorf("error %v", err)
		}
	})
}

func TestDetectKinds(t *testing.T) {
	r := newRepo(t)
	r.write("old name.txt", lines(20, "line"))
	r.write("gone.txt", "bye\nbye\n")
	r.write("img.bin", "\x00\x01\x02")
	r.write("keep.txt", lines(10, "k"))
	r.commit("base")
	r.git("mv", "old name.txt", "nëw näme.txt")
	r.write("nëw näme.txt", strings.Replace(lines(20, "line"), "line 7\n", "line seven\n", 1))
	r.git("rm", "-q", "gone.txt")
	r.write("img.bin", "\x00\x03\x04\x05")
	r.write("keep.txt", strings.Replace(lines(10, "k"), "k 4\nk 5\n", "", 1))
	c, diff := r.detect(Request{Uncommitted: true})
	want := []File{
		{Path: "gone.txt", Status: "deleted", Deleted: 2, Hunks: []Hunk{}, Triage: "normal"},
		{Path: "img.bin", Status: "modified", Binary: true, Hunks: []Hunk{}, Triage: "skip", TriageReason: "binary"},
		{Path: "keep.txt", Status: "modified", Deleted: 2, Hunks: []Hunk{{4, 4}}, Triage: "normal"},
		{Path: "nëw näme.txt", OldPath: "old name.txt", Status: "renamed", Added: 1, Deleted: 1, Hunks: []Hunk{{7, 7}}, Triage: "normal"},
	}
	if d := cmp.Diff(want, c.Files); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	if !c.Touches("img.bin", 99, 0, 0) || !c.Touches("gone.txt", 1, 1, 0) || c.Touches("nope.txt", 1, 1, 100) {
		t.Error("Touches of binary, deleted or unknown files")
	}
	golden(t, "kinds", c, diff)
}

func TestDetectPaths(t *testing.T) {
	r := newRepo(t)
	r.write("README", "r\n")
	r.commit("base")
	for _, p := range []string{"services/a/x.go", "services/a/db/q.sql", "services/b/y.go", "services/bb/z.go", "db/top.sql", "root.sql"} {
		r.write(p, "new\n")
	}
	for _, tc := range []struct {
		words []string
		want  []string
	}{
		{[]string{"services/a/"}, []string{"services/a/db/q.sql", "services/a/x.go"}},
		{[]string{"services/b"}, []string{"services/b/y.go"}},
		{[]string{"**/*.sql"}, []string{"db/top.sql", "root.sql", "services/a/db/q.sql"}},
		{[]string{"services/b*"}, []string{"services/b/y.go", "services/bb/z.go"}},
		{[]string{"nothing/here", "./db"}, []string{"db/top.sql"}},
		{[]string{filepath.Join(r.dir, "services", "b")}, []string{"services/b/y.go"}},
	} {
		c, _ := r.detect(Request{Uncommitted: true, Paths: tc.words})
		if d := cmp.Diff(tc.want, paths(c)); d != "" {
			t.Errorf("%v (-want +got):\n%s", tc.words, d)
		}
	}
	if msg := r.detectErr(Request{Uncommitted: true, Paths: []string{"nothing/here", "*.txt"}}); !strings.Contains(msg, "nothing to review in nothing/here *.txt (uncommitted") {
		t.Errorf("error %q", msg)
	}
}

func TestDetectStaged(t *testing.T) {
	r := newRepo(t)
	r.write("a.txt", lines(5, "a"))
	r.commit("base")
	r.write("a.txt", lines(6, "a"))
	r.git("add", "a.txt")
	r.write("a.txt", lines(8, "a"))
	r.write("untracked.txt", "u\n")
	c, diff := r.detect(Request{Staged: true})
	if c.Mode != ModeStaged || !cmp.Equal(paths(c), []string{"a.txt"}) || !cmp.Equal(c.Files[0].Hunks, []Hunk{{6, 6}}) {
		t.Errorf("staged: %+v", c)
	}
	if bytes.Contains(diff, []byte("a 7")) {
		t.Errorf("staged diff has an unstaged line:\n%s", diff)
	}
}

func TestDetectGates(t *testing.T) {
	r := newRepo(t)
	r.write("README", "r\n")
	r.commit("base")
	for i := range 3 {
		r.write(fmt.Sprintf("f%d.txt", i), lines(50, "x"))
	}
	r.write("go.sum", lines(500, "lock"))
	if msg := r.detectErr(Request{Uncommitted: true, MaxFiles: 2}); msg != "the change touches 3 files (limit 2): narrow it with paths or --since, or pass --force" {
		t.Errorf("files gate: %q", msg)
	}
	if msg := r.detectErr(Request{Uncommitted: true, MaxTokens: 100}); !strings.Contains(msg, "tokens (limit 100)") {
		t.Errorf("tokens gate: %q", msg)
	}
	c, diff := r.detect(Request{Uncommitted: true, MaxFiles: 2, MaxTokens: 100, Force: true})
	if len(c.Files) != 4 || c.DiffBytes != len(diff) || c.DiffTokens != (len(diff)-len("# whetstone: go.sum skipped (lockfile), added\n"))/4 {
		t.Errorf("forced: %d files, %d bytes, %d tokens, diff %d", len(c.Files), c.DiffBytes, c.DiffTokens, len(diff))
	}
	if _, _, err := Detect(context.Background(), r.dir, Request{Uncommitted: true, MaxFiles: 3}); err != nil {
		t.Errorf("3 files and a skipped lockfile within a limit of 3: %v", err)
	}
}

func TestTriage(t *testing.T) {
	r := newRepo(t)
	gen := "// Code generated by stringer; DO NOT EDIT.\n\npackage x\n" + lines(30, "// l")
	r.write("gen/x_string.go", gen)
	r.commit("base")
	r.write("gen/x_string.go", gen+"// more\n") // the header is far from the change
	r.write("go.sum", "x v1 h1:abc\n")
	r.write("internal/auth/token.go", "package auth\n")
	r.write("internal/authorMeta.go", "package internal\n")
	r.write(".github/workflows/ci.yml", "on: push\n")
	r.write("vendor/m/m.go", "package m\n")
	r.write("web/app.min.js", "x\n")
	r.write("docs/guide.md", "guide\n")
	r.write("core/engine.go", "package core\n")
	r.write("schema.sql", "-- Code generated by sqlc. DO NOT EDIT.\nCREATE TABLE t (id int);\n")
	c, diff := r.detect(Request{Uncommitted: true})
	got := map[string]string{}
	for _, f := range c.Files {
		got[f.Path] = f.Triage + " " + f.TriageReason
	}
	want := map[string]string{
		"gen/x_string.go":          "skip generated: Code generated … DO NOT EDIT",
		"go.sum":                   "skip lockfile",
		"internal/auth/token.go":   "deep sensitive path word: auth",
		"internal/authorMeta.go":   "normal ",
		".github/workflows/ci.yml": "deep CI configuration",
		"vendor/m/m.go":            "skip vendored",
		"web/app.min.js":           "skip minified",
		"docs/guide.md":            "normal ",
		"core/engine.go":           "normal ",
		"schema.sql":               "skip generated: Code generated … DO NOT EDIT",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("triage (-want +got):\n%s", d)
	}
	if !strings.Contains(string(diff), "# whetstone: go.sum skipped (lockfile), added\n") || strings.Contains(string(diff), "h1:abc") {
		t.Errorf("skipped file in diff:\n%s", diff)
	}
	if d := cmp.Diff([]string{"gen/x_string.go", "go.sum", "schema.sql", "vendor/m/m.go", "web/app.min.js"}, c.Skipped); d != "" {
		t.Errorf("skipped (-want +got):\n%s", d)
	}

	c, _ = r.detect(Request{Uncommitted: true, Normal: []string{"go.sum", "vendor"}, Skip: []string{"docs/**", "core"}, Deep: []string{"core/*.go", "**/*.md"}})
	got = map[string]string{}
	for _, f := range c.Files {
		got[f.Path] = f.Triage + " " + f.TriageReason
	}
	for p, w := range map[string]string{
		"go.sum":         "normal whetstone.json triage normal: go.sum",
		"vendor/m/m.go":  "normal whetstone.json triage normal: vendor",
		"docs/guide.md":  "skip whetstone.json triage skip: docs/**",
		"core/engine.go": "skip whetstone.json triage skip: core",
	} {
		if got[p] != w {
			t.Errorf("%s: %q, want %q", p, got[p], w)
		}
	}
}

func TestSpecialists(t *testing.T) {
	r := newRepo(t)
	r.write("README", "r\n")
	r.commit("base")
	r.write("db/migrations/001_init.sql", "CREATE TABLE t (id int);\n")
	r.write("worker/pool.go", "package worker\n\nfunc Run() {\n\tvar mu sync.Mutex\n\t_ = mu\n}\n")
	r.write("vendor/x/x.go", "package x\n\nfunc init() { go func() {}() }\n")
	r.write("gateway/edge.go", "package gateway\n")
	c, _ := r.detect(Request{Uncommitted: true, Specialists: map[string][]string{"api-reviewer": {"gateway/**"}}})
	want := []Specialist{
		{"api-reviewer", "gateway/edge.go matches gateway/** (whetstone.json)"},
		{"concurrency-reviewer", `worker/pool.go:4 adds "sync."`},
		{"database-reviewer", "db/migrations/001_init.sql is a .sql file"},
		{"performance-reviewer", `worker/pool.go: path names "pool"`},
	}
	if d := cmp.Diff(want, c.Specialists); d != "" {
		t.Errorf("specialists (-want +got):\n%s", d)
	}
	for i := range 21 {
		r.write(fmt.Sprintf("many/f%02d.txt", i), "x\n")
	}
	c, _ = r.detect(Request{Uncommitted: true, Paths: []string{"many", "vendor"}})
	if d := cmp.Diff([]Specialist{{"architecture-reviewer", "21 files changed (more than 20)"}}, c.Specialists); d != "" {
		t.Errorf("specialists (-want +got):\n%s", d)
	}
}

func TestNext(t *testing.T) {
	r := newRepo(t)
	r.write("a.txt", lines(20, "a"))
	r.write("other.txt", "o\n")
	r.commit("base")
	r.write("a.txt", strings.Replace(lines(20, "a"), "a 15\n", "a fifteen\n", 1))
	r.write("b.txt", "b\n")
	prev, _ := r.detect(Request{Uncommitted: true})

	// The fixer inserts two lines near the top of a.txt and creates c.txt.
	r.write("a.txt", strings.Replace(strings.Replace(lines(20, "a"), "a 15\n", "a fifteen\n", 1), "a 2\n", "a 2\nfix 1\nfix 2\n", 1))
	r.write("c.txt", "created by the fix\n")
	before := r.state()
	next, diff, fix, err := Next(context.Background(), r.dir, prev)
	if err != nil {
		t.Fatal(err)
	}
	if r.state() != before {
		t.Error("Next changed the work tree or index")
	}
	if next.Iteration != 2 || next.Base != prev.Base || next.Mode != prev.Mode || next.Tree == prev.Tree {
		t.Errorf("next: %+v", next)
	}
	if d := cmp.Diff([]string{"a.txt", "b.txt", "c.txt"}, paths(next)); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	if got := file(t, next, "a.txt").Hunks; !cmp.Equal(got, []Hunk{{3, 4}, {17, 17}}) {
		t.Errorf("a.txt hunks %v", got)
	}
	if !bytes.Contains(diff, []byte("+a fifteen")) || bytes.Contains(fix, []byte("fifteen")) || !bytes.Contains(fix, []byte("+fix 1")) || !bytes.Contains(fix, []byte("+created by the fix")) || bytes.Contains(fix, []byte("b.txt")) {
		t.Errorf("diff:\n%s\nfix:\n%s", diff, fix)
	}

	m, err := LineMap(fix)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path       string
		line, want int
	}{{"a.txt", 1, 1}, {"a.txt", 2, 2}, {"a.txt", 3, 5}, {"a.txt", 15, 17}, {"other.txt", 1, 1}} {
		if p, got := m(tc.path, tc.line); p != tc.path || got != tc.want {
			t.Errorf("LineMap(%s, %d) = %s, %d, want %d", tc.path, tc.line, p, got, tc.want)
		}
	}
}

func TestLineMap(t *testing.T) {
	r := newRepo(t)
	r.write("a.txt", lines(30, "a"))
	r.write("r.txt", lines(30, "r"))
	r.commit("base")
	before := r.git("rev-parse", "HEAD^{tree}")
	a := strings.Replace(lines(30, "a"), "a 5\n", "a 5\nnew 1\nnew 2\nnew 3\n", 1)
	a = strings.Replace(a, "a 10\na 11\na 12\n", "changed\n", 1)
	r.write("a.txt", a)
	r.git("mv", "r.txt", "renamed.txt")
	r.write("renamed.txt", strings.Replace(lines(30, "r"), "r 20\n", "", 1))
	r.commit("fix")
	fix := r.git("diff", "-M", before, "HEAD^{tree}")
	m, err := LineMap([]byte(fix + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, wantPath string
		line, want     int
	}{
		{"a.txt", "a.txt", 5, 5},
		{"a.txt", "a.txt", 6, 9},   // below the inserted block
		{"a.txt", "a.txt", 11, 13}, // inside the changed block: its new start
		{"a.txt", "a.txt", 13, 14}, // below both: +3 -2
		{"r.txt", "renamed.txt", 19, 19},
		{"r.txt", "renamed.txt", 20, 20}, // the deleted line maps to where it was
		{"r.txt", "renamed.txt", 25, 24},
		{"x.txt", "x.txt", 7, 7},
	} {
		if p, got := m(tc.path, tc.line); p != tc.wantPath || got != tc.want {
			t.Errorf("LineMap(%s, %d) = %s, %d, want %s, %d", tc.path, tc.line, p, got, tc.wantPath, tc.want)
		}
	}
	if _, err := LineMap([]byte("diff --git a/x b/x\n@@ -1,2 +1,2 @@\n+only\n")); err == nil {
		t.Error("LineMap accepted a broken patch")
	}
}

func TestTouches(t *testing.T) {
	c := Context{Files: []File{{Path: "m.go", Status: "modified", Hunks: []Hunk{{10, 12}, {40, 40}}}, {Path: "n.go", Status: "added"}, {Path: "r.go", Status: "renamed", Hunks: []Hunk{}}}}
	for _, tc := range []struct {
		file              string
		line, end, margin int
		want              bool
	}{
		{"m.go", 10, 10, 0, true},
		{"m.go", 13, 0, 0, false},
		{"m.go", 15, 0, 3, true},
		{"m.go", 16, 20, 3, false},
		{"m.go", 1, 50, 0, true},
		{"m.go", 36, 37, 3, true},
		{"n.go", 500, 0, 0, true},
		{"r.go", 1, 1, 3, false},
		{"x.go", 10, 10, 3, false},
	} {
		if got := c.Touches(tc.file, tc.line, tc.end, tc.margin); got != tc.want {
			t.Errorf("Touches(%s, %d, %d, %d) = %v", tc.file, tc.line, tc.end, tc.margin, got)
		}
	}
}

func TestDetectSubdirectory(t *testing.T) {
	r := newRepo(t)
	r.write("proj/a.txt", "a\n")
	r.write("elsewhere.txt", "e\n")
	r.commit("base")
	r.write("proj/a.txt", "a\nb\n")
	r.write("proj/new.txt", "n\n")
	r.write("elsewhere.txt", "changed\n")
	c, diff, err := Detect(context.Background(), filepath.Join(r.dir, "proj"), Request{Uncommitted: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"a.txt", "new.txt"}, paths(c)); d != "" || !bytes.Contains(diff, []byte("diff --git a/a.txt b/a.txt")) {
		t.Errorf("files (-want +got):\n%s\n%s", d, diff)
	}
}

func TestSignals(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not installed")
	}
	r := newRepo(t)
	r.write("go.mod", "module example.com/m\n\ngo 1.21\n")
	r.write("main.go", "package main\n\nfunc main() {}\n")
	r.write("other.go", "package main\n\nimport \"fmt\"\n\nfunc other() { fmt.Printf(\"%d\\n\", \"x\") }\n")
	r.commit("base")
	r.write("main.go", "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Printf(\"%d\\n\", \"s\")  \n\tother()\n}\n")
	c, _ := r.detect(Request{Uncommitted: true, Checks: true})
	got := map[string]Signal{}
	for _, s := range c.Signals {
		got[s.Tool] = s
	}
	vet := got["go vet"]
	if vet.Status != "candidates" || len(vet.Candidates) != 1 || vet.Candidates[0].File != "main.go" || vet.Candidates[0].Line != 6 {
		t.Errorf("go vet: %+v (the problem in unchanged other.go must not count)", vet)
	}
	if s := got["gofmt"]; s.Status != "candidates" || s.Candidates[0].File != "main.go" {
		t.Errorf("gofmt: %+v", s)
	}
	if s := got["git diff --check"]; s.Status != "candidates" || s.Candidates[0].Line != 6 {
		t.Errorf("git diff --check: %+v", s)
	}
	if s := got["go build"]; s.Status != "clean" {
		t.Errorf("go build: %+v", s)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "m")); err == nil {
		t.Error("go build wrote a binary into the work tree")
	}
}

// golden compares c and diff with testdata/<name>.context.json and
// <name>.diff.patch; -update rewrites them. Commit and tree names are
// replaced by placeholders so the files do not depend on the git version.
func golden(t *testing.T, name string, c Context, diff []byte) {
	t.Helper()
	// In order, so that when two ids are equal the result does not depend
	// on map iteration.
	repl := []string{}
	for _, kv := range [][2]string{{"BASE", c.Base}, {"HEAD", c.Head}, {"TREE", c.Tree}} {
		k, v := kv[0], kv[1]
		repl = append(repl, v, "<"+k+">", v[:7], "<"+k+"7>")
	}
	js, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{
		name + ".context.json": []byte(strings.NewReplacer(repl...).Replace(string(js)) + "\n"),
		name + ".diff.patch":   regexp.MustCompile(`(?m)^index [0-9a-f]+\.\.[0-9a-f]+`).ReplaceAll(diff, []byte("index <blobs>")),
	}
	for file, data := range got {
		p := filepath.Join("testdata", file)
		if *update {
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%v (run go test -update)", err)
		}
		if d := cmp.Diff(string(want), string(data)); d != "" {
			t.Errorf("%s (-want +got):\n%s", p, d)
		}
	}
}

func FuzzLineMap(f *testing.F) {
	for _, name := range []string{"branch.diff.patch", "kinds.diff.patch"} {
		if data, err := os.ReadFile(filepath.Join("testdata", name)); err == nil {
			f.Add(data, "a.txt", 5)
		}
	}
	f.Add([]byte("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,3 @@\n a\n+b\n c\n"), "x", 2)
	f.Fuzz(func(t *testing.T, patch []byte, path string, line int) {
		m, err := LineMap(patch)
		if err != nil {
			return
		}
		if _, got := m(path, line); line >= 1 && got < 1 {
			t.Errorf("line %d of %s maps to %d", line, path, got)
		}
	})
}

// TestSnapshotTempInsideWorkTree: TMPDIR inside the work tree (as under
// testscript) must not put whetstone's temporary index into the change.
func TestSnapshotTempInsideWorkTree(t *testing.T) {
	r := newRepo(t)
	r.write("a.go", "package a\n")
	r.commit("base")
	r.write("a.go", "package a\n\nvar X = 1\n")
	tmp := filepath.Join(r.dir, ".tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	c, _ := r.detect(Request{})
	if len(c.Files) != 1 || c.Files[0].Path != "a.go" {
		t.Errorf("files = %+v, want only a.go", c.Files)
	}
	if left, _ := filepath.Glob(filepath.Join(r.dir, ".git", "whetstone-index-*")); len(left) > 0 {
		t.Errorf("temporary index left behind: %v", left)
	}
}

// vendoredRepo is `go mod vendor && git add vendor` beside a one-line
// change: 4,500 vendored files staged next to one edited line.
func vendoredRepo(t *testing.T) *repo {
	r := newRepo(t)
	r.write("go.mod", "module example.com/m\n\ngo 1.21\n")
	r.write("main.go", "package main\n\nfunc main() {}\n")
	r.commit("base")
	body := "package dep\n\n" + lines(60, "// a vendored line of some length, as vendored code has")
	for i := range 4500 {
		r.write(fmt.Sprintf("vendor/github.com/example/dep%02d/pkg%03d/file_%d.go", i%45, i/45, i), body)
	}
	r.write("vendor/modules.txt", "# example.com/dep v1.0.0\n")
	r.git("add", "vendor")
	r.write("main.go", "package main\n\nfunc main() { println(1) }\n")
	return r
}

func TestDetectVendored(t *testing.T) {
	r := vendoredRepo(t)
	start := time.Now()
	c, diff := r.detect(Request{Checks: true})
	t.Logf("4,501 files (4,500 vendored): Detect %v, diff.patch %d bytes, %d tokens", time.Since(start).Round(time.Millisecond), len(diff), c.DiffTokens)
	if len(c.Files) != 4502 || len(c.Skipped) != 4501 {
		t.Fatalf("%d files, %d skipped", len(c.Files), len(c.Skipped))
	}
	if len(diff) > 4<<10 || c.DiffTokens > 100 {
		t.Errorf("diff.patch is %d bytes (%d tokens) for a one-line change:\n%.2000s", len(diff), c.DiffTokens, diff)
	}
	if !bytes.Contains(diff, []byte("+func main() { println(1) }")) || !bytes.HasSuffix(diff, []byte("# whetstone: 4481 more skipped files, listed in context.json (\"skipped\")\n")) {
		t.Errorf("diff.patch lacks the reviewed line or the count of skipped files:\n%.3000s", diff)
	}
	if len(c.Specialists) != 0 {
		t.Errorf("skipped files called in specialists: %+v", c.Specialists)
	}
	for _, s := range c.Signals {
		for _, cand := range s.Candidates {
			if strings.HasPrefix(cand.File, "vendor/") {
				t.Errorf("%s reports a vendored file: %+v", s.Tool, cand)
			}
		}
	}

	// Without the one-line change, nothing is left to review.
	r.git("checkout", "-q", "main.go")
	msg := r.detectErr(Request{})
	if want := "nothing to review: every changed file of uncommitted changes (staged, unstaged and untracked) against HEAD (" + r.git("rev-parse", "--short=7", "HEAD") + ") is skipped by triage (4501 vendored)"; !strings.HasPrefix(msg, want) {
		t.Errorf("error %q, want it to start %q", msg, want)
	}
}

// cloneRepo is a clone of a bare "origin" whose default branch is def,
// with two commits on it.
func cloneRepo(t *testing.T, def string) *repo {
	t.Helper()
	seed := newRepo(t)
	seed.git("checkout", "-q", "-b", def)
	seed.write("a.go", "package a\n")
	seed.commit("one")
	seed.write("a.go", "package a\n\nvar A = 1\n")
	seed.commit("two")
	origin := t.TempDir()
	seed.git("clone", "-q", "--bare", seed.dir, origin)
	r := &repo{t: t, dir: t.TempDir()}
	r.git("clone", "-q", origin, r.dir)
	return r
}

// feature commits n files, one a commit, on the current branch.
func (r *repo) feature(n int) {
	for i := range n {
		r.write(fmt.Sprintf("f%d.go", i), fmt.Sprintf("package a\n\nvar F%d = %d\n", i, i))
		r.commit(fmt.Sprintf("feature %d", i))
	}
}

func TestDetectBranchFromOrigin(t *testing.T) {
	r := cloneRepo(t, "main")
	// git's default: the new branch's upstream is origin/main.
	r.git("checkout", "-q", "-b", "my-feature", "origin/main")
	if up := r.git("rev-parse", "--abbrev-ref", "@{upstream}"); up != "origin/main" {
		t.Fatalf("upstream %s", up)
	}
	r.feature(3)
	c, _ := r.detect(Request{})
	if c.Mode != ModeBranch || c.BaseRef != "origin/main" || c.Commits != 3 {
		t.Errorf("mode %s, base %s, %d commits; want branch against origin/main, 3 commits", c.Mode, c.BaseRef, c.Commits)
	}
	if d := cmp.Diff([]string{"f0.go", "f1.go", "f2.go"}, paths(c)); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	want := fmt.Sprintf("branch my-feature against its merge-base with origin/main: 3 commits (%s..%s)", c.Base[:7], c.Head[:7])
	if c.Description != want {
		t.Errorf("description %q, want %q", c.Description, want)
	}

	// On main itself: the default branch, so its last commit.
	r.git("checkout", "-q", "main")
	if c, _ := r.detect(Request{}); c.Mode != ModeLastCommit || c.Commits != 1 {
		t.Errorf("on main: mode %s, %d commits", c.Mode, c.Commits)
	}
}

func TestDetectTrunkWithoutOriginHEAD(t *testing.T) {
	r := cloneRepo(t, "trunk")
	r.git("remote", "set-head", "origin", "--delete")
	r.git("checkout", "-q", "-b", "fix", "origin/trunk")
	r.feature(2)
	c, _ := r.detect(Request{})
	if c.Mode != ModeBranch || c.BaseRef != "origin/trunk" || c.Commits != 2 || len(c.Files) != 2 {
		t.Errorf("mode %s, base %s, %d commits, files %v; want branch against origin/trunk, 2 commits, 2 files", c.Mode, c.BaseRef, c.Commits, paths(c))
	}
	r.git("checkout", "-q", "trunk")
	if c, _ := r.detect(Request{}); c.Mode != ModeLastCommit {
		t.Errorf("on trunk: mode %s", c.Mode)
	}
	// init.defaultBranch names the default when no usual name exists.
	r.git("branch", "-q", "-m", "trunk", "stable")
	r.git("update-ref", "refs/remotes/origin/stable", "refs/remotes/origin/trunk")
	r.git("update-ref", "-d", "refs/remotes/origin/trunk")
	r.git("branch", "-q", "-c", "stable", "other")
	r.git("config", "init.defaultBranch", "stable")
	r.git("checkout", "-q", "fix")
	if c, _ := r.detect(Request{}); c.BaseRef != "origin/stable" || c.Commits != 2 {
		t.Errorf("init.defaultBranch: base %s, %d commits", c.BaseRef, c.Commits)
	}
}

func TestDetectForkPoint(t *testing.T) {
	r := newRepo(t)
	r.git("checkout", "-q", "-b", "stable")
	r.write("a.go", "package a\n")
	r.commit("root")
	r.git("checkout", "-q", "-b", "topic")
	r.feature(2)
	// The first-parent history forks off stable, the one other branch.
	c, _ := r.detect(Request{})
	if c.Mode != ModeBranch || c.BaseRef != "stable" || c.Commits != 2 {
		t.Errorf("mode %s, base %s, %d commits", c.Mode, c.BaseRef, c.Commits)
	}
	// Two branches hold the fork point: there is no telling, and no
	// narrower scope is chosen in silence.
	r.git("branch", "-q", "release", "stable")
	msg := r.detectErr(Request{})
	if !strings.Contains(msg, "cannot tell which branch topic was made from") || !strings.Contains(msg, "--since REF") {
		t.Errorf("error %q", msg)
	}
}

func TestDetectTypeChange(t *testing.T) {
	r := newRepo(t)
	r.write("command.go", "package cmd\n\nfunc Run() {}\n")
	r.write("args.go", "package cmd\n\nvar Args []string\n")
	r.write("lib", "a file that becomes a submodule\n")
	r.commit("base")
	if err := os.Remove(filepath.Join(r.dir, "args.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("command.go", filepath.Join(r.dir, "args.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(r.dir, "lib")); err != nil {
		t.Fatal(err)
	}
	sub := &repo{t: t, dir: filepath.Join(r.dir, "lib")}
	if err := os.Mkdir(sub.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sub.git("init", "-q")
	sub.write("x.go", "package x\n")
	sub.commit("sub")
	r.commit("fix symlink")
	c, diff := r.detect(Request{})
	want := []File{
		{Path: "args.go", Status: "type-changed", Added: 1, Deleted: 3, Hunks: []Hunk{{1, 1}}, Triage: "normal"},
		{Path: "lib", Status: "type-changed", Added: 1, Deleted: 1, Hunks: []Hunk{{1, 1}}, Triage: "normal"},
	}
	if d := cmp.Diff(want, c.Files); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	for _, s := range []string{"+command.go\n", "-var Args []string\n", "+Subproject commit " + sub.git("rev-parse", "HEAD")} {
		if !bytes.Contains(diff, []byte(s)) {
			t.Errorf("diff.patch lacks %q:\n%s", s, diff)
		}
	}
	if !c.Touches("args.go", 40, 40, 0) {
		t.Error("a finding anywhere in a type-changed file is in the change")
	}
}

func TestDetectConflict(t *testing.T) {
	r := newRepo(t)
	r.write("a.go", "package a\n\nvar A = 0\n")
	r.commit("base")
	r.git("checkout", "-q", "-b", "other")
	r.write("a.go", "package a\n\nvar A = 1\n")
	r.commit("one")
	r.git("checkout", "-q", "main")
	r.write("a.go", "package a\n\nvar A = 2\n")
	r.commit("two")
	if out, err := exec.Command("git", "-C", r.dir, "merge", "-q", "other").CombinedOutput(); err == nil {
		t.Fatalf("merge did not conflict: %s", out)
	}
	want := "the work tree has unresolved conflicts (a.go): resolve them and git add the files, or abort the merge, rebase or cherry-pick, then review"
	for _, req := range []Request{{}, {Uncommitted: true}, {Staged: true}, {Since: "HEAD~1"}} {
		if msg := r.detectErr(req); !strings.HasPrefix(msg, want) {
			t.Errorf("%+v: error %q, want it to start %q", req, msg, want)
		}
	}
	if c, _ := r.detect(Request{LastCommit: true}); c.Mode != ModeLastCommit {
		t.Errorf("--last-commit during a merge: %+v", c)
	}
}

// license is a 13-line license header.
const licenseHeader = `// Copyright 2024 The Example Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.
`

func TestGenerated(t *testing.T) {
	r := newRepo(t)
	r.write("README", "r\n")
	// The attributes are the base's: the change's own do not count
	// (TestChangeMarksItselfGenerated).
	r.write(".gitattributes", "ui/bundle.js linguist-generated\nvendor/own/** -linguist-vendored\n")
	r.commit("base")
	r.write("api/v1/service.pb.go", licenseHeader+"\n// Code generated by protoc-gen-go. DO NOT EDIT.\n// source: service.proto\n\npackage v1\n\nfunc (x *Req) Reset() {}\n")
	// Go's rule reads up to the package clause, however far; past it and
	// past linguist's 40 lines, the line does not count.
	r.write("long.go", licenseHeader+lines(40, "// more header")+"\n// Code generated by hand. DO NOT EDIT.\n\npackage long\n")
	r.write("late.go", "package late\n\n"+lines(40, "var _ = 1 //")+"// Code generated by hand. DO NOT EDIT.\nvar X = 1\n")
	r.write("gen/schema_pb2.py", "# -*- coding: utf-8 -*-\n# Generated by the protocol buffer compiler.  DO NOT EDIT!\nimport x\n")
	r.write("ui/bundle.js", "var x = 1;\n")
	r.write("ui/keep.js", "var y = 2;\n")
	r.write("vendor/own/own.go", "package own\n")
	c, _ := r.detect(Request{})
	got := map[string]string{}
	for _, f := range c.Files {
		got[f.Path] = f.Triage + " " + f.TriageReason
	}
	want := map[string]string{
		"api/v1/service.pb.go": "skip generated: Code generated … DO NOT EDIT",
		"late.go":              "normal ",
		"long.go":              "skip generated: Code generated … DO NOT EDIT",
		"gen/schema_pb2.py":    "skip generated: Generated by the protocol buffer compiler.  DO NOT EDIT!",
		"ui/bundle.js":         "skip generated: linguist-generated",
		"ui/keep.js":           "normal ",
		"vendor/own/own.go":    "normal ",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("triage (-want +got):\n%s", d)
	}
	if len(c.Specialists) != 0 {
		t.Errorf("a generated .pb.go called in %+v", c.Specialists)
	}
}

func TestSpecialistsNothingToReview(t *testing.T) {
	r := newRepo(t)
	for _, p := range []string{"db/migrate/run.go", "bench/benchmark_test.go", "internal/cache/cache.go"} {
		r.write(p, strings.Replace(licenseHeader, "2024", "2023", 1)+"\npackage x\n")
	}
	r.write("docs/reference/api.md", "# API\n\nSELECT a FROM t\n")
	r.commit("base")
	for _, p := range []string{"db/migrate/run.go", "bench/benchmark_test.go", "internal/cache/cache.go"} {
		r.write(p, licenseHeader+"\npackage x\n") // the year only
	}
	r.write("docs/reference/api.md", "# API\n\nSELECT a, b FROM t\n")
	r.write("worker/worker_test.go", "package worker\n\nfunc BenchmarkRun(b *testing.B) {\n\tgo func() {}()\n}\n")
	c, _ := r.detect(Request{})
	wantCalled := []Specialist{{"concurrency-reviewer", `worker/worker_test.go:4 adds "go func"`}}
	if d := cmp.Diff(wantCalled, c.Specialists); d != "" {
		t.Errorf("specialists (-want +got):\n%s", d)
	}
	wantNot := []Specialist{
		{"api-reviewer", `docs/reference/api.md: path names "api", but it is documentation`},
		{"database-reviewer", `db/migrate/run.go: path names "db", but only its license or copyright lines change`},
		{"performance-reviewer", `bench/benchmark_test.go: path names "bench", but only its license or copyright lines change`},
	}
	if d := cmp.Diff(wantNot, c.NotCalled); d != "" {
		t.Errorf("specialists not called (-want +got):\n%s", d)
	}
}

// TestDetectFolderNotIgnored: a folder of 3,000 files nobody ignored (an
// npm install without .gitignore, a data dump) is refused before any diff
// is read, in one sentence; --force reviews it.
func TestDetectFolderNotIgnored(t *testing.T) {
	r := newRepo(t)
	r.write("main.go", "package main\n")
	r.commit("base")
	for i := range 3000 {
		r.write(fmt.Sprintf("deps/pkg%02d/file%d.js", i%30, i), "module.exports = 1\n")
	}
	start := time.Now()
	msg := r.detectErr(Request{Uncommitted: true})
	t.Logf("3,000 untracked files refused in %v", time.Since(start).Round(time.Millisecond))
	if want := "the change touches 3000 files that no path rule skips (limit 100): narrow it with paths or --since, ignore what should not be reviewed"; !strings.HasPrefix(msg, want) {
		t.Errorf("refusal = %q, want it to start %q", msg, want)
	}
	c, _ := r.detect(Request{Uncommitted: true, Force: true})
	if len(c.Files) != 3000 {
		t.Errorf("with --force, %d files, want 3000", len(c.Files))
	}
}
