package shell

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// This file keeps whetstone's key out of reach of the programs that read
// files. A file operand, a recursive search root, a copy's source, a file
// redirected to standard input: each must be proven not to name the key,
// its directory, or (for a program that reads whole trees) a directory that
// holds them. A literal path is judged after following links. A glob is
// expanded now, each match judged. A word only known when the command runs
// is proven only when it comes from a command whose output lists files of
// the project (git ls-files, git diff --name-only, git grep -l, rg -l,
// grep -rl, find or ls inside the project, through sort, head and the like)
// and is read from the same directory; anything else is refused.

// An origin says that a value only known when the command runs lists paths
// inside the project, relative to cwd.
type origin struct {
	cwd  []string
	name string // the variable that holds the list, if any
}

// contentReaders are the programs that print, compare or hash the files
// they are given, with the options that take a value. Programs that only
// look at names and sizes (ls, stat, du, find) are not among them.
var contentReaders = map[string]spec{
	"cat": {}, "tac": {}, "head": {short: "nc"}, "tail": {short: "ncs"}, "wc": {}, "nl": {short: "bdfhilnsvw"},
	"rev": {}, "cut": {short: "bcdf"}, "fold": {short: "w"}, "fmt": {short: "pw"}, "pr": {short: "hlwoN"},
	"column": {short: "stcoNWEHRd"}, "paste": {short: "d"}, "join": {short: "aejot12"}, "comm": {}, "expand": {short: "t"},
	"unexpand": {short: "t"}, "od": {short: "AjNtw"}, "hexdump": {short: "enfs"}, "base64": {short: "w"}, "base32": {short: "w"},
	"md5sum": {}, "sha1sum": {}, "sha224sum": {}, "sha256sum": {}, "sha384sum": {}, "sha512sum": {}, "b2sum": {short: "l"},
	"cksum": {short: "a"}, "sum": {}, "cmp": {short: "in"}, "strings": {short: "ntTe"}, "tsort": {},
	"zcat": {}, "bzcat": {}, "xzcat": {}, "gzip": {short: "S"}, "gunzip": {short: "S"}, "bzip2": {}, "bunzip2": {},
	"xz": {}, "unxz": {}, "uniq": {short: "fsw"}, "xxd": {short: "cglnosR"}, "sort": {short: "kotST"},
	"shuf": {short: "ino"}, "iconv": {short: "fto"}, "gofmt": {short: "r"}, "goimports": {},
	"diff":      {short: "CDFIUWSxX", long: []string{"from-file", "to-file", "exclude-from", "label", "unified", "context"}},
	"colordiff": {short: "CDFIUWSxX"}, "tar": {}, "unzip": {},
}

// readers returns the words a call reads as files, and whether it reads
// them as whole trees. ok is false for a program that reads no file.
func (c *checker) readers(x *call) (files []word, recursive, ok bool) {
	switch x.name {
	case "grep", "egrep", "fgrep":
		opts, operands, _ := parse(x.args, spec{short: "efmABCdD", long: []string{"regexp", "file", "max-count", "after-context", "before-context", "context", "directories", "devices", "label", "include", "exclude", "exclude-from", "exclude-dir", "binary-files", "group-separator"}})
		pattern := true
		for _, o := range opts {
			switch {
			case o.is("-r", "-R", "--recursive", "--dereference-recursive"), o.is("-d", "--directories") && o.value.text == "recurse":
				recursive = true
			case o.is("-f", "--file", "--exclude-from"):
				files = append(files, o.value)
				pattern = false
			case o.is("-e", "--regexp"):
				pattern = false
			}
		}
		if pattern && len(operands) > 0 {
			operands = operands[1:]
		}
		if recursive && len(operands) == 0 {
			operands = []word{dot()}
		}
		return append(files, operands...), recursive, true
	case "rg":
		opts, operands, _ := parse(x.args, spec{short: "efgtTmABCMjEr", long: []string{"regexp", "file", "glob", "iglob", "type", "type-not", "type-add", "type-clear", "max-count", "after-context", "before-context", "context", "max-columns", "threads", "encoding", "replace", "max-depth", "max-filesize", "colors", "color", "path-separator", "sort", "sortr", "pre-glob", "context-separator", "field-match-separator", "field-context-separator", "dfa-size-limit", "regex-size-limit", "ignore-file", "engine", "pre", "hostname-bin"}})
		pattern := true
		for _, o := range opts {
			switch {
			case o.is("-f", "--file", "--ignore-file"):
				files = append(files, o.value)
				pattern = pattern && !o.is("-f", "--file")
			case o.is("-e", "--regexp", "--files", "--type-list"):
				pattern = false
			}
		}
		if pattern && len(operands) > 0 {
			operands = operands[1:]
		}
		return append(files, operands...), true, true // trees are judged by rgCmd, links and all
	case "sed", "gsed", "awk", "gawk", "mawk", "nawk":
		s := spec{short: "efl", optional: "i", long: []string{"expression", "file", "line-length"}}
		if !strings.HasSuffix(x.name, "sed") {
			s = spec{short: "FvfeiElW", optional: "dDopL", long: []string{"field-separator", "assign", "file", "source", "include", "load", "exec"}, posix: true}
		}
		opts, operands, _ := parse(x.args, s)
		if _, ok := find(opts, "-e", "--expression", "--source"); !ok && len(operands) > 0 {
			operands = operands[1:] // the script
		}
		return operands, false, true
	case "jq", "yq":
		return c.jqReads(x), false, true
	case "date":
		opts, _, _ := parse(x.args, spec{short: "dfr", optional: "I", long: []string{"date", "file", "reference"}})
		for _, o := range opts {
			if o.is("-f", "--file") {
				files = append(files, o.value)
			}
		}
		return files, false, true
	case "tree":
		opts, operands, _ := parse(x.args, spec{short: "LPIoHT", long: []string{"filelimit", "timefmt", "sort", "charset"}})
		if _, ok := find(opts, "--fromfile"); ok {
			return operands, false, true // prints the paths listed in the files
		}
		return nil, false, false
	case "whetstone":
		if len(x.args) > 0 && x.args[0].text == "validate" {
			_, operands, _ := parse(x.args[1:], spec{})
			return operands, false, true // its errors may quote the file
		}
		return nil, false, false
	case "cp":
		opts, operands, _ := parse(x.args, copySpec)
		if _, ok := find(opts, "-t", "--target-directory"); !ok && len(operands) > 0 {
			operands = operands[:len(operands)-1]
		}
		_, recursive = find(opts, "-a", "--archive", "-r", "-R", "--recursive")
		return operands, recursive, true
	}
	s, ok := contentReaders[x.name]
	if !ok {
		return nil, false, false
	}
	opts, operands, _ := parse(x.args, s)
	for _, o := range opts {
		if o.is("--from-file", "--to-file", "--exclude-from") {
			files = append(files, o.value)
		}
	}
	_, recursive = find(opts, "-r", "--recursive")
	recursive = recursive && (x.name == "diff" || x.name == "colordiff")
	return append(files, operands...), recursive, true
}

func dot() word { return word{text: ".", src: ".", known: true, segs: []seg{{text: "."}}} }

// jqReads returns the files jq or yq reads: its operands after the filter,
// and the values of --rawfile, --slurpfile and --from-file.
func (c *checker) jqReads(x *call) []word {
	var files []word
	filter := true
	for i := 0; i < len(x.args); i++ {
		w := x.args[i]
		if !w.known {
			files = append(files, w)
			continue
		}
		switch t := w.text; {
		case t == "--args" || t == "--jsonargs":
			return files // the rest are values
		case contains(t, "--arg", "--argjson"):
			i += 2
		case contains(t, "--rawfile", "--slurpfile"):
			if i+2 < len(x.args) {
				files = append(files, x.args[i+2])
			}
			i += 2
		case contains(t, "-f", "--from-file"):
			if i+1 < len(x.args) {
				files = append(files, x.args[i+1])
			}
			filter = false
			i++
		case contains(t, "-L", "--indent", "--tab", "-I", "--indent-output", "-p", "--output-format", "-o", "--input-format", "--expression"):
			if t != "--tab" {
				i++
			}
		case strings.HasPrefix(t, "-") && t != "-":
		case filter:
			filter = false
		default:
			files = append(files, w)
		}
	}
	return files
}

// judgeReads refuses a call that reads a file whetstone cannot prove is not
// its key.
func (c *checker) judgeReads(x *call) {
	if len(c.protected) == 0 || c.reason != "" {
		return
	}
	if x.name == "sort" {
		if o, ok := findArg(x.args, "--files0-from"); ok {
			c.denyf("%s reads the files listed in another file, which whetstone cannot see; name the files", x.with(o))
			return
		}
	}
	files, recursive, ok := c.readers(x)
	if !ok {
		return
	}
	for _, w := range files {
		if c.reason != "" {
			return
		}
		c.readsFile(quote(x.part()), w, recursive)
	}
}

// findArg finds a long option, abbreviated or not, among known words.
func findArg(args []word, name string) (string, bool) {
	for _, a := range args {
		n, _, _ := strings.Cut(a.text, "=")
		if a.known && len(n) > 3 && strings.HasPrefix(name, n) {
			return n, true
		}
	}
	return "", false
}

// readsFile refuses the read of w unless it is proven not to reach the key.
// what names the command that reads, for the reason.
func (c *checker) readsFile(what string, w word, recursive bool) {
	if len(c.protected) == 0 || c.reason != "" || w.proc {
		return
	}
	if why := c.unproven(w, recursive); why != "" {
		c.denyf("%s reads %s, %s; whetstone cannot tell that it is not its key file, which no agent may read. Name the files literally, or list them with git ls-files, git grep -l or rg -l inside the project", what, quote(w.src), why)
	}
}

// unproven returns why w might name the key, or "" when it cannot.
func (c *checker) unproven(w word, recursive bool) string {
	switch {
	case w.known:
		if c.namesKey(w.text) {
			return "which names it"
		}
		if recursive && c.holdsKey(w.text) {
			return "a tree that holds it"
		}
		return ""
	case w.from != nil:
		if c.cwd == nil || !slices.Equal(w.from.cwd, c.cwd) {
			return "a list of files made in another directory"
		}
		if c.keyInRoot() {
			return "a list of files of a project that holds it"
		}
		if why := c.listable(); why != "" {
			return "a list of the project's files, and " + why
		}
		c.fromUsed = true
		if w.from.name != "" {
			c.listedUses = append(c.listedUses, w.from.name)
		}
		return ""
	case w.glob && w.globOnly():
		matches, why := c.expandGlob(w)
		if why != "" {
			return why
		}
		for _, m := range matches {
			if c.namesKey(m) || recursive && c.holdsKey(m) {
				return "a pattern that matches " + quote(m)
			}
		}
		return ""
	}
	return "a path only known when it runs"
}

// holdsKey reports whether the literal path p, read as a tree, holds a
// protected path: the root, or an ancestor of one, after following links.
func (c *checker) holdsKey(p string) bool {
	if strings.HasPrefix(p, "~/") && c.home != "" {
		p = c.home + p[1:]
	}
	paths, ok := c.paths(p)
	if !ok {
		return true
	}
	for _, a := range paths {
		for _, r := range []string{strings.ToLower(filepath.Clean(a)), strings.ToLower(c.real(a))} {
			for _, q := range c.protected {
				if r == "/" || strings.HasPrefix(q, r+"/") {
					return true
				}
			}
		}
	}
	return false
}

// keyInRoot reports whether the project holds a protected path, so that a
// list of its files may name one.
func (c *checker) keyInRoot() bool {
	for _, q := range c.protected {
		if c.root == "" || under(q, c.root) {
			return true
		}
	}
	return false
}

// globOnly reports whether a word's unknown parts are all glob patterns.
func (w word) globOnly() bool {
	for _, s := range w.segs {
		if s.kind == segAny || s.kind == segNoDash {
			return false
		}
	}
	return true
}

// maxMatches bounds the files a glob may match for whetstone to judge them.
const maxMatches = 4096

// expandGlob returns the paths a glob word matches now, in every directory
// the command may run in, or why it cannot tell.
func (c *checker) expandGlob(w word) ([]string, string) {
	var b strings.Builder
	for _, s := range w.segs {
		if s.kind == segGlob {
			b.WriteString(s.text)
			continue
		}
		for _, r := range s.text {
			if strings.ContainsRune(`*?[\`, r) {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
	}
	pat := b.String()
	if strings.Contains(pat, "**") && c.globstar {
		return nil, "a ** pattern, which reaches any depth"
	}
	if strings.HasPrefix(pat, "~/") && c.home != "" {
		pat = c.home + pat[1:]
	}
	bases := []string{""}
	if !filepath.IsAbs(pat) {
		if c.cwd == nil {
			return nil, "a pattern in a directory whetstone cannot tell"
		}
		bases = c.cwd
	}
	var out []string
	for _, base := range bases {
		p := pat
		if base != "" {
			p = strings.TrimSuffix(base, "/") + "/" + pat
		}
		matches, err := filepath.Glob(p)
		if err != nil {
			return nil, "a pattern whetstone cannot read"
		}
		if len(matches) == 0 {
			matches = []string{p} // bash passes the pattern on as it is
		}
		out = append(out, matches...)
		if len(out) > maxMatches {
			return nil, fmt.Sprintf("a pattern matching more than %d files", maxMatches)
		}
	}
	return out, ""
}

// produces returns the origin of what x prints when it prints only paths of
// files inside the project, one a line, relative to the directory it runs
// in; nil otherwise.
func (c *checker) produces(x *call) *origin {
	if c.cwd == nil || c.ifs {
		return nil
	}
	for _, a := range x.args {
		if !a.known && !(a.glob && a.globOnly() && !a.split) {
			return nil
		}
	}
	for _, d := range c.cwd {
		if r := c.real(d); r != c.root && !inside(r, c.root) {
			return nil
		}
	}
	here := &origin{cwd: c.cwd}
	switch x.name {
	case "git":
		if allKnown(x.args) && gitLists(texts(x.args)) {
			return here
		}
	case "find":
		if allKnown(x.args) && c.findLists(x.args) {
			return here
		}
	case "rg", "grep", "egrep", "fgrep":
		if c.searchLists(x) {
			return here
		}
		if x.name != "rg" && c.stdin != nil && filterOnly(x.args, "ivwEFxsc", "e") && noOperands(x.args, true) {
			return c.stdin
		}
	case "ls":
		if filterOnly(x.args, "1aAtrSF", "") && c.allInside(x.args) {
			return here
		}
	case "sort":
		if filterOnly(x.args, "urnfVhbdiMRs", "kt") && noOperands(x.args, false) {
			return c.stdin
		}
	case "uniq", "tac", "cat":
		if filterOnly(x.args, "ui", "") && noOperands(x.args, false) {
			return c.stdin
		}
	case "head", "tail":
		if filterOnly(x.args, "n0123456789", "n") && noOperands(x.args, false) {
			return c.stdin
		}
	}
	return nil
}

// filterOnly reports whether every option in args is one of the short
// letters in flags (clustered or not), or one of those in valued followed
// by its value.
func filterOnly(args []word, flags, valued string) bool {
	for i := 0; i < len(args); i++ {
		t := args[i].text
		if !strings.HasPrefix(t, "-") || t == "-" {
			continue
		}
		if t == "--" || strings.HasPrefix(t, "--") {
			return false
		}
		for j := 1; j < len(t); j++ {
			switch {
			case strings.IndexByte(valued, t[j]) >= 0:
				if j == len(t)-1 {
					i++
				}
				j = len(t)
			case strings.IndexByte(flags, t[j]) < 0:
				return false
			}
		}
	}
	return true
}

// noOperands reports whether a filter reads only standard input: no operand
// but, for a search, its pattern.
func noOperands(args []word, pattern bool) bool {
	n := 0
	for i := 0; i < len(args); i++ {
		t := args[i].text
		switch {
		case t == "-e" || t == "-n" || t == "-k" || t == "-t":
			i++
			pattern = pattern && t != "-e"
		case strings.HasPrefix(t, "-") && t != "-":
			pattern = pattern && !strings.HasPrefix(t, "-e")
		default:
			n++
		}
	}
	if pattern {
		return n == 1
	}
	return n == 0
}

// gitLists reports whether git's arguments list files of the repository:
// ls-files, diff --name-only, grep -l, ls-tree --name-only, with no option
// that changes how the names print.
func gitLists(args []string) bool {
	if len(args) == 0 {
		return false
	}
	sub, rest := args[0], args[1:]
	allowed, needs := map[string][]string{
		"ls-files":  {"-c", "--cached", "-m", "--modified", "-o", "--others", "-d", "--deleted", "-i", "--ignored", "--exclude-standard", "-z", "--full-name", "--error-unmatch", "--directory", "--no-empty-directory"},
		"diff":      {"--name-only", "--cached", "--staged", "-z", "--no-renames", "--merge-base", "--diff-filter", "-M", "-R", "--relative", "-r"},
		"diff-tree": {"--name-only", "--no-commit-id", "-r", "-z", "--diff-filter", "--root"},
		"grep":      {"-l", "-L", "--name-only", "--files-with-matches", "--files-without-match", "-i", "--ignore-case", "-w", "-v", "-E", "-F", "-P", "-G", "-I", "-z", "--null", "--cached", "--untracked", "-e", "--and", "--or", "--not", "--all-match", "-n", "--full-name"},
		"ls-tree":   {"--name-only", "-r", "-t", "-d", "-z", "--full-name", "--full-tree"},
	}[sub], map[string][]string{
		"diff": {"--name-only"}, "diff-tree": {"--name-only"}, "ls-tree": {"--name-only"},
		"grep": {"-l", "-L", "--name-only", "--files-with-matches", "--files-without-match"},
	}[sub]
	if allowed == nil {
		return false
	}
	listed := needs == nil
	for i := 0; i < len(rest); i++ {
		t := rest[i]
		if t == "--" {
			break
		}
		if !strings.HasPrefix(t, "-") {
			continue
		}
		name, _, _ := strings.Cut(t, "=")
		if !contains(name, allowed...) {
			return false
		}
		if t == "-e" {
			i++
		}
		listed = listed || contains(name, needs...)
	}
	return listed
}

// findLists reports whether find prints only paths under starting points
// inside the project, following no link.
func (c *checker) findLists(args []word) bool {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i].text, "-") && !findValue[args[i].text] && !findFlag[args[i].text] {
		if args[i].text != "-P" {
			return false // -L, -H follow links; -D, -O tune
		}
		i++
	}
	starts := 0
	for ; i < len(args); i++ {
		t := args[i].text
		if strings.HasPrefix(t, "-") || contains(t, "(", "!", ",") {
			break
		}
		if !c.inside(args[i]) {
			return false
		}
		starts++
	}
	for ; i < len(args); i++ {
		if contains(args[i].text, "-printf", "-fprintf", "-ls", "-fls", "-follow", "-files0-from", "-print0x") {
			return false
		}
	}
	return starts > 0 || c.inside(dot())
}

// searchLists reports whether rg or grep prints only the names of files
// searched inside the project: rg -l or --files, grep -l with -r or files.
func (c *checker) searchLists(x *call) bool {
	// grep -R follows links, --label names standard input, -o prints
	// parts of lines; rg -L follows links, -r replaces text.
	refuse, refuseLetters, listLetters := []string{"-R", "--dereference-recursive", "--label", "-o", "--only-matching", "--null-data"}, "Ro", "lL"
	if x.name == "rg" {
		refuse, refuseLetters, listLetters = []string{"-L", "--follow", "--path-separator", "-r", "--replace", "-o", "--only-matching", "--null-data"}, "Lro", "l"
	}
	lists := false
	for _, a := range x.args {
		t, _, _ := strings.Cut(a.text, "=")
		cluster := !strings.HasPrefix(t, "--") && strings.HasPrefix(t, "-")
		switch {
		case contains(t, refuse...), cluster && strings.ContainsAny(t[1:], refuseLetters):
			return false
		case contains(t, "--files", "--files-with-matches", "--files-without-match"), cluster && strings.ContainsAny(t[1:], listLetters):
			lists = true
		}
	}
	if !lists {
		return false
	}
	files, _, _ := c.readers(x)
	if len(files) == 0 && x.name == "rg" {
		files = []word{dot()}
	}
	for _, f := range files {
		if !f.known && !(f.glob && f.globOnly()) || !c.inside(f) {
			return false
		}
	}
	return len(files) > 0
}

// allInside reports whether the operands of ls are all inside the project;
// none is the working directory.
func (c *checker) allInside(args []word) bool {
	for _, a := range args {
		if !strings.HasPrefix(a.text, "-") && !c.inside(a) {
			return false
		}
	}
	return true
}

// inside reports whether a literal word names a place inside the project, or
// the project itself, after following links; a glob, when all it matches
// now is.
func (c *checker) inside(w word) bool {
	var paths []string
	switch {
	case w.known:
		ps, ok := c.paths(w.text)
		if !ok {
			return false
		}
		paths = ps
	case w.glob && w.globOnly():
		ms, why := c.expandGlob(w)
		if why != "" {
			return false
		}
		paths = ms
	default:
		return false
	}
	for _, p := range paths {
		if r := c.real(p); r != c.root && !inside(r, c.root) {
			return false
		}
	}
	return c.root != "" && !c.keyInRoot()
}

// maxListWalk bounds the entries listable looks at.
const maxListWalk = 50000

// listable returns why a list of the project's files could name something
// other than what it says, or "": a name holding a blank, a quote or a
// backslash, which xargs and the shell's word splitting cut into other paths
// (even an absolute one), or a link that leads to the key or to a directory
// holding it. It walks the project once per command, .git aside.
func (c *checker) listable() string {
	if c.listChecked {
		return c.listWhy
	}
	c.listChecked = true
	n := 0
	stop := errors.New("stop")
	err := filepath.WalkDir(c.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == c.root {
			return nil
		}
		if n++; n > maxListWalk {
			c.listWhy = fmt.Sprintf("the project holds more than %d files, too many for whetstone to check their names and links", maxListWalk)
			return stop
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		rel := c.rel(p)
		if strings.ContainsAny(d.Name(), " \t\n\v\f\r\"'\\") {
			c.listWhy = fmt.Sprintf("the project holds %s, a name that xargs or the shell would split into other paths", quote(rel))
			return stop
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if r := c.real(p); c.isProtected(r) || c.holdsKey(r) {
				c.listWhy = fmt.Sprintf("the project holds the link %s, which leads to it", quote(rel))
				return stop
			}
		}
		return nil
	})
	if err != nil && err != stop && c.listWhy == "" {
		c.listWhy = "whetstone could not look through the project: " + err.Error()
	}
	return c.listWhy
}

// substOrigin records where a command substitution's output comes from.
func (c *checker) substOrigin(cs *syntax.CmdSubst, o *origin) {
	if o == nil {
		return
	}
	if c.substs == nil {
		c.substs = map[*syntax.CmdSubst]*origin{}
	}
	c.substs[cs] = o
}

// wordOrigin returns the origin of a word made of a single command
// substitution or a single plain variable, or nil.
func (c *checker) wordOrigin(w *syntax.Word) *origin {
	if len(w.Parts) != 1 {
		return nil
	}
	part := w.Parts[0]
	if dq, ok := part.(*syntax.DblQuoted); ok && len(dq.Parts) == 1 && !dq.Dollar {
		part = dq.Parts[0]
	}
	switch p := part.(type) {
	case *syntax.CmdSubst:
		return c.substs[p]
	case *syntax.ParamExp:
		if plainParam(p) {
			if o := c.listed[p.Param.Value]; o != nil {
				return &origin{cwd: o.cwd, name: p.Param.Value}
			}
		}
	}
	return nil
}

// setListed records what a variable may hold: o for a list of the
// project's files, nil for anything else. A variable once assigned anything
// else stays unproven for the rest of the line: a loop may assign it
// before a read that the walk saw first.
func (c *checker) setListed(name string, o *origin) {
	if c.listed == nil {
		c.listed = map[string]*origin{}
	}
	prev, seen := c.listed[name]
	switch {
	case !seen:
		c.listed[name] = o
	case prev == nil || o == nil || !slices.Equal(prev.cwd, o.cwd):
		c.listed[name] = nil
	}
}

// finishListed refuses a read that relied on a variable later assigned
// something other than a list of the project's files.
func (c *checker) finishListed() {
	for _, name := range c.listedUses {
		if c.listed[name] == nil {
			c.denyf("$%s is read as a list of the project's files but is also assigned other text, which could name whetstone's key file; use a separate variable", name)
			return
		}
	}
}

// listOrigin returns the origin of a for loop's items when every one is
// proven not to reach the key, even read as a tree; nil otherwise.
func (c *checker) listOrigin(items []word) *origin {
	if c.cwd == nil || len(items) > 256 || len(c.protected) == 0 {
		return nil
	}
	for _, it := range items {
		if c.unproven(it, true) != "" {
			return nil
		}
	}
	return &origin{cwd: c.cwd}
}
