package cli

import (
	"errors"
	"fmt"

	urfave "github.com/urfave/cli/v2"
	"github.com/whetstone-dev/whetstone/internal/state"
)

type abortOptions struct {
	run string
}

func newAbortCommand(d deps) *urfave.Command {
	return &urfave.Command{
		Name:      "abort",
		Usage:     "stop the active run (or --run ID) as aborted",
		UsageText: "whetstone abort [--run ID]",
		Flags:     []urfave.Flag{runFlag},
		Action: func(c *urfave.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			return runAbort(d, abortOptions{run: c.String("run")})
		},
	}
}

func runAbort(d deps, opts abortOptions) error {
	proj, r, err := pickRun(d, opts.run, true)
	if opts.run != "" && errors.Is(err, state.ErrTampered) {
		// A run whose state does not verify can still be ended.
		r, err = d.app.Abort(proj, opts.run)
	} else if err == nil {
		r, err = d.app.Abort(proj, r.ID)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(d.stdout, r.Summary())
	return nil
}
