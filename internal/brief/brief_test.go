package brief

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/whetstone-dev/whetstone/internal/review"
)

const root = "../.."

// maxReviewerBrief is the size every reviewer's agent file stays under: the
// brief is read in full by every reviewer of every iteration (its lens and
// the whole-change method are in its task, read only when used).
const maxReviewerBrief = 2560

func render(t *testing.T, name string) string {
	t.Helper()
	b, err := Render(name)
	if err != nil {
		t.Fatalf("Render(%q): %v", name, err)
	}
	return string(b)
}

func load(t *testing.T, name string) Agent {
	t.Helper()
	a, err := Load(name)
	if err != nil {
		t.Fatalf("Load(%q): %v", name, err)
	}
	return a
}

// TestAgentsUpToDate fails when a committed agents/*.md is not what the
// sources generate.
func TestAgentsUpToDate(t *testing.T) {
	const fix = "edit internal/brief/src, not agents/, then run `go run ./cmd/genagents` (or `go generate ./internal/brief`) from the module root"
	for _, name := range Names() {
		got, err := os.ReadFile(filepath.Join(root, "agents", name+".md"))
		if err != nil {
			t.Errorf("agents/%s.md: %v; %s", name, err, fix)
			continue
		}
		if want := render(t, name); string(got) != want {
			t.Errorf("agents/%s.md differs from its sources (-generated +committed):\n%s\n%s", name, cmp.Diff(want, string(got)), fix)
		}
	}
	files, err := filepath.Glob(filepath.Join(root, "agents", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if name := strings.TrimSuffix(filepath.Base(f), ".md"); !slices.Contains(Names(), name) {
			t.Errorf("agents/%s.md has no source internal/brief/src/%s.md; add one or delete the file", name, name)
		}
	}
}

// TestNamesAndFrontmatter: the agents are the registry's, each with the
// least privilege of its role: reviewers read, one fixer edits, one
// validator; Bash only for the agents that run things (a new one is a
// decision to make here); sonnet, the fixer the user's.
func TestNamesAndFrontmatter(t *testing.T) {
	var all []string
	byRole := map[string][]string{}
	for _, a := range Agents().All() {
		all = append(all, a.Name)
		byRole[a.Role] = append(byRole[a.Role], a.Name)
	}
	if diff := cmp.Diff(slices.Sorted(slices.Values(all)), Names()); diff != "" {
		t.Fatalf("Names() (-registry +got):\n%s", diff)
	}
	if !slices.Equal(byRole[RoleFixer], []string{"fixer"}) || !slices.Equal(byRole[RoleValidator], []string{"validator"}) || len(byRole[RoleReviewer]) == 0 {
		t.Fatalf("agents by role: %v; want one fixer, one validator and reviewers", byRole)
	}
	readOnly := []string{"Read", "Grep", "Glob"}
	for _, name := range Names() {
		a := load(t, name)
		tools, model := readOnly, "sonnet"
		switch name {
		case "witness", "validator":
			tools = append(slices.Clone(readOnly), "Bash")
		case "fixer":
			tools, model = append(slices.Clone(readOnly), "Edit", "Write", "Bash"), "inherit"
		}
		if a.Model != model {
			t.Errorf("%s model %q, want %q", name, a.Model, model)
		}
		if diff := cmp.Diff(tools, a.Tools); diff != "" {
			t.Errorf("%s tools (-want +got):\n%s", name, diff)
		}
		head := "---\nname: " + name + "\ndescription: " + a.Description + "\ntools: " + strings.Join(a.Tools, ", ") + "\nmodel: " + model + "\n---\n# whetstone:" + name + "\n"
		if got := render(t, name); !strings.HasPrefix(got, head) {
			t.Errorf("agents/%s.md does not start with\n%s", name, head)
		}
	}
}

func TestReviewerBriefSize(t *testing.T) {
	n := 0
	for _, name := range Names() {
		if load(t, name).Role != RoleReviewer {
			continue
		}
		n++
		if size := len(render(t, name)); size >= maxReviewerBrief {
			t.Errorf("agents/%s.md is %d bytes; a reviewer brief must stay under %d: condense the shared brief (src/shared-reviewer.md) or the description (src/%s.md)", name, size, maxReviewerBrief, name)
		}
	}
	if n != len(Agents().Reviewers()) || n == 0 {
		t.Errorf("%d reviewers rendered, the registry has %d", n, len(Agents().Reviewers()))
	}
}

// TestMarkerUnique keeps the first body line the only place an agent file
// names an agent: the end-to-end tests' fake model routes on it.
func TestMarkerUnique(t *testing.T) {
	for _, name := range Names() {
		body := load(t, name).Body
		lines := strings.Split(render(t, name), "\n")
		first := slices.Index(lines, "# whetstone:"+name)
		if first < 0 || !strings.HasPrefix(body, "# whetstone:"+name+"\n") {
			t.Errorf("agents/%s.md: the body's first line is not # whetstone:%s", name, name)
		}
		for i, line := range lines {
			if i != first && strings.Contains(line, "# whetstone:") {
				t.Errorf("agents/%s.md line %d contains \"# whetstone:\": %q", name, i+1, line)
			}
			for _, other := range Names() {
				if other != name && strings.Contains(line, "whetstone:"+other) {
					t.Errorf("agents/%s.md line %d names another agent, whetstone:%s: %q", name, i+1, other, line)
				}
			}
		}
	}
}

// TestRuleStated checks that every text a model reads states the blocking
// rule exactly as the binary applies it.
func TestRuleStated(t *testing.T) {
	if review.DefaultPolicy.ConfidenceThreshold != DefaultThreshold {
		t.Errorf("review.DefaultPolicy's threshold is %d, the briefs say %d: update DefaultThreshold in brief.go", review.DefaultPolicy.ConfidenceThreshold, DefaultThreshold)
	}
	// The rule is stated once per agent, with the run's numbers, in the
	// task whetstone gives it (loop.Run.Task, tested in package loop): the
	// briefs and the orchestrator's command only say who decides. The
	// user's guide states the default rule.
	rule := review.DefaultRule()
	for _, name := range Names() {
		if brief := render(t, name); strings.Contains(brief, rule) || !strings.Contains(brief, "your task (from whetstone, when you start) states this run's rule") {
			t.Errorf("agents/%s.md states the rule itself, or does not say where it comes from", name)
		}
	}
	for f, want := range map[string]bool{"skills/guide/SKILL.md": true, "commands/review.md": false} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(rule)) != want {
			t.Errorf("%s: holds review.DefaultRule() verbatim = %v, want %v:\n%s", f, !want, want, rule)
		}
	}
}

var categoryHint = regexp.MustCompile("Categor(?:y|ies): ([^;]*);")

// TestCategories checks that reviewers are given the closed category set and
// that no lens suggests a category outside it.
func TestCategories(t *testing.T) {
	set := "`" + strings.Join(review.Categories, "`, `") + "`"
	for _, name := range Names() {
		a := load(t, name)
		if a.Role != RoleReviewer {
			continue
		}
		if !strings.Contains(a.Body, set) {
			t.Errorf("%s: the brief does not list review.Categories", name)
		}
		m := categoryHint.FindStringSubmatch(a.Lens)
		if m == nil {
			t.Errorf("%s: the lens suggests no categories (\"Categories: `a`, `b`; rules such as …\")", name)
			continue
		}
		for _, c := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(m[1], -1) {
			if !slices.Contains(review.Categories, c[1]) {
				t.Errorf("%s suggests category %q, which is not in review.Categories; refine with a rule key instead", name, c[1])
			}
		}
	}
}

// TestExamplesValid runs each brief's example report through the validator
// the hooks use.
func TestExamplesValid(t *testing.T) {
	for _, name := range Names() {
		a := load(t, name)
		raw, err := review.Extract(a.Body)
		if err != nil {
			t.Errorf("%s: example report: %v", name, err)
			continue
		}
		var ps review.Problems
		switch a.Role {
		case RoleReviewer:
			_, ps = review.ValidateReview(raw, review.Expect{Reviewer: name, Threshold: DefaultThreshold, FixChecks: []string{"F-0001"}})
		case RoleFixer:
			_, ps = review.ValidateFix(raw, review.Expect{Required: []string{"F-0001", "F-0004"}})
		case RoleValidator:
			_, ps = review.ValidateValidation(raw, review.Expect{Required: []string{"F-0001", "F-0002"}})
		}
		if ps != nil {
			t.Errorf("%s: example report is invalid: %v", name, ps)
		}
	}
}

// TestLensInTheTask: a reviewer's brief is what holds in every round (who
// it is, the scales, the report); its lens and the method of a
// whole-change review are separate texts its task carries (loop.Run.Task
// tests that they reach it), and its one-line focus comes from its
// description.
func TestLensInTheTask(t *testing.T) {
	for _, name := range Names() {
		a := load(t, name)
		if a.Role != RoleReviewer {
			if a.Lens != "" || a.Method != "" {
				t.Errorf("%s, a %s, has a lens or a review method", name, a.Role)
			}
			continue
		}
		if !strings.HasPrefix(a.Lens, "## Your lens: ") || !strings.HasPrefix(a.Method, "## How to review\n") {
			t.Errorf("%s: lens %.40q, method %.40q; want the \"## Your lens: \" and \"## How to review\" sections", name, a.Lens, a.Method)
		}
		if strings.Contains(a.Body, "## Your lens") || strings.Contains(a.Body, "## How to review") || !strings.Contains(a.Body, "gives your lens and how to review it") {
			t.Errorf("agents/%s.md holds its lens or the review method, or does not say its task gives them:\n%s", name, a.Body)
		}
		if f := a.Focus(); len(f) < 20 || strings.Contains(f, "Read-only") || strings.HasPrefix(f, "whetstone") {
			t.Errorf("%s: focus %q is not its lens in one line", name, f)
		}
	}
}

func TestLoadUnknown(t *testing.T) {
	if _, err := Render("shared-reviewer"); err == nil {
		t.Error("Render(shared-reviewer) succeeded; partials are not agents")
	}
	if _, err := Render("nobody"); err == nil {
		t.Error("Render(nobody) succeeded")
	}
}

// owners maps each concern two lenses used to share to the one lens that
// owns it (docs/agents.md, "Who owns what", shows the same table). Every
// other lens either does not mention it or defers it by name: "Not yours:
// N+1 queries (database-reviewer)".
var owners = []struct{ Concern, Owner string }{
	{"`rows.Err()`", "database-reviewer"},
	{"N+1 queries", "database-reviewer"},
	{"SQL built from strings", "security-reviewer"},
	{"attacker-sized bodies", "security-reviewer"},
	{"unawaited promises", "concurrency-reviewer"},
	{"errors a goroutine returns", "silent-failure-hunter"},
	{"doc drift", "pedant"},
	{"duplication", "pedant"},
	{"missing tests", "pedant"},
	{"breaking changes", "api-reviewer"},
}

// TestOneOwner checks that each concern is owned in exactly one brief: its
// owner's lens names it, and every other brief that names it defers it to
// that owner.
func TestOneOwner(t *testing.T) {
	var reviewers []string
	for _, name := range Names() {
		if load(t, name).Role == RoleReviewer {
			reviewers = append(reviewers, name)
		}
	}
	names := strings.Join(reviewers, "|")
	for _, c := range owners {
		// An occurrence is deferred when an owner's name in parentheses
		// follows it within the clause; any other occurrence claims it.
		deferred := regexp.MustCompile(`(?i)^` + regexp.QuoteMeta(c.Concern) + `[^;()]*\((` + names + `)\)`)
		var owners []string
		for _, name := range reviewers {
			body := strings.ToLower(load(t, name).Lens)
			owns := false
			for i := 0; ; {
				j := strings.Index(body[i:], strings.ToLower(c.Concern))
				if j < 0 {
					break
				}
				i += j
				switch m := deferred.FindStringSubmatch(body[i:]); {
				case m == nil:
					owns = true
				case m[1] != c.Owner:
					t.Errorf("%s defers %s to %s; its owner is %s", name, c.Concern, m[1], c.Owner)
				}
				i += len(c.Concern)
			}
			if owns {
				owners = append(owners, name)
			}
		}
		if !slices.Equal(owners, []string{c.Owner}) {
			t.Errorf("%s is owned by %v, want only %s: every other lens says \"Not yours: %s (%s)\" or nothing", c.Concern, owners, c.Owner, c.Concern, c.Owner)
		}
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "agents.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range owners {
		if row := "| " + c.Concern + " | " + c.Owner + " |"; !strings.Contains(string(doc), row) {
			t.Errorf("docs/agents.md has no row %q in its ownership table", row)
		}
	}
}
