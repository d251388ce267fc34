package cli

import (
	"io"

	urfave "github.com/urfave/cli/v2"
	"github.com/whetstone-dev/whetstone/internal/inspect"
)

type statusOptions struct {
	json bool
	run  string
}

func newStatusCommand(d deps) *urfave.Command {
	return &urfave.Command{
		Name:      "status",
		Usage:     "show the latest run (or --run ID): phase, iteration, agents, open findings, time, tokens",
		UsageText: "whetstone status [--json] [--run ID]",
		Flags:     []urfave.Flag{&urfave.BoolFlag{Name: "json", Usage: "print the status object (docs/cli.md)"}, runFlag},
		Action: func(c *urfave.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			return runStatus(d, statusOptions{json: c.Bool("json"), run: c.String("run")})
		},
	}
}

func runStatus(d deps, opts statusOptions) error {
	_, r, err := pickRun(d, opts.run, false)
	if err != nil {
		return err
	}
	st := inspect.StatusOf(r, d.app.Now())
	if opts.json {
		_, err := d.stdout.Write(marshalIndent(st))
		return err
	}
	_, err = io.WriteString(d.stdout, st.Text(colour(d.stdout)))
	return err
}
