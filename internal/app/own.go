package app

import (
	"os"
	"path/filepath"

	"github.com/whetstone-dev/whetstone/internal/client"
	"github.com/whetstone-dev/whetstone/internal/install"
)

// own is what the installs of this whetstone write into proj's config
// directories (`whetstone install opencode`, `codex`): files that hold
// exactly that are no part of a change under review (install.Own). The
// plugin and hooks name the binary, so they are judged against this one,
// the binary the hooks run and `install` wrote into them. nil when the
// binary cannot be found: every file is then reviewed.
func (a *App) own(proj Project) *install.Own {
	bin, err := os.Executable()
	if err == nil {
		bin, err = filepath.EvalSymlinks(bin)
	}
	if err != nil {
		return nil
	}
	o := &install.Own{}
	for _, in := range client.Installers() {
		w, ok := in.(interface {
			Written(binary string) (install.Set, error)
		})
		if !ok {
			continue
		}
		dir, err := in.ConfigDir(proj.Root, false, a.Getenv)
		if err != nil {
			continue
		}
		rel, err := filepath.Rel(proj.Root, dir)
		if err != nil || !filepath.IsLocal(rel) {
			continue
		}
		s, err := w.Written(bin)
		if err != nil {
			continue
		}
		o.Add(filepath.ToSlash(rel), s)
	}
	return o
}
