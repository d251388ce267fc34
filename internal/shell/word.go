package shell

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// A word is what a program receives for one shell word, as far as it can be
// known before the command runs.
type word struct {
	text  string  // the value; the known parts only, unless known
	src   string  // the word as written, for reasons
	known bool    // text is exactly the value: no expansion, no glob
	glob  bool    // holds unquoted glob characters
	split bool    // an unquoted expansion may turn it into several words, or none
	segs  []seg   // the value in known and unknown parts
	param string  // NAME when the word starts with a plain $NAME and has no other expansion
	from  *origin // for a word only known when it runs: it lists files of the project
	proc  bool    // a process substitution, <(…): a pipe from a command judged itself
}

// A seg is a run of a word's value.
type seg struct {
	text string
	kind segKind
}

type segKind uint8

const (
	segLit    segKind = iota // known text
	segGlob                  // known text holding unquoted glob characters
	segAny                   // unknown text
	segNoDash                // unknown text that never starts with '-', such as a commit id
)

// option reports whether w is, or might turn out to be, an option: a word
// starting with '-'.
func (w word) option() bool {
	if w.split {
		return true
	}
	for _, s := range w.segs {
		switch {
		case s.kind == segLit && s.text == "":
			continue
		case s.kind == segLit:
			return s.text[0] == '-'
		case s.kind == segGlob:
			return s.text[0] == '-' || isMeta(s.text[0])
		case s.kind == segNoDash:
			return false
		}
		return true
	}
	return false
}

func isMeta(b byte) bool { return b == '*' || b == '?' || b == '[' }

// unknownWord stands for words only known when the command runs, such as the
// arguments xargs appends.
func unknownWord(src string) word {
	return word{src: src, split: true, segs: []seg{{kind: segAny}}}
}

// words resolves the words of a command: it judges the commands their
// substitutions run, expands braces and checks that none names a protected
// path.
func (c *checker) words(ws []*syntax.Word) []word {
	out := make([]word, 0, len(ws))
	for _, w := range ws {
		if c.reason != "" {
			return nil
		}
		c.expr(w)
		src := c.text(w)
		if !syntax.SplitBraces(w) {
			out = append(out, c.resolve(w, src))
			continue
		}
		for bw, err := range expand.BracesSeq(nil, w) {
			c.fields--
			if err != nil || c.fields < 0 {
				c.denyf("the brace expansion in %s makes too many words to judge; list them", quote(src))
				return nil
			}
			r := c.resolve(bw, src)
			r.src = r.text
			out = append(out, r)
		}
	}
	for _, w := range out {
		c.protect(w)
	}
	return out
}

// word resolves a single word, such as a redirection target, without brace
// expansion: bash does not expand braces there.
func (c *checker) word(w *syntax.Word) word {
	c.expr(w)
	r := c.resolve(w, c.text(w))
	c.protect(r)
	return r
}

// resolve computes the value of w as far as it is known.
func (c *checker) resolve(w *syntax.Word, src string) word {
	r := resolver{c: c}
	for i, part := range w.Parts {
		r.part(part, i == 0, false)
	}
	out := r.done(src)
	if !out.known {
		out.from = c.wordOrigin(w)
		_, out.proc = w.Parts[0].(*syntax.ProcSubst)
		out.proc = out.proc && len(w.Parts) == 1
	}
	return out
}

type resolver struct {
	c       *checker
	segs    []seg
	split   bool
	params  []string
	dynamic int
}

func (r *resolver) add(text string, kind segKind) {
	if n := len(r.segs); n > 0 && kind != segAny && kind != segNoDash && r.segs[n-1].kind == kind {
		r.segs[n-1].text += text
		return
	}
	if text == "" && kind == segLit {
		return
	}
	r.segs = append(r.segs, seg{text: text, kind: kind})
}

// part adds one part of a word. first tells whether it starts the word, for
// tilde expansion; quoted whether it sits inside double quotes.
func (r *resolver) part(p syntax.WordPart, first, quoted bool) {
	switch p := p.(type) {
	case *syntax.Lit:
		if quoted {
			r.add(unescapeDouble(p.Value), segLit)
			return
		}
		v := p.Value
		if first && strings.HasPrefix(v, "~") {
			v = r.tilde(v)
		}
		r.unquoted(v)
	case *syntax.SglQuoted:
		if p.Dollar {
			r.add(ansiC(p.Value), segLit)
		} else {
			r.add(p.Value, segLit)
		}
		if p.Value == "" {
			r.segs = append(r.segs, seg{kind: segLit}) // "" is a word, even if empty
		}
	case *syntax.DblQuoted:
		if p.Dollar { // $"…" is translated by a message catalog
			r.dynamic++
			r.add("", segAny)
			return
		}
		if len(p.Parts) == 0 {
			r.segs = append(r.segs, seg{kind: segLit})
		}
		for _, q := range p.Parts {
			r.part(q, false, true)
		}
	case *syntax.ParamExp:
		r.dynamic++
		if plainParam(p) {
			r.params = append(r.params, p.Param.Value)
			if r.c.vars[p.Param.Value] == varNoDash {
				r.c.noDash = append(r.c.noDash, p.Param.Value)
				r.add("", segNoDash)
				return
			}
		}
		if !quoted || p.Param != nil && (p.Param.Value == "@" || p.Index != nil && isAll(p.Index)) || p.Names != 0 {
			r.split = true
		}
		r.add("", segAny)
	case *syntax.CmdSubst:
		r.dynamic++
		if noDashOutput(p) {
			r.add("", segNoDash)
			return
		}
		r.split = r.split || !quoted
		r.add("", segAny)
	case *syntax.ProcSubst:
		r.dynamic++
		r.add("/dev/fd/", segLit)
		r.add("", segNoDash)
	default: // arithmetic, extended globs
		r.dynamic++
		r.split = r.split || !quoted
		r.add("", segAny)
	}
}

// unquoted adds unquoted literal text: backslashes quote the next character,
// and *, ? and [ make it a pattern.
func (r *resolver) unquoted(v string) {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		ch := v[i]
		switch {
		case ch == '\\' && i+1 < len(v):
			i++
			if v[i] == '\n' {
				continue
			}
			r.add(b.String(), segLit)
			b.Reset()
			r.add(v[i:i+1], segLit)
			continue
		case ch == '*' || ch == '?' || ch == '[' && strings.IndexByte(v[i:], ']') > 0:
			r.add(b.String(), segLit)
			b.Reset()
			j := i + 1
			for j < len(v) && v[j] != '\\' {
				j++
			}
			r.add(v[i:j], segGlob)
			i = j - 1
			continue
		}
		b.WriteByte(ch)
	}
	r.add(b.String(), segLit)
}

// tilde expands a leading ~ or ~/ to the home directory; other forms, such as
// ~user or ~+, are unknown.
func (r *resolver) tilde(v string) string {
	name, rest, _ := strings.Cut(v, "/")
	if name == "~" && r.c.home != "" {
		if rest == "" && !strings.Contains(v, "/") {
			return r.c.home
		}
		return r.c.home + "/" + rest
	}
	r.dynamic++
	r.add("", segAny)
	if i := strings.IndexByte(v, '/'); i >= 0 {
		return v[i:]
	}
	return ""
}

func (r *resolver) done(src string) word {
	w := word{src: src, segs: r.segs, split: r.split, known: true}
	var b strings.Builder
	for _, s := range r.segs {
		b.WriteString(s.text)
		switch s.kind {
		case segGlob:
			w.glob, w.known = true, false
		case segAny, segNoDash:
			w.known = false
		}
	}
	w.text = b.String()
	if r.dynamic == 1 && len(r.params) == 1 && len(r.segs) > 0 && r.segs[0].kind == segAny {
		w.param = r.params[0]
	}
	return w
}

func plainParam(p *syntax.ParamExp) bool {
	return p.Param != nil && !p.Excl && !p.Length && p.Index == nil && p.Slice == nil && p.Repl == nil && p.Exp == nil && p.Names == 0
}

func isAll(e syntax.ArithmExpr) bool {
	w, ok := e.(*syntax.Word)
	return ok && (w.Lit() == "@" || w.Lit() == "*")
}

// unescapeDouble removes the backslashes that quote characters inside double
// quotes.
func unescapeDouble(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				i++
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ansiC decodes the escapes of a $'…' string as bash does; the value ends at
// a NUL. expand.Format decodes every escape but \cX (a control character in
// $'…', where printf stops its output), and reads % as a conversion, so the
// string is cut at those.
func ansiC(s string) string {
	var b strings.Builder
	from := 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '%':
			formatInto(&b, s[from:i])
			b.WriteByte('%')
			from = i + 1
		case s[i] != '\\' || i+1 == len(s):
		case s[i+1] != 'c' || i+2 == len(s):
			i++ // the escaped character starts nothing
		default:
			formatInto(&b, s[from:i])
			b.WriteByte(s[i+2] & 0x1f)
			i += 2
			from = i + 1
		}
	}
	formatInto(&b, s[from:])
	out, _, _ := strings.Cut(b.String(), "\x00")
	return out
}

// formatInto writes s with its backslash escapes decoded. With no
// arguments, expand.Format has no conversions to fail on.
func formatInto(b *strings.Builder, s string) {
	v, _, _ := expand.Format(nil, s, nil)
	b.WriteString(v)
}

// noDashOutput reports whether a command substitution only prints commit
// ids, ref names or an absolute directory, none of which starts with '-':
// $(git rev-parse …), $(git merge-base …), $(pwd). Such a word can stand
// where an option would be refused.
func noDashOutput(cs *syntax.CmdSubst) bool {
	if len(cs.Stmts) != 1 || len(cs.Stmts[0].Redirs) > 0 {
		return false
	}
	call, ok := cs.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 {
		return false
	}
	args, ok := literals(call)
	if !ok {
		return false
	}
	switch {
	case len(args) == 1 && args[0] == "pwd":
		return true
	case len(args) < 3 || args[0] != "git":
		return false
	}
	allowed := map[string][]string{
		"rev-parse":  {"--verify", "-q", "--quiet", "--short", "--abbrev-ref", "--symbolic-full-name", "--show-toplevel"},
		"merge-base": {"--fork-point", "--all", "--octopus"},
	}[args[1]]
	if allowed == nil {
		return false
	}
	for _, a := range args[2:] {
		name, _, _ := strings.Cut(a, "=")
		if strings.HasPrefix(a, "-") && !slices.Contains(allowed, name) {
			return false
		}
	}
	return true
}

// literal returns the value of a word made only of plain literal text and
// quotes, without expansions, escapes or globs.
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v := p.Value
			if strings.ContainsAny(v, "\\*?[") || strings.HasPrefix(v, "~") ||
				strings.Contains(v, "{") && (strings.Contains(v, ",") || strings.Contains(v, "..")) {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok || strings.Contains(lit.Value, "\\") {
					return "", false
				}
				b.WriteString(lit.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// literals is a call's words when every one is literal and there is at
// least one.
func literals(call *syntax.CallExpr) ([]string, bool) {
	if len(call.Args) == 0 {
		return nil, false
	}
	args := make([]string, 0, len(call.Args))
	for _, a := range call.Args {
		lit, ok := literal(a)
		if !ok {
			return nil, false
		}
		args = append(args, lit)
	}
	return args, true
}
