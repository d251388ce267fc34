package app

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/whetstone-dev/whetstone/internal/sandbox"
	"github.com/whetstone-dev/whetstone/internal/scope"
)

// containCheck runs the project's configured checkers (tsc, eslint, ruff,
// mypy, cargo clippy: scope.Contain), which execute the project's code,
// the way the gate runs an agent's tests: in the sandbox, with whetstone's
// key hidden; unsandboxed only where whetstone.json's "sandbox" says so
// ("off", or "if-available" without a sandbox); else not at all.
func (a *App) containCheck(ctx context.Context, proj Project, setting string) scope.Contain {
	return func(argv []string) ([]string, string) {
		if setting == SandboxOff {
			return argv, ""
		}
		bwrap, ok := a.sandboxWithin(ctx)
		switch {
		case !ok && setting == SandboxIfAvailable:
			return argv, ""
		case !ok:
			return nil, fmt.Sprintf("it runs the project's code, which whetstone runs only in its sandbox, and there is none here (%s)", NoSandbox())
		}
		var hide []string
		if proj.keyPath != "" {
			dir := filepath.Dir(proj.keyPath)
			hide = []string{dir, resolved(dir)}
		}
		// No shell around it: the hook's PATH may hold the project's own
		// bash (an activated .venv/bin), and sandbox.Command starts with an
		// absolute env -i.
		return sandbox.Command(bwrap, argv, sandbox.Options{Root: resolved(proj.Root), Hide: hide, Env: a.Getenv})
	}
}
