//go:build unix

package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/whetstone-dev/whetstone/internal/loop"
	"github.com/whetstone-dev/whetstone/internal/review"
)

var analyticsAt = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

// analyticsProject is a project with its .whetstone directory, and an App
// whose log the test can read.
func analyticsProject(t *testing.T) (*App, Project, *bytes.Buffer) {
	t.Helper()
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".whetstone"), 0o755); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	return &App{Now: func() time.Time { return analyticsAt }, Getenv: func(string) string { return "" }, Log: &log}, Project{Root: root}, &log
}

func appendRecord(a *App, proj Project) {
	r := &loop.Run{ID: "sess-a-1", Phase: loop.Fix, Settings: loop.Settings{Depth: "standard"}, Roster: []string{"critic"}}
	a.analytics(proj, r, 1, []review.Merged{{ID: "F-0001", Blocking: true}}, "fix", analyticsAt)
}

// record appends one analytics record, failing the test if it hangs.
func record(t *testing.T, a *App, proj Project) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		appendRecord(a, proj)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("analytics hangs")
	}
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for _, l := range out {
		if !json.Valid([]byte(l)) || len(l) >= maxAnalyticsRecord {
			t.Fatalf("analytics line %q is not one JSON record under %d bytes", l, maxAnalyticsRecord)
		}
	}
	return out
}

func TestAnalyticsAppends(t *testing.T) {
	a, proj, _ := analyticsProject(t)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			for range 10 {
				appendRecord(a, proj)
			}
		})
	}
	wg.Wait()
	if got := lines(t, proj.dir("analytics.jsonl")); len(got) != 200 {
		t.Errorf("%d records, want 200", len(got))
	}
}

// TestAnalyticsRefusesWhatIsNotItsFile: a FIFO, a device, a symlink out of
// the project, a symlinked .whetstone: nothing hangs, nothing is written
// through them, and the hook goes on.
func TestAnalyticsRefusesWhatIsNotItsFile(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "outside.jsonl")
	if err := os.WriteFile(outside, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, path string)
	}{
		{"FIFO", func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"FIFO with a reader", func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
		}},
		{"symlink out of the project", func(t *testing.T, path string) {
			if err := os.Symlink(outside, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"symlink to /dev/zero", func(t *testing.T, path string) {
			if err := os.Symlink("/dev/zero", path); err != nil {
				t.Fatal(err)
			}
		}},
		{"directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{"symlinked .whetstone", func(t *testing.T, path string) {
			dir := filepath.Dir(path)
			if err := os.Remove(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Dir(outside), dir); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, proj, log := analyticsProject(t)
			path := proj.dir("analytics.jsonl")
			tt.setup(t, path)
			before, _ := os.Lstat(path)
			record(t, a, proj)
			if after, _ := os.Lstat(path); before != nil && (after == nil || after.Mode() != before.Mode()) {
				t.Errorf("analytics.jsonl changed from %v to %v", before.Mode(), after)
			}
			if data, _ := os.ReadFile(outside); string(data) != "mine\n" {
				t.Errorf("wrote outside the project: %q", data)
			}
			if entries, _ := os.ReadDir(filepath.Dir(outside)); len(entries) != 1 {
				t.Errorf("created files outside the project: %v", entries)
			}
			if !strings.Contains(log.String(), "analytics: ") {
				t.Errorf("nothing logged; the log: %q", log)
			}
		})
	}
}

func TestAnalyticsArchivesPastOneMiB(t *testing.T) {
	a, proj, log := analyticsProject(t)
	path := proj.dir("analytics.jsonl")
	full := bytes.Repeat([]byte(`{"old":true}`+"\n"), maxAnalytics/13+1)
	for i := range 2 {
		if err := os.WriteFile(path, full, 0o644); err != nil {
			t.Fatal(err)
		}
		record(t, a, proj)
		if got := lines(t, path); len(got) != 1 {
			t.Fatalf("analytics.jsonl has %d records after archiving, want 1", len(got))
		}
		name := "analytics-20261120T100000Z.jsonl"
		if i == 1 {
			name = "analytics-20261120T100000Z-1.jsonl"
		}
		data, err := os.ReadFile(proj.dir("archive", name))
		if err != nil || !bytes.Equal(data, full) {
			t.Fatalf("archive %s: %d bytes, %v; want the full file", name, len(data), err)
		}
	}
	record(t, a, proj)
	if got := lines(t, path); len(got) != 2 {
		t.Errorf("%d records, want 2: a small file is not archived", len(got))
	}
	if log.Len() > 0 {
		t.Errorf("log: %s", log)
	}

	// An archive directory that is a symlink is not followed.
	a, proj, _ = analyticsProject(t)
	path = proj.dir("analytics.jsonl")
	if err := os.WriteFile(path, full, 0o644); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, proj.dir("archive")); err != nil {
		t.Fatal(err)
	}
	record(t, a, proj)
	if entries, err := os.ReadDir(elsewhere); err != nil || len(entries) != 0 {
		t.Errorf("archived through a symlink: %v, %v", entries, err)
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		t.Error("analytics.jsonl is gone")
	}
}
