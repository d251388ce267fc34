package scope

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/whetstone-dev/whetstone/internal/gitrun"
	"github.com/whetstone-dev/whetstone/internal/snapshot"
)

// largeReason is the triage reason of a large untracked file.
func largeReason(max int64) string {
	return fmt.Sprintf("larger than %s, not read (max_untracked_bytes)", snapshot.MiB(snapshot.Cap(max)))
}

// largeInScope returns the changes of the large files that the pathspecs
// select (all of them for none or "."), each an added file triaged skip.
func largeInScope(ctx context.Context, g gitrun.Git, large []snapshot.LargeFile, specs []string, max int64) ([]change, error) {
	if len(large) == 0 {
		return nil, nil
	}
	keep := func(string) bool { return true }
	if len(specs) > 0 && !slices.Contains(specs, ".") {
		out, err := g.Run(ctx, append([]string{"ls-files", "--others", "--exclude-standard", "-z", "--"}, append(specs, snapshot.ExcludeState)...)...)
		if err != nil {
			return nil, fmt.Errorf("list untracked files: %w", err)
		}
		names := strings.Split(string(out), "\x00")
		keep = func(p string) bool { return slices.Contains(names, p) }
	}
	var out []change
	for _, f := range large {
		if keep(f.Path) {
			out = append(out, largeChange(f.Path, max))
		}
	}
	return out, nil
}

// largeChange is the change of one large untracked file: added, with no
// lines and no blob, triaged skip.
func largeChange(p string, max int64) change {
	c := change{File: File{Path: p, Status: "added", Hunks: []Hunk{}, Triage: "skip", TriageReason: largeReason(max)}}
	return c
}
