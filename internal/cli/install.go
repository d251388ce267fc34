package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	urfave "github.com/urfave/cli/v2"
	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/client"
	"github.com/whetstone-dev/whetstone/internal/install"
)

// globalFlag picks the user's config directory of the client.
func globalFlag() *urfave.BoolFlag {
	var dirs []string
	for _, c := range client.Installers() {
		dirs = append(dirs, fmt.Sprintf("%s's %s", c.Title(), c.GlobalDir()))
	}
	return &urfave.BoolFlag{Name: "global", Usage: "the user's config directory (" + strings.Join(dirs, ", ") + ") instead of the project's"}
}

// installOptions are the flags and argument of install and uninstall.
type installOptions struct {
	client string // a client's name, or what was given instead
	global bool
}

// bindInstall reads install's and uninstall's arguments: urfave stops
// parsing flags at the first argument, so --global may follow the
// client's name.
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

// installTarget is the client and config directory `install <client>`
// and `uninstall <client>` work on.
func installTarget(d deps, opts installOptions, verb string) (client.Installer, string, error) {
	var names, others []string
	for _, cl := range client.All() {
		in, ok := cl.(client.Installer)
		if !ok {
			others = append(others, cl.Title()+" loads the plugin directory itself")
			continue
		}
		names = append(names, in.Name())
		if in.Name() == opts.client {
			cwd, err := d.app.Getwd()
			if err != nil {
				return nil, "", err
			}
			dir, err := in.ConfigDir(app.FindRoot(cwd), opts.global, d.app.Getenv)
			return in, dir, err
		}
	}
	why := fmt.Sprintf("the clients this applies to: %s", strings.Join(names, ", "))
	if len(others) > 0 {
		why += "; " + strings.Join(others, "; ")
	}
	return nil, "", exitError{2, fmt.Errorf("%s: want `%s %s [--global]` (%s)", verb, verb, strings.Join(names, "|"), why)}
}

// clientNames lists the installable clients for a command's usage.
func clientNames() string {
	var names []string
	for _, c := range client.Installers() {
		names = append(names, c.Name())
	}
	return strings.Join(names, "|")
}

func newInstallCommand(d deps) *urfave.Command {
	return &urfave.Command{
		Name:      "install",
		Usage:     "install whetstone's plugin, agents, review command and skill into a client's config directory in the project (or --global)",
		ArgsUsage: clientNames(),
		Flags:     []urfave.Flag{globalFlag()},
		Action: func(c *urfave.Context) error {
			return runInstall(d, bindInstall(c))
		},
	}
}

func runInstall(d deps, opts installOptions) error {
	in, dir, err := installTarget(d, opts, "install")
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
		fmt.Fprintln(d.stdout, "wrote", p)
	}
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	fmt.Fprintf(d.stdout, "whetstone is installed for %s in %s; the plugin runs %s. Type %s in %s; `whetstone uninstall %s%s` removes exactly these files.\n",
		in.Title(), dir, bin, in.ReviewCommand(), in.Title(), in.Name(), map[bool]string{true: " --global"}[opts.global])
	if !opts.global {
		fmt.Fprintln(d.stdout, install.CommitNote(in.Name()))
	}
	if n, ok := in.(interface{ InstallNote(global bool) string }); ok {
		fmt.Fprintln(d.stdout, n.InstallNote(opts.global))
	}
	return nil
}

func newUninstallCommand(d deps) *urfave.Command {
	return &urfave.Command{
		Name:      "uninstall",
		Usage:     "remove exactly what `whetstone install` wrote (or --global)",
		ArgsUsage: clientNames(),
		Flags:     []urfave.Flag{globalFlag()},
		Action: func(c *urfave.Context) error {
			return runUninstall(d, bindInstall(c))
		},
	}
}

func runUninstall(d deps, opts installOptions) error {
	in, dir, err := installTarget(d, opts, "uninstall")
	if err != nil {
		return err
	}
	removed, kept, err := in.Uninstall(dir)
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
