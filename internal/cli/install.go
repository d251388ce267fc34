package cli

import (
	"fmt"
	"os"
	"path/filepath"

	urfave "github.com/urfave/cli/v2"
	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/install"
)

var globalFlag = &urfave.BoolFlag{Name: "global", Usage: "the user's OpenCode config directory (~/.config/opencode) instead of the project's .opencode"}

// installOptions are the flags and argument of install and uninstall.
type installOptions struct {
	client string // "opencode", or what was given instead
	global bool
}

// bindInstall reads install's and uninstall's arguments: urfave stops
// parsing flags at the first argument, so --global may follow "opencode".
func bindInstall(c *urfave.Context) installOptions {
	opts := installOptions{global: c.Bool("global")}
	for _, a := range c.Args().Slice() {
		switch {
		case a == "--global" || a == "-global":
			opts.global = true
		case opts.client == "":
			opts.client = a
		default:
			opts.client = "?"
		}
	}
	return opts
}

// openCodeDir is the config directory `install opencode` and `uninstall
// opencode` work on.
func openCodeDir(d deps, opts installOptions, verb string) (string, error) {
	if opts.client != "opencode" {
		return "", exitError{2, fmt.Errorf("%s: want `%s opencode [--global]` (OpenCode is the one client this applies to; Claude Code loads the plugin directory itself)", verb, verb)}
	}
	cwd, err := d.app.Getwd()
	if err != nil {
		return "", err
	}
	return install.Dir(app.FindRoot(cwd), opts.global, d.app.Getenv)
}

func newInstallCommand(d deps) *urfave.Command {
	return &urfave.Command{
		Name:      "install",
		Usage:     "install whetstone's OpenCode plugin, agents, review command and skill into .opencode/ (or --global)",
		ArgsUsage: "opencode",
		Flags:     []urfave.Flag{globalFlag},
		Action: func(c *urfave.Context) error {
			return runInstall(d, bindInstall(c))
		},
	}
}

func runInstall(d deps, opts installOptions) error {
	dir, err := openCodeDir(d, opts, "install")
	if err != nil {
		return err
	}
	bin, err := os.Executable()
	if err == nil {
		bin, err = filepath.EvalSymlinks(bin)
	}
	if err != nil {
		return fmt.Errorf("install: cannot tell where this whetstone binary is: %w", err)
	}
	written, err := install.Install(dir, bin)
	for _, p := range written {
		fmt.Fprintln(d.stdout, "wrote", p)
	}
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	fmt.Fprintf(d.stdout, "whetstone is installed for OpenCode in %s; the plugin runs %s. Type /whetstone-review in OpenCode; `whetstone uninstall opencode%s` removes exactly these files.\n", dir, bin, map[bool]string{true: " --global"}[opts.global])
	return nil
}

func newUninstallCommand(d deps) *urfave.Command {
	return &urfave.Command{
		Name:      "uninstall",
		Usage:     "remove exactly what `whetstone install opencode` wrote (or --global)",
		ArgsUsage: "opencode",
		Flags:     []urfave.Flag{globalFlag},
		Action: func(c *urfave.Context) error {
			return runUninstall(d, bindInstall(c))
		},
	}
}

func runUninstall(d deps, opts installOptions) error {
	dir, err := openCodeDir(d, opts, "uninstall")
	if err != nil {
		return err
	}
	removed, kept, err := install.Uninstall(dir)
	for _, p := range removed {
		fmt.Fprintln(d.stdout, "removed", p)
	}
	for _, p := range kept {
		fmt.Fprintln(d.stdout, "kept", p, "(changed since whetstone wrote it)")
	}
	if err != nil {
		return fmt.Errorf("uninstall: %w", err)
	}
	return nil
}
