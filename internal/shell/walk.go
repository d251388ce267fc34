package shell

import (
	"fmt"
	"os/exec"
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

	cwd    []string             // where the next command may run; nil when unknown
	noDash []string             // variables read as never starting with '-', checked at the end
	lastCd []string             // where a cd statement just went, for cd DIR && …
	cdRan  bool                 // a cd ran since this was reset, to tell functions that change directory
	loops  map[syntax.Node]bool // loops whose bodies may change directory
	funcs  map[string]bool      // declared functions, and whether they change directory
	vars   map[string]varState  // variables assigned in the line
	arith  []arithRef           // variables read as arithmetic, judged at the end

	resolved map[string]string // resolved paths

	// What computed words may name, for the programs that read files
	// (computed.go).
	stdin, stdout *origin                      // the files listed on standard input and output, if that is all they carry
	substs        map[*syntax.CmdSubst]*origin // command substitutions that list the project's files
	listed        map[string]*origin           // variables holding such lists; nil once assigned anything else
	listedUses    []string                     // variables read as such lists, checked at the end
	nextOrigin    *origin                      // the origin of the value the next setVar records
	ifs           bool                         // IFS is assigned: a list may split anywhere
	fromUsed      bool                         // a computed word was proven by its origin
	globstar      bool                         // shopt -s globstar: ** reaches any depth
	emptyValue    bool                         // the value the next setVar records is empty
	listChecked   bool                         // listable has looked through the project
	listWhy       string                       // what it found

	// What the gate needs besides the verdict (Verdict).
	walk, follow     string          // the first part that walks a tree, and that follows its links
	walked           int             // entries linksOut looked at
	local, localName string          // the first program PATH finds where an agent could write, and its name
	looked           map[string]bool // names lookPath has looked up
	pathDirs         []pathDir       // PATH's entries that matter (searchPath)
	pathDone         bool
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
	defer func(in *origin) { c.stdin = in }(c.stdin)
	if readsStdin(s.Redirs) {
		c.stdin = nil
	}
	if s.Background || s.Coprocess || s.Disown {
		defer c.keepCwd()() // a background job runs in a subshell
	}
	if _, ok := s.Cmd.(*syntax.FuncDecl); ok && len(s.Redirs) > 0 {
		defer c.keepCwd()() // f() {…} > out applies where f is called
		c.cwd = nil
	}
	for _, r := range s.Redirs {
		c.redirect(r)
	}
	c.stdout = nil
	if s.Cmd != nil && c.reason == "" {
		c.command(s.Cmd)
	}
	if !plainOutput(s) {
		c.stdout = nil
	}
	if s.Negated {
		c.lastCd = nil
	}
}

// readsStdin reports whether redirections give a command another standard
// input.
func readsStdin(rs []*syntax.Redirect) bool {
	for _, r := range rs {
		switch r.Op {
		case syntax.RdrIn, syntax.RdrInOut, syntax.DplIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			if r.N == nil || r.N.Value == "0" {
				return true
			}
		}
	}
	return false
}

// plainOutput reports whether a statement's standard output is only what
// its simple command or pipeline prints: no redirection but 2>/dev/null.
func plainOutput(s *syntax.Stmt) bool {
	switch x := s.Cmd.(type) {
	case *syntax.CallExpr:
	case *syntax.BinaryCmd:
		if x.Op != syntax.Pipe {
			return false
		}
	default:
		return false
	}
	for _, r := range s.Redirs {
		if !(r.Op == syntax.RdrOut && r.N != nil && r.N.Value == "2" && r.Word.Lit() == "/dev/null") {
			return false
		}
	}
	return !s.Background && !s.Coprocess
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
		in := c.stdin
		defer func() { c.stdin = in }()
		for i, s := range parts {
			c.cwd = start
			c.stmt(s)
			c.stdin = c.stdout
			if x.Op == syntax.PipeAll {
				c.stdin = nil // standard error too
			}
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
	c.stdout = nil
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
		c.nextOrigin = c.listOrigin(items)
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
	if shadows(name) {
		c.denyf("%s declares a function named like the program %q, which may run instead of it; give it another name", quote(c.text(x)), name)
		return
	}
	saved, savedCd := c.cwd, c.cdRan
	c.cwd, c.cdRan = nil, false
	c.funcs[name] = true // a recursive call changes directory as the body does
	c.stmt(x.Body)
	c.funcs[name] = c.cdRan
	c.cwd, c.cdRan = saved, savedCd || c.cdRan
}

// shadows reports whether a function name could also run a program: one
// whetstone knows, or one on the PATH. Where the function is not defined,
// as after a subshell declared it, the program runs instead.
func shadows(name string) bool {
	if strings.Contains(name, "/") {
		return true
	}
	if _, ok := programs[name]; ok {
		return true
	}
	if _, ok := refused[name]; ok {
		return true
	}
	_, err := exec.LookPath(name)
	return err == nil
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
	if w.known && (strings.HasPrefix(w.text, "/dev/tcp/") || strings.HasPrefix(w.text, "/dev/udp/")) {
		c.denyf("redirection %s opens a network connection; %s", quote(c.text(r)), c.instead())
		return
	}
	switch r.Op {
	case syntax.RdrIn:
		c.readsFile("redirection "+quote(c.text(r)), w, false)
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
	if w, ok := n.(*syntax.Word); ok && (w == nil || plainWord(w)) {
		return // the common case, not worth a walk
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		if c.reason != "" {
			return false
		}
		switch x := n.(type) {
		case *syntax.CmdSubst:
			c.subst(x.Stmts)
			if len(x.Stmts) == 1 {
				c.substOrigin(x, c.stdout)
			}
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

// plainWord reports whether w holds only literal text and single quotes.
func plainWord(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		default:
			return false
		}
	}
	return true
}

// subst judges the commands of a substitution, which run in a subshell.
func (c *checker) subst(list []*syntax.Stmt) {
	defer c.keepCwd()()
	c.stdout = nil
	c.stmts(list)
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

// dirChangingLoops finds the loops of a script whose bodies may change the
// working directory: they run cd, pushd, popd, eval, or a name that may be a
// function.
func dirChangingLoops(f *syntax.File, src string) map[syntax.Node]bool {
	marks := map[syntax.Node]bool{}
	if !strings.Contains(src, "for") && !strings.Contains(src, "while") && !strings.Contains(src, "until") && !strings.Contains(src, "select") {
		return marks // no loops: spare the walk
	}
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
