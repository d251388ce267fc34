package state_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/whetstone-dev/whetstone/internal/state"
)

// record is what the crash writer stores: a sequence number, a large body
// derived from it, and a checksum over both, so a torn or mixed file shows.
type record struct {
	Seq  int    `json:"seq"`
	Body string `json:"body"`
	Sum  string `json:"sum"`
}

const recordBody = 64 << 10

func checksum(seq int, body string) string {
	h := sha256.Sum256([]byte(strconv.Itoa(seq) + "\x00" + body))
	return hex.EncodeToString(h[:])
}

func makeRecord(seq int) []byte {
	// Every version's body differs throughout, and the checksum covers all
	// of it, so a file stitched from two versions fails the check. Built by
	// hand: json.Marshal of 64 KiB is slow under -race, and the body needs
	// no escaping.
	body := strings.Repeat(fmt.Sprintf("%08x", seq), recordBody/8)
	return fmt.Appendf(nil, `{"seq":%d,"body":"%s","sum":"%s"}`, seq, body, checksum(seq, body))
}

func parseRecord(data []byte) (record, error) {
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("not JSON (%d bytes): %w", len(data), err)
	}
	if len(r.Body) != recordBody || r.Sum != checksum(r.Seq, r.Body) {
		return r, fmt.Errorf("record %d is not self-consistent (body %d bytes)", r.Seq, len(r.Body))
	}
	return r, nil
}

func next(old []byte) ([]byte, error) {
	seq := 0
	if old != nil {
		r, err := parseRecord(old)
		if err != nil {
			return nil, err
		}
		seq = r.Seq
	}
	return makeRecord(seq + 1), nil
}

// TestCrashDuringUpdate kills a process that is updating a sealed state
// file in a loop with SIGKILL at a random moment, again and again. After
// every kill the file must hold one whole version that verifies, no older
// than the last one seen, and the lock must not outlive its holder.
func TestCrashDuringUpdate(t *testing.T) {
	if testing.Short() {
		t.Skip("500 process kills; skipped with -short")
	}
	const trials = 500
	root, key := t.TempDir(), testKey(t)
	dir := filepath.Join(root, "run")
	path := filepath.Join(dir, "state.json")
	s := state.Store{Root: root, Path: path, Key: key, Wait: 2 * time.Second}
	if err := s.Update(next); err != nil {
		t.Fatal(err)
	}
	writer := writerBinary(t)
	last, kills, advanced := 1, 0, 0
	start := time.Now()
	for trial := 0; trial < trials; trial++ {
		cmd := exec.Command(writer, "-test.run=^TestHelperWriter$")
		cmd.Env = append(os.Environ(), "STATE_TEST_WRITER="+root, "STATE_TEST_KEY_HEX="+hex.EncodeToString(key), "GORACE=atexit_sleep_ms=0")
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait until the writer is in its loop, so the kill lands among the
		// updates and not in the test binary's start-up.
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil || line != "writing\n" {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("trial %d: writer did not start: %q, %v", trial, line, err)
		}
		time.Sleep(time.Duration(rand.Int64N(int64(20 * time.Millisecond))))
		if err := cmd.Process.Signal(os.Kill); err != nil {
			t.Fatal(err)
		}
		err = cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == -1 {
			kills++
		} else {
			t.Fatalf("trial %d: writer ended on its own (%v): it found a bad state file", trial, err)
		}

		data, err := s.Read()
		if err != nil {
			t.Fatalf("trial %d: state file unreadable after the kill: %v", trial, err)
		}
		r, err := parseRecord(data)
		if err != nil {
			t.Fatalf("trial %d: torn state after the kill: %v", trial, err)
		}
		if r.Seq < last {
			t.Fatalf("trial %d: state went back from %d to %d", trial, last, r.Seq)
		}
		if r.Seq > last {
			advanced++
		}
		// The dead writer's lock must not block the next update, which sees
		// exactly what was read.
		if err := s.Update(func(old []byte) ([]byte, error) {
			if !bytes.Equal(old, data) {
				return nil, fmt.Errorf("locked read differs from the unlocked one")
			}
			return makeRecord(r.Seq + 1), nil
		}); err != nil {
			t.Fatalf("trial %d: update after the kill: %v", trial, err)
		}
		last = r.Seq + 1
	}
	// A kill between creating the temp file and renaming it leaves the temp
	// file behind; nothing can clean up after SIGKILL. The next update
	// replaces it, so there is at most one, and it is never mistaken for
	// the state.
	temps := 0
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		switch name := e.Name(); {
		case name == "state.json" || name == "state.json.lock":
		case strings.HasPrefix(name, ".state.json.tmp-"):
			temps++
		default:
			t.Errorf("unexpected file %s", name)
		}
	}
	t.Logf("%d kills in %v; %d trials wrote at least one version (last seq %d); %d temp files left by killed writers",
		kills, time.Since(start).Round(time.Millisecond), advanced, last, temps)
	if temps > 1 {
		t.Errorf("%d temp files left: updates do not clean up after killed writers", temps)
	}
	if advanced < trials/10 {
		t.Errorf("only %d of %d writers got an update done before the kill: the kills did not land among the writes", advanced, trials)
	}
}

// writerBinary returns a test binary to run as the writer. A binary built
// with -race takes some 50 ms to start, ten times the rest of a trial, so
// this builds a copy without it when the go command is at hand; the writer
// is one goroutine and has nothing for the race detector to find.
func writerBinary(t *testing.T) string {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return os.Args[0]
	}
	bin := filepath.Join(t.TempDir(), "writer.test")
	cmd := exec.Command(goCmd, "test", "-c", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Logf("building the writer without -race failed, using this binary: %v\n%s", err, out)
		return os.Args[0]
	}
	return bin
}

// TestHelperWriter is not a test: TestCrashDuringUpdate runs the test binary
// again with STATE_TEST_WRITER set, and this updates the file until killed.
func TestHelperWriter(t *testing.T) {
	root := os.Getenv("STATE_TEST_WRITER")
	if root == "" {
		t.Skip("helper process for TestCrashDuringUpdate")
	}
	key, err := hex.DecodeString(os.Getenv("STATE_TEST_KEY_HEX"))
	if err != nil {
		t.Fatal(err)
	}
	s := state.Store{Root: root, Path: filepath.Join(root, "run", "state.json"), Key: key}
	os.Stdout.WriteString("writing\n")
	deadline := time.Now().Add(10 * time.Second) // in case the parent died
	for time.Now().Before(deadline) {
		if err := s.Update(next); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintln(os.Stderr, err)
			}
			os.Exit(3)
		}
	}
	os.Exit(0)
}
