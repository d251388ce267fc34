// Command whetstone is the hook binary and command line of the whetstone
// Claude Code plugin.
package main

import (
	"os"

	"github.com/whetstone-dev/whetstone/internal/cli"
)

func main() {
	os.Exit(cli.Run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
