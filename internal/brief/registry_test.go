package brief

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// TestRegistryOrder: the order of the frontmatter is the order runs
// dispatch their reviewers and doctor lists the agent files in.
func TestRegistryOrder(t *testing.T) {
	reg := Agents()
	want := []string{"critic", "pedant", "witness", "security-reviewer", "silent-failure-hunter",
		"performance-reviewer", "api-reviewer", "database-reviewer", "concurrency-reviewer", "architecture-reviewer"}
	if diff := cmp.Diff(want, reg.Reviewers()); diff != "" {
		t.Errorf("Reviewers() (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"critic", "security-reviewer", "silent-failure-hunter"}, reg.Core("quick")); diff != "" {
		t.Errorf("Core(quick) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[:5], reg.Core("deep")); diff != "" {
		t.Errorf("Core(deep) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[5:], reg.Specialists()); diff != "" {
		t.Errorf("Specialists() (-want +got):\n%s", diff)
	}
	var all []string
	for _, a := range reg.All() {
		all = append(all, a.Name)
	}
	if diff := cmp.Diff(append([]string{"fixer", "validator"}, want...), all); diff != "" {
		t.Errorf("All() (-want +got):\n%s", diff)
	}
}

// TestRegistryTriggers: the specialists' triggers, read from YAML, are the
// ones scope applied when they were Go literals.
func TestRegistryTriggers(t *testing.T) {
	reg := Agents()
	db, _ := reg.Get("database-reviewer")
	if !slices.Contains(db.Triggers.PathWords, "migrations") || !slices.Contains(db.Triggers.Extensions, ".sql") || db.Triggers.InTests {
		t.Errorf("database-reviewer's triggers: %+v", db.Triggers)
	}
	for line, want := range map[string]string{
		`rows, err := db.Query("SELECT id FROM users")`: "SELECT id FROM",
		`import "database/sql"`:                         `"database/sql"`,
		`UPDATE accounts SET balance = 0`:               "UPDATE accounts SET",
		`selection from the list`:                       "",
	} {
		if got := db.Triggers.Added().FindString(line); got != want {
			t.Errorf("database-reviewer on %q: %q, want %q", line, got, want)
		}
	}
	conc, _ := reg.Get("concurrency-reviewer")
	if !conc.Triggers.InTests || conc.Triggers.Added().FindString(`var mu sync.Mutex`) != "sync." {
		t.Errorf("concurrency-reviewer's triggers: %+v", conc.Triggers)
	}
	arch, _ := reg.Get("architecture-reviewer")
	if arch.Triggers.FilesOver != 20 || arch.Triggers.Added() != nil {
		t.Errorf("architecture-reviewer's triggers: %+v", arch.Triggers)
	}
	api, _ := reg.Get("api-reviewer")
	if api.Triggers.Added().FindString(`mux.HandleFunc("/v1/users", h)`) != ".HandleFunc(" {
		t.Errorf("api-reviewer's added-line pattern misses HandleFunc: %s", api.Triggers.AddedLines)
	}
}

// TestLoadRegistryErrors: a source the registry cannot use is an error
// naming the file and what is wrong, never a silently dropped agent.
func TestLoadRegistryErrors(t *testing.T) {
	const ok = "role: reviewer\ndescription: \"x: y\"\ntools: Read, Grep, Glob\nmodel: sonnet\norder: 5\ndepths: [standard]\n"
	cases := []struct{ name, front, want string }{
		{"fine", ok, ""},
		{"unknown key", ok + "colour: red\n", "field colour not found"},
		{"unquoted colon", strings.Replace(ok, `"x: y"`, "x: y", 1), "frontmatter"},
		{"no order", strings.Replace(ok, "order: 5\n", "", 1), "order"},
		{"bad depth", strings.Replace(ok, "[standard]", "[thorough]", 1), `depth "thorough"`},
		{"no depth", strings.Replace(ok, "depths: [standard]\n", "", 1), "needs depths"},
		{"fixer with depths", strings.Replace(ok, "role: reviewer", "role: fixer", 1), "depths and triggers are a reviewer's"},
		{"bad role", strings.Replace(ok, "role: reviewer", "role: judge", 1), `role "judge"`},
		{"empty triggers", ok + "triggers: {}\n", "triggers name none"},
		{"bad pattern", ok + "triggers:\n  added_lines: 'a(b'\n", "added_lines: error parsing regexp"},
		{"path with a slash", ok + "triggers:\n  path_words: [db/migrate]\n", `path word "db/migrate"`},
		{"upper-case extension", ok + "triggers:\n  extensions: [.SQL]\n", `extension ".SQL"`},
		{"in tests alone", ok + "triggers:\n  files_over: 3\n  added_lines_in_tests: true\n", "added_lines_in_tests without added_lines"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadRegistry(fstest.MapFS{"lens.md": {Data: []byte("---\n" + c.front + "---\nbody\n")}})
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("LoadRegistry: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "lens.md")):
				t.Fatalf("LoadRegistry: %v, want an error naming lens.md and %q", err, c.want)
			}
		})
	}
	if _, err := LoadRegistry(fstest.MapFS{"Lens.md": {Data: []byte("---\n" + ok + "---\n")}}); err == nil {
		t.Error("an agent named Lens was accepted")
	}
	if _, err := LoadRegistry(fstest.MapFS{"shared-x.md": {Data: []byte("partial")}}); err == nil {
		t.Error("sources with no agent were accepted")
	}
	if _, err := LoadRegistry(fstest.MapFS{"lens.md": {Data: []byte(ok)}}); err == nil || !strings.Contains(err.Error(), "no frontmatter") {
		t.Errorf("a source without --- lines: %v", err)
	}
}

// runs is what docs/agents.md's roster says of when an agent runs.
func runs(a Agent) string {
	switch {
	case a.Role == RoleFixer:
		return "fix phase"
	case a.Role == RoleValidator:
		return "deep, before each fix"
	case a.Triggers != nil && a.Triggers.FilesOver > 0:
		return "when triggered (many files)"
	case a.Triggers != nil:
		return "when triggered"
	case slices.Equal(a.Depths, Depths):
		return "every depth"
	}
	return strings.Join(a.Depths, ", ")
}

var numberWords = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
	"ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"}

// TestDocsListTheRegistry: every list of agents in the docs is the
// registry's: docs/agents.md's roster (when each runs, tools, model),
// docs/design.md's table, the counts, and the depth sets of the README and
// the user's guide.
func TestDocsListTheRegistry(t *testing.T) {
	reg := Agents()
	read := func(file string) string {
		b, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	row := regexp.MustCompile("(?m)^\\| `whetstone:([a-z0-9-]+)` \\|(.*)\\|$")
	var names []string
	for _, a := range reg.All() {
		names = append(names, a.Name)
	}
	slices.Sort(names)
	for _, file := range []string{"docs/agents.md", "docs/design.md"} {
		var listed []string
		for _, m := range row.FindAllStringSubmatch(read(file), -1) {
			listed = append(listed, m[1])
			a, ok := reg.Get(m[1])
			if !ok {
				continue
			}
			cells := strings.Split(m[2], " | ")
			if file == "docs/agents.md" {
				want := []string{runs(a), strings.Join(a.Tools, ", "), a.Model}
				if got := []string{strings.TrimSpace(cells[0]), strings.TrimSpace(cells[2]), strings.TrimSpace(cells[3])}; !slices.Equal(got, want) {
					t.Errorf("docs/agents.md: %s runs, tools, model: %q, the registry says %q", a.Name, got, want)
				}
			} else if conditional := strings.HasPrefix(strings.TrimSpace(cells[0]), "conditional:"); conditional != (a.Triggers != nil) {
				t.Errorf("docs/design.md: %s is conditional = %v; it has triggers = %v", a.Name, conditional, a.Triggers != nil)
			}
		}
		slices.Sort(listed)
		if diff := cmp.Diff(names, listed); diff != "" {
			t.Errorf("%s lists other agents than internal/brief/src (-registry +docs):\n%s", file, diff)
		}
	}
	n := numberWords[len(reg.All())]
	for file, phrase := range map[string]string{
		"docs/agents.md": "ships " + n + " subagents",
		"docs/cli.md":    "the " + n + " agents",
		"README.md":      "the " + n + " agents",
	} {
		if !strings.Contains(read(file), phrase) {
			t.Errorf("%s does not say %q", file, phrase)
		}
	}
	quick, standard := reg.Core("quick"), reg.Core("standard")
	andList := strings.Join(quick[:len(quick)-1], ", ") + " and " + quick[len(quick)-1]
	for file, phrases := range map[string][]string{
		"README.md":             {"`quick` (" + strings.Join(quick, ", ") + ";", "the " + numberWords[len(standard)] + " core reviewers plus specialists"},
		"skills/guide/SKILL.md": {"`quick`: " + andList + ";", "all core reviewers (" + strings.Join(standard, ", ") + ") plus the specialists"},
	} {
		for _, p := range phrases {
			if !strings.Contains(strings.Join(strings.Fields(read(file)), " "), p) {
				t.Errorf("%s does not say %q", file, p)
			}
		}
	}
	guide := regexp.MustCompile(`plus the specialists the changed files call for \(([^)]*)\)`).FindStringSubmatch(read("skills/guide/SKILL.md"))
	if guide == nil {
		t.Fatal("skills/guide/SKILL.md does not list the specialists")
	}
	var stems []string
	for _, s := range reg.Specialists() {
		stems = append(stems, strings.ToLower(strings.TrimSuffix(s, "-reviewer")))
	}
	if got := strings.Split(strings.ToLower(guide[1]), ", "); !slices.Equal(got, stems) {
		t.Errorf("skills/guide/SKILL.md lists the specialists %q, the registry %q", got, stems)
	}
}
