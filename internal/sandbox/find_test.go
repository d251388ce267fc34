package sandbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// fakeFinder is a finder whose bwrap is a plain file and whose probe only
// counts its calls and returns err.
type fakeFinder struct {
	finder
	bwrap  string
	probes int
	err    error
	boot   string
}

func newFakeFinder(t *testing.T) *fakeFinder {
	t.Helper()
	dir := t.TempDir()
	f := &fakeFinder{bwrap: filepath.Join(dir, "bwrap"), boot: "boot-1"}
	if err := os.WriteFile(f.bwrap, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.finder = finder{
		goos:     "linux",
		lookPath: func(string) (string, error) { return f.bwrap, nil },
		cacheDir: filepath.Join(dir, "cache"),
		probe:    func(string) error { f.probes++; return f.err },
		tool:     func(n string) string { return f.bwrap }, // any existing file
		bootID:   func() string { return f.boot },
	}
	return f
}

func (f *fakeFinder) check(t *testing.T, wantOK bool, wantProbes int) {
	t.Helper()
	bwrap, ok := f.find(context.Background())
	if bwrap != f.bwrap || ok != wantOK || f.probes != wantProbes {
		t.Fatalf("find() = %q, %v after %d probes; want %q, %v after %d", bwrap, ok, f.probes, f.bwrap, wantOK, wantProbes)
	}
}

func TestFindProbesOnceAndCaches(t *testing.T) {
	f := newFakeFinder(t)
	f.check(t, true, 1)
	f.check(t, true, 1) // cached: no probe
	f.check(t, true, 1)

	// A new bwrap (here: a new mtime) is probed again.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(f.bwrap, later, later); err != nil {
		t.Fatal(err)
	}
	f.check(t, true, 2)
	f.check(t, true, 2)

	// So is a reboot, and a failing probe is cached as a failure.
	f.boot = "boot-2"
	f.err = errors.New("no user namespaces")
	f.check(t, false, 3)
	f.check(t, false, 3)
}

// A probe cut short by the hook's deadline is no verdict: Find answers no
// sandbox for this call, and the next call (with time) probes again.
func TestFindDoesNotCacheAProbeCutShort(t *testing.T) {
	f := newFakeFinder(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f.err = context.Canceled
	if _, ok := f.find(ctx); ok || f.probes != 1 {
		t.Fatalf("expired: ok %v after %d probes; want false, 1", ok, f.probes)
	}
	f.err = nil
	f.check(t, true, 2)
	f.check(t, true, 2)
}

func TestFindWithoutCacheDirProbesEveryTime(t *testing.T) {
	f := newFakeFinder(t)
	f.cacheDir = ""
	f.check(t, true, 1)
	f.check(t, true, 2)
}

func TestFindIgnoresACorruptCache(t *testing.T) {
	f := newFakeFinder(t)
	f.check(t, true, 1)
	path := filepath.Join(f.cacheDir, cacheName)
	if err := os.WriteFile(path, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.check(t, true, 2)
	f.check(t, true, 2)
}

func TestFindOutsideLinuxOrWithoutBwrap(t *testing.T) {
	f := newFakeFinder(t)
	f.goos = "darwin"
	if _, ok := f.find(context.Background()); ok || f.probes != 0 {
		t.Errorf("darwin: ok %v after %d probes; want false, 0", ok, f.probes)
	}
	f = newFakeFinder(t)
	f.lookPath = func(string) (string, error) { return "", exec.ErrNotFound }
	if _, ok := f.find(context.Background()); ok || f.probes != 0 {
		t.Errorf("no bwrap: ok %v after %d probes; want false, 0", ok, f.probes)
	}
}

func TestFindOnThisMachine(t *testing.T) {
	bwrap := bwrapForTest(t)
	got, ok := finder{cacheDir: t.TempDir()}.find(context.Background())
	if got != bwrap || !ok {
		t.Fatalf("find() = %q, %v; want %q, true", got, ok, bwrap)
	}
}

// BenchmarkFindCached measures what a hook pays per Bash call once the probe
// verdict is cached: PATH lookup, three stats, the boot id and the cache file.
func BenchmarkFindCached(b *testing.B) {
	bwrapForTest(b)
	f := finder{cacheDir: b.TempDir()}
	if _, ok := f.find(context.Background()); !ok {
		b.Fatal("sandbox not available")
	}
	f.probe = func(string) error { b.Fatal("probe ran on the cached path"); return nil }
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok := f.find(context.Background()); !ok {
			b.Fatal("not ok")
		}
	}
}

// BenchmarkWrap measures building the command line.
func BenchmarkWrap(b *testing.B) {
	o := Options{Root: "/home/dev/project", Hide: []string{"/home/dev/.config/whetstone"}}
	for i := 0; i < b.N; i++ {
		Wrap("/usr/bin/bwrap", "go test ./...", o)
	}
}

// TestProbeIgnoresTheCallerEnvironment: the verdict is cached under a key
// that holds no environment, so the probe must not depend on one: a PATH
// without the probe's tools (a test's pathonly) or full of hostile shims
// gives the same verdict as the user's.
func TestProbeIgnoresTheCallerEnvironment(t *testing.T) {
	bwrap := bwrapForTest(t)
	t.Setenv("PATH", t.TempDir())
	if err := (finder{}).run(context.Background(), bwrap); err != nil {
		t.Errorf("probe with an empty PATH: %v", err)
	}
}
