// Command whetstone is the hook binary and command line of the whetstone
// Claude Code plugin.
package main

import (
	"context"
	"os"

	"github.com/whetstone-dev/whetstone/internal/cli"
)

func main() {
	os.Exit(run())
}

// run gives a hook the deadline its client sets, less a margin
// (cli.HookDeadline). Signals keep Go's default: SIGTERM or Ctrl-C ends
// any command at once, so a hook the client kills never outlives it (a
// caught signal would leave a hook stuck in a step without a context
// running past the kill).
func run() int {
	ctx := context.Background()
	if d, ok := cli.HookDeadline(os.Args); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	return cli.Run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
}
