// Package cli is whetstone's command line: the only place that knows about
// flags, exit codes and which stream gets what. Hooks print exactly one JSON
// answer or nothing on stdout; everything else goes to stderr.
package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	urfave "github.com/urfave/cli/v2"
	"github.com/whetstone-dev/whetstone"
	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/hook"
	"github.com/whetstone-dev/whetstone/internal/loop"
	runreport "github.com/whetstone-dev/whetstone/internal/report"
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

func init() {
	// --version prints what `whetstone version` prints.
	urfave.VersionPrinter = func(c *urfave.Context) { fmt.Fprintln(c.App.Writer, "whetstone", c.App.Version) }
}

// Run runs the whetstone command line and returns the process exit code.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := newApp(stderr)
	cmd := &urfave.App{
		Name:            "whetstone",
		Usage:           "a convergent multi-agent review→fix loop for Claude Code",
		UsageText:       "whetstone <command> [flags] [args]",
		Version:         whetstone.Version,
		Reader:          stdin,
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true,                            // "help" is ours: urfave's exits 3 on an unknown topic
		ExitErrHandler:  func(*urfave.Context, error) {}, // exit codes are mapped below, not by urfave
		Action: func(c *urfave.Context) error {
			if c.NArg() == 0 {
				return usageErr("no command given")
			}
			return usageErr("unknown command %q", c.Args().First())
		},
		Commands: []*urfave.Command{
			{
				Name:      "help",
				Usage:     "show the commands, or one command's usage and flags",
				UsageText: "whetstone help [command]",
				Action: func(c *urfave.Context) error {
					switch c.NArg() {
					case 0:
						return urfave.ShowAppHelp(c)
					case 1:
						if c.App.Command(c.Args().First()) == nil {
							return usageErr("help: unknown command %q", c.Args().First())
						}
						return urfave.ShowCommandHelp(c.Lineage()[1], c.Args().First())
					}
					return usageErr("help: want at most one command")
				},
			},
			{
				Name:      "hook",
				Usage:     "answer a Claude Code hook event (stdin: the payload; stdout: the answer)",
				UsageText: "whetstone hook session-start|user-prompt-submit|pre-tool-use|pre-skill-shell-command|subagent-start|subagent-stop|stop",
				Action: func(c *urfave.Context) error {
					event := c.Args().First()
					if _, ok := app.Events[event]; !ok || c.NArg() != 1 {
						return usageErr("hook: want one event of session-start, user-prompt-submit, pre-tool-use, pre-skill-shell-command, subagent-start, subagent-stop, stop (got %q)", strings.Join(c.Args().Slice(), " "))
					}
					p, err := hook.Read(stdin)
					if event == "pre-tool-use" {
						// The gate fails closed during a run (App.PreToolUse).
						if resp := a.PreToolUse(p, err); resp != nil {
							_, err = stdout.Write(resp.Encode())
							return err
						}
						return nil
					}
					if err != nil {
						return fmt.Errorf("hook %s: %w", event, err)
					}
					resp, err := a.Hook(event, p)
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
				Name:      "status",
				Usage:     "show the latest run (or --run ID): phase, iteration, agents, open findings, time, tokens",
				UsageText: "whetstone status [--json] [--run ID]",
				Flags:     []urfave.Flag{&urfave.BoolFlag{Name: "json", Usage: "print the status object (docs/cli.md)"}, runFlag},
				Action: func(c *urfave.Context) error {
					if err := noArgs(c); err != nil {
						return err
					}
					_, r, err := pickRun(a, c.String("run"), false)
					if err != nil {
						return err
					}
					st := app.StatusOf(r, a.Now())
					if c.Bool("json") {
						_, err := stdout.Write(marshalIndent(st))
						return err
					}
					_, err = io.WriteString(stdout, st.Text(colour(stdout)))
					return err
				},
			},
			{
				Name:      "stats",
				Usage:     "summarise every run of the project: verdicts, rounds, findings, rates, time, tokens",
				UsageText: "whetstone stats [--json] [--since DATE]",
				Flags: []urfave.Flag{&urfave.BoolFlag{Name: "json", Usage: "print the stats object (docs/cli.md)"},
					&urfave.StringFlag{Name: "since", Usage: "only runs created on or after DATE (2026-11-01, or RFC 3339)"}},
				Action: func(c *urfave.Context) error {
					if err := noArgs(c); err != nil {
						return err
					}
					var since time.Time
					if v := c.String("since"); v != "" {
						t, err := app.ParseSince(v, a.Now())
						if err != nil {
							return usageErr("--since: %v", err)
						}
						since = t
					}
					wd, err := os.Getwd()
					if err != nil {
						return err
					}
					proj, err := a.Open(wd)
					if err != nil {
						return err
					}
					st, unreadable, err := a.Stats(proj, since)
					if err != nil {
						return err
					}
					for _, u := range unreadable {
						fmt.Fprintf(stderr, "whetstone: %v\n", u)
					}
					if c.Bool("json") {
						_, err := stdout.Write(marshalIndent(st))
						return err
					}
					_, err = io.WriteString(stdout, st.Text(colour(stdout)))
					return err
				},
			},
			{
				Name:      "doctor",
				Usage:     "check the installation: versions, plugin, clients, sandbox, .whetstone/ and git; says how to fix each problem",
				UsageText: "whetstone doctor",
				Action: func(c *urfave.Context) error {
					if err := noArgs(c); err != nil {
						return err
					}
					wd, err := os.Getwd()
					if err != nil {
						return err
					}
					checks := a.Doctor(wd)
					_, err = io.WriteString(stdout, app.DoctorText(checks, colour(stdout)))
					if err == nil && !app.Healthy(checks) {
						return exitError{1, errors.New("doctor found problems (see above)")}
					}
					return err
				},
			},
			{
				Name:      "validate",
				Usage:     "check a reviewer, fixer or validator report (JSON, or a final message holding it), or a run's report.json or report.md",
				UsageText: "whetstone validate FILE",
				Action: func(c *urfave.Context) error {
					if c.NArg() != 1 {
						return usageErr("validate: want exactly one FILE")
					}
					return validate(c.Args().First(), stdout)
				},
			},
			{
				Name:      "abort",
				Usage:     "stop the active run (or --run ID) as aborted",
				UsageText: "whetstone abort [--run ID]",
				Flags:     []urfave.Flag{runFlag},
				Action: func(c *urfave.Context) error {
					if err := noArgs(c); err != nil {
						return err
					}
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
				Name:      "report",
				Usage:     "print a run's report (the latest run, or --run ID); finished runs also have it in .whetstone/runs/<id>/report.{md,json,sarif}",
				UsageText: "whetstone report [--format md|json|sarif|rdjson] [--exit-code] [--run ID]",
				Flags: []urfave.Flag{
					&urfave.StringFlag{Name: "format", Value: "md", Usage: "md, json, sarif or rdjson (reviewdog)"},
					&urfave.BoolFlag{Name: "exit-code", Usage: "exit 1 when the verdict is REQUEST_CHANGES or BLOCK, or the run has no verdict yet"},
					runFlag,
				},
				Action: func(c *urfave.Context) error {
					format := c.String("format")
					if !slices.Contains(app.Formats, format) {
						return usageErr("report: --format must be one of %s (got %q)", strings.Join(app.Formats, ", "), format)
					}
					proj, r, err := pickRun(a, c.String("run"), false)
					if err != nil {
						return err
					}
					data, rep, err := a.RenderReport(proj, r, format)
					if err != nil {
						return err
					}
					if _, err := stdout.Write(data); err != nil {
						return err
					}
					if c.Bool("exit-code") && rep.Blocks() {
						switch {
						case rep.Verdict == "" && rep.State == runreport.InProgress:
							return exitError{1, fmt.Errorf("run %s is still in progress: no verdict yet", rep.RunID)}
						case rep.Verdict == "":
							return exitError{1, fmt.Errorf("run %s stopped (%s) with no verdict: nothing approved the change", rep.RunID, rep.StopReason)}
						}
						return exitError{1, fmt.Errorf("run %s: %s", rep.RunID, rep.Verdict)}
					}
					return nil
				},
			},
			installCommand(stdout),
			uninstallCommand(stdout),
			{
				Name:      "version",
				Usage:     "print the version",
				UsageText: "whetstone version",
				Action: func(c *urfave.Context) error {
					if err := noArgs(c); err != nil {
						return err
					}
					fmt.Fprintln(stdout, "whetstone", whetstone.Version)
					return nil
				},
			},
		},
	}
	for _, c := range cmd.Commands {
		c.OnUsageError = flagError
	}
	cmd.OnUsageError = flagError
	return exitCode(cmd.Run(args), args, cmd, stderr)
}

// exitCode maps an error to the exit code, and says what went wrong on
// stderr: usage errors (an unknown command or flag, bad arguments) exit 2
// and show the usage of the command at fault; every other failure exits 1.
func exitCode(err error, args []string, cmd *urfave.App, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "whetstone: %v\n", err)
	code := 1
	if ee, ok := errors.AsType[exitError](err); ok {
		code = ee.code
	}
	if code == 2 {
		io.WriteString(stderr, usageOf(cmd, args))
	}
	return code
}

// usageOf is the usage text of the command args name (the first argument
// that is a command), or of whetstone itself.
func usageOf(cmd *urfave.App, args []string) string {
	for _, arg := range args[min(1, len(args)):] {
		if c := cmd.Command(arg); c != nil && c.Name != "help" {
			return fmt.Sprintf("usage: %s\nRun 'whetstone help %s' for its flags.\n", c.UsageText, c.Name)
		}
	}
	var names []string
	for _, c := range cmd.Commands {
		names = append(names, c.Name)
	}
	return fmt.Sprintf("usage: %s\ncommands: %s\nRun 'whetstone help' for details.\n", cmd.UsageText, strings.Join(names, ", "))
}

// usageErr is a usage error: exit 2, with the usage on stderr.
func usageErr(format string, a ...any) error {
	return exitError{2, fmt.Errorf(format, a...)}
}

// flagError turns urfave's flag errors into usage errors.
func flagError(c *urfave.Context, err error, isCommand bool) error {
	if errors.Is(err, flag.ErrHelp) {
		// -h and --help: the help asked for, on stdout.
		if isCommand && len(c.Lineage()) > 1 {
			return urfave.ShowCommandHelp(c.Lineage()[1], c.Command.Name)
		}
		return urfave.ShowAppHelp(c)
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		msg = "unknown flag --" + strings.TrimPrefix(name, "-")
	}
	return usageErr("%s", msg)
}

// noArgs refuses arguments to a command that takes none.
func noArgs(c *urfave.Context) error {
	if c.NArg() > 0 {
		return usageErr("%s takes no arguments (got %q)", c.Command.Name, strings.Join(c.Args().Slice(), " "))
	}
	return nil
}

// colour reports whether w may be written with ANSI colours: only a
// terminal (a character device other than the null device), never with
// NO_COLOR set (https://no-color.org) or TERM=dumb.
func colour(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	if err != nil || info.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(info, null)
}

// marshalIndent prints a status or stats object as indented JSON.
func marshalIndent(v any) []byte {
	data, _ := json.MarshalIndent(v, "", "  ") // plain data
	return append(data, '\n')
}

var runFlag = &urfave.StringFlag{Name: "run", Usage: "run id, such as 3f2a9c1b-1 (default: the latest run)"}

func newApp(stderr io.Writer) *app.App {
	a := &app.App{Now: utcNow, Getenv: os.Getenv, Log: io.Discard, Stderr: stderr}
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
	if id != "" && !app.ValidRunID(id) {
		return app.Project{}, nil, usageErr("--run %q is not a run id (run ids look like 3f2a9c1b-1; `whetstone status` shows the latest)", id)
	}
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
	if !onlyActive {
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
			return proj, nil, usageErr("%d runs are active (%s); name one with --run", len(runs), strings.Join(ids, ", "))
		}
	}
	if len(runs) == 0 {
		return proj, nil, fmt.Errorf("no %swhetstone run in %s", map[bool]string{true: "active "}[onlyActive], proj.Root)
	}
	return proj, runs[len(runs)-1], nil
}

// maxValidate caps a file given to whetstone validate.
const maxValidate = 16 << 20

func validate(path string, stdout io.Writer) error {
	data, err := safeio.ReadFile(path, maxValidate, false)
	if err != nil {
		return err
	}
	// A report.md is checked against the report.json beside it, if any.
	sibling, err := safeio.ReadFile(filepath.Join(filepath.Dir(path), "report.json"), maxValidate, false)
	if errors.Is(err, fs.ErrNotExist) {
		sibling = nil
	} else if err != nil {
		return fmt.Errorf("%s: the report.json beside it: %w", path, err)
	}
	if summary, ok, err := runreport.ValidateFile(data, sibling); ok {
		if err != nil {
			return fmt.Errorf("%s is %w", path, err)
		}
		fmt.Fprintf(stdout, "%s: %s\n", path, summary)
		return nil
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
	var normalised []string
	switch s := review.SchemaOf(raw); s {
	case review.SchemaReview:
		var r review.Report
		r, ps = review.ValidateReview(raw, exp)
		summary = review.Plural(len(r.Findings), "finding") + ", " + review.Plural(len(r.FixChecks), "fix check")
		normalised = r.Normalised
	case review.SchemaFix:
		var r review.FixReport
		r, ps = review.ValidateFix(raw, exp)
		summary, normalised = review.Plural(len(r.Results), "result"), r.Normalised
	case review.SchemaValidation:
		var r review.ValidationReport
		r, ps = review.ValidateValidation(raw, exp)
		summary, normalised = review.Plural(len(r.Results), "result"), r.Normalised
	default:
		return fmt.Errorf("%s: $.schema: must be one of %s, %s, %s, %s (got %q)", path, review.SchemaReview, review.SchemaFix, review.SchemaValidation, runreport.Schema, s)
	}
	if ps != nil {
		return fmt.Errorf("%s is not a valid %s report:\n%s", path, review.SchemaOf(raw), ps)
	}
	fmt.Fprintf(stdout, "%s: valid %s report: %s\n", path, review.SchemaOf(raw), summary)
	for _, n := range normalised {
		fmt.Fprintf(stdout, "  normalised %s\n", n)
	}
	return nil
}

// utcNow is the hooks' clock. State records times in UTC, so no hook loads
// the local time zone database to write one.
func utcNow() time.Time { return time.Now().UTC() }
