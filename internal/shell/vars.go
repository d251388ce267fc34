package shell

import (
	"regexp"
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// This file judges assignments, declarations, parameter expansions and
// arithmetic. Bash evaluates the text of a variable read by arithmetic as an
// expression, and an array subscript in it runs command substitutions, so
// every variable arithmetic reads must hold a number.

// param judges a parameter expansion. Indirect expansion and the @P
// operator evaluate a variable's text as code, so they are refused.
func (c *checker) param(p *syntax.ParamExp) {
	switch {
	case p.NestedParam != nil || p.Flags != nil || len(p.Modifiers) > 0:
		c.denyf("cannot judge %s; write it as plain bash", quote(c.text(p)))
		return
	case p.Excl && p.Names == 0 && !(p.Index != nil && isAll(p.Index)):
		c.denyf("%s expands a variable named by another, which can run code; use the variable directly", quote(c.text(p)))
		return
	case p.Exp != nil && p.Exp.Op == syntax.OtherParamOps && p.Exp.Word != nil && p.Exp.Word.Lit() == "P":
		c.denyf("%s expands a variable as a prompt, which can run code; print the variable instead", quote(c.text(p)))
		return
	}
	if p.Index != nil && !isAll(p.Index) {
		c.arithm(p.Index)
	}
	if p.Slice != nil {
		c.arithm(p.Slice.Offset)
		if p.Slice.Length != nil {
			c.arithm(p.Slice.Length)
		}
	}
	if p.Repl != nil {
		c.expr(p.Repl.Orig)
		if p.Repl.With != nil {
			c.expr(p.Repl.With)
		}
	}
	if p.Exp != nil && p.Exp.Word != nil {
		c.expr(p.Exp.Word)
	}
}

// test judges a [[ … ]] expression.
func (c *checker) test(e syntax.TestExpr) {
	switch x := e.(type) {
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			c.arithOperand(x.X)
			c.arithOperand(x.Y)
			return
		}
		c.test(x.X)
		c.test(x.Y)
	case *syntax.UnaryTest:
		if x.Op == syntax.TsVarSet {
			w, ok := x.X.(*syntax.Word)
			if lit, isLit := literal(w); !ok || !isLit || !isName(lit) {
				c.denyf("%s tests a variable named by an expression, which can run code; name the variable", quote(c.text(x)))
			}
			return
		}
		c.test(x.X)
	case *syntax.ParenTest:
		c.test(x.X)
	case *syntax.Word:
		c.word(x)
	}
}

// arithOperand judges an operand of [[ a -eq b ]], which bash evaluates as
// arithmetic.
func (c *checker) arithOperand(e syntax.TestExpr) {
	w, ok := e.(*syntax.Word)
	if !ok {
		c.denyf("cannot judge the arithmetic comparison in %s; compare plain words", quote(c.text(e)))
		return
	}
	c.arithWord(w)
}

// decl judges declare, local, export, readonly and typeset.
func (c *checker) decl(x *syntax.DeclClause) {
	variant := x.Variant.Value
	if variant == "nameref" {
		c.denyf("%s makes a variable name another, which can run code; use the variable directly", quote(c.text(x)))
		return
	}
	for _, a := range x.Args {
		if c.reason != "" {
			return
		}
		if a.Naked && a.Name == nil {
			w := c.word(a.Value)
			switch {
			case !w.known:
				c.denyf("%s declares something only known when it runs; write the names and values literally", quote(c.text(x)))
			case strings.HasPrefix(w.text, "-") && (strings.Contains(w.text, "i") || variant != "export" && strings.Contains(w.text, "n")):
				c.denyf("%s makes variables evaluate their values as code (integer or name references); assign plain values", quote(c.text(x)))
			case strings.Contains(w.text, "=("):
				c.denyf("%s assigns an array from quoted text, which bash expands as code; write the assignment unquoted", quote(c.text(x)))
			}
			continue
		}
		c.assign(a)
	}
}

// varState records what a variable may hold.
type varState uint8

const (
	varUnset   varState = iota
	varSafe             // a number
	varNoDash           // a commit id or ref name, which never starts with '-'
	varTainted          // any text, such as a file's content
)

// setVar records an assignment; a variable assigned different kinds of
// value may hold any text.
func (c *checker) setVar(name string, s varState) {
	c.setListed(name, c.nextOrigin)
	c.nextOrigin = nil
	c.ifs = c.ifs || name == "IFS" && !c.emptyValue
	c.emptyValue = false
	switch old := c.vars[name]; {
	case old == varUnset || old == s:
		c.vars[name] = s
	default:
		c.vars[name] = varTainted
	}
}

// sensitiveVars change which programs run, or make them run others.
var sensitiveVars = lazyRegexp(`^(PATH|HOME|ENV|BASH_ENV|SHELLOPTS|BASHOPTS|PS[0-4]|PROMPT_COMMAND|CDPATH|EXECIGNORE|PAGER|MANPAGER|EDITOR|VISUAL|SHELL|BROWSER|TMPDIR|CC|CXX|CPP|FC|AR|LD|GCCGO|PKG_CONFIG|TAR_OPTIONS|GZIP|BZIP2|XZ_OPT|XZ_DEFAULTS|GREP_OPTIONS|AWKPATH|AWKLIBPATH|TEXTDOMAIN|TEXTDOMAINDIR|(GIT|LD|DYLD|XDG|CGO|LESS|NODE|PYTHON|PERL|RUBY|NPM|BASH_FUNC|CLAUDE|RIPGREP|ZSTD|GNUPG|GOFLAGS|GOENV|GOTOOLCHAIN|GOROOT|GOBIN|GOPATH|GOCACHE|GOMODCACHE|GOTMPDIR|GOSSA|GOCOVERDIR|YARN|PNPM|BUN|COREPACK|PYTEST|CARGO|RUST|MAKE|MFLAGS|GNUMAKEFLAGS|JAVA|_JAVA|JDK_JAVA|MAVEN|GRADLE|(?i:npm_config_))\w*)$`)

// assign judges an assignment and records what the variable may hold, for
// arithmetic that later reads it.
func (c *checker) assign(a *syntax.Assign) {
	if a.Name == nil {
		c.denyf("cannot judge %s; write it as plain bash", quote(c.text(a)))
		return
	}
	name := a.Name.Value
	if sensitiveVars().MatchString(name) && name != "CGO_ENABLED" {
		c.denyf("%s sets %s, which changes what programs run or where they write; leave it as it is", quote(c.text(a)), name)
		return
	}
	if a.Index != nil {
		c.arithm(a.Index)
	}
	state := varSafe
	if a.Value != nil {
		state = c.valueState(a.Value)
	}
	if a.Array != nil {
		for _, e := range a.Array.Elems {
			if e.Index != nil {
				c.arithm(e.Index)
			}
			if e.Value != nil && c.valueState(e.Value) == varTainted {
				state = varTainted
			}
		}
	}
	if a.Append {
		state = varTainted
	}
	if a.Array != nil || a.Append || a.Index != nil {
		c.nextOrigin = nil
	}
	c.emptyValue = a.Value == nil || len(a.Value.Parts) == 0 || a.Value.Lit() == "" && isEmptyQuote(a.Value)
	c.setVar(name, state)
}

// valueState judges an assigned value and tells whether it is a number.
func (c *checker) valueState(v *syntax.Word) varState {
	w := c.word(v)
	c.nextOrigin = w.from
	switch {
	case w.known && isNumber(w.text):
		return varSafe
	case len(v.Parts) == 1:
		switch p := v.Parts[0].(type) {
		case *syntax.ArithmExp:
			return varSafe
		case *syntax.CmdSubst:
			if countsOnly(p) {
				return varSafe
			}
			if noDashOutput(p) {
				return varNoDash
			}
		}
	}
	return varTainted
}

// isEmptyQuote reports whether a word is ” or "".
func isEmptyQuote(w *syntax.Word) bool {
	if len(w.Parts) != 1 {
		return false
	}
	switch p := w.Parts[0].(type) {
	case *syntax.SglQuoted:
		return p.Value == "" && !p.Dollar
	case *syntax.DblQuoted:
		return len(p.Parts) == 0 && !p.Dollar
	}
	return false
}

var number = lazyRegexp(`^[-+]?([0-9]+|0[xX][0-9a-fA-F]+)?$`)

func isNumber(s string) bool { return number().MatchString(s) }

var name = lazyRegexp(`^[A-Za-z_][A-Za-z0-9_]*$`)

func isName(s string) bool { return name().MatchString(s) }

// countsOnly reports whether a command substitution prints only a number:
// a pipeline ending in wc -l, -c or -w reading its input, or
// git rev-list --count.
func countsOnly(cs *syntax.CmdSubst) bool {
	if len(cs.Stmts) != 1 {
		return false
	}
	s := cs.Stmts[0]
	if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
		parts := pipeline(b)
		s = parts[len(parts)-1]
	}
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok {
		return false
	}
	args, ok := literals(call)
	if !ok {
		return false
	}
	if args[0] == "wc" && len(args) == 2 {
		return args[1] == "-l" || args[1] == "-c" || args[1] == "-w"
	}
	return len(args) >= 3 && args[0] == "git" && args[1] == "rev-list" && slices.Contains(args[2:], "--count")
}

// An arithRef is a variable read by arithmetic. Bash evaluates the text of
// such a variable as an expression, and an array subscript in that text runs
// command substitutions: x='a[$(cmd)]'; echo $((x)) runs cmd.
type arithRef struct {
	name, part string
	early      bool // read before any assignment
}

// special are the variables bash sets to numbers.
var special = map[string]bool{
	"#": true, "?": true, "$": true, "!": true, "RANDOM": true, "SRANDOM": true, "SECONDS": true,
	"LINENO": true, "BASHPID": true, "PPID": true, "UID": true, "EUID": true, "EPOCHSECONDS": true,
	"OPTIND": true, "COLUMNS": true, "LINES": true, "HISTCMD": true,
}

// arithm judges an arithmetic expression: the substitutions it runs and the
// variables it reads.
func (c *checker) arithm(e syntax.ArithmExpr) {
	switch x := e.(type) {
	case *syntax.BinaryArithm:
		if assignOps[x.Op] {
			if n := arithName(x.X); n != "" {
				if x.Op != syntax.Assgn {
					c.ref(n, x.X)
				}
				c.setVar(n, varSafe)
				if w, ok := x.X.(*syntax.Word); ok {
					c.arithIndex(w)
				}
				c.arithm(x.Y)
				return
			}
		}
		c.arithm(x.X)
		c.arithm(x.Y)
	case *syntax.UnaryArithm:
		if n := arithName(x.X); n != "" && (x.Op == syntax.Inc || x.Op == syntax.Dec) {
			c.setVar(n, varSafe)
		}
		c.arithm(x.X)
	case *syntax.ParenArithm:
		c.arithm(x.X)
	case *syntax.Word:
		if x != nil {
			c.arithWord(x)
		}
	case nil:
	default:
		c.denyf("cannot judge the arithmetic %s; write it as plain bash", quote(c.text(e)))
	}
}

var assignOps = map[syntax.BinAritOperator]bool{
	syntax.Assgn: true, syntax.AddAssgn: true, syntax.SubAssgn: true, syntax.MulAssgn: true,
	syntax.QuoAssgn: true, syntax.RemAssgn: true, syntax.AndAssgn: true, syntax.OrAssgn: true,
	syntax.XorAssgn: true, syntax.ShlAssgn: true, syntax.ShrAssgn: true, syntax.AndBoolAssgn: true,
	syntax.OrBoolAssgn: true, syntax.XorBoolAssgn: true, syntax.PowAssgn: true,
}

// arithName returns the variable an arithmetic assignment sets.
func arithName(e syntax.ArithmExpr) string {
	w, ok := e.(*syntax.Word)
	if !ok || len(w.Parts) != 1 {
		return ""
	}
	switch p := w.Parts[0].(type) {
	case *syntax.Lit:
		if isName(p.Value) {
			return p.Value
		}
	case *syntax.ParamExp:
		if p.Param != nil && !p.Dollar.IsValid() {
			return p.Param.Value
		}
	}
	return ""
}

func (c *checker) arithIndex(w *syntax.Word) {
	if len(w.Parts) == 1 {
		if p, ok := w.Parts[0].(*syntax.ParamExp); ok && p.Index != nil {
			c.arithm(p.Index)
		}
	}
}

// arithWord judges an operand of arithmetic.
func (c *checker) arithWord(w *syntax.Word) {
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			for _, tok := range strings.FieldsFunc(p.Value, func(r rune) bool {
				return !(r == '_' || r == '#' || r == '@' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z')
			}) {
				if tok[0] == '_' || 'a' <= tok[0] && tok[0] <= 'z' || 'A' <= tok[0] && tok[0] <= 'Z' {
					c.ref(tok, w)
				}
			}
			if strings.ContainsAny(p.Value, "$`[]'\"\\") {
				c.denyf("cannot judge the arithmetic operand %s; use numbers and plain variables", quote(c.text(w)))
			}
		case *syntax.ParamExp:
			switch {
			case p.Length && p.Exp == nil && p.Repl == nil && p.Slice == nil:
				c.param(p)
			case plainParam(p) || p.Index != nil && p.Exp == nil && p.Repl == nil && p.Slice == nil && !p.Excl && !p.Length:
				c.ref(p.Param.Value, w)
				c.param(p)
			default:
				c.denyf("cannot judge the expansion %s in arithmetic; use a plain variable", quote(c.text(p)))
			}
		case *syntax.CmdSubst:
			c.subst(p.Stmts)
			if !countsOnly(p) {
				c.denyf("arithmetic evaluates the output of %s, which can run code; compute the number separately", quote(c.text(p)))
			}
		case *syntax.ArithmExp:
			c.arithm(p.X)
		default:
			c.denyf("cannot judge the arithmetic operand %s; use numbers and plain variables", quote(c.text(w)))
		}
	}
}

// ref records a variable read by arithmetic. It must already hold a number
// there, not only later: a loop may read it before assigning it.
func (c *checker) ref(name string, n syntax.Node) {
	c.arith = append(c.arith, arithRef{name: name, part: c.text(n), early: !special[name] && c.vars[name] != varSafe})
}

// finish judges what can only be judged once the whole line is known: the
// variables arithmetic reads must hold numbers.
func (c *checker) finish() {
	c.finishListed()
	if c.ifs && c.fromUsed {
		c.deny("the command assigns IFS and reads files from a list it splits, which IFS could split into other paths, whetstone's key file among them; leave IFS as it is")
	}
	for _, r := range c.arith {
		if c.reason != "" {
			return
		}
		if !r.early && (special[r.name] || c.vars[r.name] == varSafe) {
			continue
		}
		c.denyf("arithmetic reads %s, whose text bash would evaluate as code; assign it a number in the same command", quote(r.part))
	}
	for _, name := range c.noDash {
		if c.vars[name] != varNoDash {
			c.denyf("$%s is used as a commit id but is also assigned other text, which could be an option; use a separate variable", name)
			return
		}
	}
}

// lazyRegexp compiles a pattern on first use: compiling at start-up would
// cost every hook process, also those that never check a command.
func lazyRegexp(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}
