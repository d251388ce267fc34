package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	urfave "github.com/urfave/cli/v2"
	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/install"
)

var globalFlag = &urfave.BoolFlag{Name: "global", Usage: "the user's OpenCode config directory (~/.config/opencode) instead of the project's .opencode"}

// openCodeDir is the config directory `install opencode` and `uninstall
// opencode` work on.
func openCodeDir(c *urfave.Context, verb string) (string, error) {
	global, client := c.Bool("global"), ""
	// urfave stops parsing flags at the first argument: --global may
	// follow "opencode".
	for _, a := range c.Args().Slice() {
		switch {
		case a == "--global" || a == "-global":
			global = true
		case client == "":
			client = a
		default:
			client = "?"
		}
	}
	if client != "opencode" {
		return "", exitError{2, fmt.Errorf("%s: want `%s opencode [--global]` (OpenCode is the one client this applies to; Claude Code loads the plugin directory itself)", verb, verb)}
	}
	cwd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return install.Dir(app.FindRoot(cwd), global, os.Getenv)
}

// isGlobal reports whether --global was given, before or after "opencode".
func isGlobal(c *urfave.Context) bool {
	for _, a := range c.Args().Slice() {
		if a == "--global" || a == "-global" {
			return true
		}
	}
	return c.Bool("global")
}

func installCommand(stdout io.Writer) *urfave.Command {
	return &urfave.Command{
		Name:      "install",
		Usage:     "install whetstone's OpenCode plugin, agents, review command and skill into .opencode/ (or --global)",
		ArgsUsage: "opencode",
		Flags:     []urfave.Flag{globalFlag},
		Action: func(c *urfave.Context) error {
			dir, err := openCodeDir(c, "install")
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
				fmt.Fprintln(stdout, "wrote", p)
			}
			if err != nil {
				return fmt.Errorf("install: %w", err)
			}
			fmt.Fprintf(stdout, "whetstone is installed for OpenCode in %s; the plugin runs %s. Type /whetstone-review in OpenCode; `whetstone uninstall opencode%s` removes exactly these files.\n", dir, bin, map[bool]string{true: " --global"}[isGlobal(c)])
			return nil
		},
	}
}

func uninstallCommand(stdout io.Writer) *urfave.Command {
	return &urfave.Command{
		Name:      "uninstall",
		Usage:     "remove exactly what `whetstone install opencode` wrote (or --global)",
		ArgsUsage: "opencode",
		Flags:     []urfave.Flag{globalFlag},
		Action: func(c *urfave.Context) error {
			dir, err := openCodeDir(c, "uninstall")
			if err != nil {
				return err
			}
			removed, kept, err := install.Uninstall(dir)
			for _, p := range removed {
				fmt.Fprintln(stdout, "removed", p)
			}
			for _, p := range kept {
				fmt.Fprintln(stdout, "kept", p, "(changed since whetstone wrote it)")
			}
			if err != nil {
				return fmt.Errorf("uninstall: %w", err)
			}
			return nil
		},
	}
}
