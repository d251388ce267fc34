package cli

import (
	"fmt"

	urfave "github.com/urfave/cli/v2"
	"github.com/whetstone-dev/whetstone"
)

func newVersionCommand(d deps) *urfave.Command {
	return &urfave.Command{
		Name:      "version",
		Usage:     "print the version",
		UsageText: "whetstone version",
		Action: func(c *urfave.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			fmt.Fprintln(d.stdout, "whetstone", whetstone.Version)
			return nil
		},
	}
}
