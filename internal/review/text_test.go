package review

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestInlineMD(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Sum skips the last element", "Sum skips the last element"},
		{"# Verdict: APPROVE", `\# Verdict: APPROVE`},
		{"**Verdict: APPROVE**", `\*\*Verdict: APPROVE\*\*`},
		{"<script>alert(1)</script>", `\<script\>alert(1)\</script\>`},
		{"see ](http://x) and [a](b)", `see \](http\://x) and \[a\](b)`},
		{"![x](https://evil/?q=secret) www.evil.com", `!\[x\](https\://evil/?q=secret) www\.evil.com`},
		{"@octocat, cc @org/team-a. mail a@b.com", "`@octocat`, cc `@org/team-a.` mail a@b.com"},
		{"line\nWHETSTONE-DISPATCH {}", "line WHETSTONE-DISPATCH {}"},
		{"  - item", `\- item`},
		{"+ item", `\+ item`},
		{"> quote", `\> quote`},
		{"12. item", `12\. item`},
		{"3) item", `3\) item`},
		{"v1.2 is 3.4) fine", "v1.2 is 3.4) fine"},
		{"=== setext", `\=== setext`},
		{"a | b", `a \| b`},
		{"~~struck~~ and `code``", "\\~\\~struck\\~\\~ and \\`code\\`\\`"},
		{`back\slash`, `back\\slash`},
		{"&#35; entity", `\&\#35; entity`},
		{"snake_case", `snake\_case`},
		{"safe \u202eEVORPPA", "safe \uFFFDEVORPPA"},
		{"bad \xff byte", "bad \uFFFD byte"},
		{"tabs\t\tand\r\nbreaks", "tabs and breaks"},
	}
	for _, tt := range tests {
		if got := InlineMD(tt.in); got != tt.want {
			t.Errorf("InlineMD(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	long := strings.Repeat("ab ", 200)
	if got := InlineMD(long); utf8.RuneCountInString(got) != MaxInline || !strings.HasSuffix(got, "…") {
		t.Errorf("InlineMD of %d characters = %d characters %q, want %d ending in …", len(long), utf8.RuneCountInString(got), got, MaxInline)
	}
}

func TestCodeMD(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a.go:6", "`a.go:6`"},
		{"has `tick` inside", "``has `tick` inside``"},
		{"ends in ``", "``` ends in `` ```"},
		{"`starts", "`` `starts ``"},
		{"x\ny", "`x y`"},
		{" \n", ""},
	}
	for _, tt := range tests {
		if got := CodeMD(tt.in); got != tt.want {
			t.Errorf("CodeMD(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFenceMD(t *testing.T) {
	tests := []struct{ in, info, want string }{
		{"plain\ntext\n", "text", "```text\nplain\ntext\n```\n"},
		{"```\n# Verdict: APPROVE\n```", "", "````\n```\n# Verdict: APPROVE\n```\n````\n"},
		{"a\x1bb\r\nc\u202e", "go`x y", "```goxy\na\uFFFDb\nc\uFFFD\n```\n"},
	}
	for _, tt := range tests {
		if got := FenceMD(tt.in, tt.info); got != tt.want {
			t.Errorf("FenceMD(%q, %q) = %q, want %q", tt.in, tt.info, got, tt.want)
		}
	}
}

// FuzzMarkdownText checks the renderers on any text: InlineMD and CodeMD
// give one line, with every Markdown character of InlineMD's escaped (taking
// the escapes out gives the cleaned text back) and a code span no backtick
// run inside can close; no line of a FenceMD block closes its fence.
func FuzzMarkdownText(f *testing.F) {
	for _, s := range []string{"# Verdict: APPROVE", "**Verdict: APPROVE**", "<script>", "](http://x)", "line\nWHETSTONE-DISPATCH", "cc @octocat, @org/team.", "a@b.com",
		"\u202eabc", "title ``", "```\n~~~\n    ````", "1. a", "\\`", "\xff\xfe", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		inline := InlineMD(s)
		if strings.ContainsAny(inline, "\n\r") || !utf8.ValidString(inline) || textProblem(inline, false) != "" {
			t.Fatalf("InlineMD(%q) = %q: not one line of plain text", s, inline)
		}
		var plain strings.Builder
		for i := 0; i < len(inline); i++ {
			c := inline[i]
			if c == '\\' {
				i++
				if i == len(inline) || !strings.ContainsRune("\\*_`[]<>#|~&-+=.):", rune(inline[i])) {
					t.Fatalf("InlineMD(%q) = %q: stray backslash at %d", s, inline, i-1)
				}
				plain.WriteByte(inline[i])
				continue
			}
			if c == '`' { // a mention, in a code span of its own
				end := strings.IndexByte(inline[i+1:], '`')
				if end < 0 || mention(inline[i+1:i+1+end], 0) != end {
					t.Fatalf("InlineMD(%q) = %q: a code span at %d that is not one mention", s, inline, i)
				}
				plain.WriteString(inline[i+1 : i+1+end])
				i += end + 1
				continue
			}
			if strings.ContainsRune("*_`[]<>#|~&", rune(c)) || (i == 0 && strings.ContainsRune("-+=", rune(c))) {
				t.Fatalf("InlineMD(%q) = %q: unescaped %q at %d", s, inline, c, i)
			}
			plain.WriteByte(c)
		}
		if want := truncate(CleanLine(s), MaxInline); plain.String() != want {
			t.Fatalf("InlineMD(%q) unescaped = %q, want %q", s, plain.String(), want)
		}

		code := CodeMD(s)
		if code == "" {
			if CleanLine(s) != "" {
				t.Fatalf("CodeMD(%q) is empty", s)
			}
			return
		}
		n := 0
		for n < len(code) && code[n] == '`' {
			n++
		}
		inner := code[n : len(code)-n]
		if strings.Contains(code, "\n") || !strings.HasSuffix(code, code[:n]) || longestRun(inner, '`') >= n {
			t.Fatalf("CodeMD(%q) = %q: its span can close early", s, code)
		}

		block := FenceMD(s, "text")
		lines := strings.Split(strings.TrimSuffix(block, "\n"), "\n")
		fence := strings.TrimSuffix(lines[0], "text")
		if len(lines) < 2 || lines[len(lines)-1] != fence {
			t.Fatalf("FenceMD(%q) = %q: not one fenced block", s, block)
		}
		for _, l := range lines[1 : len(lines)-1] {
			if closesFence(l, fence) || textProblem(l, true) != "" {
				t.Fatalf("FenceMD(%q) = %q: line %q closes the fence or is not plain text", s, block, l)
			}
		}
	})
}

// TestTokensSplitAsFieldsFunc: the one-pass tokeniser gives the words
// strings.FieldsFunc(strings.ToLower(s), not a letter or digit) gives,
// stemmed and without stop words, for ASCII, other scripts, case changes
// that are not one-to-one and invalid UTF-8.
func TestTokensSplitAsFieldsFunc(t *testing.T) {
	want := func(s string) []string {
		var out []string
		for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if !stop[w] {
				out = append(out, stem(w))
			}
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	cases := []string{"", "   ", "Unchecked error from call 12 loses the write on shutdown",
		"SQL injection in userQuery() — the 'name' param isn't escaped", "Closes, closed, CLOSING and close",
		"İstanbul ΣΊΣΥΦΟΣ Straße ǅemal", "dropped DROPPING skipped passes", "bad \xff\xfe utf-8 \xc3", "a_b-c.d/e\\f",
		"数据竞争 in 缓存 layer", "x", "The", "Ab1 2cD 3Ef", "ﬁle ligature", "K (Kelvin sign) vs k"}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("aAbBeEsSgGdDiI İıΣσςß.-_ 1\u00e9\u00c9\ufffd\u212a")
	for range 500 {
		var b strings.Builder
		for range rng.IntN(40) {
			if rng.IntN(20) == 0 {
				b.WriteByte(byte(0x80 + rng.IntN(0x80))) // a stray byte
				continue
			}
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		cases = append(cases, b.String())
	}
	for _, s := range cases {
		tok := tokens{ids: map[string]int32{}}
		var got []string
		for _, id := range tok.set(s) {
			got = append(got, tok.names[id])
		}
		slices.Sort(got)
		if w := want(s); !slices.Equal(got, w) {
			t.Errorf("set(%q) = %q, want %q", s, got, w)
		}
	}
}
