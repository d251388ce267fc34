// Package app is whetstone's behaviour behind each hook and CLI command: it
// finds the project and the session's run, loads and stores state under the
// lock, writes the run's files, and answers Claude Code.
package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
	"github.com/whetstone-dev/whetstone/internal/hook"
	"github.com/whetstone-dev/whetstone/internal/loop"
	"github.com/whetstone-dev/whetstone/internal/safeio"
	"github.com/whetstone-dev/whetstone/internal/sandbox"
	"github.com/whetstone-dev/whetstone/internal/scope"
	"github.com/whetstone-dev/whetstone/internal/state"
)

// App carries what the handlers need from the outside world.
type App struct {
	Now    func() time.Time
	Getenv func(string) string
	// Getwd is the working directory; nil means os.Getwd.
	Getwd  func() (string, error)
	Log    io.Writer // debug log; io.Discard unless WHETSTONE_DEBUG is set
	Stderr io.Writer // the CLI's warnings
	// Sandbox finds bubblewrap; nil means sandbox.Find. Tests replace it.
	Sandbox func() (bwrap string, ok bool)
	// CheckBudget bounds a hook's signal checks as a whole
	// (scope.Request.Budget): 0 means scope.DefaultCheckBudget, a
	// negative value no bound but each check's own.
	CheckBudget time.Duration

	keyOnce sync.Once
	key     state.Key
	keyPath string
	keyErr  error
}

// Project is a project root and its .whetstone directory, with the key that
// seals its state (loaded only once a session is known to own a run).
type Project struct {
	Root    string
	Key     state.Key
	keyPath string
}

// checkBudget is CheckBudget with its default applied.
func (a *App) checkBudget() time.Duration {
	switch {
	case a.CheckBudget < 0:
		return 0
	case a.CheckBudget == 0:
		return scope.DefaultCheckBudget
	}
	return a.CheckBudget
}

// getwd is the working directory, through the injected Getwd.
func (a *App) getwd() (string, error) {
	if a.Getwd != nil {
		return a.Getwd()
	}
	return os.Getwd()
}

// FindSandbox finds bubblewrap through the injected Sandbox: its path, and
// whether it works here (doctor).
func (a *App) FindSandbox() (string, bool) { return a.sandboxWithin(context.Background()) }

// sandboxWithin is FindSandbox for a hook: a probe ends with the hook's ctx.
func (a *App) sandboxWithin(ctx context.Context) (string, bool) {
	if a.Sandbox != nil {
		return a.Sandbox()
	}
	return sandbox.FindContext(ctx)
}

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
	return state.Store{Path: filepath.Join(p.runDir(id), "state.json"), Root: p.Root, Key: p.Key}
}

// sessions is the store of the file naming a session's run: plain text,
// no seal (it names a run; the run's own state is sealed).
func (p Project) sessions(session string) state.Store {
	return state.Store{Path: p.sessionFile(session), Root: p.Root}
}

// maxReport caps a stored report (a valid one is far smaller).
const maxReport = 4 << 20

// writeReport stores a validated report in the run's current iteration,
// sealed so that a report changed afterwards is detected.
func (p Project) writeReport(r *loop.Run, file string, data []byte) error {
	path := filepath.Join(p.runDir(r.ID), fmt.Sprintf("iter-%d", r.Iteration), file)
	name, err := state.Name(p.Root, path)
	if err != nil {
		return err
	}
	return state.WriteOwn(p.Root, path, state.Seal(p.Key, state.KindReport, name, data))
}

// readReport reads and verifies a report of the run's current iteration.
func (p Project) readReport(r *loop.Run, file string) ([]byte, error) {
	return p.readSealed(r.ID, r.Iteration, file)
}

// readSealed reads and verifies a stored report of any iteration of a run.
func (p Project) readSealed(id string, iteration int, file string) ([]byte, error) {
	path := filepath.Join(p.runDir(id), fmt.Sprintf("iter-%d", iteration), file)
	name, err := state.Name(p.Root, path)
	if err != nil {
		return nil, err
	}
	data, err := safeio.ReadOwn(p.Root, path, maxReport)
	if err != nil {
		return nil, err
	}
	return state.Open(p.Key, state.KindReport, name, data)
}

// readStored reads, verifies and decodes a stored report of any iteration
// of a run into v; its errors name the file.
func (p Project) readStored(id string, iteration int, file string, v any) error {
	data, err := p.readSealed(id, iteration, file)
	if err == nil {
		err = json.Unmarshal(data, v)
	}
	if err != nil {
		return fmt.Errorf("iter-%d/%s: %w", iteration, file, err)
	}
	return nil
}

// maxSessionFile caps a session file, which holds one run id.
const maxSessionFile = 4 << 10

// RunOf returns the id of the run a session owns, or "" for none. This is
// the whole cost of a hook in a session without a run: one failed open.
// scripts/whetstone makes the same test before starting the binary (its
// no-run path, with FindRoot and hook.ValidName): change them together.
func (p Project) RunOf(session string) string {
	b, err := safeio.ReadFile(p.sessionFile(session), maxSessionFile, true)
	if err != nil {
		return ""
	}
	id := strings.TrimSpace(string(b))
	if !hook.ValidName(id) {
		return ""
	}
	return id
}

// version peeks at the format version of a run's state file without
// verifying it (0 when unreadable): a file from a newer whetstone is left
// alone rather than judged forged.
func (p Project) version(id string) int64 {
	data, err := safeio.ReadOwn(p.Root, filepath.Join(p.runDir(id), "state.json"), state.MaxState)
	if err != nil {
		return 0
	}
	return gjson.GetBytes(data, "version").Int()
}

// errCorrupt marks a state file that could not be decoded.
var errCorrupt = errors.New("corrupt state")

// Load reads a run's state without locking.
func (p Project) Load(id string) (*loop.Run, error) {
	data, err := p.store(id).Read()
	if err != nil {
		if v := p.version(id); v > loop.Version {
			return nil, fmt.Errorf("run %s: %w (version %d; this binary reads version %d): upgrade whetstone", id, loop.ErrNewerVersion, v, loop.Version)
		}
		if errors.Is(err, state.ErrTampered) && p.keyPath != "" {
			// The usual innocent cause: a run made under another HOME or
			// WHETSTONE_STATE_DIR, such as make demo's, read with this key.
			return nil, fmt.Errorf("read state of run %s: %w; or it was sealed with another key than %s (another HOME, XDG_STATE_HOME or WHETSTONE_STATE_DIR)", id, err, p.keyPath)
		}
		return nil, fmt.Errorf("read state of run %s: %w", id, err)
	}
	r, err := loop.Decode(data)
	if err != nil && !errors.Is(err, loop.ErrNewerVersion) {
		return nil, fmt.Errorf("%w: run %s: %v", errCorrupt, id, err)
	}
	return r, err
}

// Update changes a run's state under its lock. A corrupt state file is kept
// aside as state.json.unverified-<time> and the run is recorded as stopped with
// reason error; a state file from a newer whetstone is left untouched.
func (a *App) Update(p Project, id string, fn func(r *loop.Run) error) (*loop.Run, error) {
	return a.update(p.store(id), p, id, fn)
}

// note is Update for bookkeeping whose loss in a crash of the machine is
// harmless: an instance registered, a Stop block counted, the end
// announced. It skips the fsyncs (state.Store.Light), which are most of
// such a hook's cost. When fn changes the phase or the iteration, or the state
// must be recovered, nothing is written lightly: fn runs again under
// Update. fn must therefore only assign what it reports, and a caller
// whose fn may have side effects (writing the reports) uses Update when it
// expects a transition.
func (a *App) note(p Project, id string, fn func(r *loop.Run) error) (*loop.Run, error) {
	st := p.store(id)
	st.Light = true
	r, err := a.update(st, p, id, func(r *loop.Run) error {
		phase, iteration := r.Phase, r.Iteration
		if err := fn(r); err != nil {
			return err
		}
		if r.Phase != phase || r.Iteration != iteration {
			return errDurable
		}
		return nil
	})
	if errors.Is(err, errDurable) {
		return a.Update(p, id, fn)
	}
	return r, err
}

// errDurable tells note that its update must be written durably.
var errDurable = errors.New("a durable write is needed")

func (a *App) update(st state.Store, p Project, id string, fn func(r *loop.Run) error) (*loop.Run, error) {
	var out *loop.Run
	var wrote bool
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
		case err != nil && st.Light:
			return nil, errDurable
		case err != nil:
			r = a.errorRun(st, id, old, fmt.Sprintf("state.json could not be read (%v)", err), now)
			recovered = true
		}
		// The stopped-as-error record replaces a corrupt file even when fn
		// itself has nothing to change.
		if err := fn(r); err != nil && !(recovered && errors.Is(err, errUnchanged)) {
			return nil, err
		}
		if wrote, err = p.saveCold(r, now); err != nil {
			return nil, err
		}
		out = r
		return r.Encode(now)
	})
	if err == nil && wrote {
		p.sweepLedgers(out)
	}
	if err == nil && !out.Active() && hook.ValidName(out.Session) {
		_ = p.markActive(out.Session, id, false) // the run has ended: the launcher may let its session go
	}
	return out, err
}

// writeFile writes one of a run's files atomically, refusing to go through
// a symlinked directory.
func writeFile(path string, data []byte) error {
	root, _, ok := strings.Cut(path, string(filepath.Separator)+".whetstone"+string(filepath.Separator))
	if !ok {
		return state.WriteFile(path, data)
	}
	return state.WriteOwn(root, path, data)
}

// gitignore is .whetstone/.gitignore: git ignores everything whetstone
// writes.
const gitignore = "*\n"

// ensureGitignore checks .whetstone/.gitignore at every start and rewrites
// it atomically when it is missing or differs: a write that failed once
// (a full disk at the first start left it empty) is repaired by the next
// start instead of leaving whetstone's files visible to git for good.
func (p Project) ensureGitignore() error {
	path := p.dir(".gitignore")
	if b, err := safeio.ReadOwn(p.Root, path, int64(len(gitignore))+1); err == nil && string(b) == gitignore {
		return nil
	}
	return state.WriteOwn(p.Root, path, []byte(gitignore))
}

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

// Open finds the project holding dir and loads the key that verifies its
// runs.
func (a *App) Open(dir string) (Project, error) {
	proj := Project{Root: FindRoot(dir)}
	return proj, a.keyed(&proj)
}

// KeyPath is the file of the key that verifies the project's runs, once
// Open has loaded it.
func (p Project) KeyPath() string { return p.keyPath }

// Latest returns the id of the project's most recently created run, or ""
// when none is recorded.
func (p Project) Latest() string {
	b, err := safeio.ReadOwn(p.Root, p.dir("latest"), maxSessionFile)
	if err != nil {
		return ""
	}
	if id := strings.TrimSpace(string(b)); hook.ValidName(id) {
		return id
	}
	return ""
}

// Runs loads every run of the project, oldest update first, and says why
// each run it could not load was left out.
func (p Project) Runs() (runs []*loop.Run, unreadable []error, err error) {
	entries, err := os.ReadDir(p.dir("runs"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		r, err := p.Load(e.Name())
		if err != nil {
			unreadable = append(unreadable, err)
			continue
		}
		runs = append(runs, r)
	}
	slices.SortStableFunc(runs, func(a, b *loop.Run) int { return a.Updated.Compare(b.Updated) })
	return runs, unreadable, nil
}

// Abort stops an active run as aborted. A run whose state does not verify
// is stopped as error instead: aborting must work on a wedged run too.
func (a *App) Abort(p Project, id string) (*loop.Run, error) {
	r, err := a.Update(p, id, func(r *loop.Run) error {
		if !r.Active() {
			return fmt.Errorf("run %s is already finished", id)
		}
		_, err := a.apply(context.Background(), p, r, &loop.Event{Kind: loop.Abort, Now: a.Now(), Detail: "from the command line"}, nil)
		return err
	})
	if errors.Is(err, state.ErrTampered) {
		a.fail(context.Background(), p, id, err)
		return p.Load(id)
	}
	return r, err
}
