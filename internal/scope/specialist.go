package scope

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// architectureFiles is how many reviewed files make a change wide enough
// for the architecture reviewer.
const architectureFiles = 20

// pathRule selects a specialist by a word of a file's path or its
// extension.
type pathRule struct {
	name  string
	words []string // whole path words, as words splits them
	exts  []string
}

var pathRules = []pathRule{
	{"database-reviewer", []string{"migration", "migrations", "migrate", "schema", "models", "db", "database", "repository", "dao", "orm"}, []string{".sql", ".prisma"}},
	{"api-reviewer", []string{"api", "routes", "router", "handler", "handlers", "controller", "controllers", "endpoint", "endpoints", "openapi", "swagger", "graphql"}, []string{".proto", ".graphql", ".gql"}},
	{"performance-reviewer", []string{"bench", "benchmark", "benchmarks", "perf", "hot", "cache", "pool"}, nil},
}

// contentRule selects a specialist by a line the change adds; inTests
// when such a line in a test still gives the lens something to review.
type contentRule struct {
	name    string
	re      *regexp.Regexp
	inTests bool
}

// contentRules are compiled on first use: every hook process links this
// package, and only starting a run needs them.
var contentRules = sync.OnceValue(func() []contentRule {
	return []contentRule{
		{"concurrency-reviewer", regexp.MustCompile(`go func|\bsync\.|\bchan |\batomic\.|Mutex|errgroup|asyncio|Promise\.all|threading`), true},
		{"database-reviewer", regexp.MustCompile(`"database/sql"|\b(SELECT\b.*\bFROM|INSERT INTO|UPDATE \w+ SET|DELETE FROM|CREATE TABLE|ALTER TABLE|DROP TABLE)\b|gorm\.|sqlalchemy|ActiveRecord`), false},
		{"performance-reviewer", regexp.MustCompile(`func Benchmark|@benchmark`), false},
		{"api-reviewer", regexp.MustCompile(`\.HandleFunc\(|@app\.route|@(Get|Post|Put|Delete|Request)Mapping|@RestController`), false},
	}
})

// specialists names the specialist reviewers the change calls for, each
// with the first reason found (files in path order), and those a trigger
// named but that were not called, with why. Skipped files select none;
// content rules look only at the lines the change adds. Documentation and
// files whose change is only a license or copyright header call in no
// specialist; a test calls in only the concurrency reviewer, by what it
// adds (a path word or a benchmark gives a lens nothing to review there).
// The user's globs in whetstone.json always count.
func specialists(changes []change, req Request) (called, passed []Specialist) {
	reasons, not := map[string]string{}, map[string]string{}
	add := func(name, reason string) {
		if _, ok := reasons[name]; !ok {
			reasons[name] = reason
		}
	}
	pass := func(name, reason, why string) {
		if _, ok := not[name]; !ok {
			not[name] = reason + ", but " + why
		}
	}
	reviewed := 0
	for _, c := range changes {
		if c.Triage == "skip" {
			continue
		}
		reviewed++
		for _, name := range slices.Sorted(maps.Keys(req.Specialists)) {
			for _, glob := range req.Specialists[name] {
				if matchPath(glob, c.Path) {
					add(name, fmt.Sprintf("%s matches %s (whetstone.json)", c.Path, glob))
				}
			}
		}
		why := c.nothingFor()
		byPath := add
		if why != "" {
			byPath = func(name, reason string) { pass(name, reason, why) }
		}
		ws := words(c.Path)
		for _, r := range pathRules {
			if ext := path.Ext(strings.ToLower(c.Path)); slices.Contains(r.exts, ext) {
				byPath(r.name, fmt.Sprintf("%s is a %s file", c.Path, ext))
			}
			for _, w := range ws {
				if slices.Contains(r.words, w) {
					byPath(r.name, fmt.Sprintf("%s: path names %q", c.Path, w))
				}
			}
		}
		for _, r := range contentRules() {
			for _, l := range c.added {
				if m := r.re.FindString(l.text); m != "" {
					reason := fmt.Sprintf("%s:%d adds %q", c.Path, l.n, strings.TrimSpace(m))
					if why == "" || (r.inTests && why == whyTest) {
						add(r.name, reason)
					} else {
						pass(r.name, reason, why)
					}
					break
				}
			}
		}
	}
	if reviewed > architectureFiles {
		add("architecture-reviewer", fmt.Sprintf("%d files changed (more than %d)", reviewed, architectureFiles))
	}
	called, passed = []Specialist{}, []Specialist{}
	for _, name := range slices.Sorted(maps.Keys(reasons)) {
		called = append(called, Specialist{Name: name, Reason: reasons[name]})
	}
	for _, name := range slices.Sorted(maps.Keys(not)) {
		if _, ok := reasons[name]; !ok {
			passed = append(passed, Specialist{Name: name, Reason: not[name]})
		}
	}
	return called, passed
}

// Why a file gives a specialist's lens nothing to review.
const (
	whyDocs    = "it is documentation"
	whyTest    = "it is a test"
	whyLicense = "only its license or copyright lines change"
)

var (
	docExts  = []string{".md", ".markdown", ".rst", ".adoc", ".asciidoc", ".txt", ".org", ".rdoc", ".textile"}
	docNames = []string{"readme", "changelog", "changes", "license", "licence", "copying", "notice", "authors", "contributors", "contributing"}
	testDirs = []string{"test", "tests", "testdata", "__tests__", "spec", "specs"}
	// license names a license or copyright in a changed comment line.
	license = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(copyright|licen[cs]e[ds]?|spdx-license-identifier|all rights reserved)\b|\(c\)|©`)
	})
)

// nothingFor says why c gives a specialist's lens nothing to review, or "".
func (c change) nothingFor() string {
	lower := strings.ToLower(c.Path)
	base := path.Base(lower)
	switch {
	case c.license && !c.code:
		return whyLicense
	case slices.Contains(docExts, path.Ext(base)) || slices.Contains(docNames, strings.TrimSuffix(base, path.Ext(base))):
		return whyDocs
	case isTest(lower):
		return whyTest
	}
	return ""
}

// isTest reports whether a lower-case path is a test by the usual names
// (x_test.go, test_x.py, x_test.py, x.test.ts, x.spec.js, xtest.java,
// xtests.cs) or directories (test, tests, testdata, __tests__, spec).
func isTest(lower string) bool {
	base := path.Base(lower)
	stem := strings.TrimSuffix(base, path.Ext(base))
	dirs := strings.Split(path.Dir(lower), "/")
	named := strings.HasSuffix(stem, "_test") || strings.HasPrefix(stem, "test_") ||
		strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec") ||
		(path.Ext(base) == ".java" || path.Ext(base) == ".cs" || path.Ext(base) == ".kt") && (strings.HasSuffix(stem, "test") || strings.HasSuffix(stem, "tests"))
	return named || slices.ContainsFunc(dirs, func(d string) bool { return slices.Contains(testDirs, d) })
}

// note records one changed line (added or deleted) of c: whether it is
// code and whether it names a license or copyright.
func (c *change) note(line string) {
	if !isComment(line) {
		c.code = true
	}
	if license().MatchString(line) {
		c.license = true
	}
}

// isComment reports whether a line is blank or a comment in one of the
// common syntaxes: //, #, /* … */ and its * lines, --, ;, %, <!-- … -->.
func isComment(line string) bool {
	line = strings.TrimSpace(line)
	if line == "" || line == "*" || line == "*/" {
		return true
	}
	for _, p := range []string{"//", "#", "/*", "* ", "--", ";", "%", "<!--", "-->"} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}
