// Package app is whetstone's behaviour behind each hook and CLI command: it
// finds the project and the session's run, loads and stores state under the
// lock, writes the run's files, and answers Claude Code.
package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/whetstone-dev/whetstone/internal/loop"
	"github.com/whetstone-dev/whetstone/internal/state"
)

// App carries what the handlers need from the outside world.
type App struct {
	Now    func() time.Time
	Getenv func(string) string
	Log    io.Writer // debug log; io.Discard unless WHETSTONE_DEBUG is set
}

// Project is a project root and its .whetstone directory.
type Project struct{ Root string }

// FindRoot returns the nearest ancestor of dir holding .git, or dir itself.
// Claude Code runs hooks in the launch directory, which may be a subfolder.
func FindRoot(dir string) string {
	dir = filepath.Clean(dir)
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}

func (p Project) dir(parts ...string) string {
	return filepath.Join(append([]string{p.Root, ".whetstone"}, parts...)...)
}

func (p Project) sessionFile(session string) string { return p.dir("sessions", session) }
func (p Project) runDir(id string) string           { return p.dir("runs", id) }
func (p Project) store(id string) state.Store {
	return state.Store{Path: filepath.Join(p.runDir(id), "state.json")}
}

// RunOf returns the id of the run a session owns, or "" for none.
func (p Project) RunOf(session string) string {
	b, err := os.ReadFile(p.sessionFile(session))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// errCorrupt marks a state file that could not be decoded.
var errCorrupt = errors.New("corrupt state")

// Load reads a run's state without locking.
func (p Project) Load(id string) (*loop.Run, error) {
	data, err := p.store(id).Read()
	if err != nil {
		return nil, fmt.Errorf("read state of run %s: %w", id, err)
	}
	r, err := loop.Decode(data)
	if err != nil && !errors.Is(err, loop.ErrNewerVersion) {
		return nil, fmt.Errorf("%w: run %s: %v", errCorrupt, id, err)
	}
	return r, err
}

// Update changes a run's state under its lock. A corrupt state file is kept
// aside as state.json.corrupt-<time> and the run is recorded as stopped with
// reason error; a state file from a newer whetstone is left untouched.
func (a *App) Update(p Project, id string, fn func(r *loop.Run) error) (*loop.Run, error) {
	var out *loop.Run
	st := p.store(id)
	err := st.Update(func(old []byte) ([]byte, error) {
		now := a.Now()
		if old == nil {
			return nil, fmt.Errorf("run %s has no state.json: %w", id, fs.ErrNotExist)
		}
		r, err := loop.Decode(old)
		recovered := false
		switch {
		case errors.Is(err, loop.ErrNewerVersion):
			return nil, err
		case err != nil:
			aside := fmt.Sprintf("%s.corrupt-%d", st.Path, now.UnixNano())
			if werr := state.WriteFile(aside, old); werr != nil {
				return nil, fmt.Errorf("%v; and keeping it aside failed: %w", err, werr)
			}
			r = &loop.Run{Version: loop.Version, ID: id, Phase: loop.Review, Created: now, Agents: map[string]*loop.Agent{}}
			r.Stop(loop.Error, fmt.Sprintf("state.json could not be read (%v); the damaged file is kept as %s", err, filepath.Base(aside)), now)
			fmt.Fprintf(a.Log, "run %s: corrupt state kept aside at %s\n", id, aside)
			recovered = true
		}
		// The stopped-as-error record replaces a corrupt file even when fn
		// itself has nothing to change.
		if err := fn(r); err != nil && !(recovered && errors.Is(err, errUnchanged)) {
			return nil, err
		}
		out = r
		return r.Encode(now)
	})
	return out, err
}

// writeFile writes one of a run's files atomically.
func writeFile(path string, data []byte) error { return state.WriteFile(path, data) }

// marshal renders one of a run's JSON files: indented, ending in a newline,
// and without HTML escaping, so code excerpts stay readable.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("marshal %T: %v", v, err)) // only whetstone's own types are marshalled
	}
	return b.Bytes()
}

// Runs loads every run of the project, oldest update first. Runs whose state
// cannot be read are skipped.
func (p Project) Runs() ([]*loop.Run, error) {
	entries, err := os.ReadDir(p.dir("runs"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var runs []*loop.Run
	for _, e := range entries {
		if r, err := p.Load(e.Name()); err == nil {
			runs = append(runs, r)
		}
	}
	slices.SortStableFunc(runs, func(a, b *loop.Run) int { return a.Updated.Compare(b.Updated) })
	return runs, nil
}

// Abort stops an active run as aborted.
func (a *App) Abort(p Project, id string) (*loop.Run, error) {
	return a.Update(p, id, func(r *loop.Run) error {
		if !r.Active() {
			return fmt.Errorf("run %s is already finished", id)
		}
		r.Stop(loop.Aborted, "aborted from the command line", a.Now())
		return a.finish(p, r)
	})
}
