// Package cli is whetstone's command line: the only place that knows about
// flags, exit codes and which stream gets what. Hooks print exactly one JSON
// answer or nothing on stdout; everything else goes to stderr.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	urfave "github.com/urfave/cli/v2"
	"github.com/whetstone-dev/whetstone"
	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/sandbox"
	"github.com/whetstone-dev/whetstone/internal/toolpath"
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

// deps is what every command works with: the application, the process's
// context (a hook's deadline; main sets it) and its streams.
type deps struct {
	ctx    context.Context
	app    *app.App
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// Options are what a caller injects into the command line; the zero value
// is the process's own clock.
type Options struct {
	// Now is the clock; nil means the UTC wall clock. The testscripts pin
	// it, so state files compare byte for byte.
	Now func() time.Time
}

// Run runs the whetstone command line within ctx and returns the process
// exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return RunWith(ctx, Options{}, args, stdin, stdout, stderr)
}

// trustPath drops from the process's PATH every entry the repository or an
// agent could control (internal/toolpath: the project and the temporary
// directory), before anything looks a program up: git, go,
// bwrap, bash and the checkers whetstone runs itself then never come from
// an activated virtualenv's .venv/bin or a node_modules/.bin of the
// project. The project is the working directory's (app.FindRoot), where
// every client starts its hooks.
func trustPath() {
	wd, err := os.Getwd()
	if err != nil {
		wd = ""
	}
	// The sandboxed command keeps the whole PATH: it runs contained.
	os.Setenv(sandbox.CallerPath, os.Getenv("PATH"))
	kept, _ := toolpath.Clean(os.Getenv("PATH"), app.FindRoot(wd), os.TempDir())
	os.Setenv("PATH", kept)
}

// RunWith is Run with what opts injects.
func RunWith(ctx context.Context, opts Options, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	trustPath()
	d := deps{ctx: ctx, app: newApp(opts, stderr), stdin: stdin, stdout: stdout, stderr: stderr}
	cmd := &urfave.App{
		Name:            "whetstone",
		Usage:           "a convergent multi-agent review→fix loop for Claude Code, OpenCode and Codex",
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
			newHelpCommand(),
			newHookCommand(d),
			newStatusCommand(d),
			newStatsCommand(d),
			newDoctorCommand(d),
			newTrustCommand(d),
			newValidateCommand(d),
			newAbortCommand(d),
			newReportCommand(d),
			newInstallCommand(d),
			newUninstallCommand(d),
			newVersionCommand(d),
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
	} else if _, ok := errors.AsType[*app.RunChoiceError](err); ok {
		code = 2
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

// marshalIndent prints a status or stats object as indented JSON.
func marshalIndent(v any) []byte {
	data, _ := json.MarshalIndent(v, "", "  ") // plain data
	return append(data, '\n')
}

var runFlag = &urfave.StringFlag{Name: "run", Usage: "run id, such as 3f2a9c1b-1 (default: the latest run)"}

func newApp(opts Options, stderr io.Writer) *app.App {
	a := &app.App{Now: opts.Now, Getenv: os.Getenv, Getwd: os.Getwd, Log: io.Discard, Stderr: stderr}
	if a.Now == nil {
		a.Now = utcNow
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

// utcNow is the hooks' clock. State records times in UTC, so no hook loads
// the local time zone database to write one.
func utcNow() time.Time { return time.Now().UTC() }
