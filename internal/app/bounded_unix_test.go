//go:build unix

package app

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/whetstone-dev/whetstone/internal/config"
)

// hostileFiles makes what a file whetstone reads could be instead: /dev/zero
// behind a symlink, a FIFO nobody writes to, and a 2 GB sparse file.
func hostileFiles(t *testing.T, dir, name string) map[string]func() {
	path := filepath.Join(dir, name)
	reset := func() { _ = os.Remove(path) }
	return map[string]func(){
		"/dev/zero": func() {
			reset()
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Fatal(err)
			}
		},
		"fifo": func() {
			reset()
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"2 GB sparse": func() {
			reset()
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Truncate(2 << 30); err != nil {
				t.Fatal(err)
			}
			f.Close()
		},
	}
}

// bounded runs fn and fails if it allocated 50 MiB or more, or did not
// return (a hang would show as the test timing out; the time is logged).
func bounded(t *testing.T, what string, fn func()) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	fn()
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%s: %v, %d KiB allocated", what, took.Round(time.Millisecond), alloc>>10)
	if alloc >= 50<<20 {
		t.Errorf("%s allocated %d MiB, want under 50", what, alloc>>20)
	}
}

// TestHostileConfig: whetstone.json as a device, a FIFO or a huge file in
// the work tree is never even opened: the configuration is read from the
// base revision (config.LoadAt), so a start costs a bounded read and sees
// no file.
func TestHostileConfig(t *testing.T) {
	root := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "--allow-empty", "-m", "base"}} {
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	for kind, make := range hostileFiles(t, root, config.FileName) {
		make()
		bounded(t, "whetstone.json as "+kind, func() {
			if src, err := config.LoadAt(context.Background(), root, "HEAD"); err != nil || src.Found() {
				t.Errorf("whetstone.json as %s in the work tree: LoadAt = %+v, %v; want no file", kind, src, err)
			}
		})
	}
}

// TestHostileTranscript: a transcript that is a device, a FIFO or a huge
// file counts no tokens and costs a bounded read.
func TestHostileTranscript(t *testing.T) {
	dir := t.TempDir()
	for kind, make := range hostileFiles(t, dir, "t.jsonl") {
		make()
		var log bytes.Buffer
		bounded(t, "transcript as "+kind, func() {
			if n := transcriptTokens(filepath.Join(dir, "t.jsonl"), &log); n != 0 {
				t.Errorf("transcript as %s counted %d tokens", kind, n)
			}
		})
	}
}

// TestHostileAnalytics: analytics.jsonl as a device, a FIFO or a huge file
// never hangs a round nor costs a read of the file.
func TestHostileAnalytics(t *testing.T) {
	for _, kind := range []string{"/dev/zero", "fifo", "2 GB sparse"} {
		a, proj, _ := analyticsProject(t)
		hostileFiles(t, proj.dir(), "analytics.jsonl")[kind]()
		bounded(t, "analytics.jsonl as "+kind, func() { appendRecord(a, proj) })
	}
}

// TestTranscriptCountsEachMessageOnce: Claude Code writes one line per
// content block, each repeating its message's usage.
func TestTranscriptCountsEachMessageOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	lines := `{"type":"assistant","message":{"id":"m1","usage":{"input_tokens":10,"output_tokens":5}}}
{"type":"assistant","message":{"id":"m1","usage":{"input_tokens":10,"output_tokens":5}}}
{"type":"user","message":{"content":"usage"}}
{"type":"assistant","message":{"id":"m2","usage":{"input_tokens":100,"output_tokens":1,"cache_read_input_tokens":4}}}
`
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := transcriptTokens(path, &bytes.Buffer{}); n != 120 {
		t.Errorf("tokens = %d, want 120 (m1 once: 15, m2: 105)", n)
	}
}
