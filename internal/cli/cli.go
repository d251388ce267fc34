// Package cli is whetstone's command line: the only place that knows about
// flags, exit codes and which stream gets what. Hooks print exactly one JSON
// answer or nothing on stdout; everything else goes to stderr.
package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	urfave "github.com/urfave/cli/v2"
	"github.com/whetstone-dev/whetstone"
	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/hook"
	"github.com/whetstone-dev/whetstone/internal/loop"
	"github.com/whetstone-dev/whetstone/internal/review"
	"github.com/whetstone-dev/whetstone/internal/safeio"
	"github.com/whetstone-dev/whetstone/internal/state"
)

// exitError carries an exit code to Run.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }

// Run runs the whetstone command line and returns the process exit code.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := newApp(stderr)
	cmd := &urfave.App{
		Name:            "whetstone",
		Usage:           "a convergent multi-agent review→fix loop for Claude Code",
		Version:         whetstone.Version,
		Reader:          stdin,
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true,
		ExitErrHandler:  func(*urfave.Context, error) {}, // exit codes are mapped below, not by urfave
		Commands: []*urfave.Command{
			{
				Name:      "hook",
				Usage:     "answer a Claude Code hook event (stdin: the payload; stdout: the answer)",
				ArgsUsage: "session-start|user-prompt-submit|pre-tool-use|subagent-start|subagent-stop|stop",
				Action: func(c *urfave.Context) error {
					event := c.Args().First()
					if _, ok := app.Events[event]; !ok || c.NArg() != 1 {
						return exitError{2, fmt.Errorf("hook: want one event of session-start, user-prompt-submit, pre-tool-use, subagent-start, subagent-stop, stop (got %q)", strings.Join(c.Args().Slice(), " "))}
					}
					p, err := hook.Read(stdin)
					if err != nil && event == "pre-tool-use" {
						// No session can be told from the payload, so none
						// can own a run: let the call through (exit 0), as
						// for any session without a run.
						fmt.Fprintf(stderr, "whetstone: hook %s: %v\n", event, err)
						return nil
					}
					if err != nil {
						return fmt.Errorf("hook %s: %w", event, err)
					}
					resp, err := a.Hook(event, p)
					if err != nil && event == "pre-tool-use" {
						// A session's run is known by now: a gate that
						// cannot decide denies (hooks.json also blocks on a
						// gate's failure or timeout).
						resp, err = hook.Deny(fmt.Sprintf("whetstone could not check this call (%v); nothing runs until that is fixed (`whetstone status`)", err)), nil
					}
					if err != nil {
						return fmt.Errorf("hook %s: %w", event, err)
					}
					if resp != nil {
						_, err = stdout.Write(resp.Encode())
					}
					return err
				},
			},
			{
				Name:  "status",
				Usage: "show the latest run (or --run ID)",
				Flags: []urfave.Flag{&urfave.BoolFlag{Name: "json", Usage: "print state.json"}, runFlag},
				Action: func(c *urfave.Context) error {
					_, r, err := pickRun(a, c.String("run"), false)
					if err != nil {
						return err
					}
					if c.Bool("json") {
						_, err := stdout.Write(marshalRun(r))
						return err
					}
					fmt.Fprintln(stdout, status(r))
					return nil
				},
			},
			{
				Name:      "validate",
				Usage:     "check a reviewer, fixer or validator report (JSON, or a final message holding it)",
				ArgsUsage: "FILE",
				Action: func(c *urfave.Context) error {
					if c.NArg() != 1 {
						return exitError{2, errors.New("validate: want exactly one FILE")}
					}
					return validate(c.Args().First(), stdout)
				},
			},
			{
				Name:  "abort",
				Usage: "stop the active run (or --run ID) as aborted",
				Flags: []urfave.Flag{runFlag},
				Action: func(c *urfave.Context) error {
					proj, r, err := pickRun(a, c.String("run"), true)
					if id := c.String("run"); id != "" && errors.Is(err, state.ErrTampered) {
						// A run whose state does not verify can still be ended.
						r, err = a.Abort(proj, id)
					} else if err == nil {
						r, err = a.Abort(proj, r.ID)
					}
					if err != nil {
						return err
					}
					fmt.Fprintln(stdout, r.Summary())
					return nil
				},
			},
			{
				Name:  "report",
				Usage: "print the latest run's report",
				Flags: []urfave.Flag{&urfave.StringFlag{Name: "format", Value: "md", Usage: "md or json"}, runFlag},
				Action: func(c *urfave.Context) error {
					proj, r, err := pickRun(a, c.String("run"), false)
					if err != nil {
						return err
					}
					switch c.String("format") {
					case "md":
						if err := proj.LoadCold(r); err != nil {
							return err
						}
						_, err = io.WriteString(stdout, app.Markdown(r, proj.Change(r.ID)))
					case "json":
						_, err = stdout.Write(marshalRun(r))
					default:
						return exitError{2, fmt.Errorf("report: --format must be md or json (got %q)", c.String("format"))}
					}
					return err
				},
			},
			installCommand(stdout),
			uninstallCommand(stdout),
			{
				Name:  "version",
				Usage: "print the version",
				Action: func(c *urfave.Context) error {
					fmt.Fprintln(stdout, "whetstone", whetstone.Version)
					return nil
				},
			},
		},
	}
	err := cmd.Run(args)
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "whetstone: %v\n", err)
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if strings.Contains(err.Error(), "flag provided but not defined") {
		return 2
	}
	return 1
}

var runFlag = &urfave.StringFlag{Name: "run", Usage: "run id (default: the latest)"}

func newApp(stderr io.Writer) *app.App {
	a := &app.App{Now: time.Now, Getenv: os.Getenv, Log: io.Discard, Stderr: stderr}
	if v := os.Getenv("WHETSTONE_NOW"); v != "" {
		// Tests pin the clock so state files compare byte for byte.
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			a.Now = func() time.Time { return t }
		}
	}
	if path := os.Getenv("WHETSTONE_DEBUG"); path != "" {
		if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			a.Log = f
		} else {
			fmt.Fprintf(stderr, "whetstone: debug log: %v\n", err)
		}
	}
	return a
}

// pickRun finds the project from the working directory and a run in it: the
// one named, else the latest created (.whetstone/latest), or with
// onlyActive the only active one (abort scans the runs: it is rare).
func pickRun(a *app.App, id string, onlyActive bool) (app.Project, *loop.Run, error) {
	wd, err := os.Getwd()
	if err != nil {
		return app.Project{}, nil, err
	}
	proj, err := a.Open(wd)
	if err != nil {
		return proj, nil, err
	}
	if id != "" {
		r, err := proj.Load(id)
		return proj, r, err
	}
	if latest := proj.Latest(); latest != "" && !onlyActive {
		// No scan: status and report cost the same with 10 000 old runs.
		r, err := proj.Load(latest)
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
			return proj, nil, exitError{2, fmt.Errorf("%d runs are active (%s); name one with --run", len(runs), strings.Join(ids, ", "))}
		}
	}
	if len(runs) == 0 {
		return proj, nil, fmt.Errorf("no %swhetstone run in %s", map[bool]string{true: "active "}[onlyActive], proj.Root)
	}
	return proj, runs[len(runs)-1], nil
}

// marshalRun prints a run's state as indented JSON.
func marshalRun(r *loop.Run) []byte {
	data, _ := json.MarshalIndent(r, "", "  ") // a Run holds only plain data
	return append(data, '\n')
}

func status(r *loop.Run) string {
	if !r.Active() {
		return r.Summary()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "whetstone run %s (session %s): iteration %d of at most %d, %s phase, depth %s\n", r.ID, r.Session, r.Iteration, r.Settings.MaxIterations, r.Phase, r.Settings.Depth)
	for _, n := range r.Expected {
		st := "not dispatched"
		if ag := r.Agents[n]; ag != nil {
			st = ag.Status
		}
		fmt.Fprintf(&b, "  %-24s %s\n", n, st)
	}
	fmt.Fprintf(&b, "open blocking findings: %d", len(r.Digest.Blocking))
	return b.String()
}

// maxValidate caps a file given to whetstone validate.
const maxValidate = 16 << 20

func validate(path string, stdout io.Writer) error {
	data, err := safeio.ReadFile(path, maxValidate, false)
	if err != nil {
		return err
	}
	// A file that is one JSON object is the report itself; anything else is
	// a final message the report is extracted from, as the hook does.
	raw := bytes.TrimSpace(data)
	if !json.Valid(raw) || len(raw) == 0 || raw[0] != '{' {
		if raw, err = review.Extract(string(data)); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	wd, _ := os.Getwd()
	exp := review.Expect{Root: app.FindRoot(wd)}
	var ps review.Problems
	var summary string
	switch s := review.SchemaOf(raw); s {
	case review.SchemaReview:
		var r review.Report
		r, ps = review.ValidateReview(raw, exp)
		summary = fmt.Sprintf("%d finding(s), %d fix check(s)", len(r.Findings), len(r.FixChecks))
	case review.SchemaFix:
		var r review.FixReport
		r, ps = review.ValidateFix(raw, exp)
		summary = fmt.Sprintf("%d result(s)", len(r.Results))
	case review.SchemaValidation:
		var r review.ValidationReport
		r, ps = review.ValidateValidation(raw, exp)
		summary = fmt.Sprintf("%d result(s)", len(r.Results))
	default:
		return fmt.Errorf("%s: $.schema: must be one of %s, %s, %s (got %q)", path, review.SchemaReview, review.SchemaFix, review.SchemaValidation, s)
	}
	if ps != nil {
		return fmt.Errorf("%s is not a valid %s report:\n%s", path, review.SchemaOf(raw), ps)
	}
	fmt.Fprintf(stdout, "%s: valid %s report: %s\n", path, review.SchemaOf(raw), summary)
	return nil
}
