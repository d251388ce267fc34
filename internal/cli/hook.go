package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	urfave "github.com/urfave/cli/v2"
	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/client"
	"github.com/whetstone-dev/whetstone/internal/hook"
)

// HookDeadline is how long `whetstone hook` may take, for the command line
// args: 50 s for subagent-start, 110 s for every other event, and false
// for any other command. The clients kill a hook at 60 s and 120 s
// (hooks/hooks.json, opencode/whetstone.ts's TIMEOUT_S, the Codex
// hooks.json of internal/client/codex; TestHookTimeoutsAgree keeps the
// four equal); the 10 s margin is for what follows the bounded work: a
// hook that gave up still decides, writes the run's state and its report,
// and prints its answer before it is killed, so the run never stays
// half-written and the client never reads a timeout where whetstone had
// something to say. A tool call's gate that is still deciding GateGrace
// after the deadline is refused there (runHook): Codex lets a call
// through when its hook times out.
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
		// The gate fails closed during a run (App.PreToolUse), also when
		// it overruns the hook's deadline.
		if resp := gate(d, p, err); resp != nil {
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

// GateGrace is how long after the hook's deadline a tool call's gate may
// still decide before the call is refused: less than HookDeadline's
// margin, so the refusal is printed before the client kills the hook.
const GateGrace = 5 * time.Second

// gate is App.PreToolUse, refused when it has not answered GateGrace after
// the hook's deadline (within).
func gate(d deps, p hook.Payload, bad error) *hook.Response {
	resp, late := within(d.ctx, GateGrace, p, func() *hook.Response { return d.app.PreToolUse(d.ctx, p, bad) })
	if late {
		fmt.Fprintf(d.stderr, "whetstone: hook pre-tool-use: no decision %s after the deadline; the call is refused\n", GateGrace)
	}
	return resp
}

// within runs check, a gate's decision on p, and returns its answer, or,
// when ctx has a deadline and check has not answered grace after it, a
// refusal in the words of p's client (late). The deadline bounds every
// step, but a step that fails to stop must not end in the client's
// timeout, which Codex takes for no objection. The unfinished check ends
// with the process.
func within(ctx context.Context, grace time.Duration, p hook.Payload, check func() *hook.Response) (resp *hook.Response, late bool) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return check(), false
	}
	done := make(chan *hook.Response, 1)
	go func() { done <- check() }()
	timer := time.NewTimer(time.Until(deadline) + grace)
	defer timer.Stop()
	select {
	case resp := <-done:
		return resp, false
	case <-timer.C:
		resp := hook.Deny("whetstone did not finish checking this call in time, so it is refused: try it again, or see the run with `whetstone status`")
		if c, err := client.Lookup(p.Client); err == nil {
			c.Phrase(resp)
		}
		return resp, true
	}
}
