package snapshot

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// kept lists the snapshot indexes kept in r's git directory.
func (r *repo) kept() []string {
	r.t.Helper()
	names, err := filepath.Glob(filepath.Join(r.dir, ".git", cachePrefix+"*"))
	if err != nil {
		r.t.Fatal(err)
	}
	return names
}

// compare is s.Compare with take's checks.
func (r *repo) compare(s Snapshot) (Snapshot, []Change) {
	r.t.Helper()
	before := r.state()
	now, got, err := s.Compare(context.Background(), r.dir)
	if err != nil {
		r.t.Fatal(err)
	}
	r.untouched(before)
	return now, got
}

// TestSnapshotChain: each snapshot starts from the index the one before
// kept, and still sees every change of an untracked file, also one that
// keeps the file's size and modification time in a repository that tells
// git not to trust ctime; one kept index is left, not one per snapshot.
// (git compares ctime in whole seconds: a file changed in the second of
// its previous change, size kept and mtime set back, is not seen — git's
// own limit for tracked files; the test waits for the next second.)
func TestSnapshotChain(t *testing.T) {
	r := tamperRepo(t)
	r.git("config", "core.trustctime", "false")
	r.write("notes.md", "draft one\n")
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(r.dir, "notes.md"), at, at); err != nil {
		t.Fatal(err)
	}
	s := r.take()
	if s.Cache == "" || len(r.kept()) != 1 {
		t.Fatalf("Take kept %v (Cache %q), want one index", r.kept(), s.Cache)
	}
	steps := []struct {
		name string
		do   func()
		want []Change
	}{
		{"nothing", func() {}, nil},
		{"same size and mtime", func() {
			// The kernel stamps files from a coarse clock: a margin past the
			// second's boundary.
			time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 50*time.Millisecond)))
			r.write("notes.md", "draft two\n")
			if err := os.Chtimes(filepath.Join(r.dir, "notes.md"), at, at); err != nil {
				t.Fatal(err)
			}
		}, []Change{{Path: "notes.md", Kind: KindModified}}},
		{"new untracked file", func() { r.write("more.md", "x\n") }, []Change{{Path: "more.md", Kind: KindAdded}}},
		{"removed", func() { r.remove("more.md") }, []Change{{Path: "more.md", Kind: KindDeleted}}},
		{"small grows large", func() {
			r.write("notes.md", string(make([]byte, DefaultMaxUntracked+1)))
		}, []Change{{Path: "notes.md", Kind: KindModified, Detail: "now larger than 4 MiB (4194305 bytes)"}}},
	}
	for _, step := range steps {
		step.do()
		now, got := r.compare(s)
		if diff := cmp.Diff(step.want, got); diff != "" {
			t.Errorf("%s: changes (-want +got):\n%s", step.name, diff)
		}
		if kept := r.kept(); len(kept) != 1 || filepath.Base(kept[0]) != cachePrefix+now.Cache {
			t.Errorf("%s: kept indexes %v, want only %s", step.name, kept, now.Cache)
		}
		s = now
	}
}

// TestSnapshotCacheForged: a kept index replaced since (here by the user's
// own index under its name) is not used, and nothing is missed.
func TestSnapshotCacheForged(t *testing.T) {
	r := tamperRepo(t)
	r.write("notes.md", "draft one\n")
	s := r.take()
	if err := os.WriteFile(filepath.Join(r.dir, ".git", cachePrefix+s.Cache), r.index(), 0o644); err != nil {
		t.Fatal(err)
	}
	r.write("notes.md", "draft two\n")
	_, got := r.compare(s)
	if diff := cmp.Diff([]Change{{Path: "notes.md", Kind: KindModified}}, got); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
}

// TestTakePrunesByItsClock: Take prunes the kept indexes older than
// cacheAge by the clock it is given, not the process's: a day later by
// that clock the kept index of the snapshot before is gone, and the new
// snapshot keeps its own.
func TestTakePrunesByItsClock(t *testing.T) {
	r := tamperRepo(t)
	first := r.take()
	r.write("notes.md", "a new untracked file: another index\n")
	later, err := Take(context.Background(), r.dir, 0, time.Now().Add(cacheAge+time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	kept := r.kept()
	if first.Cache == "" || later.Cache == first.Cache || len(kept) != 1 || filepath.Base(kept[0]) != cachePrefix+later.Cache {
		t.Fatalf("kept %v after a Take a day later, want only %s (the first kept %s)", kept, later.Cache, first.Cache)
	}
}
