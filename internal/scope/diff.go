package scope

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/whetstone-dev/whetstone/internal/gitrun"
	"github.com/whetstone-dev/whetstone/internal/snapshot"
)

// listArgs are the options of every diff whetstone shows or parses: plain
// text, no external or textconv drivers, renames detected, paths relative to
// the directory git runs in (the project root) and limited to it.
var listArgs = []string{"--no-color", "--no-ext-diff", "--no-textconv", "-M", "--relative"}

// diffArgs are listArgs with a patch's three lines of context. Never in a
// --raw listing: -U implies -p, and git would compute every file's patch
// too (40 s instead of 1.7 s for 50,000 added files).
var diffArgs = slices.Concat(listArgs, []string{"-U3"})

// change is one changed file: its entry in the file list and its section of
// the unified diff.
type change struct {
	File
	blob  string      // new blob name, for reading the new content
	patch []byte      // this file's section of the unified diff
	added []addedLine // the lines the change adds, for content signals
	// code and license say whether a changed line (added or deleted) is
	// code, not a comment, and whether one names a license or copyright.
	code, license bool
}

// addedLine is one line a change adds, with its new-side line number.
type addedLine struct {
	n    int
	text string
}

// listChanges lists the changes from base to tree under pathspecs, without
// their diffs (`git diff --raw`).
func listChanges(ctx context.Context, g gitrun.Git, base, tree string, pathspecs []string) ([]change, error) {
	specs := append(append([]string{"--"}, pathspecs...), snapshot.ExcludeState)
	raw, err := g.Run(ctx, append(append([]string{"diff", "--raw", "-z", "--no-abbrev"}, listArgs...), append([]string{base, tree}, specs...)...)...)
	if err != nil {
		return nil, fmt.Errorf("list changes: %w", err)
	}
	return parseRaw(raw)
}

// loadPatches reads the unified diff of every change that is not skipped
// and fills its lines; a skipped file's diff is never produced, so 4,500
// vendored files cost one listing, not 17 MB of patch. Sections are matched
// to changes by name: a type change (file ↔ symlink, file ↔ submodule) is
// two sections, a deletion and a creation, of one changed file.
func loadPatches(ctx context.Context, g gitrun.Git, base, tree string, changes []change) error {
	index := map[string]int{}
	var specs []string
	for i, c := range changes {
		if c.Triage == "skip" {
			continue
		}
		index[c.Path] = i
		specs = append(specs, ":(literal)"+c.Path)
		if c.OldPath != "" {
			specs = append(specs, ":(literal)"+c.OldPath)
		}
	}
	if len(specs) == 0 {
		return nil
	}
	patch, err := g.Run(ctx, append(append([]string{"diff"}, diffArgs...), append([]string{base, tree, "--"}, specs...)...)...)
	if err != nil {
		return fmt.Errorf("diff: %w", err)
	}
	for _, section := range splitPatch(patch) {
		files, _, err := gitdiff.Parse(bytes.NewReader(section))
		if err != nil || len(files) != 1 {
			return fmt.Errorf("parse diff section %.100q: %v", section, err)
		}
		f := files[0]
		name := f.NewName
		if f.IsDelete {
			name = f.OldName
		}
		i, ok := index[name]
		if !ok {
			return fmt.Errorf("diff: a section for %s, which is not in the list of changed files", name)
		}
		changes[i].patch = append(changes[i].patch, section...)
		fillLines(&changes[i], f)
	}
	return nil
}

// parseRaw reads `git diff --raw -z` output: for each file
// ":oldmode newmode oldblob newblob status NUL path NUL", with a second path
// for renames and copies.
func parseRaw(out []byte) ([]change, error) {
	fields := strings.Split(string(out), "\x00")
	var changes []change
	for i := 0; i < len(fields) && fields[i] != ""; {
		meta := strings.Fields(strings.TrimPrefix(fields[i], ":"))
		if len(meta) != 5 || i+1 >= len(fields) {
			return nil, fmt.Errorf("parse changed files: bad record %q", fields[i])
		}
		c := change{blob: meta[3]}
		c.Hunks = []Hunk{}
		c.Path = fields[i+1]
		i += 2
		switch meta[4][0] {
		case 'A':
			c.Status = "added"
		case 'D':
			c.Status = "deleted"
		case 'T':
			c.Status = "type-changed"
		case 'R', 'C':
			if i >= len(fields) {
				return nil, fmt.Errorf("parse changed files: rename without target")
			}
			c.Status, c.OldPath, c.Path = "renamed", c.Path, fields[i]
			if meta[4][0] == 'C' {
				c.Status = "copied"
			}
			i++
		default:
			c.Status = "modified"
		}
		changes = append(changes, c)
	}
	return changes, nil
}

// splitPatch cuts a unified diff into one section per file. Every content
// line of a diff starts with ' ', '+', '-', '\' or '@', so a line starting
// "diff --git " always opens a new file.
func splitPatch(patch []byte) [][]byte {
	var sections [][]byte
	start := -1
	for off := 0; off < len(patch); {
		end := bytes.IndexByte(patch[off:], '\n')
		if end < 0 {
			end = len(patch) - off - 1
		}
		if bytes.HasPrefix(patch[off:], []byte("diff --git ")) {
			if start >= 0 {
				sections = append(sections, patch[start:off])
			}
			start = off
		}
		off += end + 1
	}
	if start >= 0 {
		sections = append(sections, patch[start:])
	}
	return sections
}

// fillLines sets the counts, hunks and added lines of c from its parsed
// diff. A hunk is a new-side range of added lines; a deletion with nothing
// added in its place becomes a one-line hunk at the line that follows it
// (or the file's last line, for a deletion at the end).
func fillLines(c *change, f *gitdiff.File) {
	c.Binary = c.Binary || f.IsBinary
	for _, frag := range f.TextFragments {
		line := int(frag.NewPosition)
		last := max(int(frag.NewPosition+frag.NewLines-1), 1)
		for i := 0; i < len(frag.Lines); {
			if frag.Lines[i].Op == gitdiff.OpContext {
				line++
				i++
				continue
			}
			start, adds := line, 0
			for ; i < len(frag.Lines) && frag.Lines[i].Op != gitdiff.OpContext; i++ {
				l := frag.Lines[i]
				c.note(l.Line)
				if l.Op == gitdiff.OpAdd {
					c.added = append(c.added, addedLine{start + adds, strings.TrimSuffix(l.Line, "\n")})
					adds++
					c.Added++
				} else {
					c.Deleted++
				}
			}
			line += adds
			if c.Status == "deleted" {
				continue
			}
			h := Hunk{Start: start, End: start + adds - 1}
			if adds == 0 {
				h.Start = min(max(start, 1), last)
				h.End = h.Start
			}
			if n := len(c.Hunks); n > 0 && h.Start <= c.Hunks[n-1].End+1 {
				c.Hunks[n-1].End = max(c.Hunks[n-1].End, h.End)
				continue
			}
			c.Hunks = append(c.Hunks, h)
		}
	}
}
