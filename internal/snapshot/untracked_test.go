package snapshot

import (
	"context"
	"crypto/rand"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// sparse makes name a sparse file of size bytes: no disk space, but git
// would read and hash every byte.
func (r *repo) sparse(name string, size int64) {
	r.t.Helper()
	f, err := os.Create(filepath.Join(r.dir, name))
	if err != nil {
		r.t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		r.t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		r.t.Fatal(err)
	}
}

// random writes size random bytes to name (they do not compress).
func (r *repo) random(name string, size int) {
	r.t.Helper()
	b := make([]byte, size)
	rand.Read(b)
	if err := os.WriteFile(filepath.Join(r.dir, name), b, 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// objects is the size of .git/objects in bytes and its pack files.
func (r *repo) objects() (int64, []string) {
	r.t.Helper()
	var size int64
	var packs []string
	err := filepath.WalkDir(filepath.Join(r.dir, ".git", "objects"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			size += fi.Size()
		}
		if strings.HasSuffix(p, ".pack") {
			packs = append(packs, p)
		}
		return err
	})
	if err != nil {
		r.t.Fatal(err)
	}
	return size, packs
}

// takeCapped is Take with a size cap, checking the tree and index stay.
func (r *repo) takeCapped(max int64) Snapshot {
	r.t.Helper()
	before := r.state()
	s, err := Take(context.Background(), r.dir, max, time.Now())
	if err != nil {
		r.t.Fatal(err)
	}
	r.untouched(before)
	return s
}

func TestLargeUntrackedTamper(t *testing.T) {
	const max = 1 << 20
	setup := func(t *testing.T) (*repo, Snapshot) {
		r := tamperRepo(t)
		r.sparse("big.bin", 3<<20)
		r.sparse("sub/keep.bin", 2<<20)
		r.random("rand.bin", 2<<20)
		r.write("small.txt", "small\n")
		size, _ := r.objects()
		s := r.takeCapped(max)
		if grown, _ := r.objects(); grown-size > 1<<20 {
			t.Errorf("Take grew .git/objects by %d bytes", grown-size)
		}
		if len(s.Large) != 3 || s.Large[0].Path != "big.bin" || s.Large[0].Size != 3<<20 || s.MaxUntracked != max {
			t.Errorf("snapshot large files: %+v", s.Large)
		}
		return r, s
	}
	for _, tc := range []struct {
		name string
		act  func(r *repo)
		want []Change
	}{
		{"nothing", func(r *repo) {}, nil},
		{"grown", func(r *repo) { r.sparse("big.bin", 4<<20) },
			[]Change{{Path: "big.bin", Kind: KindModified, Detail: "larger than 1 MiB: size or modification time changed (3145728 → 4194304 bytes)"}}},
		{"same size, new time", func(r *repo) {
			os.Chtimes(filepath.Join(r.dir, "rand.bin"), time.Now(), time.Now().Add(time.Hour))
		}, []Change{{Path: "rand.bin", Kind: KindModified, Detail: "larger than 1 MiB: size or modification time changed (2097152 → 2097152 bytes)"}}},
		{"executable", func(r *repo) { r.chmod("big.bin", 0o755) },
			[]Change{{Path: "big.bin", Kind: KindMode, Detail: "644 → 755 (larger than 1 MiB, compared by size and time)"}}},
		{"new", func(r *repo) { r.sparse("new.bin", 5<<20) },
			[]Change{{Path: "new.bin", Kind: KindAdded, Detail: "larger than 1 MiB (5242880 bytes), not read"}}},
		{"deleted", func(r *repo) { r.remove("sub/keep.bin") },
			[]Change{{Path: "sub/keep.bin", Kind: KindDeleted, Detail: "larger than 1 MiB (2097152 bytes)"}}},
		{"shrunk", func(r *repo) { r.write("big.bin", "tiny\n") },
			[]Change{{Path: "big.bin", Kind: KindModified, Detail: "was larger than 1 MiB (3145728 bytes), now below it"}}},
		{"untracked file grown", func(r *repo) { r.sparse("small.txt", 2<<20) },
			[]Change{{Path: "small.txt", Kind: KindModified, Detail: "now larger than 1 MiB (2097152 bytes)"}}},
		// A tracked file is git's: hashed whatever its size, compared by content.
		{"tracked file grown", func(r *repo) { r.sparse("a.txt", 2<<20) }, []Change{{Path: "a.txt", Kind: KindModified}}},
		{"ignored", func(r *repo) { r.sparse("x.log", 2<<20) }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, s := setup(t)
			tc.act(r)
			if d := cmp.Diff(tc.want, r.changes(s)); d != "" {
				t.Errorf("changes (-want +got):\n%s", d)
			}
		})
	}
}

func TestLargeUntrackedRestore(t *testing.T) {
	r := tamperRepo(t)
	r.sparse("big.bin", 3<<20)
	s := r.takeCapped(1 << 20)
	r.sparse("new.bin", 2<<20)    // created: removed
	r.sparse("big.bin", 4<<20)    // changed: its content was never recorded
	r.sparse("a.txt", 2<<20)      // a tracked file made large: hashed, checked out again
	r.write("b.txt", "changed\n") // an ordinary change
	changes := r.changes(s)
	_, err := s.Restore(context.Background(), r.dir, changes, t.TempDir())
	var re *RestoreError
	if !errors.As(err, &re) {
		t.Fatalf("Restore: %v, want a RestoreError naming big.bin", err)
	}
	want := []Change{{Path: "big.bin", Kind: KindModified, Detail: "larger than 1 MiB when the phase began: its content was not recorded"}}
	if d := cmp.Diff(want, re.Failed); d != "" {
		t.Errorf("failed (-want +got):\n%s", d)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "new.bin")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("new.bin was not removed: %v", err)
	}
	for name, content := range map[string]string{"a.txt": "a\n", "b.txt": "b\n"} {
		if got, _ := os.ReadFile(filepath.Join(r.dir, name)); string(got) != content {
			t.Errorf("%s = %q, want %q", name, got, content)
		}
	}
	if fi, err := os.Stat(filepath.Join(r.dir, "big.bin")); err != nil || fi.Size() != 4<<20 {
		t.Errorf("big.bin must stay as it is: %v %v", fi, err)
	}
}
