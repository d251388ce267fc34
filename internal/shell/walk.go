package shell

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// A checker judges one command line. The first denial it finds is kept in
// reason and ends the walk.
type checker struct {
	p                Policy
	root, temp, home string
	verify           [][]string
	protected        []string // lower-cased
	reason           string

	src    string // the script being walked, for quoting its parts
	depth  int    // inline shells, eval and wrappers around it
	budget int    // bytes of inline scripts that may still be parsed
	fields int    // words brace expansion may still produce

	cwd   []string                // where the next command may run; nil when unknown
	lastCd []string               // where a cd statement just went, for cd DIR && …
	cdRan bool                    // a cd ran since this was reset, to tell functions that change directory
	loops map[syntax.Node]bool    // loops whose bodies may change directory
	funcs map[string]bool         // declared functions, and whether they change directory
	vars  map[string]varState     // variables assigned in the line
	arith []arithRef              // variables read as arithmetic, judged at the end

	resolved map[string]string // resolved paths
}

func (c *checker) deny(reason string) {
	if c.reason == "" {
		c.reason = reason
	}
}

func (c *checker) denyf(format string, args ...any) {
	c.deny(fmt.Sprintf(format, args...))
}

// text returns the source of a node of the script being walked.
func (c *checker) text(n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if 0 <= start && start <= end && end <= len(c.src) {
		return c.src[start:end]
	}
	return ""
}

func (c *checker) stmts(list []*syntax.Stmt) {
	for _, s := range list {
		if c.reason != "" {
			return
		}
		c.stmt(s)
	}
}

func (c *checker) stmt(s *syntax.Stmt) {
	c.lastCd = nil
	if s.Background || s.Coprocess || s.Disown {
		defer c.keepCwd()() // a background job runs in a subshell
	}
	for _, r := range s.Redirs {
		c.redirect(r)
	}
	if s.Cmd != nil && c.reason == "" {
		c.command(s.Cmd)
	}
	if s.Negated {
		c.lastCd = nil
	}
}

// keepCwd saves the working directory and returns the function that puts it
// back, for the parts of a line that run in a subshell.
func (c *checker) keepCwd() func() {
	saved := c.cwd
	return func() { c.cwd, c.lastCd = saved, nil }
}

func (c *checker) command(cmd syntax.Command) {
	switch x := cmd.(type) {
	case *syntax.CallExpr:
		c.call(x)
	case *syntax.BinaryCmd:
		c.binary(x)
	case *syntax.Block:
		c.stmts(x.Stmts)
	case *syntax.Subshell:
		defer c.keepCwd()()
		c.stmts(x.Stmts)
	case *syntax.IfClause:
		c.ifClause(x)
	case *syntax.WhileClause:
		c.loop(x, func() {
			c.stmts(x.Cond)
			c.stmts(x.Do)
		})
	case *syntax.ForClause:
		c.loop(x, func() {
			c.loopHeader(x)
			c.stmts(x.Do)
		})
	case *syntax.CaseClause:
		c.word(x.Word)
		start, after := c.cwd, c.cwd
		for _, item := range x.Items {
			c.cwd = start
			for _, p := range item.Patterns {
				c.expr(p)
			}
			c.stmts(item.Stmts)
			after = union(after, c.cwd)
		}
		c.cwd = after
	case *syntax.FuncDecl:
		c.funcDecl(x)
	case *syntax.ArithmCmd:
		c.arithm(x.X)
	case *syntax.LetClause:
		for _, e := range x.Exprs {
			c.arithm(e)
		}
	case *syntax.TestClause:
		c.test(x.X)
	case *syntax.DeclClause:
		c.decl(x)
	case *syntax.TimeClause:
		if x.Stmt != nil {
			c.stmt(x.Stmt)
		}
	case *syntax.CoprocClause:
		if x.Name != nil {
			c.expr(x.Name)
		}
		defer c.keepCwd()()
		c.stmt(x.Stmt)
	default:
		c.denyf("cannot judge %s; write it as plain bash", quote(c.text(cmd)))
	}
}

// binary judges lists and pipelines. Long chains are walked in a loop, not
// by recursion.
func (c *checker) binary(x *syntax.BinaryCmd) {
	if x.Op == syntax.Pipe || x.Op == syntax.PipeAll {
		parts := pipeline(x)
		start := c.cwd
		for i, s := range parts {
			c.cwd = start
			c.stmt(s)
			if i == len(parts)-1 {
				c.cwd = union(start, c.cwd) // the last part may run in this shell
			}
		}
		c.lastCd = nil
		return
	}
	// X && Y || Z…: every part after the first may not run.
	var ops []syntax.BinCmdOperator
	var rights []*syntax.Stmt
	left := x
	for {
		ops = append(ops, left.Op)
		rights = append(rights, left.Y)
		next, ok := left.X.Cmd.(*syntax.BinaryCmd)
		if !ok || plainStmt(left.X) == nil || (next.Op != syntax.AndStmt && next.Op != syntax.OrStmt) {
			break
		}
		left = next
	}
	c.stmt(left.X)
	for i := len(rights) - 1; i >= 0 && c.reason == ""; i-- {
		before := c.cwd
		if ops[i] == syntax.AndStmt && c.lastCd != nil {
			c.cwd = c.lastCd // cd DIR && …: runs only once in DIR
		}
		c.stmt(rights[i])
		c.cwd = union(before, c.cwd)
	}
}

// plainStmt returns s when nothing but its command matters: no redirection,
// negation or background.
func plainStmt(s *syntax.Stmt) *syntax.Stmt {
	if s == nil || len(s.Redirs) > 0 || s.Negated || s.Background || s.Coprocess || s.Disown {
		return nil
	}
	return s
}

// pipeline flattens a | b | c into its parts.
func pipeline(x *syntax.BinaryCmd) []*syntax.Stmt {
	var out []*syntax.Stmt
	stack := []*syntax.Stmt{x.Y, x.X}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && plainStmt(s) != nil && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
			stack = append(stack, b.Y, b.X)
			continue
		}
		out = append(out, s)
	}
	return out
}

func (c *checker) ifClause(x *syntax.IfClause) {
	var after []string
	first := true
	for ; x != nil && c.reason == ""; x = x.Else {
		c.stmts(x.Cond)
		branchStart := c.cwd
		c.stmts(x.Then)
		if first {
			after = c.cwd
			first = false
		} else {
			after = union(after, c.cwd)
		}
		c.cwd = branchStart
		if x.Else == nil && len(x.Cond) > 0 {
			after = union(after, branchStart) // no branch ran
		}
	}
	c.cwd = after
}

// loop walks a loop once. A loop whose body may change directory could run
// its commands anywhere, so the directory is unknown inside and after it.
func (c *checker) loop(n syntax.Node, body func()) {
	if c.loops[n] {
		c.cwd = nil
	}
	body()
	if c.loops[n] {
		c.cwd = nil
	}
}

func (c *checker) loopHeader(x *syntax.ForClause) {
	switch l := x.Loop.(type) {
	case *syntax.WordIter:
		items := c.words(l.Items)
		state := varSafe
		for _, it := range items {
			if !it.known || !isNumber(it.text) {
				state = varTainted
			}
		}
		if !l.InPos.IsValid() {
			state = varTainted // for x; do: the positional parameters
		}
		c.setVar(l.Name.Value, state)
	case *syntax.CStyleLoop:
		for _, e := range []syntax.ArithmExpr{l.Init, l.Cond, l.Post} {
			if e != nil {
				c.arithm(e)
			}
		}
	}
}

// funcDecl judges a function's body where it is declared; calling the
// function later is then allowed. The body may run anywhere, so it is judged
// without a known working directory.
func (c *checker) funcDecl(x *syntax.FuncDecl) {
	if x.Name == nil || len(x.Names) > 0 {
		c.denyf("cannot judge %s; declare one function at a time", quote(c.text(x)))
		return
	}
	name := x.Name.Value
	if _, ok := programs[name]; ok {
		c.denyf("%s declares a function named like the program %q; give it another name", quote(c.text(x)), name)
		return
	}
	saved, savedCd := c.cwd, c.cdRan
	c.cwd, c.cdRan = nil, false
	c.funcs[name] = true // a recursive call changes directory as the body does
	c.stmt(x.Body)
	c.funcs[name] = c.cdRan
	c.cwd, c.cdRan = saved, savedCd || c.cdRan
}

// redirect judges a redirection: where output goes, and the substitutions
// in its word or here-document.
func (c *checker) redirect(r *syntax.Redirect) {
	if r.N != nil && strings.HasPrefix(r.N.Value, "{") {
		c.setVar(strings.Trim(r.N.Value, "{}"), varSafe)
	}
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		if r.Hdoc != nil {
			c.expr(r.Hdoc)
		}
		return
	case syntax.WordHdoc:
		c.word(r.Word)
		return
	}
	w := c.word(r.Word)
	if c.reason != "" {
		return
	}
	switch r.Op {
	case syntax.RdrIn:
		return
	case syntax.DplIn, syntax.DplOut:
		if w.known && isDup(w.text) {
			return
		}
		if r.Op == syntax.DplIn {
			c.denyf("redirection %s duplicates an unknown descriptor; name the descriptor", quote(c.text(r)))
			return
		}
	}
	c.writes(w, "redirection "+quote(c.text(r)))
}

// isDup reports whether the target of <& or >& is a descriptor, not a file.
func isDup(s string) bool {
	s = strings.TrimSuffix(s, "-")
	if s == "" {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// expr judges what an expression runs: the command and process
// substitutions inside it, its arithmetic and its parameter expansions.
func (c *checker) expr(n syntax.Node) {
	syntax.Walk(n, func(n syntax.Node) bool {
		if c.reason != "" {
			return false
		}
		switch x := n.(type) {
		case *syntax.CmdSubst:
			c.subst(x.Stmts)
			return false
		case *syntax.ProcSubst:
			c.subst(x.Stmts)
			return false
		case *syntax.ArithmExp:
			c.arithm(x.X)
			return false
		case *syntax.ParamExp:
			c.param(x)
			return false
		}
		return true
	})
}

// subst judges the commands of a substitution, which run in a subshell.
func (c *checker) subst(list []*syntax.Stmt) {
	defer c.keepCwd()()
	c.stmts(list)
}

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
			}
			continue
		}
		c.assign(a)
	}
}

// call judges a simple command: its assignments, its words, and the program
// they run.
func (c *checker) call(x *syntax.CallExpr) {
	for _, a := range x.Assigns {
		c.assign(a)
	}
	args := c.words(x.Args)
	if c.reason != "" || len(args) == 0 {
		return
	}
	c.run(args)
}

// varState records what a variable may hold.
type varState uint8

const (
	varUnset   varState = iota
	varSafe             // a number
	varTainted          // any text, such as a file's content
)

func (c *checker) setVar(name string, s varState) {
	if c.vars[name] != varTainted {
		c.vars[name] = s
	}
}

// sensitiveVars change which programs run, or make them run others.
var sensitiveVars = regexp.MustCompile(`^(PATH|HOME|ENV|BASH_ENV|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|CDPATH|PAGER|MANPAGER|EDITOR|VISUAL|SHELL|BROWSER|TMPDIR|CC|CXX|CPP|FC|AR|LD|PKG_CONFIG|(GIT|LD|DYLD|XDG|CGO|LESS|NODE|PYTHON|PERL|RUBY|NPM|BASH_FUNC|CLAUDE|GOFLAGS|GOENV|GOTOOLCHAIN|GOROOT|GOBIN|GOPATH|GOCACHE|GOMODCACHE|GOTMPDIR|GOSSA|GOCOVERDIR)\w*)$`)

// assign judges an assignment and records what the variable may hold, for
// arithmetic that later reads it.
func (c *checker) assign(a *syntax.Assign) {
	if a.Name == nil {
		c.denyf("cannot judge %s; write it as plain bash", quote(c.text(a)))
		return
	}
	name := a.Name.Value
	if sensitiveVars.MatchString(name) && name != "CGO_ENABLED" {
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
	c.setVar(name, state)
}

// valueState judges an assigned value and tells whether it is a number.
func (c *checker) valueState(v *syntax.Word) varState {
	w := c.word(v)
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
		}
	}
	return varTainted
}

var number = regexp.MustCompile(`^[-+]?([0-9]+|0[xX][0-9a-fA-F]+)?$`)

func isNumber(s string) bool { return number.MatchString(s) }

var name = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func isName(s string) bool { return name.MatchString(s) }

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
	if !ok || len(call.Args) == 0 {
		return false
	}
	var args []string
	for _, a := range call.Args {
		lit, ok := literal(a)
		if !ok {
			return false
		}
		args = append(args, lit)
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
		c.arithWord(x)
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
			for _, tok := range strings.FieldsFunc(p.Value, func(r rune) bool { return !(r == '_' || r == '#' || r == '@' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') }) {
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

func (c *checker) ref(name string, n syntax.Node) {
	c.arith = append(c.arith, arithRef{name: name, part: c.text(n)})
}

// finish judges what can only be judged once the whole line is known: the
// variables arithmetic reads must hold numbers.
func (c *checker) finish() {
	for _, r := range c.arith {
		if c.reason != "" {
			return
		}
		if special[r.name] || c.vars[r.name] == varSafe {
			continue
		}
		c.denyf("arithmetic reads %s, whose text bash would evaluate as code; assign it a number in the same command", quote(r.part))
	}
}

// dirChangingLoops finds the loops of a script whose bodies may change the
// working directory: they run cd, pushd, popd, eval, or a name that may be a
// function.
func dirChangingLoops(f *syntax.File) map[syntax.Node]bool {
	marks := map[syntax.Node]bool{}
	var open []syntax.Node
	var stack []syntax.Node
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if len(open) > 0 && open[len(open)-1] == top {
				open = open[:len(open)-1]
				if marks[top] && len(open) > 0 {
					marks[open[len(open)-1]] = true
				}
			}
			return true
		}
		stack = append(stack, n)
		switch x := n.(type) {
		case *syntax.WhileClause, *syntax.ForClause:
			open = append(open, n)
		case *syntax.CallExpr:
			if len(open) > 0 && len(x.Args) > 0 && changesDir(x.Args[0]) {
				marks[open[len(open)-1]] = true
			}
		}
		return true
	})
	return marks
}

// changesDir reports whether a command word may change the working
// directory of the shell that runs it.
func changesDir(w *syntax.Word) bool {
	lit, ok := literal(w)
	if !ok {
		return true
	}
	switch lit {
	case "cd", "pushd", "popd", "eval", "builtin", "command", "exec":
		return true
	}
	_, known := programs[lit]
	return !known
}

// union returns the directories either of a and b holds; nil, unknown,
// absorbs the rest.
func union(a, b []string) []string {
	if a == nil || b == nil {
		return nil
	}
	out := append([]string(nil), a...)
	for _, d := range b {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	if len(out) > 8 {
		return nil
	}
	return out
}
