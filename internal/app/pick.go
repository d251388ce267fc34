package app

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/whetstone-dev/whetstone/internal/hook"
	"github.com/whetstone-dev/whetstone/internal/loop"
)

// RunChoiceError says that the run asked for cannot be chosen as given: an
// id that is not one, or several active runs where one is wanted. The
// command line answers it as a usage error.
type RunChoiceError struct{ Msg string }

func (e *RunChoiceError) Error() string { return e.Msg }

// NoRunError says that the project has no run to pick (with Active, no
// active one). The command line adds how to start one.
type NoRunError struct {
	Root   string
	Active bool
}

func (e *NoRunError) Error() string {
	if e.Active {
		return "no active whetstone run in " + e.Root
	}
	return "no whetstone run in " + e.Root
}

// PickRun finds the project from the working directory and a run in it:
// the one named, else the latest created (.whetstone/latest), or with
// onlyActive the only active one (abort scans the runs: it is rare).
func (a *App) PickRun(id string, onlyActive bool) (Project, *loop.Run, error) {
	if id != "" && !ValidRunID(id) {
		return Project{}, nil, &RunChoiceError{fmt.Sprintf("--run %q is not a run id (run ids look like 3f2a9c1b-1; `whetstone status` shows the latest)", id)}
	}
	wd, err := a.getwd()
	if err != nil {
		return Project{}, nil, err
	}
	proj, err := a.Open(wd)
	if err != nil {
		return proj, nil, err
	}
	if id != "" {
		r, err := proj.Load(id)
		return proj, r, err
	}
	if !onlyActive {
		// No scan while latest names a run: status and report cost the
		// same with 10 000 old runs. A deleted one falls back, and says so.
		r, err := a.LatestRun(proj)
		if r == nil && err == nil {
			err = &NoRunError{Root: proj.Root}
		}
		return proj, r, err
	}
	runs, unreadable, err := proj.Runs()
	if err != nil {
		return proj, nil, err
	}
	for _, u := range unreadable {
		fmt.Fprintf(a.Stderr, "whetstone: %v\n", u)
	}
	runs = slices.DeleteFunc(runs, func(r *loop.Run) bool { return !r.Active() })
	if len(runs) > 1 {
		var ids []string
		for _, r := range runs {
			ids = append(ids, r.ID)
		}
		return proj, nil, &RunChoiceError{fmt.Sprintf("%d runs are active (%s); name one with --run", len(runs), strings.Join(ids, ", "))}
	}
	if len(runs) == 0 {
		return proj, nil, &NoRunError{Root: proj.Root, Active: true}
	}
	return proj, runs[len(runs)-1], nil
}

// ValidRunID reports whether id has the shape of a run id: a session
// prefix, a dash and a sequence number, in the characters hook.ValidName
// allows (so it can name a directory and nothing more).
func ValidRunID(id string) bool {
	i := strings.LastIndexByte(id, '-')
	if !hook.ValidName(id) || i < 1 || i == len(id)-1 {
		return false
	}
	return strings.Trim(id[i+1:], "0123456789") == ""
}

// LatestRun loads the project's latest run (.whetstone/latest) without
// scanning the runs, so status and report cost the same with 10 000 old
// runs. When latest names a run that is gone (deleted since, or never
// written whole), it falls back to the newest run left, saying so on
// a.Stderr, and returns (nil, nil) when there is none.
func (a *App) LatestRun(p Project) (*loop.Run, error) {
	latest := p.Latest()
	if latest != "" {
		r, err := p.Load(latest)
		if !errors.Is(err, fs.ErrNotExist) {
			return r, err
		}
	}
	runs, unreadable, err := p.Runs()
	if err != nil {
		return nil, err
	}
	for _, u := range unreadable {
		if a.Stderr != nil && !errors.Is(u, fs.ErrNotExist) {
			fmt.Fprintf(a.Stderr, "whetstone: %v\n", u)
		}
	}
	if len(runs) == 0 {
		return nil, nil
	}
	newest := runs[len(runs)-1]
	if latest != "" && a.Stderr != nil {
		fmt.Fprintf(a.Stderr, "whetstone: .whetstone/latest names run %s, which no longer exists; showing the newest run, %s\n", latest, newest.ID)
	}
	return newest, nil
}
