//go:build unix

package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
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
	if err := os.MkdirAll(filepath.Join(root, ".whetstone", "runs", "sess-a-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	return &App{Now: func() time.Time { return analyticsAt }, Getenv: func(string) string { return "" }, Log: &log}, Project{Root: root}, &log
}

func appendRecord(a *App, proj Project) {
	r := &loop.Run{ID: "sess-a-1", Phase: loop.Fix, Settings: loop.Settings{Depth: "standard"}, Roster: []string{"critic"}, Rounds: 1}
	t := roundTrace{iteration: 1, names: []string{"critic"}, statuses: map[string]string{"critic": loop.Reported}, tokens: map[string]int{"critic": 1200}, started: analyticsAt.Add(-time.Minute)}
	a.audit(proj, r, t, &loop.Event{Round: []review.Merged{{ID: "F-0001", Blocking: true, New: true, Status: review.StatusOpen}}}, "fix", analyticsAt)
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
			if err := os.RemoveAll(dir); err != nil {
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

// fill writes n analytics records (old ones, written by hand).
func fill(t *testing.T, path string, n int) []byte {
	t.Helper()
	data := bytes.Repeat([]byte(`{"old":true}`+"\n"), n)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return data
}

// TestAnalyticsRotatesAtTheBoundary: 999 records and one more make 1000 in
// the file; the next record first moves those 1000 to the archive, and
// starts a new file.
func TestAnalyticsRotatesAtTheBoundary(t *testing.T) {
	a, proj, log := analyticsProject(t)
	path := proj.dir("analytics.jsonl")
	fill(t, path, maxAnalyticsLines-1)
	record(t, a, proj)
	if got := lines(t, path); len(got) != maxAnalyticsLines {
		t.Fatalf("%d records, want %d: a file of 999 records is not archived", len(got), maxAnalyticsLines)
	}
	if _, err := os.Stat(proj.dir("archive")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("archive created before the file was full: %v", err)
	}
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"analytics-20261120T100000Z.jsonl", "analytics-20261120T100000Z-1.jsonl"} {
		if i == 1 {
			fill(t, path, maxAnalyticsLines)
			full, _ = os.ReadFile(path)
		}
		record(t, a, proj)
		if got := lines(t, path); len(got) != 1 {
			t.Fatalf("analytics.jsonl has %d records after archiving, want 1", len(got))
		}
		data, err := os.ReadFile(proj.dir("archive", name))
		if err != nil || !bytes.Equal(data, full) {
			t.Fatalf("archive %s: %d bytes, %v; want the full file (%d bytes)", name, len(data), err, len(full))
		}
	}
	if log.Len() > 0 {
		t.Errorf("log: %s", log)
	}

	// An archive directory that is a symlink is not followed.
	a, proj, _ = analyticsProject(t)
	path = proj.dir("analytics.jsonl")
	fill(t, path, maxAnalyticsLines)
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

// TestAnalyticsRecord: the record says what the round was, and rounds.md
// gets the round's section.
func TestAnalyticsRecord(t *testing.T) {
	a, proj, log := analyticsProject(t)
	record(t, a, proj)
	got := lines(t, proj.dir("analytics.jsonl"))
	want := `{"schema":"whetstone.analytics/v1","at":"2026-11-20T10:00:00Z","run_id":"sess-a-1","round":1,"iteration":1,"depth":"standard","status":"fix","next_phase":"fix","clean":false,"clean_passes":0,"findings":1,"blocking":1,"new":1,"reopened":0,"pre_existing":0,"by_severity":{"":1},"reviewers":[{"name":"critic","status":"reported","findings":0,"tokens":1200}],"duration_ms":60000,"tokens":1200}`
	if len(got) != 1 || got[0] != want {
		t.Errorf("record:\n%s\nwant:\n%s", got, want)
	}
	md, err := os.ReadFile(filepath.Join(proj.runDir("sess-a-1"), "rounds.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"## Round 1 · iteration 1 · 2026-11-20T10:00:00Z", "- Reviewers: critic (reported, 0 findings)", "- Findings: 1 finding (1 new, 0 reopened, 1 blocking, 0 pre-existing)", "- Consecutive clean passes: 0", "- Duration: 1m0s · tokens: 1200", "| F-0001 | open, blocking |"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("rounds.md lacks %q:\n%s", s, md)
		}
	}
	if log.Len() > 0 {
		t.Errorf("log: %s", log)
	}
}

// TestAnalyticsTwoRuns: two processes (two runs concluding rounds in one
// project) append at once across the 1000-record boundary: no record is
// lost or torn, and the full file is archived exactly once.
func TestAnalyticsTwoRuns(t *testing.T) {
	if dir := os.Getenv("WHETSTONE_ANALYTICS_CHILD"); dir != "" {
		a := &App{Now: func() time.Time { return analyticsAt }, Getenv: func(string) string { return "" }, Log: os.Stderr}
		for range 100 {
			appendRecord(a, Project{Root: dir})
		}
		return
	}
	_, proj, _ := analyticsProject(t)
	path := proj.dir("analytics.jsonl")
	fill(t, path, maxAnalyticsLines-50)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "-test.run=^TestAnalyticsTwoRuns$")
			cmd.Env = append(os.Environ(), "WHETSTONE_ANALYTICS_CHILD="+proj.Root)
			if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(out), "analytics:") {
				t.Errorf("child: %v\n%s", err, out)
			}
		})
	}
	wg.Wait()
	archives, err := os.ReadDir(proj.dir("archive"))
	if err != nil || len(archives) != 1 {
		t.Fatalf("archives: %v, %v; want exactly one", archives, err)
	}
	archived := lines(t, proj.dir("archive", archives[0].Name()))
	live := lines(t, path)
	if len(archived) != maxAnalyticsLines || len(live) != maxAnalyticsLines-50+200-maxAnalyticsLines {
		t.Errorf("%d archived and %d live records; want %d and %d", len(archived), len(live), maxAnalyticsLines, 150)
	}
}
