package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	urfave "github.com/urfave/cli/v2"
	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/client"
)

// globalFlag picks the user's config directory of the client.
func globalFlag() *urfave.BoolFlag {
	var dirs []string
	for _, c := range client.Installers() {
		dirs = append(dirs, fmt.Sprintf("%s's %s", c.Title(), c.GlobalDir()))
	}
	return &urfave.BoolFlag{Name: "global", Usage: "the user's config directory (" + strings.Join(dirs, ", ") + ") instead of the project's"}
}

// installTarget is the client and config directory `install <client>`
// and `uninstall <client>` work on.
func installTarget(c *urfave.Context, verb string) (client.Installer, string, error) {
	global, name := isGlobal(c), ""
	// urfave stops parsing flags at the first argument: --global may
	// follow the client's name.
	for _, a := range c.Args().Slice() {
		switch {
		case a == "--global" || a == "-global":
		case name == "":
			name = a
		default:
			name = "?"
		}
	}
	var names, others []string
	for _, cl := range client.All() {
		if in, ok := cl.(client.Installer); ok {
			names = append(names, in.Name())
			if in.Name() == name {
				cwd, err := os.Getwd()
				if err != nil {
					return nil, "", err
				}
				dir, err := in.ConfigDir(app.FindRoot(cwd), global, os.Getenv)
				return in, dir, err
			}
		} else {
			others = append(others, cl.Title()+" loads the plugin directory itself")
		}
	}
	why := fmt.Sprintf("the clients this applies to: %s", strings.Join(names, ", "))
	if len(others) > 0 {
		why += "; " + strings.Join(others, "; ")
	}
	return nil, "", exitError{2, fmt.Errorf("%s: want `%s %s [--global]` (%s)", verb, verb, strings.Join(names, "|"), why)}
}

// isGlobal reports whether --global was given, before or after the
// client's name.
func isGlobal(c *urfave.Context) bool {
	for _, a := range c.Args().Slice() {
		if a == "--global" || a == "-global" {
			return true
		}
	}
	return c.Bool("global")
}

// clientNames lists the installable clients for a command's usage.
func clientNames() string {
	var names []string
	for _, c := range client.Installers() {
		names = append(names, c.Name())
	}
	return strings.Join(names, "|")
}

func installCommand(stdout io.Writer) *urfave.Command {
	return &urfave.Command{
		Name:      "install",
		Usage:     "install whetstone's plugin, agents, review command and skill into a client's config directory in the project (or --global)",
		ArgsUsage: clientNames(),
		Flags:     []urfave.Flag{globalFlag()},
		Action: func(c *urfave.Context) error {
			in, dir, err := installTarget(c, "install")
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
			written, err := in.Install(dir, bin)
			for _, p := range written {
				fmt.Fprintln(stdout, "wrote", p)
			}
			if err != nil {
				return fmt.Errorf("install: %w", err)
			}
			fmt.Fprintf(stdout, "whetstone is installed for %s in %s; the plugin runs %s. Type %s in %s; `whetstone uninstall %s%s` removes exactly these files.\n",
				in.Title(), dir, bin, in.ReviewCommand(), in.Title(), in.Name(), map[bool]string{true: " --global"}[isGlobal(c)])
			return nil
		},
	}
}

func uninstallCommand(stdout io.Writer) *urfave.Command {
	return &urfave.Command{
		Name:      "uninstall",
		Usage:     "remove exactly what `whetstone install` wrote (or --global)",
		ArgsUsage: clientNames(),
		Flags:     []urfave.Flag{globalFlag()},
		Action: func(c *urfave.Context) error {
			in, dir, err := installTarget(c, "uninstall")
			if err != nil {
				return err
			}
			removed, kept, err := in.Uninstall(dir)
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
