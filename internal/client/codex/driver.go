package codex

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Version is the Codex CLI whetstone's Codex facts were established with
// (docs/codex.md); scripts/install-codex installs it.
const Version = "0.169.0"

// NativeBinary is the native codex that scripts/install-codex installs
// under cache (its codex-<version>/node_modules), for this platform.
func NativeBinary(cache, version string) (string, error) {
	platform := map[string]string{"linux/amd64": "linux-x64 x86_64-unknown-linux-musl", "linux/arm64": "linux-arm64 aarch64-unknown-linux-musl",
		"darwin/amd64": "darwin-x64 x86_64-apple-darwin", "darwin/arm64": "darwin-arm64 aarch64-apple-darwin"}[runtime.GOOS+"/"+runtime.GOARCH]
	pkg, triple, ok := strings.Cut(platform, " ")
	if !ok {
		return "", fmt.Errorf("the Codex CLI has no build for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	return filepath.Abs(filepath.Join(cache, "codex-"+version, "node_modules", "@openai", "codex-"+pkg, "vendor", triple, "bin", "codex"))
}

// Driver runs the real Codex CLI (`codex exec`) offline against a scripted
// model that speaks OpenAI's Responses API (internal/fakemodel), with
// whetstone installed into a throwaway CODEX_HOME by `whetstone install
// codex --global`, so that nothing whetstone or Codex writes lands in the
// project: the demo (`make demo CLIENT=codex`) and the e2e tests drive
// Codex through it. The hook binary never uses it.
type Driver struct {
	Bin      string // the native codex binary
	Home     string // the throwaway CODEX_HOME (and HOME)
	ModelURL string // the fake model's base URL, without /v1
}

// Environ is what Codex's environment must hold: the throwaway CODEX_HOME
// and HOME, and no update check.
func (d Driver) Environ() []string {
	return []string{"CODEX_HOME=" + d.Home, "HOME=" + d.Home, "CODEX_DISABLE_UPDATE_CHECK=1"}
}

// Install is `whetstone install codex --global`, run by the whetstone
// binary bin (with Environ's CODEX_HOME).
func (d Driver) Install(ctx context.Context, bin string) *exec.Cmd {
	return exec.CommandContext(ctx, bin, "install", Client{}.Name(), "--global")
}

// WriteConfig writes CODEX_HOME's config.toml: the fake model as the only
// provider, with a catalog that gives it gpt-5.5's tools (the free-form
// apply_patch, every tool up front; docs/codex.md §1), built from `codex
// debug models`.
func (d Driver) WriteConfig(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, d.Bin, "debug", "models")
	cmd.Env = append(os.Environ(), d.Environ()...)
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("codex debug models: %w", err)
	}
	var catalog struct {
		Models []map[string]any `json:"models"`
	}
	if err := json.Unmarshal(out, &catalog); err != nil {
		return fmt.Errorf("codex debug models: %w", err)
	}
	var model map[string]any
	for _, m := range catalog.Models {
		if m["slug"] == "gpt-5.5" {
			model = m
		}
	}
	if model == nil {
		return fmt.Errorf("codex debug models lists no gpt-5.5 to model fake-model on")
	}
	model["slug"], model["display_name"], model["supports_search_tool"], model["upgrade"] = "fake-model", "fake-model", false, nil
	raw, _ := json.Marshal(map[string]any{"models": []any{model}})
	path := filepath.Join(d.Home, "catalog.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		return err
	}
	config := fmt.Sprintf("model = \"fake-model\"\nmodel_provider = \"fake\"\nmodel_catalog_json = %s\n\n[model_providers.fake]\nname = \"fake\"\nbase_url = %s\nwire_api = \"responses\"\n",
		tomlString(path), tomlString(d.ModelURL+"/v1"))
	return os.WriteFile(filepath.Join(d.Home, "config.toml"), []byte(config), 0o644)
}

// Run is `codex exec prompt` in dir with the hooks trusted for this
// invocation and Codex's sandbox off, so that whetstone's own runs
// reviewers' commands (docs/codex.md: bwrap cannot start inside Codex's);
// stdin must be empty (/dev/null), or Codex appends it to the prompt.
func (d Driver) Run(ctx context.Context, dir, prompt string) *exec.Cmd {
	return exec.CommandContext(ctx, d.Bin, "exec", "--dangerously-bypass-hook-trust",
		"--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check", "-C", dir, prompt)
}

// Review is the prompt that starts a review: the review skill, with args.
func (Driver) Review(args string) string { return strings.TrimSpace("$" + Skill + " " + args) }
