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

// contentRule selects a specialist by a line the change adds.
type contentRule struct {
	name string
	re   *regexp.Regexp
}

// contentRules are compiled on first use: every hook process links this
// package, and only starting a run needs them.
var contentRules = sync.OnceValue(func() []contentRule {
	return []contentRule{
		{"concurrency-reviewer", regexp.MustCompile(`go func|\bsync\.|\bchan |\batomic\.|Mutex|errgroup|asyncio|Promise\.all|threading`)},
		{"database-reviewer", regexp.MustCompile(`"database/sql"|\b(SELECT\b.*\bFROM|INSERT INTO|UPDATE \w+ SET|DELETE FROM|CREATE TABLE|ALTER TABLE|DROP TABLE)\b|gorm\.|sqlalchemy|ActiveRecord`)},
		{"performance-reviewer", regexp.MustCompile(`func Benchmark|@benchmark`)},
		{"api-reviewer", regexp.MustCompile(`\.HandleFunc\(|@app\.route|@(Get|Post|Put|Delete|Request)Mapping|@RestController`)},
	}
})

// specialists names the specialist reviewers the change calls for, each
// with the first reason found (files in path order). Skipped files select
// none; content rules look only at the lines the change adds.
func specialists(changes []change, req Request) []Specialist {
	reasons := map[string]string{}
	add := func(name, reason string) {
		if _, ok := reasons[name]; !ok {
			reasons[name] = reason
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
		ws := words(c.Path)
		for _, r := range pathRules {
			if ext := path.Ext(strings.ToLower(c.Path)); slices.Contains(r.exts, ext) {
				add(r.name, fmt.Sprintf("%s is a %s file", c.Path, ext))
			}
			for _, w := range ws {
				if slices.Contains(r.words, w) {
					add(r.name, fmt.Sprintf("%s: path names %q", c.Path, w))
				}
			}
		}
		for _, r := range contentRules() {
			for _, l := range c.added {
				if m := r.re.FindString(l.text); m != "" {
					add(r.name, fmt.Sprintf("%s:%d adds %q", c.Path, l.n, strings.TrimSpace(m)))
					break
				}
			}
		}
	}
	if reviewed > architectureFiles {
		add("architecture-reviewer", fmt.Sprintf("%d files changed (more than %d)", reviewed, architectureFiles))
	}
	out := []Specialist{}
	for _, name := range slices.Sorted(maps.Keys(reasons)) {
		out = append(out, Specialist{Name: name, Reason: reasons[name]})
	}
	return out
}
