package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/whetstone-dev/whetstone/internal/loop"
	"github.com/whetstone-dev/whetstone/internal/snapshot"
)

// A run's snapshots write their git objects into the run's own object
// directory in .git (internal/snapshot, WithOwner), removed when the run
// ends (finish) with the indexes its snapshots kept: once a run has
// ended, it leaves nothing in .git.

// pendingAge is how long the objects of a start that created no run (a
// hook killed mid-start), or of a run whose directory is gone, may stay
// before a later start removes them.
const pendingAge = time.Hour

// owned returns ctx under which r's snapshots write into r's object
// directory.
func owned(ctx context.Context, r *loop.Run) context.Context {
	return snapshot.WithOwner(ctx, r.ID)
}

// pendingOwner names the owner of a start's objects until its run has an
// id (adopt).
func pendingOwner() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "start-" + hex.EncodeToString(b)
}

// adopt hands what a start wrote as pending to the run it created (id),
// when create has not already, or removes it when it created none (id
// ""): a refused start leaves nothing in .git.
func (a *App) adopt(ctx context.Context, proj Project, pending, id string) {
	var err error
	if id != "" {
		err = snapshot.Adopt(ctx, proj.Root, pending, id)
	} else {
		_, err = snapshot.Release(ctx, proj.Root, pending)
	}
	if err != nil {
		fmt.Fprintf(a.Log, "start: the objects of %s: %v\n", pending, err)
	}
}

// releaseObjects removes what the run's snapshots added to .git; a run
// that ended no longer needs its trees (its reports are written).
func (a *App) releaseObjects(ctx context.Context, proj Project, id string) {
	rel, err := snapshot.Release(ctx, proj.Root, id)
	if err != nil {
		fmt.Fprintf(a.Log, "run %s: removing its objects from .git: %v\n", id, err)
		return
	}
	if rel != (snapshot.Released{}) {
		fmt.Fprintf(a.Log, "run %s: removed %d object files and %d kept indexes (%d bytes) from .git\n", id, rel.Files, rel.Indexes, rel.Bytes)
	}
}

// sweepObjects removes the object directories this project's runs left
// behind without ending through finish: a run that ended (a whetstone
// killed while it wrote the report), a start that created no run, a run
// whose directory was deleted. A live run's, another project's and one
// whose state cannot be read are left alone.
func (a *App) sweepObjects(ctx context.Context, proj Project, except string) {
	owners, err := snapshot.Owners(ctx, proj.Root)
	if err != nil {
		return
	}
	root, _ := filepath.Abs(proj.Root)
	for id, o := range owners {
		if id == except || filepath.Clean(o.Root) != root {
			continue
		}
		r, err := proj.Load(id)
		switch {
		case err == nil && r.Active():
			continue
		case err == nil:
		case errors.Is(err, fs.ErrNotExist) && a.Now().Sub(o.Changed) > pendingAge:
			// No state: a start that made no run, a run whose creation
			// failed, or whose directory was deleted.
		default:
			continue
		}
		a.releaseObjects(ctx, proj, id)
	}
}
