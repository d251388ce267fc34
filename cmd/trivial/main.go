// Command trivial is the speed baseline for scripts/bench: the least a hook
// binary can do — read the payload from stdin and answer with an empty JSON
// object. whetstone's no-run hook is measured against it.
package main

import (
	"io"
	"os"
)

func main() {
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		os.Exit(1)
	}
	os.Stdout.WriteString("{}\n")
}
