package app

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

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
		words := make([]string, len(argv))
		for i, w := range argv {
			words[i] = sandbox.Quote(w)
		}
		var hide []string
		if proj.keyPath != "" {
			dir := filepath.Dir(proj.keyPath)
			hide = []string{dir, resolved(dir)}
		}
		line := sandbox.Wrap(bwrap, strings.Join(words, " "), sandbox.Options{Root: resolved(proj.Root), Hide: hide, Env: a.Getenv})
		return []string{"bash", "-c", line}, ""
	}
}
