// Package scope works out what a run reviews: the base ref, the changed
// files, and the signals in them that call for specialist reviewers.
package scope

import (
	"bytes"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Context is context.json: what the reviewers are asked to look at.
type Context struct {
	Scope   string   `json:"scope,omitempty"` // the user's words after /whetstone:review
	Base    string   `json:"base"`            // git ref the change is measured against
	Files   []string `json:"files"`           // changed files, relative to the root
	Signals []string `json:"signals"`         // specialist reviewers the change calls for
	Note    string   `json:"note,omitempty"`
}

// Detect finds the change under root: uncommitted work against HEAD, or,
// on a clean tree, the last commit. Outside git it lists nothing and says so.
func Detect(root, scopeText string, triage []string) Context {
	c := Context{Scope: scopeText, Base: "HEAD", Files: []string{}, Signals: []string{}}
	status, err := git(root, "status", "--porcelain", "-z", "--untracked-files=all")
	if err != nil {
		c.Base, c.Note = "", "not a git repository: review the files the scope names"
		return c
	}
	for _, rec := range strings.Split(status, "\x00") {
		if len(rec) > 3 && !strings.HasPrefix(rec[3:], ".whetstone/") {
			c.Files = append(c.Files, rec[3:])
		}
	}
	if len(c.Files) == 0 {
		if out, err := git(root, "diff", "--name-only", "-z", "HEAD~1", "HEAD"); err == nil {
			c.Base = "HEAD~1"
			for _, f := range strings.Split(out, "\x00") {
				if f != "" {
					c.Files = append(c.Files, f)
				}
			}
		}
	}
	slices.Sort(c.Files)
	c.Files = slices.Compact(c.Files)
	c.Signals = Signals(root, c.Files, triage)
	return c
}

func git(root string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	return out.String(), err
}

var pathSignals = map[string][]string{
	"database-reviewer":    {".sql", "migration", "migrations/", "schema", ".prisma", "/db/", "repository", "dao"},
	"api-reviewer":         {"api/", ".proto", "openapi", "swagger", "handler", "routes", "graphql", "controller"},
	"performance-reviewer": {"cache", "perf", "bench", "hot", "pool"},
}

var contentSignals = map[string][]string{
	"concurrency-reviewer": {"go func", "sync.", "chan ", "atomic.", "threading", "asyncio", "Promise.all", "Mutex", "goroutine"},
	"performance-reviewer": {"func Benchmark", "@benchmark"},
	"database-reviewer":    {"SELECT ", "INSERT INTO", "UPDATE ", "database/sql", "BEGIN TRANSACTION"},
}

// Signals names the specialists a set of changed files calls for, from
// their paths and (for files up to 256 KiB) their content. Extra triage
// patterns of the form "reviewer:substring" add path rules.
func Signals(root string, files []string, triage []string) []string {
	rules := map[string][]string{}
	for k, v := range pathSignals {
		rules[k] = slices.Clone(v)
	}
	for _, t := range triage {
		if name, pat, ok := strings.Cut(t, ":"); ok {
			rules[name] = append(rules[name], pat)
		}
	}
	found := map[string]bool{}
	dirs := map[string]bool{}
	for _, f := range files {
		lower := strings.ToLower("/" + f)
		for name, pats := range rules {
			for _, p := range pats {
				if strings.Contains(lower, strings.ToLower(p)) {
					found[name] = true
				}
			}
		}
		dirs[strings.SplitN(path.Clean(f), "/", 2)[0]] = true
		if info, err := os.Stat(filepath.Join(root, f)); err == nil && info.Mode().IsRegular() && info.Size() <= 256<<10 {
			if data, err := os.ReadFile(filepath.Join(root, f)); err == nil {
				for name, pats := range contentSignals {
					for _, p := range pats {
						if bytes.Contains(data, []byte(p)) {
							found[name] = true
						}
					}
				}
			}
		}
	}
	if len(files) >= 15 || len(dirs) >= 5 {
		found["architecture-reviewer"] = true
	}
	out := []string{}
	for name := range found {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}
