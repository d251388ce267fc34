package shell

import (
	"strings"
)

// This file judges the small programs that sed and awk run: parsed well
// enough to find the commands that write files or run other programs.
// Whatever the parser does not understand is refused.

// sedCmd judges sed: its script, and with -i the files it rewrites.
func sedCmd(c *checker, x *call) {
	opts, operands, bad := parse(x.args, spec{short: "efl", optional: "i", long: []string{"expression", "file", "line-length"}})
	if bad != nil {
		c.dynamicOption(x, bad)
		return
	}
	var scripts []string
	inPlace := false
	for _, o := range opts {
		switch {
		case o.is("-e", "--expression"):
			if !o.value.known {
				c.denyf("%s runs a sed script only known when it runs; write the script literally", quote(x.part()))
				return
			}
			scripts = append(scripts, o.value.text)
		case o.is("-f", "--file"):
			c.denyf("%s reads its script from a file whetstone cannot judge; give the script with -e", x.with(o.name))
			return
		case o.is("-i", "--in-place"):
			inPlace = true
		case o.is("-n", "--quiet", "--silent", "-s", "--separate", "-E", "-r", "--regexp-extended", "-u", "--unbuffered", "-z", "--null-data", "--posix", "--debug", "--sandbox", "--follow-symlinks", "-b", "--binary", "-l", "--line-length", "--help", "--version"):
		default:
			c.denyf("%s is not a sed option whetstone knows; leave it off", x.with(o.name))
			return
		}
	}
	if len(scripts) == 0 {
		if len(operands) == 0 {
			return
		}
		if !operands[0].known {
			c.denyf("%s runs a sed script only known when it runs; write the script literally", quote(x.part()))
			return
		}
		scripts, operands = []string{operands[0].text}, operands[1:]
	}
	what, reads := sedScript(strings.Join(scripts, "\n"))
	if what != "" {
		c.denyf("%s %s; %s", quote(x.part()), what, c.instead())
		return
	}
	c.namesInScript(x, reads)
	if inPlace {
		if !c.literalOperands(x, nil, operands) {
			return
		}
		for _, f := range operands {
			c.writes(f, x.with("-i"))
		}
	}
}

// sedScript returns what a sed script does that only reading does not, or
// "" when it only prints, and the files it reads with r and R.
func sedScript(s string) (what string, reads []string) {
	p := &sedParser{s: s}
	for {
		what := p.command(&reads)
		if what != "" || p.i >= len(p.s) {
			return what, reads
		}
	}
}

// command parses one command of a sed script, its addresses first.
func (p *sedParser) command(reads *[]string) string {
	p.skip(" \t\n;")
	if p.i >= len(p.s) {
		return ""
	}
	if !p.address() {
		return "has an address whetstone cannot parse"
	}
	p.skip(" \t")
	if p.peek() == ',' {
		p.i++
		p.skip(" \t")
		if !p.address() {
			return "has an address whetstone cannot parse"
		}
	}
	p.skip(" \t!")
	if p.i >= len(p.s) {
		return "has a command whetstone cannot parse"
	}
	cmd := p.s[p.i]
	p.i++
	switch cmd {
	case '{', '}':
		return ""
	case '#':
		p.until("\n")
		return ""
	case ':', 'b', 't', 'T', 'v':
		p.skip(" \t")
		p.until(";\n")
	case 'a', 'i', 'c':
		p.text()
		return ""
	case 'r', 'R':
		*reads = append(*reads, strings.TrimSpace(p.until("\n")))
		return ""
	case 'w', 'W':
		if !stdio(strings.TrimSpace(p.until("\n"))) {
			return "writes a file with its " + string(cmd) + " command"
		}
		return ""
	case 'e':
		return "runs a command with its e command"
	case 's':
		if what, ok := p.substitute(); !ok {
			return "has an s command whetstone cannot parse"
		} else if what != "" {
			return what
		}
	case 'y':
		if !p.delimited(false) || !p.delimitedBy(p.s[p.i-1], false) {
			return "has a y command whetstone cannot parse"
		}
	case 'l', 'L', 'q', 'Q':
		p.skip(" \t")
		p.skip("0123456789")
	case '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
	default:
		return "has a command whetstone cannot parse"
	}
	p.skip(" \t")
	if p.i < len(p.s) && !strings.ContainsRune(";\n}#", rune(p.s[p.i])) {
		return "has a command whetstone cannot parse"
	}
	return ""
}

// namesInScript refuses a sed or awk program that names whetstone's key in
// a file it reads.
func (c *checker) namesInScript(x *call, names []string) {
	for _, n := range names {
		if c.namesKey(n) {
			c.deny(keyReason(x.part()))
			return
		}
	}
}

// stdio reports whether a sed or awk output file is really standard output
// or error, which GNU sed and awk treat specially.
func stdio(name string) bool {
	return name == "/dev/stdout" || name == "/dev/stderr"
}

type sedParser struct {
	s string
	i int
}

func (p *sedParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *sedParser) skip(chars string) {
	for p.i < len(p.s) && strings.IndexByte(chars, p.s[p.i]) >= 0 {
		p.i++
	}
}

// until returns the text up to one of stop, not included.
func (p *sedParser) until(stop string) string {
	start := p.i
	for p.i < len(p.s) && strings.IndexByte(stop, p.s[p.i]) < 0 {
		p.i++
	}
	return p.s[start:p.i]
}

// text skips the text of a, i or c: the rest of the line, continued by a
// trailing backslash.
func (p *sedParser) text() {
	for p.i < len(p.s) && p.s[p.i] != '\n' {
		if p.s[p.i] == '\\' {
			p.i++
		}
		p.i++
	}
}

// address skips an address, if there is one: a line number, first~step, $,
// +N, ~N, /regex/ or \cregexc, with its I and M flags.
func (p *sedParser) address() bool {
	switch ch := p.peek(); {
	case '0' <= ch && ch <= '9', ch == '+', ch == '~':
		p.i++
		p.skip("0123456789")
		if p.peek() == '~' {
			p.i++
			p.skip("0123456789")
		}
	case ch == '$':
		p.i++
	case ch == '/':
		p.i++
		if !p.delimitedBy('/', true) {
			return false
		}
		p.skip("IM")
	case ch == '\\':
		p.i++
		if p.i >= len(p.s) {
			return false
		}
		delim := p.s[p.i]
		p.i++
		if !p.delimitedBy(delim, true) {
			return false
		}
		p.skip("IM")
	}
	return true
}

// delimited skips a delimiter and the text up to the same delimiter again.
func (p *sedParser) delimited(regex bool) bool {
	if p.i >= len(p.s) || p.s[p.i] == '\n' || p.s[p.i] == '\\' {
		return false
	}
	delim := p.s[p.i]
	p.i++
	return p.delimitedBy(delim, regex)
}

// delimitedBy skips text up to delim, which a backslash escapes and, in a
// regex, a bracket expression hides.
func (p *sedParser) delimitedBy(delim byte, regex bool) bool {
	for p.i < len(p.s) {
		ch := p.s[p.i]
		switch {
		case ch == '\\':
			p.i += 2
			continue
		case ch == delim:
			p.i++
			return true
		case ch == '[' && regex:
			if !p.bracket() {
				return false
			}
			continue
		case ch == '\n' && regex:
			return false
		}
		p.i++
	}
	return false
}

// bracket skips a bracket expression such as [^]/[:alpha:]].
func (p *sedParser) bracket() bool {
	p.i++
	if p.peek() == '^' {
		p.i++
	}
	if p.peek() == ']' {
		p.i++
	}
	for p.i < len(p.s) {
		switch ch := p.s[p.i]; {
		case ch == ']':
			p.i++
			return true
		case ch == '[' && p.i+1 < len(p.s) && strings.IndexByte(":.=", p.s[p.i+1]) >= 0:
			end := strings.Index(p.s[p.i+2:], string(p.s[p.i+1])+"]")
			if end < 0 {
				return false
			}
			p.i += end + 4
		case ch == '\n':
			return false
		default:
			p.i++
		}
	}
	return false
}

// substitute skips an s command and returns what its flags do beyond
// printing.
func (p *sedParser) substitute() (string, bool) {
	if p.i >= len(p.s) || p.s[p.i] == '\n' || p.s[p.i] == '\\' {
		return "", false
	}
	delim := p.s[p.i]
	p.i++
	if !p.delimitedBy(delim, true) || !p.delimitedBy(delim, false) {
		return "", false
	}
	for p.i < len(p.s) {
		switch f := p.s[p.i]; {
		case strings.IndexByte("gpiImM0123456789", f) >= 0:
			p.i++
		case f == 'e':
			return "runs the result as a command with the s///e flag", true
		case f == 'w':
			p.i++
			if !stdio(strings.TrimSpace(p.until("\n"))) {
				return "writes a file with the s///w flag", true
			}
			return "", true
		default:
			return "", true
		}
	}
	return "", true
}

// awkCmd judges awk: its program must not run commands or write files.
func awkCmd(c *checker, x *call) {
	opts, operands, bad := parse(x.args, spec{short: "FvfeiElW", optional: "dDopL", long: []string{"field-separator", "assign", "file", "source", "include", "load", "exec"}, posix: true})
	if bad != nil {
		c.dynamicOption(x, bad)
		return
	}
	var prog []string
	for _, o := range opts {
		switch {
		case o.is("-F", "--field-separator", "-v", "--assign"):
		case o.is("-e", "--source"):
			if !o.value.known {
				c.denyf("%s runs an awk program only known when it runs; write the program literally", quote(x.part()))
				return
			}
			prog = append(prog, o.value.text)
		case o.is("-f", "--file", "-i", "--include", "-l", "--load", "-E", "--exec", "-W"):
			c.denyf("%s runs awk code from a file whetstone cannot judge; give the program on the command line", x.with(o.name))
			return
		case o.is("-d", "--dump-variables", "-D", "--debug", "-o", "--pretty-print", "-p", "--profile"):
			c.denyf("%s writes files; %s", x.with(o.name), c.instead())
			return
		case o.is("-b", "-c", "-C", "-h", "-M", "-n", "-N", "-O", "-P", "-r", "-s", "-S", "-t", "-V", "-k", "-L", "--characters-as-bytes", "--traditional", "--copyright", "--help", "--bignum", "--use-lc-numeric", "--non-decimal-data", "--optimize", "--posix", "--re-interval", "--no-optimize", "--sandbox", "--lint-old", "--version", "--csv", "--lint"):
		default:
			c.denyf("%s is not an awk option whetstone knows; leave it off", x.with(o.name))
			return
		}
	}
	if len(prog) == 0 {
		if len(operands) == 0 {
			return
		}
		if !operands[0].known {
			c.denyf("%s runs an awk program only known when it runs; write the program literally", quote(x.part()))
			return
		}
		prog = []string{operands[0].text}
	}
	what, strs := awkProgram(strings.Join(prog, "\n"))
	if what != "" {
		c.denyf("%s %s; %s", quote(x.part()), what, c.instead())
		return
	}
	c.namesInScript(x, strs)
	if c.reason == "" && len(c.protected) > 0 && awkComputedRead().MatchString(strings.Join(prog, "\n")) {
		c.denyf("%s reads a file named by an expression (getline < EXPR, or ARGV), which whetstone cannot tell is not its key file; give awk the files as operands", quote(x.part()))
	}
}

// awkComputedRead finds the parts of an awk program that open a file named
// by an expression: getline from something other than a string constant,
// and ARGV or ARGC, which name the files awk reads.
var awkComputedRead = lazyRegexp(`getline[^;{}\n]*<\s*[^"\s]|\bARG[VC]\b`)

// awkProgram returns what an awk program does that only reading does not:
// system(), pipes to and from commands, output redirected to files, gawk's
// @ directives and indirect calls. It is "" for a program that only reads
// and prints. strs are the program's string constants, which may name files
// it reads.
func awkProgram(p string) (what string, strs []string) {
	inPrint, depth := false, 0
	var prev byte // the last significant character, to tell a regex from a division
	for i := 0; i < len(p); i++ {
		ch := p[i]
		switch {
		case ch == ' ' || ch == '\t':
			continue
		case ch == '\\' && i+1 < len(p) && p[i+1] == '\n':
			i++
			continue
		case ch == '#':
			for i+1 < len(p) && p[i+1] != '\n' {
				i++
			}
			continue
		case ch == '"':
			end := awkString(p, i)
			if end < 0 {
				return "has a string whetstone cannot parse", nil
			}
			strs = append(strs, p[i+1:end])
			i = end
		case ch == '/' && regexStarts(prev):
			j := i + 1
			for j < len(p) && p[j] != '/' {
				if p[j] == '\\' {
					j++
				}
				if j < len(p) && p[j] == '\n' {
					return "has a regular expression whetstone cannot parse", nil
				}
				j++
			}
			if j >= len(p) {
				return "has a regular expression whetstone cannot parse", nil
			}
			i = j
		case isIdent(ch) && !('0' <= ch && ch <= '9'):
			j := i
			for j < len(p) && isIdent(p[j]) {
				j++
			}
			switch p[i:j] {
			case "system":
				return "runs a command with system()", nil
			case "print", "printf":
				inPrint, depth = true, 0
			}
			i = j - 1
			ch = 'a'
		case ch == '@':
			return "uses a gawk directive or an indirect call", nil
		case ch == '|':
			if i+1 < len(p) && p[i+1] == '|' {
				i++
				break
			}
			return "pipes to or from a command", nil
		case ch == '>':
			if !inPrint || depth > 0 {
				if i+1 < len(p) && p[i+1] == '=' {
					i++
				}
				break
			}
			j := i + 1
			if j < len(p) && p[j] == '>' {
				j++
			}
			for j < len(p) && (p[j] == ' ' || p[j] == '\t') {
				j++
			}
			end := -1
			if j < len(p) && p[j] == '"' {
				end = awkString(p, j)
			}
			if end < 0 || !stdio(p[j+1:end]) {
				return "writes to a file", nil
			}
			i = end
			ch = '"'
		case (ch == '+' || ch == '-') && i+1 < len(p) && p[i+1] == ch:
			i++
			ch = 'a' // x++ / 2 divides
		case ch == '(':
			depth++
		case ch == ')':
			depth--
		case ch == ';' || ch == '\n' || ch == '{' || ch == '}':
			inPrint = false
		}
		prev = ch
	}
	return "", strs
}

// awkString returns the index of the quote that ends the string starting at
// p[i], or -1.
func awkString(p string, i int) int {
	for j := i + 1; j < len(p); j++ {
		switch p[j] {
		case '\\':
			j++
		case '"':
			return j
		case '\n':
			return -1
		}
	}
	return -1
}

func isIdent(b byte) bool {
	return b == '_' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
}

// regexStarts reports whether a '/' after prev starts a regular expression
// rather than dividing. Treating a division as a regex could hide code, so
// a regex starts only where an operand cannot have ended.
func regexStarts(prev byte) bool {
	return !(isIdent(prev) || prev == ')' || prev == ']' || prev == '"' || prev == '$' || prev == '.' || prev == '/')
}
