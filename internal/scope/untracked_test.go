package scope

import (
	"bytes"
	"context"
	"crypto/rand"
	"io/fs"
	"os"
	"os/exec"
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

// wouldAdd checks that git itself would hash name: untracked, not ignored.
func (r *repo) wouldAdd(name string) {
	r.t.Helper()
	if err := exec.Command("git", "-C", r.dir, "check-ignore", "-q", name).Run(); err == nil {
		r.t.Fatalf("%s is ignored", name)
	}
	if out := r.git("add", "-A", "--dry-run"); !strings.Contains(out, "add '"+name+"'") {
		r.t.Fatalf("git add -A would not add %s:\n%s", name, out)
	}
}

func TestLargeUntrackedDetect(t *testing.T) {
	r := newRepo(t)
	r.write("a.go", "package a\n")
	r.write("src/b.go", "package b\n")
	r.commit("base")
	r.write("a.go", "package a\n\nvar A = 1\n")
	r.sparse("capture.pcap", 200<<20)
	r.random("dump.bin", 6<<20) // random bytes: hashed, they would grow .git by 6 MiB
	r.write("small.txt", "small\n")
	for _, name := range []string{"capture.pcap", "dump.bin"} {
		r.wouldAdd(name)
	}
	size, packs := r.objects()
	start := time.Now()
	c, diff := r.detect(Request{Uncommitted: true})
	took := time.Since(start)
	reason := "larger than 4 MiB, not read (max_untracked_bytes)"
	for _, name := range []string{"capture.pcap", "dump.bin"} {
		f := file(t, c, name)
		if f.Status != "added" || f.Triage != "skip" || f.TriageReason != reason {
			t.Errorf("%s: %+v, want added, skip, %q", name, f, reason)
		}
		if line := "# whetstone: " + name + " skipped (" + reason + "), added\n"; !bytes.Contains(diff, []byte(line)) {
			t.Errorf("diff.patch lacks %q:\n%s", line, diff)
		}
	}
	if d := cmp.Diff([]string{"a.go", "capture.pcap", "dump.bin", "small.txt"}, paths(c)); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"capture.pcap", "dump.bin"}, c.Skipped); d != "" {
		t.Errorf("skipped (-want +got):\n%s", d)
	}
	tree := r.git("ls-tree", "-r", "--name-only", c.Tree)
	if strings.Contains(tree, "capture.pcap") || strings.Contains(tree, "dump.bin") || !strings.Contains(tree, "small.txt") {
		t.Errorf("the reviewed tree holds:\n%s", tree)
	}
	after, afterPacks := r.objects()
	if after-size > 1<<20 || len(afterPacks) != len(packs) {
		t.Errorf(".git/objects grew by %d bytes, packs %v → %v", after-size, packs, afterPacks)
	}
	t.Logf("Detect with a 200 MiB and a 6 MiB untracked file: %v", took)

	// Paths narrow the large files too.
	c, _ = r.detect(Request{Uncommitted: true, Paths: []string{"src", "a.go"}})
	if d := cmp.Diff([]string{"a.go"}, paths(c)); d != "" {
		t.Errorf("files of a.go and src (-want +got):\n%s", d)
	}

	// A larger cap hashes dump.bin (a reviewer can read it), not the 200 MiB.
	c, _ = r.detect(Request{Uncommitted: true, MaxUntracked: 8 << 20})
	if f := file(t, c, "dump.bin"); f.Triage == "skip" && strings.Contains(f.TriageReason, "larger") {
		t.Errorf("dump.bin under an 8 MiB cap: %+v", f)
	}
	if f := file(t, c, "capture.pcap"); f.TriageReason != "larger than 8 MiB, not read (max_untracked_bytes)" || c.MaxUntracked != 8<<20 {
		t.Errorf("capture.pcap under an 8 MiB cap: %+v (cap %d)", f, c.MaxUntracked)
	}

	// The next iteration keeps the large files of the scope, out of fix.patch.
	c, _ = r.detect(Request{Uncommitted: true})
	r.write("a.go", "package a\n\nvar A = 2\n")
	before := r.state()
	next, _, fix, err := Next(context.Background(), r.dir, c)
	if err != nil {
		t.Fatal(err)
	}
	r.untouched(before)
	if d := cmp.Diff([]string{"a.go", "capture.pcap", "dump.bin", "small.txt"}, paths(next)); d != "" {
		t.Errorf("iteration 2 files (-want +got):\n%s", d)
	}
	if f := file(t, next, "capture.pcap"); f.Triage != "skip" {
		t.Errorf("iteration 2 capture.pcap: %+v", f)
	}
	if bytes.Contains(fix, []byte("capture.pcap")) || !bytes.Contains(fix, []byte("var A = 2")) {
		t.Errorf("fix.patch:\n%s", fix)
	}
}

// On the default branch with nothing else uncommitted, the review falls back
// to the last commit, which has no untracked files, large or small.
func TestLargeUntrackedLastCommitFallback(t *testing.T) {
	r := newRepo(t)
	r.write("a.go", "package a\n")
	r.commit("base")
	r.write("a.go", "package a\n\nvar A = 1\n")
	r.commit("second")
	r.sparse("capture.pcap", 8<<20)
	c, _ := r.detect(Request{})
	if c.Mode != ModeLastCommit {
		t.Fatalf("mode %s, want %s", c.Mode, ModeLastCommit)
	}
	if d := cmp.Diff([]string{"a.go"}, paths(c)); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
}
