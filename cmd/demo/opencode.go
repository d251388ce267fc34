package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/whetstone-dev/whetstone/internal/client/opencode"
	"github.com/whetstone-dev/whetstone/internal/fakemodel"
)

// runOpenCode is `make demo CLIENT=opencode`: the same loop on the same
// sample project, in the real OpenCode. whetstone is installed into a
// throwaway HOME with `whetstone install opencode --global`, so the project
// gains no OpenCode files, and `opencode run --command whetstone-review`
// runs the loop to DONE.
func runOpenCode(bin, plugin, src string, timeout time.Duration, stdout, stderr io.Writer) int {
	d, err := prepare(plugin, src)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		err = d.runOpenCode(ctx, bin, stdout)
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

func (d *demo) runOpenCode(ctx context.Context, bin string, out io.Writer) error {
	model, err := fakemodel.Start(scenario.Script(), filepath.Join(d.tmp, "model.jsonl"))
	if err != nil {
		return err
	}
	defer model.Close()
	drv := opencode.Driver{Bin: bin, Home: d.home, ModelURL: model.URL}
	env := append(append(cleanEnv(), drv.Environ()...), "TMPDIR="+filepath.Join(d.tmp, "tmp"), "WHETSTONE_STATE_DIR="+d.keyDir)
	fmt.Fprintf(out, "whetstone demo in OpenCode — everything lives in %s\n", d.tmp)
	fmt.Fprintf(out, "  project  %s (notes.go has 3 planted bugs, uncommitted)\n", d.project)
	fmt.Fprintf(out, "  model    scripted fake OpenAI-compatible API at %s/v1\n\n", model.URL)
	install := drv.Install(ctx, filepath.Join(d.plugin, "bin", "whetstone"))
	fmt.Fprintln(out, "$ whetstone "+strings.Join(install.Args[1:], " "))
	install.Dir, install.Env = d.project, env
	if b, err := install.CombinedOutput(); err != nil {
		return fmt.Errorf("whetstone %s: %w\n%s", strings.Join(install.Args[1:], " "), err, b)
	}
	if err := drv.WriteConfig(nil); err != nil {
		return err
	}
	fmt.Fprintln(out, "$ opencode run "+strings.Join(drv.Review(), " "))
	cmd := drv.Run(ctx, drv.Review()...)
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
