// Command genagents writes the agents' briefs from the sources in
// internal/brief/src (the agent registry, brief.Agents): Claude Code's agents/<name>.md and OpenCode's
// opencode/agent/whetstone-<name>.md, and OpenCode's review command,
// opencode/command/whetstone-review.md, and review skill,
// opencode/skill/whetstone-review/SKILL.md, from commands/review.md. Run it
// from the module root:
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
	root := flag.String("root", ".", "the module root")
	flag.Parse()
	if err := generate(*root, brief.Agents()); err != nil {
		fmt.Fprintln(os.Stderr, "genagents:", err)
		os.Exit(1)
	}
}

// generate writes every agent of reg for both clients, and the OpenCode
// command and skill, under root.
func generate(root string, reg brief.Registry) error {
	for _, dir := range []string{"agents", "opencode/agent", "opencode/command", "opencode/skill/" + brief.OpenCodeCommand} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			return err
		}
	}
	for _, a := range reg.All() {
		name := a.Name
		b, err := reg.Render(name)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(root, "agents", name+".md"), b, 0o644); err != nil {
			return err
		}
		if b, err = reg.RenderOpenCode(name); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(root, "opencode", "agent", brief.OpenCodePrefix+name+".md"), b, 0o644); err != nil {
			return err
		}
	}
	claude, err := os.ReadFile(filepath.Join(root, "commands", "review.md"))
	if err != nil {
		return err
	}
	b, err := brief.RenderOpenCodeCommand(claude)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, "opencode", "command", brief.OpenCodeCommand+".md"), b, 0o644); err != nil {
		return err
	}
	if b, err = brief.RenderOpenCodeSkill(claude); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, "opencode", "skill", brief.OpenCodeCommand, "SKILL.md"), b, 0o644)
}
