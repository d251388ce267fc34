package scope

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/whetstone-dev/whetstone/internal/gitrun"
	"github.com/whetstone-dev/whetstone/internal/snapshot"
)

// listArgs are the options of every diff whetstone shows or parses: plain
// text, no external or textconv drivers, renames detected, paths relative to
// the directory git runs in (the project root) and limited to it. Every
// such diff runs through gitrun.Git.Shown; a patch also takes --text, and
// the binary files are written by whetstone (binarySections): what is
// binary is decided by content, never by attributes (see judge).
var listArgs = []string{"--no-color", "--no-ext-diff", "--no-textconv", "-M", "--relative"}

// diffArgs are listArgs with a patch's three lines of context, every file
// shown as text. Never in a --raw listing: -U implies -p, and git would
// compute every file's patch too (40 s instead of 1.7 s for 50,000 added
// files).
var diffArgs = slices.Concat(listArgs, []string{"-U3", "--text"})

// binaryBytes is how far the binary test reads: git's own heuristic, a NUL
// byte in the first 8000 bytes (xdiff's buffer_is_binary).
const binaryBytes = 8000

// isBinary reports whether a file starting with head is binary by git's
// rule, and opaque whether it is also no text: not valid UTF-8, or a
// control byte other than NUL, tab, line and page breaks and escape. A NUL
// byte in text that is otherwise plain is how a JavaScript, C or shell
// file, which their tools run all the same, would pass for binary.
func isBinary(head []byte) (binary, opaque bool) {
	head = head[:min(len(head), binaryBytes)]
	if bytes.IndexByte(head, 0) < 0 {
		return false, false
	}
	for _, b := range head {
		switch {
		case b == 0, b == '\t', b == '\n', b == '\v', b == '\f', b == '\r', b == 0x1b:
		case b < 0x20, b == 0x7f:
			return true, true
		}
	}
	if len(head) == binaryBytes { // a character may straddle the cut
		for i := 1; i < utf8.UTFMax && i <= len(head); i++ {
			if r := head[len(head)-i:]; utf8.RuneStart(r[0]) {
				if !utf8.FullRune(r) {
					head = head[:len(head)-i]
				}
				break
			}
		}
	}
	return true, !utf8.Valid(head)
}

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
	// The rest of the --raw record: the old blob, both modes, the
	// similarity of a rename or copy ("097"), and the content of a
	// symbolic link's side of a type change (read by judge), for the
	// sections whetstone writes itself.
	oldBlob, oldMode, newMode, score string
	link                             [2][]byte
	// opaque says a side that makes the change binary is no UTF-8 text
	// either (isBinary): only then does triage skip it.
	opaque bool
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
	raw, err := g.Shown().Run(ctx, append(append([]string{"diff", "--raw", "-z", "--no-abbrev"}, listArgs...), append([]string{base, tree}, specs...)...)...)
	if err != nil {
		return nil, fmt.Errorf("list changes: %w", err)
	}
	return parseRaw(raw)
}

// Modes of a --raw record's sides.
const (
	modeNone    = "000000"
	modeLink    = "120000"
	modeGitlink = "160000"
)

func regular(mode string) bool { return mode == "100644" || mode == "100755" }

// judge reads the head of both sides of every change that is not skipped
// and marks a change binary when a side that is a regular file has a NUL
// byte in its first 8000 bytes: by content, as git would without
// attributes, so that neither the change nor the repository can hide a
// text file behind `-diff`, `binary` or a diff driver; opaque when such a
// side is no UTF-8 text either. newHead, when not
// nil, is called with the head of each change's new side (for the
// generated-code markers, which read headBytes; without it 8000 bytes are
// read). One `git cat-file --batch` reads them all.
func judge(ctx context.Context, g gitrun.Git, changes []change, newHead func(i int, head []byte)) error {
	n := binaryBytes
	if newHead != nil {
		n = headBytes
	}
	type side struct{ i, k int } // k: 0 old, 1 new
	want := map[string][]side{}
	for i, c := range changes {
		if c.Triage == "skip" {
			continue
		}
		for k, s := range [2]struct{ mode, blob string }{{c.oldMode, c.oldBlob}, {c.newMode, c.blob}} {
			if regular(s.mode) || (s.mode == modeLink && c.Status == "type-changed") {
				want[s.blob] = append(want[s.blob], side{i, k})
			}
		}
	}
	return g.Heads(ctx, slices.Sorted(maps.Keys(want)), n, func(blob string, head []byte) {
		bin, opaque := isBinary(head)
		for _, s := range want[blob] {
			c := &changes[s.i]
			mode := c.oldMode
			if s.k == 1 {
				mode = c.newMode
			}
			if mode == modeLink {
				c.link[s.k] = head
				continue
			}
			c.Binary, c.opaque = c.Binary || bin, c.opaque || opaque
			if s.k == 1 && newHead != nil {
				newHead(s.i, head)
			}
		}
	})
}

// loadPatches reads the unified diff of every change that is not skipped
// and fills its lines; a skipped file's diff is never produced, so 4,500
// vendored files cost one listing, not 17 MB of patch. Text files come from
// one `git diff --text`; the section of a binary file whose content changed
// is written here (binarySections), so git never decides what is binary.
// Sections are matched to changes by name: a type change (file ↔ symlink,
// file ↔ submodule) is two sections, a deletion and a creation, of one
// changed file. whole says changes are the project's whole listing and none
// is skipped (fix.patch): git is then given the project and the binary
// files to leave out, not every name, which a fixer that touched 50,000
// files would push past the limit of a command line.
func loadPatches(ctx context.Context, g gitrun.Git, base, tree string, changes []change, whole bool) error {
	index := map[string]int{}
	var specs, binary []string
	for i, c := range changes {
		if c.Triage == "skip" {
			continue
		}
		if c.Binary && c.oldBlob != c.blob {
			section := binarySections(c)
			files, _, err := gitdiff.Parse(bytes.NewReader(section))
			if err != nil {
				return fmt.Errorf("parse the binary section of %s: %v", c.Path, err)
			}
			changes[i].patch = section
			for _, f := range files {
				fillLines(&changes[i], f)
			}
			binary = append(binary, ":(exclude,literal)"+c.Path)
			if c.OldPath != "" {
				binary = append(binary, ":(exclude,literal)"+c.OldPath)
			}
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
	if whole {
		specs = append([]string{".", snapshot.ExcludeState}, binary...)
	}
	patch, err := g.Shown().Run(ctx, append(append([]string{"diff"}, diffArgs...), append([]string{base, tree, "--"}, specs...)...)...)
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

// binarySections writes the diff of a binary change as git writes it
// without attributes: the header, then "Binary files … differ". A type
// change is git's two sections, a deletion and a creation; its side that
// is a symbolic link or a submodule is shown as text, as git does.
func binarySections(c change) []byte {
	old := c.Path
	if c.OldPath != "" {
		old = c.OldPath
	}
	if c.Status == "type-changed" {
		del := c
		del.newMode, del.blob, del.Status = modeNone, nullOID(c.oldBlob), "deleted"
		add := c
		add.oldMode, add.oldBlob, add.Status = modeNone, nullOID(c.blob), "added"
		return append(sideSection(del, 0), sideSection(add, 1)...)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "diff --git %s %s\n", quoted("a/"+old), quoted("b/"+c.Path))
	switch {
	case c.oldMode == modeNone:
		fmt.Fprintf(&b, "new file mode %s\n", c.newMode)
	case c.newMode == modeNone:
		fmt.Fprintf(&b, "deleted file mode %s\n", c.oldMode)
	case c.oldMode != c.newMode:
		fmt.Fprintf(&b, "old mode %s\nnew mode %s\n", c.oldMode, c.newMode)
	}
	if c.Status == "renamed" || c.Status == "copied" {
		verb := map[string]string{"renamed": "rename", "copied": "copy"}[c.Status]
		fmt.Fprintf(&b, "similarity index %d%%\n%s from %s\n%s to %s\n", atoi(c.score), verb, quoted(old), verb, quoted(c.Path))
	}
	fmt.Fprintf(&b, "index %s..%s", short(c.oldBlob), short(c.blob))
	if c.oldMode == c.newMode {
		fmt.Fprintf(&b, " %s", c.newMode)
	}
	from, to := quoted("a/"+old), quoted("b/"+c.Path)
	if c.oldMode == modeNone {
		from = "/dev/null"
	}
	if c.newMode == modeNone {
		to = "/dev/null"
	}
	fmt.Fprintf(&b, "\nBinary files %s and %s differ\n", from, to)
	return b.Bytes()
}

// sideSection writes one side of a binary type change, a deletion (n 0)
// or a creation (n 1): a regular file as binary, a symbolic link's target
// and a submodule's commit as text.
func sideSection(c change, n int) []byte {
	mode, blob := c.oldMode, c.oldBlob
	if n == 1 {
		mode, blob = c.newMode, c.blob
	}
	var text []byte
	switch mode {
	case modeLink:
		text = c.link[n]
	case modeGitlink:
		text = []byte("Subproject commit " + blob + "\n")
	default:
		return binarySections(c)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "diff --git %s %s\n", quoted("a/"+c.Path), quoted("b/"+c.Path))
	from, to, sign, hunk := quoted("a/"+c.Path), "/dev/null", "-", "@@ -1%s +0,0 @@\n"
	fmt.Fprintf(&b, "%s file mode %s\n", map[int]string{0: "deleted", 1: "new"}[n], mode)
	fmt.Fprintf(&b, "index %s..%s\n", short(c.oldBlob), short(c.blob))
	if n == 1 {
		from, to, sign, hunk = "/dev/null", quoted("b/"+c.Path), "+", "@@ -0,0 +1%s @@\n"
	}
	lines := strings.SplitAfter(string(text), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	count := ""
	if len(lines) != 1 {
		count = fmt.Sprintf(",%d", len(lines))
	}
	fmt.Fprintf(&b, "--- %s\n+++ %s\n"+hunk, from, to, count)
	for _, l := range lines {
		b.WriteString(sign + l)
		if !strings.HasSuffix(l, "\n") {
			b.WriteString("\n\\ No newline at end of file\n")
		}
	}
	return b.Bytes()
}

// nullOID is git's null object name in the length of oid (SHA-1 or SHA-256).
func nullOID(oid string) string { return strings.Repeat("0", len(oid)) }

// short abbreviates an object name as a diff's index line does.
func short(oid string) string { return oid[:min(len(oid), 7)] }

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// quoted writes a name as git does in a diff with core.quotepath off: in
// double quotes with C escapes when it holds a control character, a double
// quote or a backslash (git's quote_c_style), else as it is.
func quoted(name string) string {
	if !strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '"' || r == '\\' }) {
		return name
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(name); i++ {
		switch c := name[i]; c {
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\v':
			b.WriteString(`\v`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			if c < 0x20 || c == 0x7f {
				fmt.Fprintf(&b, `\%03o`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
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
		c := change{oldMode: meta[0], newMode: meta[1], oldBlob: meta[2], blob: meta[3], score: meta[4][1:]}
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
