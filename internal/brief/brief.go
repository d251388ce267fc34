// Package brief generates the agents' briefs from one set of sources, so the
// reviewer contract, the output rules and the blocking rule are written once
// and every agent file states them the same way (the binary's own text for
// the rule, filled in from package review).
//
// The sources live in src/: shared-*.md are partials (shared-reviewer.md is
// the brief every reviewer gets, shared-method.md the method of a review of
// the whole change, which its task carries with its lens), and every other
// <name>.md is one agent: a YAML frontmatter of host-neutral data (role,
// description, tools, model, and the registry's order, depths and triggers:
// registry.go) and a text/template body. The registry (Agents) is the one
// list of agents the binary knows; Render turns an agent into a Claude Code
// agent file, with only the keys it reads (internal/client renders every
// client's files).
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
	Tools       []string  // Claude Code tool names, least privilege
	Model       string    // "sonnet", "inherit", …
	Order       int       // where it is listed: dispatch, rosters, doctor
	Depths      []string  // a reviewer's depths (Depths); none for the others
	Triggers    *Triggers // a specialist's; nil for a core reviewer and the others
	Body        string    // the brief, starts with "# whetstone:<name>"; set by Load
	// A reviewer's lens ("## Your lens: …", its source rendered) and the
	// method of a whole-change review ("## How to review",
	// shared-method.md): its task carries them, not its brief, so a
	// focused round after a fix does not pay for them again (Load).
	Lens, Method string
	source       string // the body's template
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
}

// Names lists the agents of the built-in sources, sorted.
func Names() []string {
	var names []string
	for _, a := range Agents().All() {
		names = append(names, a.Name)
	}
	slices.Sort(names)
	return names
}

// Load renders agent name of the built-in sources.
func Load(name string) (Agent, error) { return Agents().Load(name) }

// Render is the Claude Code agent file of agent name of the built-in
// sources: agents/<name>.md.
func Render(name string) ([]byte, error) { return Agents().Render(name) }

// Load is agent name with its body rendered.
func (r Registry) Load(name string) (Agent, error) {
	a, ok := r.Get(name)
	if !ok {
		return Agent{}, fmt.Errorf("brief: no agent %q", name)
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
	text, err := r.execute(name+".md", a.source, d)
	if err != nil {
		return Agent{}, err
	}
	if a.Role == RoleReviewer {
		a.Lens = strings.TrimSpace(text)
		if a.Method, err = r.execute("review method", `{{template "shared-method.md" .}}`, d); err != nil {
			return Agent{}, err
		}
		if text, err = r.execute("reviewer contract", `{{template "shared-reviewer.md" .}}`, d); err != nil {
			return Agent{}, err
		}
	}
	a.Body = "# whetstone:" + name + "\n\n" + strings.TrimSpace(text) + "\n"
	return a, nil
}

// Focus is a reviewer's lens in one line, from its description ("security
// reviewer: traces untrusted input in the change to dangerous sinks"): what
// its task in a focused round names instead of the whole lens.
func (a Agent) Focus() string {
	focus, _, _ := strings.Cut(strings.TrimPrefix(a.Description, "whetstone "), ". Read-only")
	return strings.TrimSuffix(focus, ".")
}

// Bar is the last paragraph of a reviewer's lens: what a finding's
// evidence must show and what is not its lens ("Not yours: …"), which a
// focused round's one-line lens keeps, to keep new findings calibrated.
func (a Agent) Bar() string {
	lens := strings.TrimSpace(a.Lens)
	if i := strings.LastIndex(lens, "\n\n"); i >= 0 {
		return strings.TrimSpace(lens[i:])
	}
	return ""
}

// Render is the Claude Code agent file of agent name: agents/<name>.md.
// Its frontmatter holds what Claude Code reads, none of the registry's keys.
func (r Registry) Render(name string) ([]byte, error) {
	a, err := r.Load(name)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "---\nname: %s\ndescription: %s\ntools: %s\nmodel: %s\n---\n", a.Name, a.Description, strings.Join(a.Tools, ", "), a.Model)
	b.WriteString(a.Body)
	return b.Bytes(), nil
}

// execute renders text as template name, with every shared-*.md partial
// of the registry's sources available through {{template "shared-….md" .}}.
func (r Registry) execute(name, text string, d data) (string, error) {
	base, err := r.partials()
	if err != nil {
		return "", err
	}
	t, err := base.Clone()
	if err != nil {
		return "", fmt.Errorf("brief: %w", err)
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

// parsePartials parses the shared-*.md partials of src into one template
// set, for execute to clone.
func parsePartials(src fs.FS) (*template.Template, error) {
	t := template.New("").Option("missingkey=error")
	partials, err := fs.Glob(src, "shared-*.md")
	if err != nil {
		return nil, fmt.Errorf("brief: %w", err)
	}
	for _, p := range partials {
		raw, err := readSource(src, p)
		if err != nil {
			return nil, err
		}
		// A partial is included mid-line or as a paragraph: its own final
		// newline would add a blank line.
		if _, err := t.New(path.Base(p)).Parse(strings.TrimRight(raw, "\n")); err != nil {
			return nil, fmt.Errorf("brief: parse %s: %w", p, err)
		}
	}
	return t, nil
}
