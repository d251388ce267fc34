package state_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/whetstone-dev/whetstone/internal/state"
)

type counter struct {
	N int `json:"n"`
}

func increment(old []byte) ([]byte, error) {
	var c counter
	if old != nil {
		if err := json.Unmarshal(old, &c); err != nil {
			return nil, fmt.Errorf("torn or corrupt content %q: %w", old, err)
		}
	}
	c.N++
	return json.Marshal(c)
}

// leftovers lists the files in dir other than the state file and its lock:
// temp files an update failed to remove.
func leftovers(t *testing.T, dir string, keep ...string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if name == "state.json" || name == "state.json.lock" || contains(keep, name) {
			continue
		}
		out = append(out, name)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestUpdateConcurrent has many goroutines increment one counter through a
// sealed store while readers check that every read is one whole version
// that verifies. Each update opens its own lock file descriptor, so flock
// serialises goroutines of one process the same way it serialises processes.
func TestUpdateConcurrent(t *testing.T) {
	const workers, updates = 64, 50
	root, key := t.TempDir(), testKey(t)
	dir := filepath.Join(root, ".whetstone", "runs", "r1")
	path := filepath.Join(dir, "state.json")
	// 64 waiters polling one flock on a loaded machine can wait long; the
	// test is about lost and torn updates, not about the wait.
	store := state.Store{Root: root, Path: path, Key: key, Wait: 5 * time.Minute}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := store
			s.Light = w%2 == 1 // unsynced updates replace the file as atomically
			for i := 0; i < updates; i++ {
				if err := s.Update(increment); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	// Unlocked readers, like the edit gate: renames are atomic, so a read
	// is the old content or the new, and the counter never goes back.
	stop := make(chan struct{})
	var reads atomic.Int64
	var readers sync.WaitGroup
	for r := 0; r < 2; r++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			s := store
			last := 0
			for {
				select {
				case <-stop:
					return
				default:
				}
				data, err := s.Read()
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				if err != nil {
					errs <- err
					return
				}
				var c counter
				if err := json.Unmarshal(data, &c); err != nil {
					errs <- fmt.Errorf("read torn content %q: %w", data, err)
					return
				}
				if c.N < last {
					errs <- fmt.Errorf("counter went back from %d to %d", last, c.N)
					return
				}
				last = c.N
				reads.Add(1)
				// A spinning reader would starve the lock holder of a P
				// on two cores; hooks are separate processes, not this.
				time.Sleep(100 * time.Microsecond)
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	data, err := store.Read()
	if err != nil {
		t.Fatal(err)
	}
	var c counter
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	if c.N != workers*updates {
		t.Errorf("counter = %d after %d×%d updates; lost %d", c.N, workers, updates, workers*updates-c.N)
	}
	if extra := leftovers(t, dir); len(extra) > 0 {
		t.Errorf("files left behind: %v", extra)
	}
	t.Logf("%d unlocked reads, all whole", reads.Load())
}

func TestUpdatePassesOldContent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "state.json")
	s := state.Store{Path: path}
	var got [][]byte
	record := func(next string) func([]byte) ([]byte, error) {
		return func(old []byte) ([]byte, error) {
			got = append(got, old)
			return []byte(next), nil
		}
	}
	for _, next := range []string{"one", "two"} {
		if err := s.Update(record(next)); err != nil {
			t.Fatal(err)
		}
	}
	if got[0] != nil {
		t.Errorf("first update got %q, want nil for a missing file", got[0])
	}
	if string(got[1]) != "one" {
		t.Errorf("second update got %q, want %q", got[1], "one")
	}
	if data, err := s.Read(); err != nil || string(data) != "two" {
		t.Errorf("Read = %q, %v; want %q", data, err, "two")
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("state file mode = %v, %v; want 0644", fi.Mode(), err)
	}
}

func TestUpdateWritesNothing(t *testing.T) {
	errFn := errors.New("fn failed")
	tests := []struct {
		name    string
		exists  bool
		fn      func([]byte) ([]byte, error)
		wantErr error
	}{
		{"error over existing file", true, func([]byte) ([]byte, error) { return []byte("new"), errFn }, errFn},
		{"error on missing file", false, func([]byte) ([]byte, error) { return []byte("new"), errFn }, errFn},
		{"nil over existing file", true, func([]byte) ([]byte, error) { return nil, nil }, nil},
		{"nil on missing file", false, func([]byte) ([]byte, error) { return nil, nil }, nil},
		{"empty but non-nil is written", true, func([]byte) ([]byte, error) { return []byte{}, nil }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.json")
			if tt.exists {
				if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before, _ := os.Stat(path)
			err := state.Store{Path: path}.Update(tt.fn)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Update = %v, want %v", err, tt.wantErr)
			}
			data, rerr := os.ReadFile(path)
			switch {
			case strings.HasPrefix(tt.name, "empty"):
				if rerr != nil || len(data) != 0 {
					t.Errorf("content = %q, %v; want empty (an empty slice is content, not nil)", data, rerr)
				}
			case tt.exists:
				if string(data) != "old" {
					t.Errorf("content = %q, %v; want the old content", data, rerr)
				}
				if after, _ := os.Stat(path); !os.SameFile(before, after) {
					t.Error("the state file was replaced although nothing was to be written")
				}
			default:
				if !errors.Is(rerr, fs.ErrNotExist) {
					t.Errorf("state file exists (%q, %v); nothing should have been written", data, rerr)
				}
			}
			if extra := leftovers(t, dir); len(extra) > 0 {
				t.Errorf("files left behind: %v", extra)
			}
		})
	}
}

// TestLockTimeout holds the lock in one update and checks that another
// update with a short Wait gives up with ErrLockTimeout, without calling its
// function, and that the lock works again once released.
func TestLockTimeout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	held, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- state.Store{Path: path}.Update(func([]byte) ([]byte, error) {
			close(held)
			<-release
			return []byte(`{"n":1}`), nil
		})
	}()
	<-held

	const wait = 50 * time.Millisecond
	called := false
	start := time.Now()
	err := state.Store{Path: path, Wait: wait}.Update(func([]byte) ([]byte, error) {
		called = true
		return []byte("stolen"), nil
	})
	elapsed := time.Since(start)
	if !errors.Is(err, state.ErrLockTimeout) {
		t.Fatalf("Update while locked = %v, want ErrLockTimeout", err)
	}
	if called {
		t.Error("fn ran without the lock")
	}
	if elapsed < wait || elapsed > wait+2*time.Second {
		t.Errorf("gave up after %v; want about %v", elapsed, wait)
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name the state file", err)
	}

	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := (state.Store{Path: path, Wait: time.Second}).Update(increment); err != nil {
		t.Fatalf("Update after release: %v", err)
	}
	if data, _ := os.ReadFile(path); string(data) != `{"n":2}` {
		t.Errorf("content = %s, want {\"n\":2}", data)
	}
}

// TestLockHeldByProcess is TestLockTimeout across processes: a child holds
// the lock, this process times out, and the child's death releases it.
func TestLockHeldByProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLockHolder$")
	cmd.Env = append(os.Environ(), "STATE_TEST_HOLD="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	buf := make([]byte, 6)
	if _, err := io.ReadFull(out, buf); err != nil || string(buf) != "locked" {
		t.Fatalf("child did not take the lock: %q, %v", buf, err)
	}
	err = state.Store{Path: path, Wait: 50 * time.Millisecond}.Update(increment)
	if !errors.Is(err, state.ErrLockTimeout) {
		t.Fatalf("Update while another process holds the lock = %v, want ErrLockTimeout", err)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if err := (state.Store{Path: path, Wait: 2 * time.Second}).Update(increment); err != nil {
		t.Fatalf("Update after the holder died: %v", err)
	}
}

// TestHelperLockHolder is not a test: TestLockHeldByProcess runs the test
// binary again with STATE_TEST_HOLD set, and this holds the lock until killed.
func TestHelperLockHolder(t *testing.T) {
	path := os.Getenv("STATE_TEST_HOLD")
	if path == "" {
		t.Skip("helper process for TestLockHeldByProcess")
	}
	_ = state.Store{Path: path}.Update(func([]byte) ([]byte, error) {
		os.Stdout.WriteString("locked")
		time.Sleep(time.Minute)
		return nil, nil
	})
	os.Exit(0)
}

// TestWriteFailure makes the write itself fail in ways root cannot bypass
// with permissions, and checks that the old content survives and no temp
// file is left behind.
func TestWriteFailure(t *testing.T) {
	t.Run("parent is a regular file", func(t *testing.T) {
		dir := t.TempDir()
		parent := filepath.Join(dir, "run")
		if err := os.WriteFile(parent, []byte("not a directory"), 0o644); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(parent, "state.json")
		called := false
		err := state.Store{Path: path}.Update(func([]byte) ([]byte, error) { called = true; return []byte("x"), nil })
		if err == nil {
			t.Fatal("Update under a regular file succeeded")
		}
		if called {
			t.Error("fn ran although the lock could not be taken")
		}
		if err := state.WriteFile(path, []byte("x")); err == nil {
			t.Error("WriteFile under a regular file succeeded")
		}
		if data, _ := os.ReadFile(parent); string(data) != "not a directory" {
			t.Errorf("the file in the way was changed: %q", data)
		}
		if extra := leftovers(t, dir, "run"); len(extra) > 0 {
			t.Errorf("files left behind: %v", extra)
		}
	})

	t.Run("rename over a directory", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "state.json")
		if err := os.MkdirAll(filepath.Join(path, "keep"), 0o755); err != nil {
			t.Fatal(err)
		}
		err := state.Store{Path: path}.Update(func([]byte) ([]byte, error) { return []byte("new"), nil })
		if err == nil {
			t.Fatal("Update over a directory succeeded")
		}
		if fi, err := os.Stat(filepath.Join(path, "keep")); err != nil || !fi.IsDir() {
			t.Errorf("the directory in the way was damaged: %v", err)
		}
		if extra := leftovers(t, dir); len(extra) > 0 {
			t.Errorf("temp files left behind after a failed rename: %v", extra)
		}
	})

	t.Run("file size limit", func(t *testing.T) {
		if runtime.GOOS != "linux" {
			t.Skip("RLIMIT_FSIZE semantics are Linux-specific here")
		}
		// A write that fails half-way (EFBIG under RLIMIT_FSIZE, as on a full
		// disk) must leave the old file as it was. The limit is set in a
		// child process, since it cannot be raised again.
		dir := t.TempDir()
		path := filepath.Join(dir, "state.json")
		old := []byte(`{"n":1}`)
		if err := os.WriteFile(path, old, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperFsize$")
		cmd.Env = append(os.Environ(), "STATE_TEST_FSIZE="+path, "GORACE=atexit_sleep_ms=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helper: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "update failed:") {
			t.Fatalf("the oversized update did not fail:\n%s", out)
		}
		if data, err := os.ReadFile(path); err != nil || string(data) != string(old) {
			t.Errorf("state after a failed write = %q, %v; want the old %q", data, err, old)
		}
		if extra := leftovers(t, dir); len(extra) > 0 {
			t.Errorf("temp files left behind after a failed write: %v", extra)
		}
	})
}

// TestHelperFsize is not a test: it runs in a child process with a file size
// limit and tries an update larger than the limit.
func TestHelperFsize(t *testing.T) {
	path := os.Getenv("STATE_TEST_FSIZE")
	if path == "" {
		t.Skip("helper process for TestWriteFailure")
	}
	if err := limitFileSize(4096); err != nil {
		fmt.Println("setrlimit:", err)
		os.Exit(1)
	}
	big := []byte(`{"pad":"` + strings.Repeat("x", 64<<10) + `"}`)
	err := state.Store{Path: path}.Update(func([]byte) ([]byte, error) { return big, nil })
	fmt.Printf("update failed: %v\n", err)
	if err == nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// BenchmarkUpdate measures one locked update of a small state file, plain
// and sealed, as every hook does.
func BenchmarkUpdate(b *testing.B) {
	for _, sealed := range []bool{false, true} {
		b.Run(fmt.Sprintf("sealed=%v", sealed), func(b *testing.B) {
			root := b.TempDir()
			s := state.Store{Root: root, Path: filepath.Join(root, ".whetstone", "runs", "r1", "state.json")}
			if sealed {
				s.Key = testKey(b)
			}
			for b.Loop() {
				if err := s.Update(increment); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
