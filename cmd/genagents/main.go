// Command genagents writes every client's generated files from the agent
// registry (brief.Agents, the sources in internal/brief/src) and the review
// command, commands/review.md: what each client's Render returns
// (internal/client), such as Claude Code's agents/<name>.md and OpenCode's
// opencode/agent/whetstone-<name>.md, review command and review skill. Run
// it from the module root:
//
//	go run ./cmd/genagents
package main

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/whetstone-dev/whetstone/internal/brief"
	"github.com/whetstone-dev/whetstone/internal/client"
)

func main() {
	root := flag.String("root", ".", "the module root")
	flag.Parse()
	if err := generate(*root, brief.Agents()); err != nil {
		fmt.Fprintln(os.Stderr, "genagents:", err)
		os.Exit(1)
	}
}

// generate writes every client's files for the agents of reg under root.
func generate(root string, reg brief.Registry) error {
	command, err := os.ReadFile(filepath.Join(root, "commands", "review.md"))
	if err != nil {
		return err
	}
	for _, c := range client.All() {
		files, err := c.Render(reg, command)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name(), err)
		}
		for _, rel := range slices.Sorted(maps.Keys(files)) {
			p := filepath.Join(root, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, files[rel], 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}
