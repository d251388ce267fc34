package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/whetstone-dev/whetstone/internal/gitrun"
)

// tamperRepo is a repository with a committed base on main, a branch
// "other" at the same commit, an ignore rule for *.log and no
// .whetstone/.gitignore, so only the explicit exclusion keeps .whetstone out.
func tamperRepo(t *testing.T) *repo {
	t.Helper()
	r := newRepo(t)
	r.write(".gitignore", "*.log\n")
	r.write("a.txt", "a\n")
	r.write("b.txt", "b\n")
	r.write("run.sh", "#!/bin/sh\n")
	r.write("sub/c.txt", "c\n")
	r.commit("base")
	r.git("branch", "other")
	return r
}

func (r *repo) index() []byte {
	r.t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dir, ".git", "index"))
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

// take is Take, checking that it leaves the index, the work tree and no
// temporary file behind.
func (r *repo) take() Snapshot {
	r.t.Helper()
	before := r.state()
	s, err := Take(context.Background(), r.dir, 0, time.Now())
	if err != nil {
		r.t.Fatal(err)
	}
	r.untouched(before)
	return s
}

// changes is s.Changes with the same checks as take.
func (r *repo) changes(s Snapshot) []Change {
	r.t.Helper()
	before := r.state()
	got, err := s.Changes(context.Background(), r.dir)
	if err != nil {
		r.t.Fatal(err)
	}
	r.untouched(before)
	return got
}

func (r *repo) untouched(before string) {
	r.t.Helper()
	if after := r.state(); after != before {
		r.t.Errorf("the index or the work tree changed:\n%s\n→\n%s", before, after)
	}
	if left, _ := filepath.Glob(filepath.Join(r.dir, ".git", "whetstone-index-*")); len(left) > 0 {
		r.t.Errorf("temporary index left behind: %v", left)
	}
}

func (r *repo) rev(name string) string {
	r.t.Helper()
	return r.git("rev-parse", name)[:12]
}

func TestTamperChanges(t *testing.T) {
	odd := "dir with space/ü\nnew.txt"
	tests := []struct {
		name   string
		before func(r *repo) // before Take
		act    func(r *repo) // between Take and Changes
		want   func(r *repo, base string) []Change
	}{
		{name: "untouched"},
		{
			name: "modified tracked file",
			act:  func(r *repo) { r.write("a.txt", "A\n") },
			want: only(Change{Path: "a.txt", Kind: KindModified}),
		},
		{
			name: "new untracked file",
			act:  func(r *repo) { r.write("new.txt", "new\n") },
			want: only(Change{Path: "new.txt", Kind: KindAdded}),
		},
		{
			name: "deleted file",
			act:  func(r *repo) { r.remove("sub/c.txt") },
			want: only(Change{Path: "sub/c.txt", Kind: KindDeleted}),
		},
		{
			name: "chmod +x",
			act:  func(r *repo) { r.chmod("run.sh", 0o755) },
			want: only(Change{Path: "run.sh", Kind: KindMode, Detail: "100644 → 100755"}),
		},
		{
			name: "replaced by a symlink",
			act:  func(r *repo) { r.remove("a.txt"); r.symlink("b.txt", "a.txt") },
			want: only(Change{Path: "a.txt", Kind: KindModified, Detail: "file → symlink"}),
		},
		{
			name: "odd file name",
			act:  func(r *repo) { r.write(odd, "x\n") },
			want: only(Change{Path: odd, Kind: KindAdded}),
		},
		{
			name: "ignored file written",
			act:  func(r *repo) { r.write("debug.log", "x\n") },
		},
		{
			name: "file written under .whetstone",
			act:  func(r *repo) { r.write(".whetstone/state.json", "{}\n") },
		},
		{
			name: "new branch",
			act:  func(r *repo) { r.git("branch", "feature") },
			want: func(r *repo, base string) []Change {
				return []Change{{Path: "refs/heads/feature", Kind: KindRef, Detail: "refs/heads/feature created at " + base}}
			},
		},
		{
			name: "branch deleted",
			act:  func(r *repo) { r.git("branch", "-D", "other") },
			want: func(r *repo, base string) []Change {
				return []Change{{Path: "refs/heads/other", Kind: KindRef, Detail: "refs/heads/other deleted (was " + base + ")"}}
			},
		},
		{
			name: "branch moved by a commit",
			act:  func(r *repo) { r.git("commit", "-q", "--allow-empty", "-m", "x") },
			want: func(r *repo, base string) []Change {
				return []Change{{Path: "refs/heads/main", Kind: KindRef, Detail: "refs/heads/main moved " + base + " → " + r.rev("main")}}
			},
		},
		{
			name: "HEAD switched to another branch",
			act:  func(r *repo) { r.git("checkout", "-q", "other") },
			want: func(r *repo, base string) []Change {
				return []Change{{Path: "HEAD", Kind: KindHead, Detail: "HEAD changed ref: refs/heads/main → ref: refs/heads/other"}}
			},
		},
		{
			name: "HEAD detached",
			act:  func(r *repo) { r.git("checkout", "-q", "--detach") },
			want: func(r *repo, base string) []Change {
				return []Change{{Path: "HEAD", Kind: KindHead, Detail: "HEAD changed ref: refs/heads/main → " + base}}
			},
		},
		{
			// The work tree content is what Tree records: staging what is
			// already there changes only the index.
			name:   "staged only",
			before: func(r *repo) { r.write("a.txt", "A\n") },
			act:    func(r *repo) { r.git("add", "a.txt") },
			want:   only(Change{Path: "a.txt", Kind: KindStaged, Detail: "changed in the index"}),
		},
		{
			name: "new file staged",
			act:  func(r *repo) { r.write("new.txt", "new\n"); r.git("add", "new.txt") },
			want: only(
				Change{Path: "new.txt", Kind: KindAdded},
				Change{Path: "new.txt", Kind: KindStaged, Detail: "added to the index"},
			),
		},
		{
			name:   "file unstaged",
			before: func(r *repo) { r.write("a.txt", "A\n"); r.git("add", "a.txt") },
			act:    func(r *repo) { r.git("reset", "-q") },
			want:   only(Change{Path: "a.txt", Kind: KindStaged, Detail: "changed in the index"}),
		},
		{
			name: "stash",
			act:  func(r *repo) { r.write("a.txt", "A\n"); r.git("stash", "-q") },
			want: func(r *repo, base string) []Change {
				return []Change{{Path: "refs/stash", Kind: KindRef, Detail: "refs/stash created at " + r.rev("refs/stash")}}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tamperRepo(t)
			if tt.before != nil {
				tt.before(r)
			}
			base := r.rev("HEAD")
			s := r.take()
			if tt.act != nil {
				tt.act(r)
			}
			var want []Change
			if tt.want != nil {
				want = tt.want(r, base)
			}
			if diff := cmp.Diff(want, r.changes(s)); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
		})
	}
}

// only returns a want function for a list of changes that does not depend
// on the repository.
func only(cs ...Change) func(*repo, string) []Change {
	return func(*repo, string) []Change { return cs }
}

func (r *repo) remove(name string) {
	r.t.Helper()
	if err := os.RemoveAll(filepath.Join(r.dir, name)); err != nil {
		r.t.Fatal(err)
	}
}

func (r *repo) chmod(name string, mode os.FileMode) {
	r.t.Helper()
	if err := os.Chmod(filepath.Join(r.dir, name), mode); err != nil {
		r.t.Fatal(err)
	}
}

func (r *repo) symlink(target, name string) {
	r.t.Helper()
	if err := os.Symlink(target, filepath.Join(r.dir, name)); err != nil {
		r.t.Fatal(err)
	}
}

// TestTamperIndexBytes checks the user's index byte for byte on a dirty
// tree, where `git add -A` on the real index would rewrite it.
func TestTamperIndexBytes(t *testing.T) {
	r := tamperRepo(t)
	r.write("a.txt", "A\n")
	r.write("new.txt", "new\n")
	before := r.index()
	s := r.take()
	r.write("b.txt", "B\n")
	r.changes(s)
	if !bytes.Equal(before, r.index()) {
		t.Error("Take or Changes rewrote the user's index")
	}
}

// TestTamperFsmonitor configures an fsmonitor hook that leaves a mark, and
// checks that git runs it here (so the test can fail) but the snapshot
// does not.
func TestTamperFsmonitor(t *testing.T) {
	r := tamperRepo(t)
	mark := filepath.Join(t.TempDir(), "ran")
	script := filepath.Join(t.TempDir(), "fsmonitor.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntouch '"+mark+"'\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.git("config", "core.fsmonitor", script)
	r.write("a.txt", "A\n")
	r.git("add", "-A")
	if _, err := os.Stat(mark); err != nil {
		t.Fatalf("git add did not run the fsmonitor hook, so this test proves nothing: %v", err)
	}
	os.Remove(mark)
	// Not r.take: its git status would run the hook.
	ctx := context.Background()
	s, err := Take(ctx, r.dir, 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	r.write("b.txt", "B\n")
	if got, err := s.Changes(ctx, r.dir); err != nil || len(got) != 1 {
		t.Errorf("changes = %v, %v; want b.txt", got, err)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("Take or Changes ran the repository's fsmonitor hook")
	}
}

func TestTamperSubdirectory(t *testing.T) {
	r := tamperRepo(t)
	s, err := Take(context.Background(), filepath.Join(r.dir, "sub"), 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	r.write("sub/new/x.txt", "x\n")
	r.write("sub/c.txt", "tampered\n")
	r.write("top.txt", "x\n") // outside the root
	ctx, root := context.Background(), filepath.Join(r.dir, "sub")
	got, err := s.Changes(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{{Path: "c.txt", Kind: KindModified}, {Path: "new/x.txt", Kind: KindAdded}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	keep := filepath.Join(t.TempDir(), "kept")
	copied, err := s.Restore(ctx, root, got, keep)
	if err != nil {
		t.Fatal(err)
	}
	// What was removed or overwritten is kept first, as it was.
	if diff := cmp.Diff([]string{"new/x.txt", "c.txt"}, copied); diff != "" {
		t.Errorf("copies (-want +got):\n%s", diff)
	}
	for name, want := range map[string]string{"c.txt": "tampered\n", "new/x.txt": "x\n"} {
		if got, err := os.ReadFile(filepath.Join(keep, name)); string(got) != want {
			t.Errorf("kept %s = %q, %v; want %q", name, got, err, want)
		}
	}
	if got, err := os.ReadFile(filepath.Join(root, "c.txt")); string(got) != "c\n" {
		t.Errorf("c.txt = %q, %v; want the recorded content", got, err)
	}
	if _, err := os.Lstat(filepath.Join(root, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("new/ is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "top.txt")); err != nil {
		t.Errorf("top.txt, outside the root, was touched: %v", err)
	}
}

func TestTamperCap(t *testing.T) {
	r := tamperRepo(t)
	s := r.take()
	for i := range maxChanges + 50 {
		r.write(fmt.Sprintf("new/%03d.txt", i), "x\n")
	}
	got := r.changes(s)
	if len(got) != maxChanges+1 {
		t.Fatalf("%d changes, want %d", len(got), maxChanges+1)
	}
	if diff := cmp.Diff(Change{Kind: KindMore, Detail: "50 more changes not listed"}, got[maxChanges]); diff != "" {
		t.Errorf("last change (-want +got):\n%s", diff)
	}
	// The marker stands for the rest: Restore removes all of them.
	if _, err := s.Restore(context.Background(), r.dir, got, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if got := r.changes(s); got != nil {
		t.Errorf("after Restore: %v", got)
	}
	if _, err := os.Lstat(filepath.Join(r.dir, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the emptied directory new/ is still there: %v", err)
	}
}

func TestTamperConcurrent(t *testing.T) {
	r := tamperRepo(t)
	r.write("a.txt", "A\n")
	r.write("new.txt", "new\n")
	before := r.state()
	want := r.take()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 8 {
		wg.Go(func() {
			s, err := Take(context.Background(), r.dir, 0, time.Now())
			if err == nil && !reflect.DeepEqual(s, want) {
				err = fmt.Errorf("snapshot %+v, want %+v", s, want)
			}
			errs <- err
		})
		wg.Go(func() {
			got, err := want.Changes(context.Background(), r.dir)
			if err == nil && got != nil {
				err = fmt.Errorf("changes %v, want none", got)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	r.untouched(before)
}

func TestTamperRestore(t *testing.T) {
	r := tamperRepo(t)
	r.chmod("run.sh", 0o755)
	r.symlink("a.txt", "link")
	r.write("dir/d.txt", "d\n")
	r.commit("modes")
	r.write("b.txt", "uncommitted\n") // the snapshot, not HEAD, is what comes back
	indexBefore := r.index()
	s := r.take()

	r.write("a.txt", "tampered\n")
	r.remove("b.txt")
	r.chmod("run.sh", 0o644)
	r.remove("link")
	r.write("link", "now a file\n")
	r.remove("sub")
	r.write("sub", "a file where a directory was\n")
	r.remove("dir/d.txt")
	r.write("dir/d.txt/e.txt", "a directory where a file was\n")
	r.write("new.txt", "new\n")
	r.write("deep/er/new.txt", "new\n")
	r.write("keep.log", "ignored: stays\n")

	changes := r.changes(s)
	if len(changes) == 0 {
		t.Fatal("no changes found")
	}
	if _, err := s.Restore(context.Background(), r.dir, changes, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if got := r.changes(s); got != nil {
		t.Errorf("after Restore (-want +got):\n%s", cmp.Diff([]Change(nil), got))
	}
	for name, want := range map[string]string{"a.txt": "a\n", "b.txt": "uncommitted\n", "sub/c.txt": "c\n", "dir/d.txt": "d\n", "keep.log": "ignored: stays\n"} {
		if got, err := os.ReadFile(filepath.Join(r.dir, name)); err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(r.dir, "run.sh")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("run.sh is not executable again: %v %v", fi.Mode(), err)
	}
	if target, err := os.Readlink(filepath.Join(r.dir, "link")); err != nil || target != "a.txt" {
		t.Errorf("link = %q, %v; want a symlink to a.txt", target, err)
	}
	for _, gone := range []string{"new.txt", "deep"} {
		if _, err := os.Lstat(filepath.Join(r.dir, gone)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there: %v", gone, err)
		}
	}
	if !bytes.Equal(indexBefore, r.index()) {
		t.Error("Restore changed the user's index")
	}
}

func TestTamperRestoreSymlinkOutside(t *testing.T) {
	r := tamperRepo(t)
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := r.take()
	r.remove("sub")
	r.symlink(outside, "sub")
	r.remove("a.txt")
	r.symlink(secret, "a.txt")
	changes := r.changes(s)
	want := []Change{
		{Path: "a.txt", Kind: KindModified, Detail: "file → symlink"},
		{Path: "sub", Kind: KindAdded, Detail: "symlink"},
		{Path: "sub/c.txt", Kind: KindDeleted},
	}
	if diff := cmp.Diff(want, changes); diff != "" {
		t.Fatalf("changes (-want +got):\n%s", diff)
	}

	// Without the symlink's own removal, sub/c.txt would be written through it.
	_, err := s.Restore(context.Background(), r.dir, changes[2:], t.TempDir())
	var re *RestoreError
	if !errors.As(err, &re) {
		t.Fatalf("Restore = %v, want a *RestoreError", err)
	}
	if diff := cmp.Diff([]Change{{Path: "sub/c.txt", Kind: KindDeleted, Detail: "parent sub is a symlink: not followed"}}, re.Failed); diff != "" {
		t.Errorf("failed (-want +got):\n%s", diff)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("outside the root: %v, want only secret", entries)
	}

	// With it, the symlinks go and real files come back.
	if _, err := s.Restore(context.Background(), r.dir, changes, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if got := r.changes(s); got != nil {
		t.Errorf("after Restore: %v", got)
	}
	if got, _ := os.ReadFile(secret); string(got) != "secret\n" {
		t.Errorf("secret = %q: written through the symlink", got)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("outside the root: %v, want only secret", entries)
	}
	if fi, err := os.Lstat(filepath.Join(r.dir, "sub")); err != nil || !fi.IsDir() {
		t.Errorf("sub is not a directory again: %v", err)
	}
}

func TestTamperRestoreLeavesIndexAlone(t *testing.T) {
	r := tamperRepo(t)
	s := r.take()
	base := r.rev("HEAD")
	r.write("new.txt", "new\n")
	r.git("add", "new.txt")
	r.git("commit", "-q", "-m", "tampered") // HEAD moves; work tree as staged
	r.git("branch", "feature")
	changes := r.changes(s)
	_, err := s.Restore(context.Background(), r.dir, changes, t.TempDir())
	var re *RestoreError
	if !errors.As(err, &re) {
		t.Fatalf("Restore = %v, want a *RestoreError", err)
	}
	want := []Change{{Path: "new.txt", Kind: KindAdded, Detail: "the index now tracks it; Restore leaves the index and its files alone"}}
	if diff := cmp.Diff(want, re.Failed); diff != "" {
		t.Errorf("failed (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "new.txt")); err != nil {
		t.Errorf("new.txt was removed: %v", err)
	}
	if got := r.rev("refs/heads/main"); got == base {
		t.Error("Restore moved main back")
	}
	if _, err := s.Restore(context.Background(), r.dir, []Change{{Path: "HEAD", Kind: KindHead}, {Path: "refs/heads/feature", Kind: KindRef}}, t.TempDir()); err != nil {
		t.Errorf("Restore of HEAD and ref changes = %v, want nil (they are reported only)", err)
	}
}

// BenchmarkTamper10k measures Take and Changes on a repository of 10 000
// committed files with five modified and five untracked, the stat cache
// warm. Changes/clean finds nothing (the usual end of a phase),
// Changes/dirty finds the ten files.
func BenchmarkTamper10k(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a repository of 10 000 files")
	}
	dir := b.TempDir()
	run := func(args ...string) {
		b.Helper()
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, content string) {
		b.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	run("-c", "init.defaultBranch=main", "init", "-q")
	// Files older than the index, as in a working copy: none is racily
	// clean, so git trusts the stat data as it would for a user.
	old := time.Now().Add(-time.Hour)
	for d := range 100 {
		for f := range 100 {
			name := fmt.Sprintf("pkg%02d/file%02d.go", d, f)
			write(name, strings.Repeat(fmt.Sprintf("// %s line\n", name), 40))
			if err := os.Chtimes(filepath.Join(dir, name), old, old); err != nil {
				b.Fatal(err)
			}
		}
	}
	run("add", "-A")
	run("commit", "-q", "-m", "base")
	ctx := context.Background()
	before, err := Take(ctx, dir, 0, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	for i := range 5 {
		write(fmt.Sprintf("pkg%02d/file00.go", i), "changed\n")
		write(fmt.Sprintf("new%d.txt", i), "new\n")
	}
	now, err := Take(ctx, dir, 0, time.Now()) // and the stat cache is warm
	if err != nil {
		b.Fatal(err)
	}
	if got, err := before.Changes(ctx, dir); err != nil || len(got) != 10 {
		b.Fatalf("changes = %v, %v; want 10", got, err)
	}
	measure := func(name string, f func() error) {
		b.Run(name, func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				if err := f(); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "median-ms")
		})
	}
	measure("Take", func() error { _, err := Take(ctx, dir, 0, time.Now()); return err })
	measure("Changes/clean", func() error { _, err := now.Changes(ctx, dir); return err })
	measure("Changes/dirty", func() error { _, err := before.Changes(ctx, dir); return err })
}

func TestTamperNoCommits(t *testing.T) {
	r := newRepo(t)
	r.write("a.txt", "a\n")
	s := r.take()
	if got := r.changes(s); got != nil {
		t.Errorf("untouched: %v", got)
	}
	r.write("b.txt", "b\n")
	if diff := cmp.Diff([]Change{{Path: "b.txt", Kind: KindAdded}}, r.changes(s)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
}

// TestTamperHooks installs hooks that leave a mark: post-index-change runs
// whenever git writes an index, the temporary one included, and
// post-checkout on a checkout. Neither may run.
func TestTamperHooks(t *testing.T) {
	r := tamperRepo(t)
	mark := filepath.Join(t.TempDir(), "ran")
	for _, hook := range []string{"post-index-change", "post-checkout"} {
		script := "#!/bin/sh\necho " + hook + " >> '" + mark + "'\n"
		if err := os.WriteFile(filepath.Join(r.dir, ".git", "hooks", hook), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A new mtime makes the refresh rewrite the index, which runs the hook.
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(r.dir, "a.txt"), past, past); err != nil {
		t.Fatal(err)
	}
	r.git("update-index", "--refresh")
	if _, err := os.Stat(mark); err != nil {
		t.Fatalf("git did not run the post-index-change hook, so this test proves nothing: %v", err)
	}
	os.Remove(mark)
	s := r.take()
	r.write("a.txt", "A\n")
	r.write("new.txt", "new\n")
	if _, err := s.Restore(context.Background(), r.dir, r.changes(s), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(mark); err == nil {
		t.Errorf("hooks ran: %s", got)
	}
}

// TestTamperRacyEdit edits a file within the second the index was written,
// keeping its size and mtime (ctime not trusted): only git's racy-entry
// check, which compares with the index file's own mtime, can see it.
func TestTamperRacyEdit(t *testing.T) {
	r := tamperRepo(t)
	r.git("config", "core.trustctime", "false")
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	touch := func(name string) {
		if err := os.Chtimes(filepath.Join(r.dir, name), at, at); err != nil {
			t.Fatal(err)
		}
	}
	touch("a.txt")
	r.git("add", "a.txt")
	touch(".git/index")
	s := r.take()
	r.write("a.txt", "A\n")
	touch("a.txt")
	if diff := cmp.Diff([]Change{{Path: "a.txt", Kind: KindModified}}, r.changes(s)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
}

// TestIndexPath: the plain repository's index is found without git, and a
// linked worktree's (its .git is a file) is the one git names; a snapshot
// taken in the worktree sees a change staged there.
func TestIndexPath(t *testing.T) {
	r := newRepo(t)
	r.write("a.txt", "a\n")
	r.commit("base")
	wt := filepath.Join(t.TempDir(), "wt")
	r.git("worktree", "add", "-q", "-b", "side", wt)
	ctx := context.Background()
	for _, dir := range []string{r.dir, wt} {
		got, err := indexPath(ctx, gitrun.Git{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSpace(mustGit(t, dir, "rev-parse", "--path-format=absolute", "--git-path", "index"))
		if got != want {
			t.Errorf("index of %s: %s, want %s", dir, got, want)
		}
	}
	before, err := Take(ctx, wt, 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt, "a.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustGit(t, wt, "add", "a.txt")
	changes, err := before.Changes(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) == 0 {
		t.Fatal("a change staged in the worktree was not seen")
	}
}

func mustGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// BenchmarkTamperSmall is the comparison a concluding hook runs on a small
// project (two files, one uncommitted change): what the concluding
// subagent-stop of `make bench` pays for the tamper backstop.
func BenchmarkTamperSmall(b *testing.B) {
	dir := b.TempDir()
	for _, args := range [][]string{{"-c", "init.defaultBranch=main", "init", "-q"}, {"commit", "-q", "--allow-empty", "-m", "base"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	for name, content := range map[string]string{"main.go": "package main\n\nfunc main() {}\n", "whetstone.json": "{}\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	s, err := Take(ctx, dir, 0, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, changes, err := s.Compare(ctx, dir); err != nil || len(changes) != 0 {
			b.Fatalf("compare: %v, %v", changes, err)
		}
	}
}
