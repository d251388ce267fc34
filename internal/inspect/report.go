package inspect

import (
	"context"
	"fmt"

	"github.com/whetstone-dev/whetstone"
	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/loop"
	runreport "github.com/whetstone-dev/whetstone/internal/report"
)

// RenderReport renders a run's report, finished or not, in one of
// runreport.Formats: what `whetstone report` prints. The report is built
// by app.Report, the same assembly the hook that finishes a run writes
// its report files with.
func RenderReport(ctx context.Context, a *app.App, proj app.Project, r *loop.Run, format string) ([]byte, *runreport.Report, error) {
	f, ok := runreport.FormatNamed(format)
	if !ok {
		return nil, nil, fmt.Errorf("unknown report format %q", format)
	}
	rep := a.Report(ctx, proj, r)
	data, err := f.Render(rep, whetstone.Version)
	return data, rep, err
}
