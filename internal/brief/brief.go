// Package brief generates the agents' briefs from one set of sources, so the
// reviewer contract, the output rules and the blocking rule are written once
// and every agent file states them the same way (the binary's own text for
// the rule, filled in from package review).
//
// The sources live in src/: shared-*.md are partials (shared-reviewer.md is
// the contract every reviewer gets, with the lens inserted), and every other
// <name>.md is one agent: a frontmatter of host-neutral data (role,
// description, tools, model) and a body, both text/template. Render turns an
// agent into a Claude Code agent file; Load gives the same data to other
// generators (OpenCode agents).
package brief

//go:generate go run ../../cmd/genagents -root ../..

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"text/template"

	"github.com/whetstone-dev/whetstone/internal/review"
)

//go:embed src/*.md
var src embed.FS

// DefaultThreshold is the default confidence_threshold, the number
// review.DefaultPolicy holds; a test keeps the two equal.
const DefaultThreshold = 80

// Roles of an agent.
const (
	RoleReviewer  = "reviewer"
	RoleFixer     = "fixer"
	RoleValidator = "validator"
)

// Agent is one agent as its source describes it, with the body rendered.
// Nothing in it is specific to a host: Render adds Claude Code's frontmatter.
type Agent struct {
	Name        string
	Role        string // RoleReviewer, RoleFixer or RoleValidator
	Description string
	Tools       []string // Claude Code tool names, least privilege
	Model       string   // "sonnet", "inherit", …
	Body        string   // starts with "# whetstone:<name>"
}

// data is what the templates see.
type data struct {
	Name             string
	Role             string
	Rule             string
	Schema           string // the schema of this agent's report
	SchemaReview     string
	SchemaFix        string
	SchemaValidation string
	Categories       string // "`correctness`, `security`, …"
	Severities       string // "critical | high | …"
	MaxFindings      int
	Threshold        int
	Margin           int
	Lens             string // a reviewer's own section, rendered
}

// Names lists the agents the sources define, sorted.
func Names() []string {
	entries, err := fs.ReadDir(src, "src")
	if err != nil {
		panic(err) // embedded: cannot fail
	}
	var names []string
	for _, e := range entries {
		n, ok := strings.CutSuffix(e.Name(), ".md")
		if ok && !strings.HasPrefix(n, "shared-") {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// Load reads the source of agent name and renders its body.
func Load(name string) (Agent, error) {
	if !slices.Contains(Names(), name) {
		return Agent{}, fmt.Errorf("brief: no agent %q", name)
	}
	raw, err := src.ReadFile(path.Join("src", name+".md"))
	if err != nil {
		return Agent{}, fmt.Errorf("brief: %w", err)
	}
	a, body, err := parse(name, string(raw))
	if err != nil {
		return Agent{}, err
	}
	d := data{
		Name:             name,
		Role:             a.Role,
		Rule:             review.DefaultRule(),
		SchemaReview:     review.SchemaReview,
		SchemaFix:        review.SchemaFix,
		SchemaValidation: review.SchemaValidation,
		Categories:       "`" + strings.Join(review.Categories, "`, `") + "`",
		Severities:       strings.Join(review.Severities, " | "),
		MaxFindings:      review.MaxReportFindings,
		Threshold:        DefaultThreshold,
		Margin:           review.PreExistingMargin,
	}
	switch a.Role {
	case RoleReviewer:
		d.Schema = review.SchemaReview
	case RoleFixer:
		d.Schema = review.SchemaFix
	case RoleValidator:
		d.Schema = review.SchemaValidation
	}
	text, err := execute(name+".md", body, d)
	if err != nil {
		return Agent{}, err
	}
	if a.Role == RoleReviewer {
		d.Lens = text
		if text, err = execute("reviewer contract", `{{template "shared-reviewer.md" .}}`, d); err != nil {
			return Agent{}, err
		}
	}
	a.Body = "# whetstone:" + name + "\n\n" + strings.TrimSpace(text) + "\n"
	return a, nil
}

// Render is the Claude Code agent file of agent name: agents/<name>.md.
func Render(name string) ([]byte, error) {
	a, err := Load(name)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "---\nname: %s\ndescription: %s\ntools: %s\nmodel: %s\n---\n", a.Name, a.Description, strings.Join(a.Tools, ", "), a.Model)
	b.WriteString(a.Body)
	return b.Bytes(), nil
}

// parse splits a source into its frontmatter, checked, and its body.
func parse(name, raw string) (Agent, string, error) {
	rest, ok := strings.CutPrefix(raw, "---\n")
	front, body, ok2 := strings.Cut(rest, "\n---\n")
	if !ok || !ok2 {
		return Agent{}, "", fmt.Errorf("brief: src/%s.md: no frontmatter between --- lines", name)
	}
	a := Agent{Name: name}
	for _, line := range strings.Split(front, "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			return Agent{}, "", fmt.Errorf("brief: src/%s.md: frontmatter line %q is not key: value", name, line)
		}
		val = strings.TrimSpace(val)
		switch strings.TrimSpace(key) {
		case "role":
			a.Role = val
		case "description":
			a.Description = val
		case "tools":
			for _, t := range strings.Split(val, ",") {
				a.Tools = append(a.Tools, strings.TrimSpace(t))
			}
		case "model":
			a.Model = val
		default:
			return Agent{}, "", fmt.Errorf("brief: src/%s.md: unknown frontmatter key %q", name, key)
		}
	}
	if a.Role != RoleReviewer && a.Role != RoleFixer && a.Role != RoleValidator {
		return Agent{}, "", fmt.Errorf("brief: src/%s.md: role %q is not reviewer, fixer or validator", name, a.Role)
	}
	if a.Description == "" || len(a.Tools) == 0 || a.Model == "" {
		return Agent{}, "", fmt.Errorf("brief: src/%s.md: description, tools and model are required", name)
	}
	return a, body, nil
}

// execute renders text as template name, with every shared-*.md partial
// available through {{template "shared-….md" .}}.
func execute(name, text string, d data) (string, error) {
	t := template.New(name).Option("missingkey=error")
	partials, err := fs.Glob(src, "src/shared-*.md")
	if err != nil {
		return "", fmt.Errorf("brief: %w", err)
	}
	for _, p := range partials {
		raw, err := src.ReadFile(p)
		if err != nil {
			return "", fmt.Errorf("brief: %w", err)
		}
		// A partial is included mid-line or as a paragraph: its own final
		// newline would add a blank line.
		if _, err := t.New(path.Base(p)).Parse(strings.TrimRight(string(raw), "\n")); err != nil {
			return "", fmt.Errorf("brief: parse %s: %w", p, err)
		}
	}
	if _, err = t.New(name).Parse(text); err != nil {
		return "", fmt.Errorf("brief: parse %s: %w", name, err)
	}
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, name, d); err != nil {
		return "", fmt.Errorf("brief: render %s: %w", name, err)
	}
	return b.String(), nil
}
