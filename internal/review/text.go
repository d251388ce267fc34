package review

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Report strings are read by people (report.md, the terminal) and by models
// (the orchestrator's instructions, the fixer's prompt). A character that is
// invisible, reorders the text around it or breaks a line could make a title
// say something other than what it shows, or start a line of its own that a
// reader or the orchestrator takes for whetstone's. The validator refuses
// such characters (forbidden); the renderers below make whatever reaches them
// inert anyway, since state written by an older version was never checked.

// forbidden names the character class r belongs to when a report string
// may not contain it, or returns "". multiline allows line feeds and tabs.
func forbidden(r rune, multiline bool) string {
	switch {
	case r == '\n' || r == '\t':
		if multiline {
			return ""
		}
		if r == '\n' {
			return "a line break; this field is one line"
		}
		return "a tab; this field is one line"
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return "a control character"
	case r == 0x2028 || r == 0x2029:
		return "a line or paragraph separator"
	case (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c:
		return "a bidirectional control, which reorders the text shown"
	case r >= 0xe0100 && r <= 0xe01ef:
		return "an invisible variation selector"
	case unicode.Is(unicode.Cf, r):
		// Zero-width spaces and joiners, word joiner, byte-order mark, soft
		// hyphen, tag characters: invisible, so they can hide text.
		return "an invisible format character"
	}
	return ""
}

// textProblem explains why s may not be a report string, or returns "".
func textProblem(s string, multiline bool) string {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return fmt.Sprintf("is not valid UTF-8 (at byte %d)", i)
		}
		if why := forbidden(r, multiline); why != "" {
			return fmt.Sprintf("contains U+%04X at byte %d, %s: reports are plain text", r, i, why)
		}
		i += n
	}
	return ""
}

// CleanLine makes s one line of plain text that cannot pass for anything
// else: every forbidden character becomes U+FFFD, so its presence shows, and
// runs of white space, line breaks included, become one space. Text quoted in
// an instruction to a model goes through it, so it never starts a line.
func CleanLine(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case unicode.IsSpace(r):
			space = true
			continue
		case forbidden(r, false) != "":
			r = utf8.RuneError
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// ShortLine is CleanLine of s cut to at most n characters, the last being "…".
func ShortLine(s string, n int) string { return truncate(CleanLine(s), n) }

// MaxInline is how many characters of a text InlineMD and CodeMD keep; a
// longer one ends in "…".
const MaxInline = 200

// truncate shortens s to at most n characters, the last being "…".
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == n-1 {
			break
		}
		count++
	}
	return strings.TrimRight(s[:i], " ") + "…"
}

// InlineMD makes s safe as inline Markdown text, in a paragraph, a list item
// or a table cell: EscapeMD of s cut to MaxInline characters. Titles, names
// and paths go through it.
func InlineMD(s string) string { return escapeMD(truncate(CleanLine(s), MaxInline)) }

// EscapeMD makes s safe as inline Markdown text of any length: CleanLine,
// then every character CommonMark or GitHub gives a meaning escaped,
// including those that mean something only at the start of a line, and
// an @mention put in a code span. Whatever s holds, the result renders as
// the text itself: no heading, emphasis, list item, quote, link (bare URLs
// and "www." included), image, HTML, code, table cell, strikethrough or
// notification.
func EscapeMD(s string) string { return escapeMD(CleanLine(s)) }

func escapeMD(s string) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if n := mention(s, i); n > 0 {
			b.WriteString("`" + s[i:i+n] + "`")
			i += n - 1
			continue
		}
		switch c {
		case '\\', '*', '_', '`', '[', ']', '<', '>', '#', '|', '~', '&':
			b.WriteByte('\\')
		case '-', '+', '=':
			if i == 0 {
				b.WriteByte('\\')
			}
		case '.', ')':
			// "1." and "1)" open an ordered list at the start of a line;
			// "www." starts a link GitHub makes by itself.
			if strings.TrimLeft(s[:i], "0123456789") == "" && i > 0 || c == '.' && strings.HasSuffix(strings.ToLower(s[:i]), "www") {
				b.WriteByte('\\')
			}
		case ':':
			if strings.HasPrefix(s[i+1:], "//") { // "https://…" would become a link
				b.WriteByte('\\')
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// mention returns the length of the @mention (GitHub's "@name" or
// "@org/team", at the start or after a character that is not part of a
// word) that starts at s[i], or 0. GitHub notifies whoever a mention names
// wherever the text is rendered, escaped or not, except in code: escapeMD
// puts a mention in a code span.
func mention(s string, i int) int {
	word := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
	}
	if s[i] != '@' || i+1 >= len(s) || !word(s[i+1]) || i > 0 && word(s[i-1]) {
		return 0
	}
	j := i + 1
	for j < len(s) && (word(s[j]) || s[j] == '-' || s[j] == '.' || s[j] == '/') {
		j++
	}
	return j - i
}

// CodeMD renders s as an inline code span: CleanLine, cut to MaxInline
// characters, between backtick fences longer than any backtick run inside,
// so the span can only end where CodeMD ends it; "" for an empty s. In a
// table cell, escape "|" in the result as "\|" (GitHub splits cells before
// it parses spans).
func CodeMD(s string) string {
	s = truncate(CleanLine(s), MaxInline)
	if s == "" {
		return ""
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " " // CommonMark strips one space each side
	}
	return fence + s + fence
}

// FenceMD renders multi-line text as a fenced code block with the given info
// string: the fence is longer than any run of backticks in s, so no line of
// s can close it, and forbidden characters become U+FFFD. The block ends with
// a line break.
func FenceMD(s, info string) string {
	clean := strings.Map(func(r rune) rune {
		if r == '\r' {
			return -1
		}
		if forbidden(r, true) != "" {
			return utf8.RuneError
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	fence := strings.Repeat("`", max(3, longestRun(clean, '`')+1))
	return fence + strings.Map(func(r rune) rune {
		if r == '`' || unicode.IsSpace(r) || forbidden(r, false) != "" {
			return -1 // a backtick in the info string would end the fence
		}
		return r
	}, info) + "\n" + strings.TrimSuffix(clean, "\n") + "\n" + fence + "\n"
}

func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// Plural counts: "1 finding", "2 findings", "2 fixes", "3 passes".
func Plural(n int, one string) string {
	return strconv.Itoa(n) + " " + PluralWord(n, one)
}

// PluralWord is the noun alone in the number n asks for.
func PluralWord(n int, one string) string {
	if n == 1 {
		return one
	}
	for _, end := range []string{"s", "x", "sh", "ch"} {
		if strings.HasSuffix(one, end) {
			return one + "es"
		}
	}
	return one + "s"
}
