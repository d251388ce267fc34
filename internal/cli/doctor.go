package cli

import (
	"errors"
	"io"

	urfave "github.com/urfave/cli/v2"
	"github.com/whetstone-dev/whetstone/internal/doctor"
)

func newDoctorCommand(d deps) *urfave.Command {
	return &urfave.Command{
		Name:      "doctor",
		Usage:     "check the installation: versions, plugin, clients, sandbox, .whetstone/ and git; says how to fix each problem",
		UsageText: "whetstone doctor",
		Action: func(c *urfave.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			return runDoctor(d)
		},
	}
}

func runDoctor(d deps) error {
	wd, err := d.app.Getwd()
	if err != nil {
		return err
	}
	checks := doctor.Run(d.app, wd)
	_, err = io.WriteString(d.stdout, doctor.Text(checks, colour(d.stdout)))
	if err == nil && !doctor.Healthy(checks) {
		return exitError{1, errors.New("doctor found problems (see above)")}
	}
	return err
}
