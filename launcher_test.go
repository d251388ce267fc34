package whetstone

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// pluginCopy makes a plugin directory that has whetstone's sources but no
// bin/, so the launcher must find or build its binary.
func pluginCopy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	wd, _ := os.Getwd()
	for _, name := range []string{"cmd", "internal"} {
		if err := os.Symlink(filepath.Join(wd, name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"go.mod", "go.sum", "version.go", "VERSION"} { // go:embed refuses symlinks
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	os.MkdirAll(filepath.Join(dir, "scripts"), 0o755)
	script, err := os.ReadFile("scripts/whetstone")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "scripts", "whetstone"), script, 0o755)
	return dir
}

func launch(t *testing.T, plugin, data, path, event, payload string) (stdout, stderr string, err error) {
	cmd := exec.Command(filepath.Join(plugin, "scripts", "whetstone"), "hook", event)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "CLAUDE_PLUGIN_DATA="+data, "PATH="+path)
	cmd.Stdin = strings.NewReader(payload)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

const noRunPayload = `{"session_id":"launcher-test","hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{}}`

// TestLauncherBuildsOnceUnderParallelHooks: eight hooks start at once on a
// machine with no binary; one builds it, all answer, none blocks the session.
func TestLauncherBuildsOnceUnderParallelHooks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	plugin, data := pluginCopy(t), t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	outs := make([]string, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var stderr string
			outs[i], stderr, errs[i] = launch(t, plugin, data, os.Getenv("PATH"), "pre-tool-use", noRunPayload)
			if errs[i] != nil {
				t.Logf("launcher %d stderr: %s", i, stderr)
			}
		}()
	}
	wg.Wait()
	for i := range errs {
		if errs[i] != nil || outs[i] != "" {
			t.Errorf("launcher %d: err %v, stdout %q; want success and no answer", i, errs[i], outs[i])
		}
	}
	entries, _ := os.ReadDir(data)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := "whetstone-" + Version; len(names) != 1 || names[0] != want {
		t.Errorf("plugin data holds %v; want exactly [%s] (no temp files, no lock)", names, want)
	}
}

// TestLauncherWithoutGo: no binary and no Go toolchain is a clear message,
// exit 0, and — for /whetstone:review — a line the model can relay.
func TestLauncherWithoutGo(t *testing.T) {
	plugin, data := pluginCopy(t), t.TempDir()
	stdout, stderr, err := launch(t, plugin, data, "/usr/bin:/bin", "pre-tool-use", noRunPayload)
	if err != nil || stdout != "" || !strings.Contains(stderr, "no Go toolchain to build it") {
		t.Errorf("pre-tool-use: err %v, stdout %q, stderr %q", err, stdout, stderr)
	}
	stdout, _, err = launch(t, plugin, data, "/usr/bin:/bin", "user-prompt-submit", `{"session_id":"s","prompt":"/whetstone:review"}`)
	if err != nil || !strings.Contains(stdout, "the review loop is not running") {
		t.Errorf("user-prompt-submit: err %v, stdout %q", err, stdout)
	}
}
