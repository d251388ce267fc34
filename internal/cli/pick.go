package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/client"
	"github.com/whetstone-dev/whetstone/internal/loop"
)

// pickRun is app.PickRun with the next step in its errors: how to start a
// run when the project has none, which runs there are when the one named
// is not one of them.
func pickRun(d deps, id string, onlyActive bool) (app.Project, *loop.Run, error) {
	proj, r, err := d.app.PickRun(id, onlyActive)
	if nr, ok := errors.AsType[*app.NoRunError](err); ok {
		if nr.Active {
			return proj, r, fmt.Errorf("%w: nothing to abort (`whetstone status` shows the latest run)", err)
		}
		return proj, r, fmt.Errorf("%w\n%s", err, startHint())
	}
	if id != "" && errors.Is(err, fs.ErrNotExist) {
		return proj, r, unknownRun(proj, id)
	}
	return proj, r, err
}

// startHint says how to start a run, in each client.
func startHint() string {
	var ways []string
	for _, c := range client.All() {
		if rc, ok := c.(interface{ ReviewCommand() string }); ok {
			ways = append(ways, rc.ReviewCommand()+" in "+c.Title())
		}
	}
	switch n := len(ways); n {
	case 0:
		return ""
	case 1:
		return "Start one: type " + ways[0] + "."
	default:
		return "Start one: type " + strings.Join(ways[:n-1], ", ") + " or " + ways[n-1] + "."
	}
}

// knownRuns is how many run ids an unknown id's error lists.
const knownRuns = 5

// unknownRun says that the project has no run id, and which it has.
func unknownRun(proj app.Project, id string) error {
	runs, _, _ := proj.Runs()
	if len(runs) == 0 {
		return fmt.Errorf("no run %s in %s: the project has no run yet\n%s", id, proj.Root, startHint())
	}
	// Newest first: Runs sorts by last update, oldest first.
	slices.SortStableFunc(runs, func(a, b *loop.Run) int { return b.Created.Compare(a.Created) })
	var ids []string
	for _, r := range runs[:min(len(runs), knownRuns)] {
		ids = append(ids, r.ID)
	}
	list := "its runs, newest first: " + strings.Join(ids, ", ")
	if len(runs) > knownRuns {
		list = fmt.Sprintf("its latest %d of %d runs: %s; `whetstone stats` lists them all", knownRuns, len(runs), strings.Join(ids, ", "))
	}
	return fmt.Errorf("no run %s in %s (%s)", id, proj.Root, list)
}
