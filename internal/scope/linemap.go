package scope

import (
	"bytes"
	"fmt"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// Touches reports whether lines line..end of file lie within margin lines
// of a changed hunk of c, so that a finding on them is part of the change.
// A file not in c.Files never touches; an added, deleted, type-changed or
// binary file is the change as a whole and always touches. An end before line means line.
func (c Context) Touches(file string, line, end, margin int) bool {
	end = max(end, line)
	for _, f := range c.Files {
		if f.Path != file {
			continue
		}
		if f.Status == "added" || f.Status == "deleted" || f.Status == "type-changed" || f.Binary {
			return true
		}
		for _, h := range f.Hunks {
			if line <= h.End+margin && end >= h.Start-margin {
				return true
			}
		}
		return false
	}
	return false
}

// block is one run of changed lines in a patch: count old lines from old
// became count new lines from new.
type block struct{ old, oldN, new, newN int }

// LineMap parses a fix.patch and returns a function that maps a path and
// line of the old tree to the new tree. A line after a changed block moves
// by the block's net size; a line inside one maps to the block's new start;
// a renamed file maps to its new path; a file not in the patch, or deleted
// by it, is unchanged.
func LineMap(fix []byte) (func(path string, line int) (string, int), error) {
	files, _, err := gitdiff.Parse(bytes.NewReader(fix))
	if err != nil {
		return nil, fmt.Errorf("parse fix patch: %w", err)
	}
	renames := map[string]string{}
	blocks := map[string][]block{}
	for _, f := range files {
		if f.IsNew || f.IsDelete {
			continue
		}
		if f.IsRename {
			renames[f.OldName] = f.NewName
		}
		for _, frag := range f.TextFragments {
			o, n := int(frag.OldPosition), int(frag.NewPosition)
			for i := 0; i < len(frag.Lines); {
				if frag.Lines[i].Op == gitdiff.OpContext {
					o, n, i = o+1, n+1, i+1
					continue
				}
				b := block{old: o, new: n}
				for ; i < len(frag.Lines) && frag.Lines[i].Op != gitdiff.OpContext; i++ {
					if frag.Lines[i].Op == gitdiff.OpAdd {
						b.newN++
					} else {
						b.oldN++
					}
				}
				o, n = o+b.oldN, n+b.newN
				blocks[f.OldName] = append(blocks[f.OldName], b)
			}
		}
	}
	return func(path string, line int) (string, int) {
		to := path
		if n, ok := renames[path]; ok {
			to = n
		}
		shift := 0
		for _, b := range blocks[path] {
			switch {
			case line < b.old:
				return to, line + shift
			case line < b.old+b.oldN:
				return to, max(b.new, 1)
			}
			shift = b.new + b.newN - (b.old + b.oldN)
		}
		return to, line + shift
	}, nil
}
