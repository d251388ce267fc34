package scope

import (
	"context"
	"fmt"
	"slices"

	"github.com/whetstone-dev/whetstone/internal/gitrun"
)

// Own recognises the files whetstone itself wrote into the project, its
// installs' (internal/install.Own): Names says whether a path (slash,
// relative to the root) is one an install writes, Wrote whether data is
// exactly what it writes there. whetstone's runtime directory, .whetstone/,
// is out of every pathspec already (snapshot.ExcludeState).
type Own interface {
	Names(path string) bool
	Wrote(path string, data []byte) bool
}

// maxOwn bounds reading a file that may be whetstone's; every file an
// install writes is far smaller.
const maxOwn = 1 << 20

// dropOwn removes from changes the files whetstone wrote, and returns the
// rest and the paths removed: a change is whetstone's when every side of
// it that exists is a regular, non-executable file at a path an install
// writes holding exactly what the install writes there. Its content
// decides, never its path: a change that edits an installed file, or puts
// other content at such a path, stays, so nothing can hide behind one.
func dropOwn(ctx context.Context, g gitrun.Git, changes []change, own Own) ([]change, []string, error) {
	if own == nil {
		return changes, nil, nil
	}
	type side struct{ path, mode, blob string }
	sides := func(c change) []side {
		var out []side
		if c.oldMode != modeNone {
			old := c.Path
			if c.OldPath != "" {
				old = c.OldPath
			}
			out = append(out, side{old, c.oldMode, c.oldBlob})
		}
		if c.newMode != modeNone {
			out = append(out, side{c.Path, c.newMode, c.blob})
		}
		return out
	}
	candidate := func(c change) bool {
		return !slices.ContainsFunc(sides(c), func(s side) bool { return s.mode != "100644" || !own.Names(s.path) })
	}
	var blobs []string
	for _, c := range changes {
		if candidate(c) {
			for _, s := range sides(c) {
				blobs = append(blobs, s.blob)
			}
		}
	}
	if len(blobs) == 0 {
		return changes, nil, nil
	}
	slices.Sort(blobs)
	data := map[string][]byte{}
	if err := g.Heads(ctx, slices.Compact(blobs), maxOwn, func(blob string, head []byte) {
		if len(head) < maxOwn {
			data[blob] = head
		}
	}); err != nil {
		return nil, nil, fmt.Errorf("read whetstone's installed files: %w", err)
	}
	var dropped []string
	kept := slices.DeleteFunc(changes, func(c change) bool {
		if !candidate(c) {
			return false
		}
		for _, s := range sides(c) {
			b, ok := data[s.blob]
			if !ok || !own.Wrote(s.path, b) {
				return false
			}
		}
		dropped = append(dropped, c.Path)
		return true
	})
	slices.Sort(dropped)
	return kept, dropped, nil
}
