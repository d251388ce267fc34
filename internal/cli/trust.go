package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	urfave "github.com/urfave/cli/v2"
	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/config"
	"github.com/whetstone-dev/whetstone/internal/gitrun"
	"github.com/whetstone-dev/whetstone/internal/safeio"
	"github.com/whetstone-dev/whetstone/internal/trust"
)

type trustOptions struct {
	rev          string
	list, remove bool
}

func newTrustCommand(d deps) *urfave.Command {
	return &urfave.Command{
		Name:      "trust",
		Usage:     "trust this project's committed whetstone.json, so that its settings that weaken containment (sandbox, verify_commands, restore, checks_network) apply; --list, --remove",
		UsageText: "whetstone trust [--rev REV] | --list | --remove",
		Flags: []urfave.Flag{
			&urfave.StringFlag{Name: "rev", Value: "HEAD", Usage: "trust whetstone.json as committed at `REV`"},
			&urfave.BoolFlag{Name: "list", Usage: "list the trusted projects and what their files enable"},
			&urfave.BoolFlag{Name: "remove", Usage: "stop trusting this project's whetstone.json"},
		},
		Action: func(c *urfave.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			o := trustOptions{rev: c.String("rev"), list: c.Bool("list"), remove: c.Bool("remove")}
			if o.list && o.remove || (o.list || o.remove) && c.IsSet("rev") {
				return usageErr("--rev, --list and --remove exclude each other")
			}
			return runTrust(d, o)
		},
	}
}

func runTrust(d deps, o trustOptions) error {
	st, err := d.app.TrustStore()
	if err != nil {
		return err
	}
	if o.list {
		return listTrust(d.stdout, st)
	}
	wd, err := d.app.Getwd()
	if err != nil {
		return err
	}
	root := app.FindRoot(wd)
	if o.remove {
		found, err := st.Remove(root)
		if err != nil {
			return err
		}
		if !found {
			_, err = fmt.Fprintf(d.stdout, "whetstone did not trust %s's %s; nothing to remove.\n", trust.Key(root), config.FileName)
			return err
		}
		_, err = fmt.Fprintf(d.stdout, "whetstone no longer trusts %s's %s: its settings that weaken containment are ignored again.\n", trust.Key(root), config.FileName)
		return err
	}
	if strings.HasPrefix(o.rev, "-") {
		return usageErr("--rev %q is not a revision", o.rev)
	}
	rev, err := gitrun.Git{Dir: root}.Str(d.ctx, "rev-parse", "--verify", "-q", o.rev+"^{commit}")
	if err != nil {
		return fmt.Errorf("%s is not a commit of the repository at %s", o.rev, root)
	}
	src, err := config.LoadAt(d.ctx, root, rev)
	if err != nil {
		return fmt.Errorf("%v; nothing was trusted", err)
	}
	if !src.Found() {
		return fmt.Errorf("there is no %s committed at %s in %s: nothing to trust (commit it first)", config.FileName, o.rev, root)
	}
	weak := src.File.Weakening()
	if err := st.Add(trust.Entry{Root: root, SHA256: trust.Sum(src.Data), Rev: rev, Settings: weak, At: d.app.Now().UTC()}); err != nil {
		return err
	}
	enables := "no setting that weakens containment"
	if len(weak) > 0 {
		enables = strings.Join(weak, ", ")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "whetstone trusts %s as committed at %s (%s, sha256 %s): it enables %s.\n", filepath.Join(trust.Key(root), config.FileName), o.rev, rev[:12], trust.Sum(src.Data)[:12], enables)
	b.WriteString("Its settings apply to every review whose base has this exact file; a changed file is untrusted again. `whetstone trust --remove` forgets it.\n")
	if data, err := safeio.ReadIn(root, filepath.Join(root, config.FileName), config.MaxFile); err == nil && !bytes.Equal(data, src.Data) || errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(&b, "Note: the %s in the work tree differs from the one trusted; it applies only once committed, on a review's base, and trusted.\n", config.FileName)
	}
	_, err = io.WriteString(d.stdout, b.String())
	return err
}

func listTrust(w io.Writer, st trust.Store) error {
	entries, err := st.List()
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		_, err := fmt.Fprintf(w, "whetstone trusts no project's %s (%s).\n", config.FileName, st.Path)
		return err
	}
	var b strings.Builder
	for _, e := range entries {
		enables := "nothing that weakens containment"
		if len(e.Settings) > 0 {
			enables = strings.Join(e.Settings, ", ")
		}
		rev := e.Rev
		if len(rev) > 12 {
			rev = rev[:12]
		}
		fmt.Fprintf(&b, "%s  sha256 %s (from %s, %s): %s\n", e.Root, e.SHA256[:12], rev, e.At.Format("2006-01-02 15:04 UTC"), enables)
	}
	_, err = io.WriteString(w, b.String())
	return err
}
