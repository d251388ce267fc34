package shell

import (
	"errors"
	"fmt"
	"strings"
)

// errSyntax reports a line the lexer cannot follow. Its text is the reason
// WriteShaped gives, because a gate that cannot decide must deny.
var errSyntax = errors.New("cannot parse the command")

// word is one shell word after quote removal. Expansions are kept as written,
// since their values are only known when the line runs.
type word struct {
	text    string
	quoted  bool // some part was quoted or escaped, so it is never a keyword
	dynamic bool // it contains an expansion or substitution
}

// command is one simple command: its words, the write redirections attached
// to it, and the here-document or here-string it reads, if any.
type command struct {
	words  []word
	writes []string
	stdin  *heredoc
}

// heredoc is the text a command reads from a here-document or here-string.
// A here-document's body is filled in once the lexer reaches the line after
// the command.
type heredoc struct {
	delim  string
	strip  bool // <<- removes leading tabs before matching the delimiter
	expand bool // the delimiter was unquoted, so the body is expanded
	body   string
}

// parser walks one command line. Commands found inside substitutions are
// appended to cmds alongside the commands that contain them.
type parser struct {
	src     string
	pos     int
	depth   int
	cmds    []*command
	pending []*heredoc // here-documents whose bodies start after the next newline
}

// keywords are the reserved words that may come before a command without
// changing what it runs.
var keywords = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true,
	"do": true, "while": true, "until": true, "!": true,
}

// parse splits src into simple commands, including those nested in
// substitutions.
func parse(src string, depth int) ([]*command, error) {
	if depth > maxDepth {
		return nil, errSyntax
	}
	p := &parser{src: src, depth: depth}
	if err := p.list(0); err != nil {
		return nil, err
	}
	return p.cmds, nil
}

// at returns the byte k places past the current one, or 0 past the end.
func (p *parser) at(k int) byte {
	if p.pos+k < len(p.src) {
		return p.src[p.pos+k]
	}
	return 0
}

// list reads simple commands up to the end of the input or, when stop is ')',
// up to the parenthesis that closes a command or process substitution.
func (p *parser) list(stop byte) error {
	cur := &command{}
	parens := 0
	inTest := false // inside [[ ]], where < and > compare strings
	finish := func() {
		if len(cur.words) > 0 || len(cur.writes) > 0 || cur.stdin != nil {
			p.cmds = append(p.cmds, cur)
			cur = &command{}
		}
	}
	for {
		p.skipBlanks()
		if p.pos >= len(p.src) {
			finish()
			if stop != 0 {
				return errSyntax
			}
			return nil
		}
		c := p.src[p.pos]
		switch {
		case c == '\n':
			p.pos++
			finish()
			inTest = false
			if err := p.heredocBodies(); err != nil {
				return err
			}
		case c == '#':
			if i := strings.IndexByte(p.src[p.pos:], '\n'); i >= 0 {
				p.pos += i
			} else {
				p.pos = len(p.src)
			}
		case c == ';' || c == '|' || (c == '&' && p.at(1) != '>'):
			op := p.operator()
			finish()
			if op != "&&" && op != "||" {
				inTest = false
			}
		case c == '(' && p.at(1) == '(' && startsCommand(cur):
			p.pos += 2
			if err := p.arithmetic(); err != nil {
				return err
			}
		case c == '(':
			p.pos++
			parens++
			finish()
		case c == ')':
			p.pos++
			finish()
			if parens > 0 {
				parens--
			} else if stop == ')' {
				return nil
			}
		case c == '&' || ((c == '<' || c == '>') && p.at(1) != '(' && !inTest):
			if err := p.redirect(cur, p.pos); err != nil {
				return err
			}
		default:
			start := p.pos
			w, err := p.readWord(inTest)
			if err != nil {
				return err
			}
			if p.pos == start {
				return errSyntax
			}
			if c := p.at(0); !inTest && isFD(w) && (c == '<' || c == '>') {
				if err := p.redirect(cur, start); err != nil {
					return err
				}
				continue
			}
			plain := !w.quoted && !w.dynamic
			if plain && (w.text == "{" || w.text == "}") && startsCommand(cur) {
				continue // braces group commands, which are checked one by one
			}
			if plain && w.text == "[[" && startsCommand(cur) {
				inTest = true
			}
			if plain && w.text == "]]" {
				inTest = false
			}
			cur.words = append(cur.words, w)
		}
	}
}

// startsCommand reports whether the next word of c would be its command word
// or a reserved word before it.
func startsCommand(c *command) bool {
	for _, w := range c.words {
		if w.quoted || !keywords[w.text] {
			return false
		}
	}
	return true
}

// isFD reports whether w is a file-descriptor number, as in 2>&1.
func isFD(w word) bool {
	return !w.quoted && !w.dynamic && isDigits(w.text)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// skipBlanks skips spaces, tabs and escaped newlines.
func (p *parser) skipBlanks() {
	for p.pos < len(p.src) {
		switch {
		case p.src[p.pos] == ' ' || p.src[p.pos] == '\t':
			p.pos++
		case p.src[p.pos] == '\\' && p.at(1) == '\n':
			p.pos += 2
		default:
			return
		}
	}
}

// operator reads a control operator such as ;, &&, || or |.
func (p *parser) operator() string {
	start := p.pos
	c := p.src[p.pos]
	p.pos++
	n := p.at(0)
	switch {
	case c == ';' && n == ';':
		p.pos++
		if p.at(0) == '&' {
			p.pos++
		}
	case c == ';' && n == '&', c == '|' && (n == '|' || n == '&'), c == '&' && n == '&':
		p.pos++
	}
	return p.src[start:p.pos]
}

// redirOp reads a redirection operator such as >, >>, &>, <<- or <>.
func (p *parser) redirOp() string {
	start := p.pos
	switch p.src[p.pos] {
	case '&': // &> or &>>
		p.pos += 2
		if p.at(0) == '>' {
			p.pos++
		}
	case '>':
		p.pos++
		switch p.at(0) {
		case '>', '|', '&':
			p.pos++
		}
	case '<':
		p.pos++
		switch p.at(0) {
		case '<':
			p.pos++
			if c := p.at(0); c == '<' || c == '-' {
				p.pos++
			}
		case '>', '&':
			p.pos++
		}
	}
	return p.src[start:p.pos]
}

// safeTargets are the files a command may write to without changing anything.
var safeTargets = map[string]bool{"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true}

// redirect reads one redirection whose operator is under p.pos; start marks
// its file-descriptor prefix, if any. Writes to files are recorded on cur.
func (p *parser) redirect(cur *command, start int) error {
	op := p.redirOp()
	opText := p.src[start:p.pos]
	p.skipBlanks()
	targetStart := p.pos
	w, err := p.readWord(false)
	if err != nil {
		return err
	}
	if p.pos == targetStart {
		return errSyntax
	}
	target := p.src[targetStart:p.pos]
	switch op {
	case "<<", "<<-":
		h := &heredoc{delim: w.text, strip: op == "<<-", expand: !w.quoted}
		p.pending = append(p.pending, h)
		cur.stdin = h
	case "<<<":
		cur.stdin = &heredoc{body: w.text}
	case "<", "<&":
		cur.stdin = nil
	default:
		if writesFile(op, w, target) {
			cur.writes = append(cur.writes, fmt.Sprintf("redirection %q", opText+" "+target))
		}
	}
	return nil
}

// writesFile reports whether the output redirection op to w can change a file.
func writesFile(op string, w word, target string) bool {
	if strings.HasPrefix(target, ">(") || strings.HasPrefix(target, "<(") {
		return false // a pipe into a process substitution, whose commands are checked
	}
	if w.dynamic {
		return true
	}
	if op == ">&" && (w.text == "-" || isDigits(strings.TrimSuffix(w.text, "-"))) {
		return false // duplicates or closes a descriptor
	}
	return !safeTargets[w.text]
}

// heredocBodies reads the bodies of the pending here-documents, which start
// at the current position, just past a newline.
func (p *parser) heredocBodies() error {
	for _, h := range p.pending {
		var body strings.Builder
		for p.pos < len(p.src) {
			line := p.src[p.pos:]
			if i := strings.IndexByte(line, '\n'); i >= 0 {
				line = line[:i]
				p.pos++
			}
			p.pos += len(line)
			check := line
			if h.strip {
				check = strings.TrimLeft(line, "\t")
			}
			if check == h.delim {
				break
			}
			body.WriteString(line)
			body.WriteByte('\n')
		}
		h.body = body.String()
		if h.expand {
			if err := p.scan(h.body); err != nil {
				return err
			}
		}
	}
	p.pending = p.pending[:0]
	return nil
}

// readWord reads one shell word. Its substitutions are kept as written in the
// text, and the commands inside them are parsed too.
func (p *parser) readWord(inTest bool) (word, error) {
	var w word
	var b strings.Builder
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch c {
		case ' ', '\t', '\n', ';', '&', '|', ')':
			w.text = b.String()
			return w, nil
		case '(':
			if prefix := b.String(); w.quoted || !strings.HasSuffix(prefix, "=") || !isAssignment(prefix) {
				w.text = b.String()
				return w, nil
			}
			if err := p.array(); err != nil {
				return w, err
			}
			b.WriteString("(...)")
		case '<', '>':
			if p.at(1) == '(' && b.Len() == 0 && !w.quoted {
				start := p.pos
				p.pos += 2
				if err := p.nested(); err != nil {
					return w, err
				}
				b.WriteString(p.src[start:p.pos])
				w.dynamic = true
				continue
			}
			if !inTest {
				w.text = b.String()
				return w, nil
			}
			b.WriteByte(c)
			p.pos++
		case '\\':
			switch {
			case p.at(1) == '\n':
				p.pos += 2
			case p.pos+1 < len(p.src):
				b.WriteByte(p.src[p.pos+1])
				p.pos += 2
				w.quoted = true
			default:
				b.WriteByte(c)
				p.pos++
			}
		case '\'':
			end := strings.IndexByte(p.src[p.pos+1:], '\'')
			if end < 0 {
				return w, errSyntax
			}
			b.WriteString(p.src[p.pos+1 : p.pos+1+end])
			p.pos += end + 2
			w.quoted = true
		case '"':
			p.pos++
			dynamic, err := p.double(&b, '"')
			if err != nil {
				return w, err
			}
			w.quoted = true
			w.dynamic = w.dynamic || dynamic
		case '$':
			dynamic, quoted, err := p.dollar(&b, false)
			if err != nil {
				return w, err
			}
			w.quoted = w.quoted || quoted
			w.dynamic = w.dynamic || dynamic
		case '`':
			if err := p.backtick(&b); err != nil {
				return w, err
			}
			w.dynamic = true
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
	w.text = b.String()
	return w, nil
}

// array reads the parenthesised values of an array assignment, a=(x y).
func (p *parser) array() error {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return errSyntax
	}
	p.pos++ // (
	for {
		for p.pos < len(p.src) && strings.IndexByte(" \t\n", p.src[p.pos]) >= 0 {
			p.pos++
		}
		if p.pos >= len(p.src) {
			return errSyntax
		}
		switch c := p.src[p.pos]; {
		case c == ')':
			p.pos++
			return nil
		case strings.IndexByte(";&|(", c) >= 0, (c == '<' || c == '>') && p.at(1) != '(':
			return errSyntax
		}
		start := p.pos
		if _, err := p.readWord(false); err != nil {
			return err
		}
		if p.pos == start {
			return errSyntax
		}
	}
}

// double reads double-quoted text up to term, or to the end of the input when
// term is 0, as in a here-document body. It reports whether the text holds an
// expansion.
func (p *parser) double(b *strings.Builder, term byte) (dynamic bool, err error) {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case term != 0 && c == term:
			p.pos++
			return dynamic, nil
		case c == '\\' && p.pos+1 < len(p.src):
			switch n := p.src[p.pos+1]; n {
			case '\n':
			case '$', '`', '"', '\\':
				b.WriteByte(n)
			default:
				b.WriteByte(c)
				b.WriteByte(n)
			}
			p.pos += 2
		case c == '$':
			d, _, err := p.dollar(b, true)
			if err != nil {
				return dynamic, err
			}
			dynamic = dynamic || d
		case c == '`':
			if err := p.backtick(b); err != nil {
				return dynamic, err
			}
			dynamic = true
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
	if term != 0 {
		return dynamic, errSyntax
	}
	return dynamic, nil
}

// dollar reads what follows a '$': a substitution, an arithmetic or parameter
// expansion, a $'...' or $"..." string, or a lone dollar sign. It reports
// whether the result is an expansion and whether it was quoted.
func (p *parser) dollar(b *strings.Builder, inDouble bool) (dynamic, quoted bool, err error) {
	start := p.pos
	switch n := p.at(1); {
	case n == '(' && p.at(2) == '(':
		p.pos += 3
		err = p.arithmetic()
	case n == '(':
		p.pos += 2
		err = p.nested()
	case n == '{':
		p.pos += 2
		err = p.braceParam()
	case n == '\'' && !inDouble:
		p.pos += 2
		return false, true, p.ansiC(b)
	case n == '"' && !inDouble:
		p.pos += 2
		dynamic, err = p.double(b, '"')
		return dynamic, true, err
	case n == '_' || 'a' <= n && n <= 'z' || 'A' <= n && n <= 'Z':
		p.pos += 2
		for p.pos < len(p.src) && isNameByte(p.src[p.pos]) {
			p.pos++
		}
	case n != 0 && strings.IndexByte("@*#?$!-0123456789", n) >= 0:
		p.pos += 2
	default:
		b.WriteByte('$')
		p.pos++
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	b.WriteString(p.src[start:p.pos])
	return true, false, nil
}

func isNameByte(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// ansiC reads the rest of a $'...' string.
func (p *parser) ansiC(b *strings.Builder) error {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '\'':
			p.pos++
			return nil
		case c == '\\' && p.pos+1 < len(p.src):
			switch n := p.src[p.pos+1]; n {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case '\\', '\'', '"':
				b.WriteByte(n)
			default:
				b.WriteByte(c)
				b.WriteByte(n)
			}
			p.pos += 2
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
	return errSyntax
}

// nested reads a command or process substitution after its opening "$(",
// "<(" or ">(", through the closing parenthesis.
func (p *parser) nested() error {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return errSyntax
	}
	return p.list(')')
}

// arithmetic reads an arithmetic expression after its opening "((", through
// the closing "))", and checks the substitutions inside it.
func (p *parser) arithmetic() error {
	start := p.pos
	depth := 0
	for ; p.pos < len(p.src); p.pos++ {
		switch p.src[p.pos] {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
				continue
			}
			if p.at(1) != ')' {
				return errSyntax
			}
			body := p.src[start:p.pos]
			p.pos += 2
			return p.scan(body)
		}
	}
	return errSyntax
}

// braceParam reads a parameter expansion after its opening "${", through the
// closing brace, and checks the substitutions inside it.
func (p *parser) braceParam() error {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return errSyntax
	}
	var scratch strings.Builder
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case '}':
			p.pos++
			return nil
		case '\\':
			p.pos += 2
		case '\'':
			end := strings.IndexByte(p.src[p.pos+1:], '\'')
			if end < 0 {
				return errSyntax
			}
			p.pos += end + 2
		case '"':
			p.pos++
			if _, err := p.double(&scratch, '"'); err != nil {
				return err
			}
		case '$':
			if _, _, err := p.dollar(&scratch, true); err != nil {
				return err
			}
		case '`':
			if err := p.backtick(&scratch); err != nil {
				return err
			}
		default:
			p.pos++
		}
	}
	return errSyntax
}

// backtick reads a `...` command substitution and parses the command inside.
func (p *parser) backtick(b *strings.Builder) error {
	start := p.pos
	p.pos++
	var inner strings.Builder
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '`':
			p.pos++
			b.WriteString(p.src[start:p.pos])
			cmds, err := parse(inner.String(), p.depth+1)
			p.cmds = append(p.cmds, cmds...)
			return err
		case c == '\\' && p.pos+1 < len(p.src) && strings.IndexByte("`\\$", p.src[p.pos+1]) >= 0:
			inner.WriteByte(p.src[p.pos+1])
			p.pos += 2
		default:
			inner.WriteByte(c)
			p.pos++
		}
	}
	return errSyntax
}

// scan checks the substitutions in text that is expanded but not run, such as
// a here-document body or an arithmetic expression.
func (p *parser) scan(text string) error {
	if !strings.ContainsAny(text, "$`") {
		return nil
	}
	q := &parser{src: text, depth: p.depth + 1}
	if q.depth > maxDepth {
		return errSyntax
	}
	var scratch strings.Builder
	if _, err := q.double(&scratch, 0); err != nil {
		return err
	}
	p.cmds = append(p.cmds, q.cmds...)
	return nil
}
