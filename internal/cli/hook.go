package cli

import (
	"fmt"
	"strings"
	"time"

	urfave "github.com/urfave/cli/v2"
	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/client"
)

// HookDeadline is how long `whetstone hook` may take, for the command line
// args: 50 s for subagent-start, 110 s for every other event, and false
// for any other command. The clients kill a hook at 60 s and 120 s
// (hooks/hooks.json, opencode/whetstone.ts's timeoutOf); the 10 s margin
// is for what follows the bounded work: a hook that gave up still decides,
// writes the run's state and its report, and prints its answer before it
// is killed, so the run never stays half-written and the client never
// reads a timeout where whetstone had something to say.
func HookDeadline(args []string) (time.Duration, bool) {
	if len(args) < 2 || args[1] != "hook" {
		return 0, false
	}
	if len(args) > 2 && args[2] == "subagent-start" {
		return 50 * time.Second, true
	}
	return 110 * time.Second, true
}

type hookOptions struct {
	event  string
	client string // --client=NAME after the event: the client whose payloads name none
}

func newHookCommand(d deps) *urfave.Command {
	return &urfave.Command{
		Name:      "hook",
		Usage:     "answer a Claude Code hook event (stdin: the payload; stdout: the answer)",
		UsageText: "whetstone hook session-start|user-prompt-submit|pre-tool-use|pre-skill-shell-command|subagent-start|subagent-stop|stop [--client=NAME]",
		Action: func(c *urfave.Context) error {
			event := c.Args().First()
			name, named := strings.CutPrefix(c.Args().Get(1), "--client=")
			if _, ok := app.Events[event]; !ok || c.NArg() > 2 || c.NArg() == 2 && !named {
				return usageErr("hook: want one event of session-start, user-prompt-submit, pre-tool-use, pre-skill-shell-command, subagent-start, subagent-stop, stop (got %q)", strings.Join(c.Args().Slice(), " "))
			}
			return runHook(d, hookOptions{event: event, client: name})
		},
	}
}

// runHook reads the payload on stdin and writes the answer, if any, on
// stdout.
func runHook(d deps, opts hookOptions) error {
	p, err := client.ReadAs(d.stdin, opts.client)
	if opts.event == "pre-tool-use" {
		// The gate fails closed during a run (App.PreToolUse).
		if resp := d.app.PreToolUse(d.ctx, p, err); resp != nil {
			_, err = d.stdout.Write(resp.Encode())
			return err
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("hook %s: %w", opts.event, err)
	}
	resp, err := d.app.Hook(d.ctx, opts.event, p)
	if err != nil {
		return fmt.Errorf("hook %s: %w", opts.event, err)
	}
	if resp != nil {
		_, err = d.stdout.Write(resp.Encode())
	}
	return err
}
