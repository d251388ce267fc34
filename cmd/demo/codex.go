package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/whetstone-dev/whetstone/internal/client/codex"
	"github.com/whetstone-dev/whetstone/internal/fakemodel"
)

// runCodex is `make demo CLIENT=codex`: the same loop on the same sample
// project, in the real Codex CLI. whetstone is installed into a throwaway
// CODEX_HOME with `whetstone install codex --global`, so the project gains
// no Codex files, and `codex exec '$whetstone-review'` runs the loop to
// DONE (hooks trusted for the invocation, Codex's sandbox off so that
// whetstone's runs the reviewers' commands).
func runCodex(bin, plugin, src string, timeout time.Duration, stdout, stderr io.Writer) int {
	d, err := prepare(plugin, src)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		err = d.runCodex(ctx, bin, stdout)
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

func (d *demo) runCodex(ctx context.Context, bin string, out io.Writer) error {
	model, err := fakemodel.Start(scenario.Script(), filepath.Join(d.tmp, "model.jsonl"))
	if err != nil {
		return err
	}
	defer model.Close()
	drv := codex.Driver{Bin: bin, Home: d.home, ModelURL: model.URL}
	env := append(append(cleanEnv(), drv.Environ()...), "TMPDIR="+filepath.Join(d.tmp, "tmp"), "WHETSTONE_STATE_DIR="+d.keyDir)
	fmt.Fprintf(out, "whetstone demo in Codex — everything lives in %s\n", d.tmp)
	fmt.Fprintf(out, "  project  %s (notes.go has 3 planted bugs, uncommitted)\n", d.project)
	fmt.Fprintf(out, "  model    scripted fake Responses API at %s/v1\n\n", model.URL)
	install := drv.Install(ctx, filepath.Join(d.plugin, "bin", "whetstone"))
	fmt.Fprintln(out, "$ whetstone "+strings.Join(install.Args[1:], " "))
	install.Dir, install.Env = d.project, env
	if b, err := install.CombinedOutput(); err != nil {
		return fmt.Errorf("whetstone %s: %w\n%s", strings.Join(install.Args[1:], " "), err, b)
	}
	if err := drv.WriteConfig(ctx); err != nil {
		return err
	}
	prompt := drv.Review("")
	cmd := drv.Run(ctx, d.project, prompt)
	fmt.Fprintln(out, "$ codex "+strings.Join(cmd.Args[1:len(cmd.Args)-1], " ")+" '"+prompt+"'")
	cmd.Env, cmd.Stdout = env, out
	logs, err := os.Create(filepath.Join(d.tmp, "codex.log"))
	if err != nil {
		return err
	}
	defer logs.Close()
	cmd.Stderr = logs
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("codex: %w (log in %s)", err, logs.Name())
	}
	return d.conclude(out)
}
