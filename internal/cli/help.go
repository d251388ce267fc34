package cli

import (
	"strings"

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
		// urfave answers a command's --help with its own help action,
		// which for "help" is the root's help: help reads its flags itself.
		SkipFlagParsing: true,
		HideHelpCommand: true,
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
		if t := opts.topics[0]; t == "--help" || t == "-help" || t == "-h" {
			return urfave.ShowCommandHelp(c.Lineage()[1], "help")
		}
		if strings.HasPrefix(opts.topics[0], "-") {
			return usageErr("help: unknown flag %s", opts.topics[0])
		}
		if c.App.Command(opts.topics[0]) == nil {
			return usageErr("help: unknown command %q", opts.topics[0])
		}
		return urfave.ShowCommandHelp(c.Lineage()[1], opts.topics[0])
	}
	return usageErr("help: want at most one command")
}
