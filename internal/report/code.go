package report

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/whetstone-dev/whetstone/internal/scope"
)

// What report.md shows of the code, at most: a finding's excerpt is a few
// lines of the reviewed tree, its fix the fixer's hunks touching its lines.
const (
	maxExcerptLines = 8
	maxHunkLines    = 24
	maxCodeLine     = 160 // bytes of one shown line
	hunkMargin      = 3   // a hunk this close to a finding's lines touches them
)

// Code is what a report needs to show code: links, excerpts, fix hunks.
// The zero Code shows none of them.
type Code struct {
	// Web is the repository's web address (WebRemote); "" means no links.
	Web string
	// Read returns a file of the last reviewed tree, bounded; nil reads
	// nothing.
	Read func(path string) ([]byte, error)
	// Tree is the iteration whose tree Read reads (context.json's).
	Tree int
	// FixPatches holds each iteration's fix.patch by iteration (from 2):
	// the fixer's edits between iteration n-1's tree and iteration n's.
	FixPatches map[int][]byte
}

// WebRemote turns a git remote URL of github.com or gitlab.com, in https or
// ssh form, into the repository's web address ("https://github.com/o/r");
// ok is false for any other host, or a path that is not plainly a
// repository's (only letters, digits, ".", "_", "-" and "/").
func WebRemote(remote string) (web string, ok bool) {
	remote = strings.TrimSpace(remote)
	var host, path string
	switch {
	case strings.HasPrefix(remote, "https://"), strings.HasPrefix(remote, "ssh://"):
		u, err := url.Parse(remote)
		if err != nil || u.RawQuery != "" || u.Fragment != "" {
			return "", false
		}
		host, path = u.Hostname(), u.Path
	case strings.HasPrefix(remote, "git@"):
		h, p, found := strings.Cut(strings.TrimPrefix(remote, "git@"), ":")
		if !found {
			return "", false
		}
		host, path = h, p
	default:
		return "", false
	}
	if host != "github.com" && host != "gitlab.com" {
		return "", false
	}
	path = strings.TrimSuffix(strings.Trim(path, "/"), ".git")
	parts := strings.Split(path, "/")
	if len(parts) < 2 || host == "github.com" && len(parts) != 2 {
		return "", false
	}
	for _, p := range parts {
		if p == "" || p == "." || p == ".." || strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "" {
			return "", false
		}
	}
	return "https://" + host + "/" + path, true
}

// link is the web address of lines line..end of file at commit head:
// GitHub's #L10-L12, GitLab's #L10-12; "" without a web address or commit.
func link(web, head, file string, line, end int) string {
	if web == "" || head == "" || strings.Trim(head, "0123456789abcdef") != "" {
		return ""
	}
	segs := strings.Split(file, "/")
	for i, s := range segs {
		// Parentheses would end a Markdown link's destination.
		segs[i] = strings.NewReplacer("(", "%28", ")", "%29").Replace(url.PathEscape(s))
	}
	blob, anchor := "/blob/", fmt.Sprintf("#L%d", line)
	if strings.HasPrefix(web, "https://gitlab.com/") {
		blob = "/-/blob/"
		if end > line {
			anchor += fmt.Sprintf("-%d", end)
		}
	} else if end > line {
		anchor += fmt.Sprintf("-L%d", end)
	}
	return web + blob + head + "/" + strings.Join(segs, "/") + anchor
}

// attachCode gives each finding its link and, when the code can be read,
// its excerpt (blocking ones) and the fixer's hunks (fixed ones, and
// blocking ones the fixer tried to fix).
func attachCode(findings []Finding, code Code, head string) {
	moves := map[int]func(string, int) (string, int){}
	patches := map[int][]*gitdiff.File{} // each fix.patch parsed once
	for n, patch := range code.FixPatches {
		if m, err := scope.LineMap(patch); err == nil {
			moves[n] = m
		}
		if files, _, err := gitdiff.Parse(bytes.NewReader(patch)); err == nil {
			patches[n] = files
		}
	}
	for i := range findings {
		f := &findings[i]
		f.Link = link(code.Web, head, f.File, f.Line, max(f.Line, f.EndLine))
		if f.Disposition != Blocking && f.Disposition != Fixed {
			continue
		}
		if f.Fixer != nil && f.Fixer.Status == "fixed" {
			f.FixHunks = hunks(patches[f.Fixer.Iteration+1], f.File, f.Line, max(f.Line, f.EndLine))
		}
		if f.Disposition == Blocking && code.Read != nil {
			f.Excerpt = excerpt(code, moves, *f)
		}
	}
}

// excerpt reads the finding's lines from the last reviewed tree, moved
// there through the fix patches of the iterations after the finding's
// last sighting.
func excerpt(code Code, moves map[int]func(string, int) (string, int), f Finding) *Excerpt {
	file, line, end := f.File, f.Line, max(f.Line, f.EndLine)
	for n := f.LastIteration + 1; n <= code.Tree; n++ {
		m := moves[n]
		if m == nil {
			continue
		}
		var to string
		to, line = m(file, line)
		_, end = m(file, end)
		file, end = to, max(line, end)
	}
	data, err := code.Read(file)
	if err != nil || bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if line > len(lines) {
		return nil
	}
	end = min(end, len(lines))
	shown := min(end, line+maxExcerptLines-1)
	ex := &Excerpt{File: file, Line: line, EndLine: end}
	var b strings.Builder
	for _, l := range lines[line-1 : shown] {
		b.WriteString(cut(l) + "\n")
	}
	if shown < end {
		fmt.Fprintf(&b, "… %d more lines\n", end-shown)
	}
	ex.Text = b.String()
	return ex
}

// hunks returns the fragments of a parsed patch that change file within
// hunkMargin lines of line..end (old side), as diff text of at most
// maxHunkLines lines; "" when none does.
func hunks(files []*gitdiff.File, file string, line, end int) string {
	var out []string
	for _, f := range files {
		if f.OldName != file && (f.OldName != "" || f.NewName != file) {
			continue
		}
		for _, frag := range f.TextFragments {
			from, to := int(frag.OldPosition), int(frag.OldPosition+frag.OldLines)-1
			if to < line-hunkMargin || from > end+hunkMargin {
				continue
			}
			out = append(out, strings.TrimSuffix(frag.Header(), "\n"))
			for _, l := range frag.Lines {
				out = append(out, cut(strings.TrimSuffix(l.String(), "\n")))
			}
		}
	}
	if len(out) > maxHunkLines {
		out = append(out[:maxHunkLines], fmt.Sprintf("… %d more lines in the fix patch", len(out)-maxHunkLines))
	}
	if len(out) == 0 {
		return ""
	}
	return strings.Join(out, "\n") + "\n"
}

// cut shortens one shown line of code to maxCodeLine bytes, on a rune
// boundary.
func cut(s string) string {
	if len(s) <= maxCodeLine {
		return s
	}
	i := maxCodeLine
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + " …"
}
