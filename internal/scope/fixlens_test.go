package scope

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFixLenses: the lenses of a fix come from what fix.patch holds, not
// from the whole change: a fix that edits a comment in a Go file and a
// README calls in nobody; one that adds an error path, a query and a new
// file calls in the silent-failure hunter, the database reviewer, the
// witness and the pedant; a skipped file calls in nothing; without a
// verify command the witness has nothing to run and is not called in.
func TestFixLenses(t *testing.T) {
	r := newRepo(t)
	r.write("a.go", "package a\n\n// Sum adds.\nfunc Sum(xs []int) int { return 0 }\n")
	r.write("README.md", "# a\n")
	r.write("go.sum", "x v1 h1:abc\n")
	r.write("go.mod", "module a\n")
	r.commit("base")
	r.write("a.go", "package a\n\n// Sum adds them.\nfunc Sum(xs []int) int { return 0 }\n")
	prev, _ := r.detect(Request{Uncommitted: true})

	var noVerify bool // the project has no verify command: the witness has nothing to run
	lensesOf := func() []string {
		t.Helper()
		next, _, fix, err := Next(context.Background(), r.dir, prev)
		if err != nil {
			t.Fatal(err)
		}
		if noVerify {
			next.Verify = nil
		}
		lenses, err := FixLenses(fix, next, map[string][]string{"api-reviewer": {"b.go"}})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, l := range lenses {
			names = append(names, l.Name+": "+l.Reason)
		}
		return names
	}
	r.write("a.go", "package a\n\n// Sum adds all of them.\nfunc Sum(xs []int) int { return 0 }\n")
	r.write("README.md", "# a\n\nSum adds; see the code.\n")
	r.write("go.sum", "x v1 h1:abc\ny v2 h1:def err\n")
	if got := lensesOf(); len(got) != 0 {
		t.Errorf("a comment and documentation call in %v", got)
	}

	r.write("a.go", "package a\n\nimport \"database/sql\"\n\n// Sum adds.\nfunc Sum(db *sql.DB) (int, error) {\n\tvar n int\n\tif err := db.QueryRow(\"SELECT sum(x) FROM t\").Scan(&n); err != nil {\n\t\treturn 0, err\n\t}\n\treturn n, nil\n}\n")
	r.write("b.go", "package a\n")
	got := lensesOf()
	want := []string{
		"witness: a.go changes code",
		"security-reviewer: a.go:3 adds \"sql\"",
		"silent-failure-hunter: a.go:6 adds \"error\"",
		"pedant: b.go is a new file",
		"api-reviewer: b.go matches b.go (whetstone.json)",
		"database-reviewer: a.go:3 adds \"\\\"database/sql\\\"\"",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lenses (-want +got):\n%s", diff)
	}
	if strings.Contains(strings.Join(got, "\n"), "go.sum") {
		t.Errorf("a skipped file calls in a lens: %v", got)
	}
	noVerify = true
	if got := lensesOf(); slices.ContainsFunc(got, func(l string) bool { return strings.HasPrefix(l, "witness:") }) {
		t.Errorf("without a verify command the witness is called in: %v", got)
	}
}
