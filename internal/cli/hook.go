package cli

import (
	"fmt"
	"strings"

	urfave "github.com/urfave/cli/v2"
	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/client"
)

type hookOptions struct {
	event string
}

func newHookCommand(d deps) *urfave.Command {
	return &urfave.Command{
		Name:      "hook",
		Usage:     "answer a Claude Code hook event (stdin: the payload; stdout: the answer)",
		UsageText: "whetstone hook session-start|user-prompt-submit|pre-tool-use|pre-skill-shell-command|subagent-start|subagent-stop|stop",
		Action: func(c *urfave.Context) error {
			event := c.Args().First()
			if _, ok := app.Events[event]; !ok || c.NArg() != 1 {
				return usageErr("hook: want one event of session-start, user-prompt-submit, pre-tool-use, pre-skill-shell-command, subagent-start, subagent-stop, stop (got %q)", strings.Join(c.Args().Slice(), " "))
			}
			return runHook(d, hookOptions{event: event})
		},
	}
}

// runHook reads the payload on stdin and writes the answer, if any, on
// stdout.
func runHook(d deps, opts hookOptions) error {
	p, err := client.Read(d.stdin)
	if opts.event == "pre-tool-use" {
		// The gate fails closed during a run (App.PreToolUse).
		if resp := d.app.PreToolUse(p, err); resp != nil {
			_, err = d.stdout.Write(resp.Encode())
			return err
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("hook %s: %w", opts.event, err)
	}
	resp, err := d.app.Hook(opts.event, p)
	if err != nil {
		return fmt.Errorf("hook %s: %w", opts.event, err)
	}
	if resp != nil {
		_, err = d.stdout.Write(resp.Encode())
	}
	return err
}
