package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestColour: colour only on a terminal, never with NO_COLOR or TERM=dumb.
func TestColour(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	t.Setenv("TERM", "xterm-256color")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	for name, out := range map[string]io.Writer{"a pipe": w, "a file": file, "the null device": null, "a buffer": &bytes.Buffer{}} {
		if colour(out) {
			t.Errorf("colour on %s", name)
		}
	}
	if runtime.GOOS != "linux" {
		return
	}
	// A pseudo-terminal's master side is a terminal without a controlling one.
	tty, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer tty.Close()
	if !colour(tty) {
		t.Error("no colour on a terminal")
	}
	for k, v := range map[string]string{"NO_COLOR": "1", "TERM": "dumb"} {
		t.Run(k, func(t *testing.T) {
			t.Setenv(k, v)
			if colour(tty) {
				t.Errorf("colour on a terminal with %s=%s", k, v)
			}
		})
	}
}
