package snapshot

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/whetstone-dev/whetstone/internal/gitrun"
)

// gitFiles lists the files under the repository's .git, with their
// modification times for the object files (a freshened object counts as
// changed), leaving out what git itself rewrites on a read (none here:
// GIT_OPTIONAL_LOCKS=0).
func (r *repo) gitFiles() []string {
	r.t.Helper()
	var out []string
	root := filepath.Join(r.dir, ".git")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		r.t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// run is what a review run does to the repository: a baseline, edits and
// new files, a comparison, the change's trees.
func (r *repo) run(ctx context.Context, files map[string]string) Snapshot {
	r.t.Helper()
	g := gitrun.Git{Dir: r.dir}
	base, err := Take(ctx, r.dir, 0, time.Now())
	if err != nil {
		r.t.Fatal(err)
	}
	for name, content := range files {
		r.write(name, content)
	}
	if _, _, err := WorkTree(ctx, g, 0); err != nil {
		r.t.Fatal(err)
	}
	if _, err := IndexTree(ctx, g); err != nil {
		r.t.Fatal(err)
	}
	now, changes, err := base.Compare(ctx, r.dir)
	if err != nil {
		r.t.Fatal(err)
	}
	if len(changes) != len(files) {
		r.t.Fatalf("changes = %v, want one per file of %v", changes, files)
	}
	return now
}

func TestReleaseLeavesNothing(t *testing.T) {
	r := newRepo(t)
	r.write("a.go", "package a\n")
	r.write(".gitattributes", "*.txt text\n")
	r.commit("base")
	r.write("untracked.txt", "new before the run\n")
	before := r.gitFiles()

	ctx := WithOwner(context.Background(), "sess-1")
	now := r.run(ctx, map[string]string{"a.go": "package a // edited\n", "b/new.go": "package b\n", "refs-change": "x\n"})
	during := r.gitFiles()
	if len(during) <= len(before) {
		t.Fatalf("the run wrote nothing into .git (%d files before, %d during): the test proves nothing", len(before), len(during))
	}
	// The run's trees are readable from any of whetstone's git commands
	// while it lasts; the user's git does not see them.
	if out, err := (gitrun.Git{Dir: r.dir}).Str(ctx, "ls-tree", "-r", "--name-only", now.Tree); err != nil || !strings.Contains(out, "b/new.go") {
		t.Fatalf("the run's tree: %s, %v; want b/new.go in it", out, err)
	}
	if err := exec.Command("git", "-C", r.dir, "cat-file", "-e", now.Tree).Run(); err == nil {
		t.Error("the run's tree is in the repository's store")
	}

	rel, err := Release(context.Background(), r.dir, "sess-1")
	if err != nil {
		t.Fatal(err)
	}
	if rel.Files == 0 || rel.Indexes == 0 {
		t.Errorf("Release = %+v, want objects and indexes removed", rel)
	}
	if diff := cmp.Diff(before, r.gitFiles()); diff != "" {
		t.Errorf(".git after the run's release differs from before it (-before +after):\n%s", diff)
	}
	r.git("fsck", "--no-dangling", "--strict")
	// Releasing again finds no record: nothing to do.
	if again, err := Release(context.Background(), r.dir, "sess-1"); err != nil || again != (Released{}) {
		t.Errorf("second Release = %+v, %v; want nothing", again, err)
	}
}

// The repository's store is never written under an owner, nor touched by
// Release: the user's dangling objects stay, and an object the user
// writes during the run (git add of content a snapshot recorded) is the
// user's own, in the store.
func TestReleaseKeepsUsersObjects(t *testing.T) {
	r := newRepo(t)
	r.write("a.go", "package a\n")
	r.commit("base")
	r.write("mine.txt", "the user's dangling content\n")
	mine := r.git("hash-object", "-w", "mine.txt")
	os.Remove(filepath.Join(r.dir, "mine.txt"))
	store := func() []string {
		var out []string
		for _, f := range r.gitFiles() {
			if strings.HasPrefix(f, "objects/") {
				out = append(out, f)
			}
		}
		return out
	}
	before := store()

	ctx := WithOwner(context.Background(), "run-a")
	r.run(ctx, map[string]string{"again.txt": "the user's dangling content\n", "staged.txt": "the user stages this\n"})
	if diff := cmp.Diff(before, store()); diff != "" {
		t.Errorf("the run wrote into the repository's store (-before +during):\n%s", diff)
	}
	staged := r.git("hash-object", "staged.txt")
	r.git("add", "staged.txt") // the user's git does not see the run's copy: it writes its own

	if _, err := Release(context.Background(), r.dir, "run-a"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{mine, staged} {
		r.git("cat-file", "-e", id)
	}
	r.git("fsck", "--strict")
}

// Two runs at once in one repository: the first to end never removes what
// the other still reads, even the objects both wrote, and once both ended
// .git is as it was.
func TestReleaseTwoRuns(t *testing.T) {
	r := newRepo(t)
	r.write("a.go", "package a\n")
	r.commit("base")
	before := r.gitFiles()
	a := WithOwner(context.Background(), "run-a")
	b := WithOwner(context.Background(), "run-b")
	r.run(a, map[string]string{"shared.txt": "both runs see this\n"})
	snapB := r.run(b, map[string]string{"only-b.txt": "b alone\n"})

	if _, err := Release(context.Background(), r.dir, "run-a"); err != nil {
		t.Fatal(err)
	}
	// Run b's last snapshot still compares: every object it names is there.
	if _, changes, err := snapB.Compare(context.Background(), r.dir); err != nil || len(changes) != 0 {
		t.Fatalf("run b after run a ended: %v, %v", changes, err)
	}
	g := gitrun.Git{Dir: r.dir}
	if out, err := g.Str(context.Background(), "ls-tree", "-r", snapB.Tree); err != nil || !strings.Contains(out, "shared.txt") {
		t.Fatalf("run b's tree: %s, %v", out, err)
	}
	if _, err := g.Run(context.Background(), "rev-list", "--objects", "--missing=error", snapB.Tree); err != nil {
		t.Fatalf("run b's objects: %v", err)
	}

	if _, err := Release(context.Background(), r.dir, "run-b"); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(r.dir, "shared.txt"))
	os.Remove(filepath.Join(r.dir, "only-b.txt"))
	if diff := cmp.Diff(before, r.gitFiles()); diff != "" {
		t.Errorf(".git after both runs differs from before them (-before +after):\n%s", diff)
	}
	r.git("fsck", "--strict")
}

func TestAdopt(t *testing.T) {
	r := newRepo(t)
	r.write("a.go", "package a\n")
	r.commit("base")
	before := r.gitFiles()
	ctx := context.Background()
	if _, _, err := WorkTree(WithOwner(ctx, "pending-x"), gitrun.Git{Dir: r.dir}, 0); err != nil {
		t.Fatal(err)
	}
	r.write("b.go", "package b\n")
	if _, _, err := WorkTree(WithOwner(ctx, "pending-x"), gitrun.Git{Dir: r.dir}, 0); err != nil {
		t.Fatal(err)
	}
	if err := Adopt(ctx, r.dir, "pending-x", "sess-7"); err != nil {
		t.Fatal(err)
	}
	owners, err := Owners(ctx, r.dir)
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := owners["sess-7"]; !ok || len(owners) != 1 || o.Root != r.dir {
		t.Fatalf("owners = %v, want sess-7 only, in %s", owners, r.dir)
	}
	if _, err := Release(ctx, r.dir, "sess-7"); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(r.dir, "b.go"))
	if diff := cmp.Diff(before, r.gitFiles()); diff != "" {
		t.Errorf(".git differs (-before +after):\n%s", diff)
	}
}

func TestWithOwnerRefusesNames(t *testing.T) {
	for _, bad := range []string{"", "../x", "a/b", ".hidden", "a b"} {
		if OwnerOf(WithOwner(context.Background(), bad)) != "" {
			t.Errorf("WithOwner(%q) was accepted", bad)
		}
	}
}

// A project that ignores .whetstone/ itself (whetstone's own does) is
// snapshotted whole: git add's complaint about the excluded, ignored
// .whetstone is not a failure.
func TestWorkTreeWithWhetstoneIgnored(t *testing.T) {
	r := newRepo(t)
	r.write(".gitignore", ".whetstone/\n")
	r.write("a.go", "package a\n")
	r.commit("base")
	r.write(".whetstone/runs/x/state.json", "{}\n")
	r.write("b.go", "package b\n")
	tree, _, err := WorkTree(context.Background(), gitrun.Git{Dir: r.dir}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.git("ls-tree", "-r", "--name-only", tree); got != ".gitignore\na.go\nb.go" {
		t.Errorf("tree holds %q, want .gitignore, a.go and b.go", got)
	}
}

// Two runs snapshot one repository at once, and one ends (Release) while
// the other goes on comparing: the other never misses an object.
func TestReleaseWhileAnotherRunCompares(t *testing.T) {
	r := newRepo(t)
	r.write("a.go", "package a\n")
	r.commit("base")
	r.write("shared.txt", "both runs record this\n")
	ctx := context.Background()
	a, b := WithOwner(ctx, "run-a"), WithOwner(ctx, "run-b")
	snapA, err := Take(a, r.dir, 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	snapB, err := Take(b, r.dir, 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	go func() {
		for i := 0; i < 5; i++ {
			if _, _, err := snapA.Compare(a, r.dir); err != nil {
				done <- err
				return
			}
		}
		_, err := Release(ctx, r.dir, "run-a")
		done <- err
	}()
	go func() {
		s := snapB
		for i := 0; i < 15; i++ {
			now, changes, err := s.Compare(b, r.dir)
			if err != nil || len(changes) != 0 {
				done <- fmt.Errorf("run b, comparison %d: %v, %v", i, changes, err)
				return
			}
			s = now
		}
		done <- nil
	}()
	for range 2 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	if _, err := Release(ctx, r.dir, "run-b"); err != nil {
		t.Fatal(err)
	}
}

// A snapshot removes what a whetstone killed mid-hook left in .git a day
// ago or more (a temporary index, a run directory being removed, a kept
// index), and nothing newer.
func TestTakePrunesLeftovers(t *testing.T) {
	r := newRepo(t)
	r.write("a.go", "package a\n")
	r.commit("base")
	now := time.Now()
	mk := func(name string, dir bool, age time.Duration) string {
		t.Helper()
		p := filepath.Join(r.dir, ".git", name)
		var err error
		if dir {
			err = os.MkdirAll(filepath.Join(p, "ab"), 0o755)
		} else {
			err = os.WriteFile(p, []byte("x"), 0o644)
		}
		if err == nil {
			err = os.Chtimes(p, now.Add(-age), now.Add(-age))
		}
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	old := []string{mk("whetstone-index-123", false, 25*time.Hour), mk("whetstone-index-123.lock", false, 25*time.Hour),
		mk("whetstone-drop-456", true, 25*time.Hour), mk(cachePrefix+strings.Repeat("1", 40), false, 25*time.Hour)}
	recent := []string{mk("whetstone-index-789", false, time.Minute), mk("whetstone-drop-abc", true, time.Minute)}
	if _, err := Take(context.Background(), r.dir, 0, now); err != nil {
		t.Fatal(err)
	}
	for _, p := range old {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s is still there", filepath.Base(p))
		}
	}
	for _, p := range recent {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(p), err)
		}
	}
}
