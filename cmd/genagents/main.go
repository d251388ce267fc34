// Command genagents writes the agents' briefs, agents/<name>.md, from the
// sources in internal/brief/src. Run it from the module root:
//
//	go run ./cmd/genagents
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/whetstone-dev/whetstone/internal/brief"
)

func main() {
	dir := flag.String("dir", "agents", "directory to write the agent files into")
	flag.Parse()
	for _, name := range brief.Names() {
		b, err := brief.Render(name)
		if err == nil {
			err = os.WriteFile(filepath.Join(*dir, name+".md"), b, 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "genagents:", err)
			os.Exit(1)
		}
	}
}
