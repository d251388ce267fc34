package opencode

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
)

// Driver runs the real OpenCode offline against a scripted model that
// speaks OpenAI's chat completions (internal/fakemodel), with whetstone
// installed into a throwaway HOME's global config directory, so that
// nothing whetstone or OpenCode writes lands in the project: the demo
// (`make demo CLIENT=opencode`) and the e2e tests drive OpenCode through
// it. The hook binary never uses it.
type Driver struct {
	Bin      string // the opencode binary
	Home     string // the throwaway HOME
	ModelURL string // the fake model's base URL, without /v1
}

// ConfigDir is the global config directory, $XDG_CONFIG_HOME/opencode.
func (d Driver) ConfigDir() string { return filepath.Join(d.Home, ".config", "opencode") }

// Environ is what OpenCode's environment must hold: the throwaway HOME and
// XDG directories, no update check, no model catalog fetch, and an npm
// that fails at once (OpenCode installs @opencode-ai/plugin into every
// config directory holding plugins: fail rather than retry for a minute).
func (d Driver) Environ() []string {
	return []string{
		"HOME=" + d.Home,
		"XDG_CONFIG_HOME=" + filepath.Join(d.Home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(d.Home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(d.Home, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(d.Home, ".local", "state"),
		"OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1",
		"npm_config_fetch_retries=0", "npm_config_registry=http://127.0.0.1:9/",
	}
}

// Install is `whetstone install opencode --global`, run by the whetstone
// binary bin.
func (d Driver) Install(ctx context.Context, bin string) *exec.Cmd {
	return exec.CommandContext(ctx, bin, "install", Client{}.Name(), "--global")
}

// WriteConfig writes the global opencode.json: the fake model as the only
// provider (fake/fake-model, and fake/gpt-5.1 for a model that gets
// apply_patch instead of edit), plus extra.
func (d Driver) WriteConfig(extra map[string]any) error {
	limit := map[string]any{"context": 100000, "output": 4096}
	config := map[string]any{
		"$schema": "https://opencode.ai/config.json", "model": "fake/fake-model", "small_model": "fake/fake-model",
		"autoupdate": false, "share": "disabled",
		"provider": map[string]any{"fake": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "Fake",
			"options": map[string]any{"baseURL": d.ModelURL + "/v1", "apiKey": "sk-fake"},
			"models": map[string]any{
				"fake-model": map[string]any{"name": "Fake", "tool_call": true, "limit": limit},
				"gpt-5.1":    map[string]any{"name": "Fake gpt-5.1", "tool_call": true, "limit": limit},
			},
		}},
	}
	for k, v := range extra {
		config[k] = v
	}
	raw, _ := json.MarshalIndent(config, "", "  ")
	if err := os.MkdirAll(d.ConfigDir(), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(d.ConfigDir(), "opencode.json"), raw, 0o644)
}

// Run is `opencode run args…` with its logs on stderr.
func (d Driver) Run(ctx context.Context, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, d.Bin, append([]string{"run", "--print-logs", "--log-level", "INFO"}, args...)...)
}

// Review is the arguments of Run that start a review: the review command.
func (Driver) Review() []string { return []string{"--command", Command} }
