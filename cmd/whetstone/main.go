// Command whetstone is the hook binary and command line of the whetstone
// Claude Code plugin.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/whetstone-dev/whetstone/internal/cli"
)

func main() {
	os.Exit(run())
}

// run gives a hook the deadline its client sets, less a margin
// (cli.HookDeadline); every other command runs until it ends or is
// interrupted.
func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if d, ok := cli.HookDeadline(os.Args); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	return cli.Run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
}
