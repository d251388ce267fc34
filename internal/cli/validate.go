package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	urfave "github.com/urfave/cli/v2"
	"github.com/whetstone-dev/whetstone/internal/app"
	runreport "github.com/whetstone-dev/whetstone/internal/report"
	"github.com/whetstone-dev/whetstone/internal/review"
	"github.com/whetstone-dev/whetstone/internal/safeio"
)

type validateOptions struct {
	file string
}

func newValidateCommand(d deps) *urfave.Command {
	return &urfave.Command{
		Name:      "validate",
		Usage:     "check a reviewer, fixer or validator report (JSON, or a final message holding it), or a run's report.json or report.md",
		UsageText: "whetstone validate FILE",
		Action: func(c *urfave.Context) error {
			if c.NArg() != 1 {
				return usageErr("validate: want exactly one FILE")
			}
			return runValidate(d, validateOptions{file: c.Args().First()})
		},
	}
}

// maxValidate caps a file given to whetstone validate.
const maxValidate = 16 << 20

func runValidate(d deps, opts validateOptions) error {
	path := opts.file
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
		fmt.Fprintf(d.stdout, "%s: %s\n", path, summary)
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
	wd, _ := d.app.Getwd()
	v, ps, known := review.ValidateAny(raw, review.Expect{Root: app.FindRoot(wd)})
	if !known {
		return fmt.Errorf("%s: $.schema: must be one of %s, %s (got %q)", path, strings.Join(review.Schemas, ", "), runreport.Schema, v.Schema)
	}
	if ps != nil {
		return fmt.Errorf("%s is not a valid %s report:\n%s", path, v.Schema, ps)
	}
	fmt.Fprintf(d.stdout, "%s: valid %s report: %s\n", path, v.Schema, v.Summary)
	for _, n := range v.Normalised {
		fmt.Fprintf(d.stdout, "  normalised %s\n", n)
	}
	return nil
}
