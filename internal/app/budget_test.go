package app_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/client"
)

// TestStartWithinCheckBudget: a Go check that would take 30 s (a fake
// staticcheck on PATH) does not hold the start: the prompt is answered
// within the hooks' check budget (scope.DefaultCheckBudget, 2.5 s) and a
// little, and context.json records staticcheck as not finished.
func TestStartWithinCheckBudget(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not installed")
	}
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "staticcheck"), []byte("#!/bin/sh\nexec sleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	dir := newProject(t, t.TempDir())
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/app\n\ngo 1.21\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir) // the App's working directory names the project
	a := &app.App{Now: time.Now, Getenv: testGetenv, Log: io.Discard, Stderr: io.Discard, Getwd: func() (string, error) { return dir, nil }}
	p, err := client.Parse(startPayload(t, "b0d9e700-0000-4000-8000-000000000000", dir))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	resp, err := a.Hook(context.Background(), "user-prompt-submit", p)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if resp == nil || resp.Decision == "block" {
		t.Fatalf("the start was refused: %+v", resp)
	}
	proj, err := a.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, ".whetstone", "runs", proj.Latest(), "context.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Signals []struct{ Tool, Status, Output string } `json:"signals"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range c.Signals {
		if s.Tool == "staticcheck" {
			found = true
			if s.Status != "skipped" || !strings.HasPrefix(s.Output, "not finished") {
				t.Errorf("staticcheck: %+v, want skipped as not finished", s)
			}
		}
	}
	if !found {
		t.Errorf("no staticcheck signal in %+v", c.Signals)
	}
	// 2.5 s of checks, then the start's own work; a loaded machine adds to both.
	if took > 6*time.Second {
		t.Errorf("the start took %v with a staticcheck of 30 s", took)
	}
	t.Logf("start: %v", took.Round(time.Millisecond))
}
