package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/whetstone-dev/whetstone/internal/fakemodel"
)

// runOpenCode is `make demo CLIENT=opencode`: the same loop on the same
// sample project, in the real OpenCode. whetstone is installed into a
// throwaway HOME with `whetstone install opencode --global`, so the project
// gains no OpenCode files, and `opencode run --command whetstone-review`
// runs the loop to DONE.
func runOpenCode(opencode, plugin, src string, timeout time.Duration, stdout, stderr io.Writer) int {
	d, err := prepare(plugin, src)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		err = d.runOpenCode(ctx, opencode, stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "demo:", err)
		if d != nil {
			fmt.Fprintf(stderr, "demo: everything is kept in %s\n", d.tmp)
		}
		return 1
	}
	return 0
}

func (d *demo) runOpenCode(ctx context.Context, opencode string, out io.Writer) error {
	model, err := fakemodel.Start(scenario.Script(), filepath.Join(d.tmp, "model.jsonl"))
	if err != nil {
		return err
	}
	defer model.Close()
	env := append(cleanEnv(), "HOME="+d.home, "TMPDIR="+filepath.Join(d.tmp, "tmp"), "WHETSTONE_STATE_DIR="+d.keyDir,
		"XDG_CONFIG_HOME="+filepath.Join(d.home, ".config"), "XDG_DATA_HOME="+filepath.Join(d.home, ".local", "share"),
		"XDG_CACHE_HOME="+filepath.Join(d.home, ".cache"), "XDG_STATE_HOME="+filepath.Join(d.home, ".local", "state"),
		"OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1",
		// OpenCode installs @opencode-ai/plugin into every config dir
		// holding plugins: fail at once rather than retry for a minute.
		"npm_config_fetch_retries=0", "npm_config_registry=http://127.0.0.1:9/")
	fmt.Fprintf(out, "whetstone demo in OpenCode — everything lives in %s\n", d.tmp)
	fmt.Fprintf(out, "  project  %s (notes.go has 3 planted bugs, uncommitted)\n", d.project)
	fmt.Fprintf(out, "  model    scripted fake OpenAI-compatible API at %s/v1\n\n", model.URL)
	fmt.Fprintln(out, "$ whetstone install opencode --global")
	install := exec.CommandContext(ctx, filepath.Join(d.plugin, "bin", "whetstone"), "install", "opencode", "--global")
	install.Dir, install.Env = d.project, env
	if b, err := install.CombinedOutput(); err != nil {
		return fmt.Errorf("whetstone install opencode: %w\n%s", err, b)
	}
	config := map[string]any{
		"$schema": "https://opencode.ai/config.json", "model": "fake/fake-model", "small_model": "fake/fake-model",
		"autoupdate": false, "share": "disabled",
		"provider": map[string]any{"fake": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "Fake",
			"options": map[string]any{"baseURL": model.URL + "/v1", "apiKey": "sk-demo"},
			"models":  map[string]any{"fake-model": map[string]any{"name": "Fake", "tool_call": true, "limit": map[string]any{"context": 100000, "output": 4096}}},
		}},
	}
	raw, _ := json.MarshalIndent(config, "", "  ")
	if err := os.WriteFile(filepath.Join(d.home, ".config", "opencode", "opencode.json"), raw, 0o644); err != nil {
		return err
	}
	fmt.Fprintln(out, "$ opencode run --command whetstone-review")
	cmd := exec.CommandContext(ctx, opencode, "run", "--command", "whetstone-review", "--print-logs", "--log-level", "INFO")
	// OpenCode takes its directory from $PWD when it is set.
	cmd.Dir, cmd.Env, cmd.Stdout = d.project, append(env, "PWD="+d.project), out
	logs, err := os.Create(filepath.Join(d.tmp, "opencode.log"))
	if err != nil {
		return err
	}
	defer logs.Close()
	cmd.Stderr = logs
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("opencode: %w (log in %s)", err, logs.Name())
	}
	return d.conclude(out)
}
