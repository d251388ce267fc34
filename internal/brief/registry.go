package brief

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"sync"
	"text/template"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// The registry: every agent is one source file, src/<name>.md, and its
// frontmatter says everything the binary and the generators know of it:
//
//	role: reviewer                 # reviewer, fixer or validator
//	description: "…"               # quoted: it holds ": "
//	tools: Read, Grep, Glob        # Claude Code tool names
//	model: sonnet
//	order: 90                      # where it is listed: dispatch, rosters, doctor
//	depths: [standard, deep]       # a reviewer: the depths it runs at
//	triggers:                      # a specialist: only when one fires
//	  path_words: [api, routes]    # a whole word of a changed file's path
//	  extensions: [.proto]         # a changed file's extension
//	  added_lines: '\.HandleFunc\(' # a regexp on a line the change adds
//	  added_lines_in_tests: false  # whether such a line in a test counts
//	  files_over: 20               # more reviewed files than this
//
// A reviewer without triggers is a core reviewer: it runs at each of its
// depths. Configuration defaults (package config), the specialists'
// triggers (package scope), the generated agent files (cmd/genagents),
// doctor's agent checks and the docs' lists all come from here, so a new
// lens is one source file and `make generate`.

// Depths a reviewer may run at, in order.
var Depths = []string{"quick", "standard", "deep"}

// Triggers call a specialist in; scope.specialists applies them.
type Triggers struct {
	PathWords  []string `yaml:"path_words"`           // lower-case whole words of a path
	Extensions []string `yaml:"extensions"`           // ".sql", lower case
	AddedLines string   `yaml:"added_lines"`          // a regexp (Go syntax) on an added line
	InTests    bool     `yaml:"added_lines_in_tests"` // an added line in a test counts too
	FilesOver  int      `yaml:"files_over"`           // more reviewed files than this; 0: no such trigger
	added      *regexp.Regexp
}

// Added is AddedLines compiled, nil when there is none.
func (t *Triggers) Added() *regexp.Regexp { return t.added }

// front is a source's frontmatter as written.
type front struct {
	Role        string    `yaml:"role"`
	Description string    `yaml:"description"`
	Tools       string    `yaml:"tools"`
	Model       string    `yaml:"model"`
	Order       int       `yaml:"order"`
	Depths      []string  `yaml:"depths"`
	Triggers    *Triggers `yaml:"triggers"`
}

// Registry is the agents one set of sources defines, in their order.
type Registry struct {
	src    fs.FS // <name>.md agents and shared-*.md partials
	agents []Agent
	// partials are the shared-*.md templates of src, parsed once: a hook
	// renders an agent's task (SubagentStart) on the hook's path.
	partials func() (*template.Template, error)
}

// maxSource caps one source file: a brief is a few KB.
const maxSource = 64 << 10

var agentName = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// LoadRegistry reads the agents of the sources in fsys: every <name>.md at
// its root but the shared-*.md partials. Each frontmatter is checked: an
// unknown key, a missing field, a bad depth or a trigger that does not
// compile is an error naming the file.
func LoadRegistry(fsys fs.FS) (Registry, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return Registry{}, fmt.Errorf("brief: %w", err)
	}
	r := Registry{src: fsys}
	r.partials = sync.OnceValues(func() (*template.Template, error) { return parsePartials(fsys) })
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".md")
		if !ok || strings.HasPrefix(name, "shared-") || e.IsDir() {
			continue
		}
		if !agentName.MatchString(name) {
			return Registry{}, fmt.Errorf("brief: %s: an agent's name is lower-case words joined by -", e.Name())
		}
		raw, err := readSource(fsys, e.Name())
		if err != nil {
			return Registry{}, err
		}
		a, err := parse(name, raw)
		if err != nil {
			return Registry{}, err
		}
		r.agents = append(r.agents, a)
	}
	if len(r.agents) == 0 {
		return Registry{}, errors.New("brief: the sources define no agent")
	}
	slices.SortFunc(r.agents, func(a, b Agent) int {
		return cmp.Or(cmp.Compare(a.Order, b.Order), cmp.Compare(a.Name, b.Name))
	})
	return r, nil
}

func readSource(fsys fs.FS, file string) (string, error) {
	f, err := fsys.Open(file)
	if err != nil {
		return "", fmt.Errorf("brief: %w", err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxSource+1))
	if err != nil {
		return "", fmt.Errorf("brief: %s: %w", file, err)
	}
	if len(raw) > maxSource {
		return "", fmt.Errorf("brief: %s is larger than %d KiB", file, maxSource>>10)
	}
	return string(raw), nil
}

// Agents is the registry of the sources built into this binary, read once
// on first use (a hook that needs no agent never reads it). The sources are
// checked by this package's tests, so an error is a broken build.
func Agents() Registry {
	r, err := embedded()
	if err != nil {
		panic(err)
	}
	return r
}

var embedded = sync.OnceValues(func() (Registry, error) { return LoadRegistry(Sources()) })

// Sources is the embedded src/ directory, for LoadRegistry.
func Sources() fs.FS {
	sub, err := fs.Sub(src, "src")
	if err != nil {
		panic(err) // embedded: cannot fail
	}
	return sub
}

// All lists every agent, in order, without its rendered body (Load renders
// one).
func (r Registry) All() []Agent { return slices.Clone(r.agents) }

// Get is agent name as the registry holds it.
func (r Registry) Get(name string) (Agent, bool) {
	i := slices.IndexFunc(r.agents, func(a Agent) bool { return a.Name == name })
	if i < 0 {
		return Agent{}, false
	}
	return r.agents[i], true
}

// Reviewers names every reviewer, in order.
func (r Registry) Reviewers() []string {
	return r.names(func(a Agent) bool { return a.Role == RoleReviewer })
}

// Core names the reviewers that run at depth whatever the change: those
// with that depth and no triggers.
func (r Registry) Core(depth string) []string {
	return r.names(func(a Agent) bool { return a.Core(depth) })
}

// Specialists names the reviewers a trigger calls in.
func (r Registry) Specialists() []string {
	return r.names(func(a Agent) bool { return a.Triggers != nil })
}

func (r Registry) names(keep func(Agent) bool) []string {
	var out []string
	for _, a := range r.agents {
		if keep(a) {
			out = append(out, a.Name)
		}
	}
	return out
}

// Core reports whether a runs at depth whatever the change.
func (a Agent) Core(depth string) bool {
	return a.Triggers == nil && slices.Contains(a.Depths, depth)
}

// Runs reports whether reviewer a runs at depth, given whether a trigger
// (or the user's globs) called it in.
func (a Agent) Runs(depth string, called bool) bool {
	return slices.Contains(a.Depths, depth) && (a.Triggers == nil || called)
}

// parse splits a source into its frontmatter, decoded and checked, and its
// body, kept as the template Load renders.
func parse(name, raw string) (Agent, error) {
	rest, ok := strings.CutPrefix(raw, "---\n")
	head, body, ok2 := strings.Cut(rest, "\n---\n")
	if !ok || !ok2 {
		return Agent{}, fmt.Errorf("brief: %s.md: no frontmatter between --- lines", name)
	}
	bad := func(format string, args ...any) (Agent, error) {
		return Agent{}, fmt.Errorf("brief: %s.md: "+format, append([]any{name}, args...)...)
	}
	var f front
	dec := yaml.NewDecoder(strings.NewReader(head))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return bad("frontmatter: %v", err)
	}
	a := Agent{Name: name, Role: f.Role, Description: f.Description, Model: f.Model,
		Order: f.Order, Depths: f.Depths, Triggers: f.Triggers, source: body}
	for t := range strings.SplitSeq(f.Tools, ",") {
		if t = strings.TrimSpace(t); t != "" {
			a.Tools = append(a.Tools, t)
		}
	}
	switch {
	case a.Role != RoleReviewer && a.Role != RoleFixer && a.Role != RoleValidator:
		return bad("role %q is not reviewer, fixer or validator", a.Role)
	case a.Description == "" || len(a.Tools) == 0 || a.Model == "":
		return bad("description, tools and model are required")
	case strings.ContainsAny(a.Description, "\n"):
		return bad("the description is one line")
	case a.Order <= 0:
		return bad("order (a positive number: where the agent is listed) is required")
	case a.Role != RoleReviewer && (a.Depths != nil || a.Triggers != nil):
		return bad("depths and triggers are a reviewer's; a %s has neither", a.Role)
	case a.Role == RoleReviewer && len(a.Depths) == 0:
		return bad("a reviewer needs depths, some of %s", strings.Join(Depths, ", "))
	}
	for _, d := range a.Depths {
		if !slices.Contains(Depths, d) {
			return bad("depth %q is not one of %s", d, strings.Join(Depths, ", "))
		}
	}
	if t := a.Triggers; t != nil {
		if len(t.PathWords) == 0 && len(t.Extensions) == 0 && t.AddedLines == "" && t.FilesOver == 0 {
			return bad("triggers name none of path_words, extensions, added_lines, files_over")
		}
		for _, w := range t.PathWords {
			if w == "" || w != strings.ToLower(w) || strings.ContainsFunc(w, func(r rune) bool { return !isWordRune(r) }) {
				return bad("path word %q is not one lower-case word of letters and digits", w)
			}
		}
		for _, e := range t.Extensions {
			if len(e) < 2 || e[0] != '.' || e != strings.ToLower(e) || strings.ContainsAny(e, "/ ") {
				return bad("extension %q is not a lower-case .ext", e)
			}
		}
		if t.FilesOver < 0 {
			return bad("files_over %d is negative", t.FilesOver)
		}
		if t.AddedLines != "" {
			re, err := regexp.Compile(t.AddedLines)
			if err != nil {
				return bad("added_lines: %v", err)
			}
			t.added = re
		} else if t.InTests {
			return bad("added_lines_in_tests without added_lines")
		}
	}
	return a, nil
}

// isWordRune: scope.words splits a path at every other rune.
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
