package e2e

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/whetstone-dev/whetstone/internal/fakemodel"
)

// whetstone runs the plugin's binary in the repo with the session's
// environment (the same HOME, so the same key, as the hooks had) and
// returns its stdout and exit code; stderr is logged.
func (s *session) whetstone(args ...string) (string, int) {
	s.t.Helper()
	cmd := exec.Command(filepath.Join(s.env.plugin, "bin", "whetstone"), args...)
	cmd.Dir = s.repo.dir
	cmd.Env = append(append(cleanEnv(), "HOME="+s.home, "TMPDIR="+s.tmp), s.environ...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		s.t.Fatalf("whetstone %v: %v", args, err)
	}
	if stderr.Len() > 0 {
		s.t.Logf("whetstone %v: exit %d, stderr: %s", args, code, stderr.String())
	}
	return stdout.String(), code
}

// wantValidSARIF checks data against the official SARIF 2.1.0 schema.
func wantValidSARIF(t *testing.T, data string) {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	sch, err := c.Compile(filepath.Join("..", "testdata", "schema", "sarif-schema-2.1.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(data))
	if err != nil {
		t.Fatalf("report --format sarif printed no JSON: %v", err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("report --format sarif is not valid SARIF 2.1.0: %v", err)
	}
}

// TestCIRecipe is the documented CI job (docs/ci/whetstone-review.yml) with
// the real claude in -p mode: a pull-request branch is reviewed with
// `/whetstone:review --since origin/main`; the loop runs to DONE; then
// `whetstone report --format sarif` is valid SARIF 2.1.0 and equals
// report.sarif, and `whetstone report --exit-code` lets an approved change
// pass. (TestStopsAtMaxIterations checks that REQUEST_CHANGES fails it.)
func TestCIRecipe(t *testing.T) {
	t.Parallel()
	e := setup(t)
	base := maps.Clone(baseFiles)
	base["whetstone.json"] = `{"depth": "quick"}` + "\n"
	r := newRepo(t, base, nil)
	// A CI checkout of a pull request: the branch committed, the base
	// fetched as origin/main.
	r.git("update-ref", "refs/remotes/origin/main", "HEAD")
	r.git("checkout", "-q", "-b", "feature")
	r.write(changedFiles)
	r.git("commit", "-q", "-am", "change")
	maxBug := fakemodel.Finding{Severity: "high", Category: "correctness", File: "calc.go", Line: 20,
		Title: "Max returns 0 when every element is negative", Description: "best starts at 0."}
	s := newSession(t, e, r, fakemodel.Whetstone{
		Findings: func(reviewer string, iteration int) []fakemodel.Finding {
			if reviewer == "critic" {
				return []fakemodel.Finding{maxBug}
			}
			return nil
		},
	}.Script())
	// The recipe writes the pull request's title and description to
	// .whetstone/pull-request.md and names it with --intent.
	recipe, err := os.ReadFile(filepath.Join("..", "docs", "ci", "whetstone-review.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"> .whetstone/pull-request.md", `/whetstone:review --since origin/${GITHUB_BASE_REF} --intent .whetstone/pull-request.md"`} {
		if !strings.Contains(string(recipe), want) {
			t.Fatalf("the CI recipe lacks %q", want)
		}
	}
	r.write(map[string]string{".whetstone/pull-request.md": "Report the maximum\n\nMax is now reported in the summary.\n"})
	s.claude("/whetstone:review --since origin/main --intent .whetstone/pull-request.md")

	run := wantRun(t, r, "done", "", "APPROVE_WITH_NOTES", 1)
	sarif, code := s.whetstone("report", "--format", "sarif")
	if code != 0 {
		t.Fatalf("report --format sarif exited %d", code)
	}
	wantValidSARIF(t, sarif)
	if sarif != r.read(runFile(run, "report.sarif")) {
		t.Error("report --format sarif differs from the run's report.sarif")
	}
	if !strings.Contains(sarif, `"uri": "calc.go"`) || !strings.Contains(sarif, `"suppressions"`) {
		t.Errorf("report.sarif does not hold the pre-existing Max finding as a suppressed result:\n%s", sarif)
	}
	if out, code := s.whetstone("report", "--exit-code"); code != 0 || !strings.Contains(out, "**Verdict: APPROVE_WITH_NOTES**") {
		t.Errorf("report --exit-code on an approved run: exit %d, want 0; report:\n%s", code, out)
	}
	ctx := r.read(runFile(run, "context.json"))
	if !strings.Contains(ctx, `"base_ref": "origin/main"`) {
		t.Errorf("the run did not review the branch against origin/main:\n%.400s", ctx)
	}
	// The author's intent: the commit's message and the description.
	for _, want := range []string{`"subject": "change"`, `"description": "Report the maximum\n\nMax is now reported in the summary."`} {
		if !strings.Contains(ctx, want) {
			t.Errorf("context.json lacks %s", want)
		}
	}
	for _, c := range s.reviewerCalls() {
		if !strings.Contains(c.req.SystemMessages(), `(the messages of the 1 reviewed commit and the pull-request description): "intent" in`) {
			t.Errorf("%s's task does not name the intent:\n%s", c.reviewer, c.req.SystemMessages())
		}
	}
	if _, err := os.Stat(filepath.Join(r.dir, "whetstone.json")); err != nil {
		t.Fatal(err)
	}
}
