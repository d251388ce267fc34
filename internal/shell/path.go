package shell

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// This file decides what a path names: whether it is whetstone's key, a part
// of the project that belongs to git or whetstone, or a place an agent may
// write to.

// devices are the files any agent may write to.
var devices = map[string]bool{
	"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/tty": true,
	"/dev/fd/1": true, "/dev/fd/2": true,
}

// paths returns the absolute paths p may name, one for each directory the
// command may run in; ok is false for a relative path when that directory
// is unknown.
func (c *checker) paths(p string) (out []string, ok bool) {
	if filepath.IsAbs(p) {
		return []string{p}, true
	}
	if c.cwd == nil {
		return nil, false
	}
	for _, d := range c.cwd {
		out = append(out, strings.TrimSuffix(d, "/")+"/"+p) // not cleaned: d/link/.. is not d
	}
	return out, true
}

// real returns the absolute path p with the symbolic links along its
// existing prefix followed, as the kernel would when opening it. Past the
// first missing component the rest is taken as written.
func (c *checker) real(p string) string {
	if r, ok := c.resolved[p]; ok {
		return r
	}
	parts := strings.Split(p, "/")
	cur, links, missing := "/", 0, false
	for i := 0; i < len(parts); i++ {
		part := parts[i]
		switch part {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, part)
		if missing {
			cur = next
			continue
		}
		fi, err := os.Lstat(next)
		if err != nil {
			missing = true
			cur = next
			continue
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		target, err := os.Readlink(next)
		if links++; err != nil || links > 40 {
			cur, missing = next, true
			continue
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		parts = append(strings.Split(target, "/"), parts[i+1:]...)
		i = -1
	}
	c.resolved[p] = cur
	return cur
}

// under reports whether p is dir or inside it, ignoring case.
func under(p, dir string) bool {
	p, dir = strings.ToLower(p), strings.ToLower(dir)
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// inside reports whether p is strictly inside dir, case and all.
func inside(p, dir string) bool {
	return dir != "" && strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// protect refuses a word that names a protected path: by its text, by the
// path it resolves to, or, for a word only known when the command runs, by
// a pattern its known parts could complete to.
func (c *checker) protect(w word) {
	if len(c.protected) == 0 || c.reason != "" {
		return
	}
	if throughProc(w.text) {
		c.denyf("%s reaches files through /proc, where whetstone cannot tell what it names; name the file directly", quote(w.src))
		return
	}
	if !w.known {
		if c.mayName(w) {
			c.deny(keyReason(w.src))
		}
		return
	}
	cands := []string{w.text}
	if _, v, ok := strings.Cut(w.text, "="); ok {
		cands = append(cands, v)
	}
	for _, p := range cands {
		if c.namesKey(p) {
			c.deny(keyReason(w.src))
			return
		}
	}
}

// throughProc reports whether a path goes through another process's view of
// the file system, such as /proc/self/root/… or /proc/*/cwd/….
func throughProc(p string) bool {
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return false
	}
	_, rest, _ = strings.Cut(rest, "/")
	for _, via := range []string{"root", "cwd", "fd", "map_files", "task"} {
		if rest == via || strings.HasPrefix(rest, via+"/") {
			return true
		}
	}
	return false
}

// namesKey reports whether the literal path p names a protected path or a
// path inside one.
func (c *checker) namesKey(p string) bool {
	if p == "" {
		return false
	}
	if strings.HasPrefix(p, "~/") && c.home != "" {
		p = c.home + p[1:]
	}
	lower := strings.ToLower(p)
	for _, q := range c.protected {
		if strings.Contains(lower, q) {
			return true
		}
	}
	paths, ok := c.paths(p)
	if !ok {
		rel := filepath.Clean(lower)
		for strings.HasPrefix(rel, "../") {
			rel = rel[3:]
		}
		for _, q := range c.protected {
			if strings.HasSuffix(q, "/"+rel) {
				return true
			}
		}
		return false
	}
	for _, a := range paths {
		if c.isProtected(filepath.Clean(a)) || c.isProtected(c.real(a)) {
			return true
		}
	}
	return false
}

func (c *checker) isProtected(p string) bool {
	lp := strings.ToLower(p)
	for _, q := range c.protected { // lower-cased already
		if lp == q || strings.HasPrefix(lp, q) && lp[len(q)] == '/' {
			return true
		}
	}
	return false
}

// protectTree refuses a path that holds a protected path, for programs that
// read whole trees, such as grep -r.
func (c *checker) protectTree(w word) {
	if len(c.protected) == 0 || c.reason != "" || !w.known {
		return
	}
	paths, ok := c.paths(w.text)
	if !ok {
		c.denyf("%s reads a tree whose place whetstone cannot tell after a cd; name the directory from the project root", quote(w.src))
		return
	}
	for _, a := range paths {
		r := strings.ToLower(c.real(a))
		for _, q := range c.protected {
			if r == "/" || strings.HasPrefix(q, r+"/") {
				c.deny(fmt.Sprintf("%s holds whetstone's key file, which may not be read or named by any agent; search inside the project instead", quote(w.src)))
				return
			}
		}
	}
}

// mayName reports whether a word only known when the command runs could
// name a protected path: its known parts, with the unknown ones as wildcards,
// match one. A word whose known parts are only slashes and dots, such as
// "$dir/$file", is let through: it says nothing about where it points.
func (c *checker) mayName(w word) bool {
	dynamic, telling := false, false
	for _, s := range w.segs {
		switch s.kind {
		case segAny, segNoDash:
			dynamic = true
		default:
			if strings.Trim(s.text, "/.") != "" {
				telling = true
			}
		}
	}
	if dynamic && !telling {
		return false
	}
	segs := w.segs
	if len(segs) > 0 && segs[0].kind == segLit && strings.HasPrefix(segs[0].text, "~/") && c.home != "" {
		segs = append([]seg{{text: c.home + segs[0].text[1:]}}, segs[1:]...)
	}
	var prefixes []string
	switch {
	case len(segs) > 0 && segs[0].kind != segAny && segs[0].kind != segNoDash && strings.HasPrefix(segs[0].text, "/"):
		prefixes = []string{""}
	case len(segs) > 0 && (segs[0].kind == segAny || segs[0].kind == segNoDash):
		prefixes = []string{""}
	case c.cwd == nil:
		segs = append([]seg{{kind: segAny}, {text: "/"}}, segs...)
		prefixes = []string{""}
	default:
		prefixes = c.cwd
	}
	for _, pre := range prefixes {
		pat := segs
		if pre != "" {
			pat = append([]seg{{text: pre + "/"}}, segs...)
		}
		pat = c.realPrefix(pat)
		for _, q := range c.protected {
			if matches(pat, q) {
				return true
			}
		}
	}
	return false
}

// realPrefix resolves the directory that a pattern's leading known text
// names, so that a link to a protected directory is seen through.
func (c *checker) realPrefix(pat []seg) []seg {
	n := 0
	var b strings.Builder
	for n < len(pat) && pat[n].kind == segLit {
		b.WriteString(pat[n].text)
		n++
	}
	lit := b.String()
	if n == 0 || !strings.HasPrefix(lit, "/") {
		return pat
	}
	i := strings.LastIndexByte(lit, '/')
	dir := c.real(lit[:i+1])
	return append([]seg{{text: strings.TrimSuffix(dir, "/") + lit[i:]}}, pat[n:]...)
}

// matches reports whether the pattern pat can produce s, ignoring case. An
// unknown part matches any text, a glob's * and ? any text without a slash.
func matches(pat []seg, s string) bool {
	type tok struct {
		ch   byte
		kind byte // 'c' character, '?' one non-slash, '*' non-slash run, 'A' any run
	}
	var toks []tok
	for _, p := range pat {
		t := strings.ToLower(p.text)
		switch p.kind {
		case segAny, segNoDash:
			toks = append(toks, tok{kind: 'A'})
		case segGlob:
			for i := 0; i < len(t); i++ {
				switch t[i] {
				case '*':
					toks = append(toks, tok{kind: '*'})
				case '?':
					toks = append(toks, tok{kind: '?'})
				case '[':
					if j := strings.IndexByte(t[i+1:], ']'); j >= 0 {
						i += j + 1
					}
					toks = append(toks, tok{kind: '?'})
				default:
					toks = append(toks, tok{ch: t[i], kind: 'c'})
				}
			}
		default:
			for i := 0; i < len(t); i++ {
				toks = append(toks, tok{ch: t[i], kind: 'c'})
			}
		}
	}
	s = strings.ToLower(s)
	// can[j]: the tokens so far can produce s[:j].
	can := make([]bool, len(s)+1)
	can[0] = true
	for _, t := range toks {
		next := make([]bool, len(s)+1)
		for j := 0; j <= len(s); j++ {
			switch t.kind {
			case 'c':
				next[j] = j > 0 && can[j-1] && s[j-1] == t.ch
			case '?':
				next[j] = j > 0 && can[j-1] && s[j-1] != '/'
			case '*':
				next[j] = can[j] || j > 0 && next[j-1] && s[j-1] != '/'
			case 'A':
				next[j] = can[j] || j > 0 && next[j-1]
			}
		}
		can = next
	}
	return can[len(s)]
}

// writes refuses to let a command write to the path w unless the agent may
// write there. what names the part of the command that writes, for the
// reason.
func (c *checker) writes(w word, what string) {
	if c.reason != "" {
		return
	}
	if !w.known {
		c.denyf("%s writes to %s, a path only known when it runs; %s", what, quote(w.src), c.instead())
		return
	}
	if devices[w.text] {
		return
	}
	paths, ok := c.paths(w.text)
	if !ok {
		c.denyf("%s writes to the relative path %s from a directory whetstone cannot tell (after a cd to an unknown place, or in a function body); use an absolute path", what, quote(w.src))
		return
	}
	for _, p := range paths {
		if r := c.writable(p); r != "" {
			c.denyf("%s %s", what, r)
			return
		}
	}
}

// writable returns why the agent may not write to the absolute path p, or "".
func (c *checker) writable(p string) string {
	lexical, real := filepath.Clean(p), c.real(p)
	for _, x := range []string{lexical, real} {
		if c.isProtected(x) {
			return "writes to whetstone's key file, which may not be read or named by any agent"
		}
		if part := c.reserved(x); part != "" {
			return fmt.Sprintf("writes under %s, which belongs to %s; no agent may change .git, .whetstone or whetstone.json", part, map[bool]string{true: "git", false: "whetstone"}[part == ".git"])
		}
	}
	switch {
	case c.root != "" && under(c.root, real):
		even := ""
		if c.temp != "" && under(real, c.temp) {
			even = ", even under " + c.temp
		}
		return fmt.Sprintf("writes to %s, which is or holds the project; no agent may move, replace or remove the project%s", real, even)
	case inside(real, c.root):
		if c.p.Mode == Fixer {
			return ""
		}
		return fmt.Sprintf("writes to %s in the project; read-only agents may write only to /dev/null or under %s, so %s", c.rel(real), c.tempName(), c.instead())
	case inside(real, c.temp):
		return ""
	case c.p.Mode == Fixer:
		return fmt.Sprintf("writes to %s, outside the project; the fixer may change files only inside the project and under %s", real, c.tempName())
	}
	return fmt.Sprintf("writes to %s; read-only agents may write only to /dev/null or under %s, so %s", real, c.tempName(), c.instead())
}

// reserved returns the part of the project that p falls in and that no
// agent may change: .git (any repository's), .whetstone or whetstone.json.
func (c *checker) reserved(p string) string {
	if c.root == "" || !under(p, c.root) {
		return ""
	}
	rel := strings.TrimPrefix(strings.ToLower(p)[len(strings.ToLower(c.root)):], "/")
	if rel == "whetstone.json" {
		return "whetstone.json"
	}
	for _, part := range strings.Split(rel, "/") {
		if part == ".git" || part == ".whetstone" {
			return part
		}
	}
	return ""
}

// rel returns p relative to the project root, for reasons.
func (c *checker) rel(p string) string {
	if r, err := filepath.Rel(c.root, p); err == nil {
		return r
	}
	return p
}

func (c *checker) tempName() string {
	if c.temp == "" {
		return "the temporary directory"
	}
	return c.temp
}

// instead says what an agent of this mode should do instead of what was
// refused.
func (c *checker) instead() string {
	if c.p.Mode == Fixer {
		return "make the change with the Edit tool instead"
	}
	return "describe what you would check or change in your report instead"
}
