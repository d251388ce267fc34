package claudecode

import (
	"context"
	"os/exec"
	"slices"
)

// Driver runs the real Claude Code headless (`claude -p`) against a
// scripted model that speaks Anthropic's Messages API
// (internal/fakemodel), in a throwaway HOME, streaming its events as JSON
// lines with the hooks' own: the demo and the e2e tests drive Claude Code
// through it. The hook binary never uses it.
type Driver struct {
	Bin      string // the claude binary
	Plugin   string // the plugin directory; "" for a plugin installed into Home
	Home     string // the throwaway HOME
	Tmp      string // TMPDIR: Claude Code writes task output files there
	ModelURL string // the fake model's base URL, without /v1
	Mode     string // --permission-mode; "" is bypassPermissions
	Settings string // a settings file for --settings, or ""
	Debug    string // the --debug-file
}

// Environ is what Claude Code's environment must hold, on top of one
// without ANTHROPIC_*, CLAUDE*, HOME and TMPDIR: the throwaway HOME and
// TMPDIR, the fake model, and IS_SANDBOX (bypassPermissions as root).
func (d Driver) Environ() []string {
	return []string{"HOME=" + d.Home, "TMPDIR=" + d.Tmp, "ANTHROPIC_BASE_URL=" + d.ModelURL, "ANTHROPIC_API_KEY=sk-fake", "IS_SANDBOX=1"}
}

// Run is `claude -p prompt` with the plugin, streaming JSON with hook
// events; extra arguments (--resume ID, --max-turns N) come last, and
// --max-turns is 60 unless extra sets it.
func (d Driver) Run(ctx context.Context, prompt string, extra ...string) *exec.Cmd {
	args := []string{"-p", prompt}
	if d.Plugin != "" {
		args = append(args, "--plugin-dir", d.Plugin)
	}
	mode := d.Mode
	if mode == "" {
		mode = "bypassPermissions"
	}
	args = append(args,
		"--output-format", "stream-json", "--verbose", "--include-hook-events",
		"--permission-mode", mode,
		"--debug-file", d.Debug,
	)
	if d.Settings != "" {
		args = append(args, "--settings", d.Settings)
	}
	args = append(args, extra...)
	if !slices.Contains(extra, "--max-turns") {
		args = append(args, "--max-turns", "60")
	}
	return exec.CommandContext(ctx, d.Bin, args...)
}

// Review is the prompt that starts a review: the review command.
func (Driver) Review() string { return "/" + command }
