package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	urfave "github.com/urfave/cli/v2"
	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/client"
	"github.com/whetstone-dev/whetstone/internal/install"
	"github.com/whetstone-dev/whetstone/internal/review"
	"github.com/whetstone-dev/whetstone/internal/safeio"
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
	client string   // a client's name, or what was given instead
	extra  []string // arguments after the client's
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
			opts.extra = append(opts.extra, a)
		}
	}
	return opts
}

// installTarget is the client and config directory `install <client>`
// and `uninstall <client>` work on. A missing, unknown or extra argument
// is a usage error that names the choices; Claude Code, which loads the
// plugin directory itself, says how to install it there.
func installTarget(d deps, opts installOptions, verb string) (client.Installer, string, error) {
	var names []string
	for _, in := range client.Installers() {
		names = append(names, in.Name())
	}
	choices := strings.Join(names, " or ")
	switch {
	case opts.client == "":
		return nil, "", usageErr("%s: name a client: %s", verb, choices)
	case len(opts.extra) > 0:
		return nil, "", usageErr("%s: one client at a time (got %q)", verb, strings.Join(append([]string{opts.client}, opts.extra...), " "))
	}
	for _, in := range client.Installers() {
		if in.Name() != opts.client {
			continue
		}
		cwd, err := d.app.Getwd()
		if err != nil {
			return nil, "", err
		}
		dir, err := in.ConfigDir(app.FindRoot(cwd), opts.global, d.app.Getenv)
		return in, dir, err
	}
	for _, cl := range client.All() {
		if bin, _ := cl.Binary(); cl.Name() == opts.client || bin == opts.client {
			return nil, "", usageErr("%s: %s needs no `whetstone %s`: it loads whetstone's plugin directory itself (`/plugin install whetstone@whetstone`, or `claude --plugin-dir DIR`; see the README); the clients this command is for: %s", verb, cl.Title(), verb, choices)
		}
	}
	return nil, "", usageErr("%s: unknown client %q; want %s", verb, opts.client, choices)
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
		UsageText: "whetstone install " + clientNames() + " [--global]",
		Flags:     []urfave.Flag{globalFlag()},
		Action: func(c *urfave.Context) error {
			return runInstall(d, bindInstall(c))
		},
	}
}

// maxManifest bounds the manifest install compares before and after.
const maxManifest = 1 << 20

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
	before, err := in.Inspect(dir)
	unchanged := err == nil && before.Installed && len(before.Problems) == 0
	manifest := filepath.Join(dir, install.ManifestName)
	// Read as install reads it: a regular file, no symlink, bounded.
	old, _ := safeio.ReadFile(manifest, maxManifest, true)
	written, err := in.Install(dir, bin)
	if err != nil {
		if len(written) > 0 {
			fmt.Fprintf(d.stdout, "%s written to %s before the error\n", review.Plural(len(written), "file"), dir)
		}
		return fmt.Errorf("install: %w", err)
	}
	// The manifest records every file with its digest, the binary and the
	// version: the same manifest over an intact install is the same install.
	cur, _ := safeio.ReadFile(manifest, maxManifest, true)
	files := len(slices.DeleteFunc(slices.Clone(written), func(p string) bool { return p == manifest })) // as doctor counts them
	global := map[bool]string{true: " --global"}[opts.global]
	if unchanged && old != nil && bytes.Equal(old, cur) {
		fmt.Fprintf(d.stdout, "whetstone for %s in %s is up to date (%s; its hooks run %s): nothing changed.\n", in.Title(), dir, review.Plural(files, "file"), bin)
	} else {
		fmt.Fprintf(d.stdout, "whetstone is installed for %s: %s written to %s, listed in %s; its hooks run %s.\n", in.Title(), review.Plural(files, "file"), dir, install.ManifestName, bin)
	}
	if !opts.global {
		fmt.Fprintln(d.stdout, install.CommitNote(in.Name()))
	}
	fmt.Fprintf(d.stdout, "Start a review: type %s in %s.\n", in.ReviewCommand(), in.Title())
	if n, ok := in.(interface{ InstallNotes(global bool) []string }); ok {
		fmt.Fprintf(d.stdout, "Before you do:\n")
		for _, line := range n.InstallNotes(opts.global) {
			fmt.Fprintf(d.stdout, "  - %s\n", line)
		}
	}
	fmt.Fprintf(d.stdout, "Remove it: `whetstone uninstall %s%s` removes exactly these files.\n", in.Name(), global)
	return nil
}

func newUninstallCommand(d deps) *urfave.Command {
	return &urfave.Command{
		Name:      "uninstall",
		Usage:     "remove exactly what `whetstone install` wrote (or --global)",
		UsageText: "whetstone uninstall " + clientNames() + " [--global]",
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
	if len(removed) > 0 {
		fmt.Fprintf(d.stdout, "whetstone for %s is uninstalled from %s: %d files and folders removed.\n", in.Title(), dir, len(removed))
	}
	for _, p := range kept {
		fmt.Fprintln(d.stdout, "kept", p, "(changed since whetstone wrote it: remove it yourself if you do not want it)")
	}
	if err != nil {
		return fmt.Errorf("uninstall: %w", err)
	}
	return nil
}
