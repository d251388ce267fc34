package cli

import (
	"fmt"
	"strings"

	urfave "github.com/urfave/cli/v2"
	"github.com/whetstone-dev/whetstone/internal/inspect"
	runreport "github.com/whetstone-dev/whetstone/internal/report"
)

type reportOptions struct {
	format   string
	exitCode bool
	run      string
}

func newReportCommand(d deps) *urfave.Command {
	return &urfave.Command{
		Name:      "report",
		Usage:     "print a run's report (the latest run, or --run ID); finished runs also have it in .whetstone/runs/<id>/report.{md,json,sarif}",
		UsageText: "whetstone report [--format md|json|sarif|rdjson] [--exit-code] [--run ID]",
		Flags: []urfave.Flag{
			&urfave.StringFlag{Name: "format", Value: "md", Usage: "md, json, sarif or rdjson (reviewdog)"},
			&urfave.BoolFlag{Name: "exit-code", Usage: "exit 1 when the verdict is REQUEST_CHANGES or BLOCK, or the run has no verdict yet"},
			runFlag,
		},
		Action: func(c *urfave.Context) error {
			return runReport(d, reportOptions{format: c.String("format"), exitCode: c.Bool("exit-code"), run: c.String("run")})
		},
	}
}

func runReport(d deps, opts reportOptions) error {
	if _, ok := runreport.FormatNamed(opts.format); !ok {
		return usageErr("report: --format must be one of %s (got %q)", strings.Join(runreport.FormatNames(), ", "), opts.format)
	}
	proj, r, err := pickRun(d, opts.run, false)
	if err != nil {
		return err
	}
	data, rep, err := inspect.RenderReport(d.ctx, d.app, proj, r, opts.format)
	if err != nil {
		return err
	}
	if _, err := d.stdout.Write(data); err != nil {
		return err
	}
	if opts.exitCode && rep.Blocks() {
		switch {
		case rep.Verdict == "" && rep.State == runreport.InProgress:
			return exitError{1, fmt.Errorf("run %s is still in progress: no verdict yet", rep.RunID)}
		case rep.Verdict == "":
			return exitError{1, fmt.Errorf("run %s stopped (%s) with no verdict: nothing approved the change", rep.RunID, rep.StopReason)}
		}
		return exitError{1, fmt.Errorf("run %s: %s", rep.RunID, rep.Verdict)}
	}
	return nil
}
