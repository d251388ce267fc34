package cli

import (
	"fmt"
	"io"
	"time"

	urfave "github.com/urfave/cli/v2"
	"github.com/whetstone-dev/whetstone/internal/inspect"
)

type statsOptions struct {
	json  bool
	since string
}

func newStatsCommand(d deps) *urfave.Command {
	return &urfave.Command{
		Name:      "stats",
		Usage:     "summarise every run of the project: verdicts, rounds, findings, rates, time, tokens",
		UsageText: "whetstone stats [--json] [--since WHEN]",
		Flags: []urfave.Flag{&urfave.BoolFlag{Name: "json", Usage: "print the stats object (docs/cli.md)"},
			&urfave.StringFlag{Name: "since", Usage: "only runs created since `WHEN`: a date (2026-11-01), an RFC 3339 time (2026-11-01T09:00:00Z) or an age (7d for the last seven days, 12h, 90m)"}},
		Action: func(c *urfave.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			return runStats(d, statsOptions{json: c.Bool("json"), since: c.String("since")})
		},
	}
}

func runStats(d deps, opts statsOptions) error {
	var since time.Time
	if opts.since != "" {
		t, err := inspect.ParseSince(opts.since, d.app.Now())
		if err != nil {
			return usageErr("--since: %v", err)
		}
		since = t
	}
	wd, err := d.app.Getwd()
	if err != nil {
		return err
	}
	proj, err := d.app.Open(wd)
	if err != nil {
		return err
	}
	st, unreadable, err := inspect.StatsOf(proj, since, d.app.Now())
	if err != nil {
		return err
	}
	for _, u := range unreadable {
		fmt.Fprintf(d.stderr, "whetstone: %v\n", u)
	}
	if opts.json {
		_, err := d.stdout.Write(marshalIndent(st))
		return err
	}
	_, err = io.WriteString(d.stdout, st.Text(colour(d.stdout)))
	return err
}
