package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/tidwall/gjson"
	"github.com/whetstone-dev/whetstone/internal/loop"
	"github.com/whetstone-dev/whetstone/internal/state"
)

// activeFile is .whetstone/active/<session>, which holds the id of the
// session's run while that run is in progress. It is for whoever must
// answer a hook without whetstone: the launcher (scripts/whetstone) and
// the OpenCode plugin, when they cannot find or build the binary, deny a
// gated call of a session that has one, and let every other session's
// calls through (docs/distribution.md, "With no binary"). A session's
// file in sessions/ is no such sign: it stays when the run ends.
func (p Project) activeFile(session string) string { return p.dir("active", session) }

// markActive makes the session's active file say whether its run id is
// in progress. It writes only when that changes: the file is created at
// the run's start (or at the next hook of a run an older whetstone
// started) and removed when the run ends (update, fail, release).
func (p Project) markActive(session, id string, active bool) error {
	path := p.activeFile(session)
	if !active {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", path, err)
		}
		return nil
	}
	if _, err := os.Lstat(path); err == nil {
		return nil
	}
	return state.WriteOwn(p.Root, path, []byte(id+"\n"))
}

// syncActive brings the session's active file in line with its run's
// state body (unverified is enough: the file only ever makes the
// launcher stricter). Failures are logged, not fatal: the file is a
// fallback for a broken install, and the next hook tries again.
func (a *App) syncActive(proj Project, session, id string, body []byte) {
	ended := loop.Phase(gjson.GetBytes(body, "phase").String()).Ended()
	if err := proj.markActive(session, id, !ended); err != nil {
		fmt.Fprintf(a.Log, "run %s: %v\n", id, err)
	}
}

// syncSession is syncActive for the session's current run, read from disk
// (after a start, which may have made a new run or resumed one).
func (a *App) syncSession(proj Project, session string) {
	id := proj.RunOf(session)
	if id == "" {
		return
	}
	if err := proj.markActive(session, id, inProgress(proj, id)); err != nil {
		fmt.Fprintf(a.Log, "run %s: %v\n", id, err)
	}
}
