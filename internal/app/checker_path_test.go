package app_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/whetstone-dev/whetstone/internal/sandbox/sandboxtest"
)

// TestCheckerOnPathUnderTmp: a checker the hook finds on PATH exists in
// the sandbox, or its signal is skipped saying why — never "failed" with
// "command not found". ruff in a directory under /tmp (a per-shell tool
// directory, a virtualenv in /tmp) runs; a ruff that is a symlink into a
// directory under /tmp that PATH does not name is skipped.
func TestCheckerOnPathUnderTmp(t *testing.T) {
	keyDir := containKeyDir(t)
	ruff := "#!/bin/sh\necho \"pkg/a.py:1:1: F401 [*] 'os' imported but unused\"\nexit 1\n"
	files := map[string]string{"ruff.toml": "\n", "pkg/a.py": "import os\n"}
	for i, tc := range []struct {
		name, status, output string
	}{
		{"on PATH under /tmp", "candidates", ""},
		{"a symlink into /tmp", "skipped", "(empty in the sandbox)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tools, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(tools, "ruff"), []byte(ruff), 0o755); err != nil {
				t.Fatal(err)
			}
			dir := tools
			if i == 1 {
				dir = sandboxtest.OutsideTmp(t, "whetstone-checker-path-")
				if err := os.Symlink(filepath.Join(tools, "ruff"), filepath.Join(dir, "ruff")); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
			a := containApp(t, keyDir, true)
			_, runDir := ecosystemProject(t, a, fmt.Sprintf("c9000000-0000-4000-8000-00000000000%d", i), files)
			context, err := os.ReadFile(filepath.Join(runDir, "context.json"))
			if err != nil {
				t.Fatal(err)
			}
			s := gjson.GetBytes(context, `signals.#(tool=="ruff")`)
			if s.Get("status").String() != tc.status || !strings.Contains(s.Get("output").String(), tc.output) {
				t.Errorf("ruff's signal is %s, want %s with %q", s.Raw, tc.status, tc.output)
			}
			if tc.status == "candidates" && s.Get("candidates.0.file").String() != "pkg/a.py" {
				t.Errorf("ruff's candidates: %s", s.Raw)
			}
		})
	}
}
