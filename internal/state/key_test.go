package state_test

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/whetstone-dev/whetstone/internal/state"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestKeyPath(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("unix layout")
	}
	tests := []struct {
		name string
		env  map[string]string
		want string // "" for an error
	}{
		{"explicit dir wins", map[string]string{"WHETSTONE_STATE_DIR": "/srv/ws", "XDG_STATE_HOME": "/x", "HOME": "/home/u"}, "/srv/ws/key"},
		{"XDG state home", map[string]string{"XDG_STATE_HOME": "/x/state", "HOME": "/home/u"}, "/x/state/whetstone/key"},
		{"home", map[string]string{"HOME": "/home/u"}, "/home/u/.local/state/whetstone/key"},
		{"relative XDG is ignored", map[string]string{"XDG_STATE_HOME": "state", "HOME": "/home/u"}, "/home/u/.local/state/whetstone/key"},
		{"relative explicit dir", map[string]string{"WHETSTONE_STATE_DIR": ".whetstone", "HOME": "/home/u"}, ""},
		{"nothing set", map[string]string{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := state.KeyPath(env(tt.env))
			if tt.want == "" {
				if err == nil {
					t.Fatalf("KeyPath = %q, want an error", got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("KeyPath = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestLoadKeyCreatesOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "whetstone")
	path := filepath.Join(dir, "key")
	k1, err := state.LoadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(k1) != state.KeySize || bytes.Equal(k1, make([]byte, state.KeySize)) {
		t.Errorf("key = %x, want %d random bytes", k1, state.KeySize)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode() != 0o600 {
		t.Errorf("key file mode = %v, %v; want -rw-------", fi.Mode(), err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("key directory mode = %v, %v; want 0700", fi.Mode(), err)
	}
	k2, err := state.LoadKey(path)
	if err != nil || !bytes.Equal(k1, k2) {
		t.Errorf("second LoadKey = %x, %v; want the first key %x", k2, err, k1)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("key directory holds %v; want only the key", entries)
	}
}

// TestLoadKeyRace starts 60 goroutines at once on a fresh directory: all
// must get the same key.
func TestLoadKeyRace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fresh", "key")
	const n = 60
	keys := make([]state.Key, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			keys[i], errs[i] = state.LoadKey(path)
		}()
	}
	close(start)
	wg.Wait()
	for i := range keys {
		if errs[i] != nil {
			t.Fatalf("goroutine %d: %v", i, errs[i])
		}
		if !bytes.Equal(keys[i], keys[0]) {
			t.Fatalf("goroutine %d got key %x, goroutine 0 got %x", i, keys[i], keys[0])
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("key directory holds %v; want only the key", entries)
	}
}

// TestLoadKeyProcessRace is TestLoadKeyRace with processes, as when sixty
// hooks start at once: 20 children wait at a barrier (their stdin), then all
// call LoadKey on a fresh directory and print the key.
func TestLoadKeyProcessRace(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 20 processes")
	}
	path := filepath.Join(t.TempDir(), "fresh", "key")
	const n = 20
	type child struct {
		cmd   *exec.Cmd
		go_   io.WriteCloser
		lines *bufio.Reader
	}
	children := make([]child, n)
	for i := range children {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLoadKey$")
		cmd.Env = append(os.Environ(), "STATE_TEST_KEY="+path, "GORACE=atexit_sleep_ms=0")
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		children[i] = child{cmd, in, bufio.NewReader(out)}
	}
	for i, c := range children {
		if line, err := c.lines.ReadString('\n'); line != "ready\n" {
			t.Fatalf("child %d: %q, %v", i, line, err)
		}
	}
	for _, c := range children {
		c.go_.Close()
	}
	var first string
	for i, c := range children {
		line, _ := c.lines.ReadString('\n')
		if err := c.cmd.Wait(); err != nil || !strings.HasPrefix(line, "key ") {
			t.Fatalf("child %d: %q, %v", i, line, err)
		}
		if i == 0 {
			first = line
		} else if line != first {
			t.Fatalf("child %d got %q, child 0 got %q", i, line, first)
		}
	}
	k, err := state.LoadKey(path)
	if err != nil || first != "key "+hex.EncodeToString(k)+"\n" {
		t.Errorf("key on disk %x, %v; children got %q", k, err, first)
	}
}

// TestHelperLoadKey is not a test: TestLoadKeyProcessRace runs the test
// binary again with STATE_TEST_KEY set.
func TestHelperLoadKey(t *testing.T) {
	path := os.Getenv("STATE_TEST_KEY")
	if path == "" {
		t.Skip("helper process for TestLoadKeyProcessRace")
	}
	os.Stdout.WriteString("ready\n")
	_, _ = io.Copy(io.Discard, os.Stdin) // the barrier: the parent closes stdin
	k, err := state.LoadKey(path)
	if err != nil {
		os.Stdout.WriteString("error " + err.Error() + "\n")
		os.Exit(1)
	}
	os.Stdout.WriteString("key " + hex.EncodeToString(k) + "\n")
	os.Exit(0)
}

func TestLoadKeyRefusesBadKeys(t *testing.T) {
	good := bytes.Repeat([]byte{7}, state.KeySize)
	tests := []struct {
		name  string
		setup func(t *testing.T, path string)
		want  string
	}{
		{"group readable", func(t *testing.T, path string) { write(t, path, good, 0o640) }, "accessible to group or others"},
		{"world writable", func(t *testing.T, path string) { write(t, path, good, 0o602) }, "accessible to group or others"},
		{"too short", func(t *testing.T, path string) { write(t, path, good[:16], 0o600) }, "has 16 bytes, not 32"},
		{"empty", func(t *testing.T, path string) { write(t, path, nil, 0o600) }, "has 0 bytes"},
		{"too long", func(t *testing.T, path string) { write(t, path, append(good, '\n'), 0o600) }, "has 33 bytes"},
		{"symlink to a good key", func(t *testing.T, path string) {
			target := filepath.Join(t.TempDir(), "elsewhere")
			write(t, target, good, 0o600)
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}, "is a symlink"},
		{"dangling symlink", func(t *testing.T, path string) {
			if err := os.Symlink(filepath.Join(t.TempDir(), "missing"), path); err != nil {
				t.Fatal(err)
			}
		}, "is a symlink"},
		{"directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
		{"FIFO", func(t *testing.T, path string) {
			if err := mkfifo(path); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
		{"another user's", func(t *testing.T, path string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give the file away")
			}
			write(t, path, good, 0o600)
			if err := os.Chown(path, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, "belongs to user 65534"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "key")
			tt.setup(t, path)
			before, _ := os.Lstat(path)
			k, err := state.LoadKey(path)
			if err == nil {
				t.Fatalf("LoadKey = %x, want an error", k)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "delete it") {
				t.Errorf("error %q should say %q and how to fix it", err, tt.want)
			}
			if after, _ := os.Lstat(path); !os.SameFile(before, after) || after.Mode() != before.Mode() {
				t.Error("LoadKey changed a bad key instead of refusing it")
			}
		})
	}
}

func write(t *testing.T, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
}
