package scope

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/whetstone-dev/whetstone/internal/brief"
)

// specialists names the specialist reviewers the change calls for, each
// with the first reason found (files in path order), and those a trigger
// named but that were not called, with why. Skipped files select none;
// content rules look only at the lines the change adds. Documentation and
// files whose change is only a license or copyright header call in no
// specialist; a test calls in only a specialist whose added lines count in
// tests (the concurrency reviewer), by what it adds (a path word or a
// benchmark gives a lens nothing to review there).
// The user's globs in whetstone.json always count. The triggers are the
// specialists' frontmatter (brief.Agents, or req.Agents): path words,
// extensions, a pattern on added lines, a number of files.
func specialists(changes []change, req Request) (called, passed []Specialist) {
	reg := req.Agents
	if reg == nil {
		reg = new(brief.Agents())
	}
	var rules []brief.Agent
	for _, a := range reg.All() {
		if a.Triggers != nil {
			rules = append(rules, a)
		}
	}
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
		for _, r := range rules {
			t := r.Triggers
			if ext := path.Ext(strings.ToLower(c.Path)); slices.Contains(t.Extensions, ext) {
				byPath(r.Name, fmt.Sprintf("%s is a %s file", c.Path, ext))
			}
			for _, w := range ws {
				if slices.Contains(t.PathWords, w) {
					byPath(r.Name, fmt.Sprintf("%s: path names %q", c.Path, w))
				}
			}
			if t.Added() == nil {
				continue
			}
			for _, l := range c.added {
				if m := t.Added().FindString(l.text); m != "" {
					reason := fmt.Sprintf("%s:%d adds %q", c.Path, l.n, strings.TrimSpace(m))
					if why == "" || (t.InTests && why == whyTest) {
						add(r.Name, reason)
					} else {
						pass(r.Name, reason, why)
					}
					break
				}
			}
		}
	}
	for _, r := range rules {
		if n := r.Triggers.FilesOver; n > 0 && reviewed > n {
			add(r.Name, fmt.Sprintf("%d files changed (more than %d)", reviewed, n))
		}
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
