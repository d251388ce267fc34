package app

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/whetstone-dev/whetstone/internal/config"
	"github.com/whetstone-dev/whetstone/internal/state"
	"github.com/whetstone-dev/whetstone/internal/trust"
)

// TrustStore is the user's trust file, next to whetstone's key and as far
// from every project and agent (docs/security.md).
func (a *App) TrustStore() (trust.Store, error) {
	path, err := state.KeyPath(a.Getenv)
	if err != nil {
		return trust.Store{}, err
	}
	return trust.For(path), nil
}

// Trusted reports whether the user trusts src, root's whetstone.json as
// read at a commit. A file without a setting that weakens containment
// needs no trust; a trust file that cannot be read trusts nothing.
func (a *App) Trusted(root string, src config.Source) (bool, error) {
	if len(src.File.Weakening()) == 0 {
		return true, nil
	}
	st, err := a.TrustStore()
	if err != nil {
		return false, err
	}
	return st.Trusted(root, src.Data)
}

// contained is the configuration a run applies from src, the project's
// whetstone.json at the change's base: all of it when the user trusts
// that exact file, else all but the settings that weaken containment,
// with one line for the user naming them and the command that trusts the
// file.
func (a *App) contained(ctx context.Context, proj Project, src config.Source) (config.File, []string) {
	weak := src.File.Weakening()
	if len(weak) == 0 {
		return src.File, nil
	}
	ok, err := a.Trusted(proj.Root, src)
	if err != nil {
		fmt.Fprintf(a.Log, "trust: %v; %s is not trusted\n", err, config.FileName)
	}
	if ok {
		return src.File, nil
	}
	what := "a setting that weakens containment and applies only once you trust this exact file; it is ignored in this run"
	if len(weak) > 1 {
		what = "settings that weaken containment and apply only once you trust this exact file; they are ignored in this run"
	}
	return src.File.Contained(), []string{fmt.Sprintf("%s asks for %s, %s. To trust it, run `%s` in %s (docs/security.md).",
		config.FileName, strings.Join(weak, ", "), what, trustCommand(ctx, proj.Root, src), proj.Root)}
}

// trustCommand is the command that trusts src: `whetstone trust` trusts
// the file committed at HEAD, so a base whose file differs from HEAD's
// (a branch that changes it) is named.
func trustCommand(ctx context.Context, root string, src config.Source) string {
	if head, err := config.LoadAt(ctx, root, "HEAD"); err == nil && bytes.Equal(head.Data, src.Data) {
		return "whetstone trust"
	}
	return "whetstone trust --rev " + src.Rev
}
