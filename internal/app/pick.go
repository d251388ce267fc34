package app

import (
	"fmt"
	"slices"
	"strings"

	"github.com/whetstone-dev/whetstone/internal/loop"
)

// RunChoiceError says that the run asked for cannot be chosen as given: an
// id that is not one, or several active runs where one is wanted. The
// command line answers it as a usage error.
type RunChoiceError struct{ Msg string }

func (e *RunChoiceError) Error() string { return e.Msg }

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
			err = fmt.Errorf("no whetstone run in %s", proj.Root)
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
	if onlyActive {
		runs = slices.DeleteFunc(runs, func(r *loop.Run) bool { return !r.Active() })
		if len(runs) > 1 {
			var ids []string
			for _, r := range runs {
				ids = append(ids, r.ID)
			}
			return proj, nil, &RunChoiceError{fmt.Sprintf("%d runs are active (%s); name one with --run", len(runs), strings.Join(ids, ", "))}
		}
	}
	if len(runs) == 0 {
		return proj, nil, fmt.Errorf("no %swhetstone run in %s", map[bool]string{true: "active "}[onlyActive], proj.Root)
	}
	return proj, runs[len(runs)-1], nil
}
