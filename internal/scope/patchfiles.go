package scope

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// PatchFiles lists the files a patch (a fix.patch) changes, by their new
// path (the old one for a deletion), sorted, without duplicates.
func PatchFiles(patch []byte) ([]string, error) {
	files, _, err := gitdiff.Parse(bytes.NewReader(patch))
	if err != nil {
		return nil, fmt.Errorf("read the patch: %w", err)
	}
	var out []string
	for _, f := range files {
		name := f.NewName
		if f.IsDelete {
			name = f.OldName
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
