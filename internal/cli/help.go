package cli

import (
	urfave "github.com/urfave/cli/v2"
)

type helpOptions struct {
	topics []string
}

func newHelpCommand() *urfave.Command {
	return &urfave.Command{
		Name:      "help",
		Usage:     "show the commands, or one command's usage and flags",
		UsageText: "whetstone help [command]",
		Action: func(c *urfave.Context) error {
			return runHelp(c, helpOptions{topics: c.Args().Slice()})
		},
	}
}

// runHelp shows the app's help or one command's; it needs urfave's context
// to render them.
func runHelp(c *urfave.Context, opts helpOptions) error {
	switch len(opts.topics) {
	case 0:
		return urfave.ShowAppHelp(c)
	case 1:
		if c.App.Command(opts.topics[0]) == nil {
			return usageErr("help: unknown command %q", opts.topics[0])
		}
		return urfave.ShowCommandHelp(c.Lineage()[1], opts.topics[0])
	}
	return usageErr("help: want at most one command")
}
