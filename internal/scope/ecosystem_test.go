package scope

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDetectVerify builds one real repository per ecosystem and checks the
// commands context.json lists, in order, with where each came from.
func TestDetectVerify(t *testing.T) {
	type v = VerifyCommand
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  []v
	}{
		{"go", map[string]string{"go.mod": "module x\n\ngo 1.21\n"}, []v{
			{"go build -o /dev/null ./...", "build", "go.mod"}, {"go vet ./...", "lint", "go.mod"}, {"go test ./...", "test", "go.mod"}}},
		{"npm", map[string]string{"package.json": `{"scripts":{"test":"node --test","build":"tsc","lint":"eslint .","typecheck":"tsc --noEmit","start":"node ."}}`, "package-lock.json": "{}"}, []v{
			{"npm test", "test", "package.json scripts.test"}, {"npm run build", "build", "package.json scripts.build"},
			{"npm run lint", "lint", "package.json scripts.lint"}, {"npm run typecheck", "lint", "package.json scripts.typecheck"}}},
		{"no lockfile is npm", map[string]string{"package.json": `{"scripts":{"test":"node --test"}}`}, []v{{"npm test", "test", "package.json scripts.test"}}},
		{"pnpm", map[string]string{"package.json": `{"scripts":{"test":"vitest","build":"vite build"}}`, "pnpm-lock.yaml": ""}, []v{
			{"pnpm test", "test", "package.json scripts.test"}, {"pnpm run build", "build", "package.json scripts.build"}}},
		{"yarn", map[string]string{"package.json": `{"scripts":{"lint":"eslint ."}}`, "yarn.lock": ""}, []v{{"yarn run lint", "lint", "package.json scripts.lint"}}},
		{"bun runs the script, not its own runner", map[string]string{"package.json": `{"scripts":{"test":"vitest"}}`, "bun.lock": ""}, []v{{"bun run test", "test", "package.json scripts.test"}}},
		{"packageManager wins over the lockfile", map[string]string{"package.json": `{"packageManager":"pnpm@9.1.0","scripts":{"test":"x"}}`, "package-lock.json": "{}"}, []v{{"pnpm test", "test", "package.json scripts.test"}}},
		{"no scripts, bad json", map[string]string{"package.json": `{"scripts":`}, nil},
		{"pytest in pyproject", map[string]string{"pyproject.toml": "[project]\nname = \"x\"\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n"}, []v{
			{"python3 -m pytest", "test", "pyproject.toml [tool.pytest.ini_options]"}}},
		{"pytest in setup.cfg", map[string]string{"setup.cfg": "[metadata]\nname = x\n[tool:pytest]\n"}, []v{{"python3 -m pytest", "test", "setup.cfg [tool:pytest]"}}},
		{"pytest in tox.ini", map[string]string{"tox.ini": "[tox]\n[pytest]\n"}, []v{{"python3 -m pytest", "test", "tox.ini [pytest]"}}},
		{"pytest.ini", map[string]string{"pytest.ini": "[pytest]\n", "tests/test_a.py": ""}, []v{{"python3 -m pytest", "test", "pytest.ini"}}},
		{"unittest in tests/", map[string]string{"pyproject.toml": "[project]\nname = \"x\"\n", "tests/test_a.py": "", "app.py": ""}, []v{
			{"python3 -m unittest discover -s tests", "test", "tests/test*.py"}}},
		{"unittest at the root", map[string]string{"test_app.py": "", "app.py": ""}, []v{{"python3 -m unittest", "test", "test*.py"}}},
		{"a test dir without Python is not Python", map[string]string{"test/a.js": ""}, nil},
		{"cargo", map[string]string{"Cargo.toml": "[package]\nname = \"x\"\n"}, []v{
			{"cargo build", "build", "Cargo.toml"}, {"cargo test", "test", "Cargo.toml"}, {"cargo clippy", "lint", "Cargo.toml"}}},
		{"maven", map[string]string{"pom.xml": "<project/>"}, []v{{"mvn -q test", "test", "pom.xml"}}},
		{"gradle wrapper", map[string]string{"build.gradle.kts": "", "gradlew": "#!/bin/sh\n"}, []v{{"./gradlew test", "test", "build.gradle.kts and gradlew"}}},
		{"gradle", map[string]string{"build.gradle": ""}, []v{{"gradle test", "test", "build.gradle"}}},
		{"makefile targets", map[string]string{"Makefile": ".PHONY: test lint\nCC := gcc\nX = a:b\ntest: build\n\tgo test\ncheck lint:: \n\ttrue\n# test2:\nall:\n"}, []v{
			{"make test", "test", "Makefile target test"}, {"make check", "test", "Makefile target check"}, {"make lint", "lint", "Makefile target lint"}}},
		{"GNUmakefile first", map[string]string{"GNUmakefile": "lint:\n", "Makefile": "test:\n"}, []v{{"make lint", "lint", "GNUmakefile target lint"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			r.write("README", "x\n")
			for name, body := range tc.files {
				r.write(name, body)
			}
			r.commit("base")
			r.write("README", "y\n")
			c, _ := r.detect(Request{Uncommitted: true, VerifyCommands: []string{"  ./ci.sh   unit "}})
			want := append(append([]v{}, tc.want...), v{"./ci.sh unit", "", SourceConfig})
			if d := cmp.Diff(want, c.Verify); d != "" {
				t.Errorf("verify (-want +got):\n%s", d)
			}
		})
	}
}

// TestDetectVerifyStaysInProject: a manifest that is a symlink out of the
// project is not read, and one over the size bound is ignored.
func TestDetectVerifyStaysInProject(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "package.json"), []byte(`{"scripts":{"test":"x"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := newRepo(t)
	r.write("README", "x\n")
	if err := os.Symlink(filepath.Join(outside, "package.json"), filepath.Join(r.dir, "package.json")); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, maxManifest+1)
	for i := range big {
		big[i] = '\n'
	}
	copy(big, "test:\n")
	r.write("Makefile", string(big))
	r.commit("base")
	r.write("README", "y\n")
	c, _ := r.detect(Request{Uncommitted: true})
	if len(c.Verify) != 0 {
		t.Errorf("verify = %+v, want none: package.json leads outside the project and the Makefile is over the bound", c.Verify)
	}
}

// TestNextDetectsVerifyAgain: the fixer's tree is detected again, and
// whetstone.json's commands carry over.
func TestNextDetectsVerifyAgain(t *testing.T) {
	r := newRepo(t)
	r.write("package.json", `{"scripts":{"test":"node --test"}}`)
	r.commit("base")
	r.write("package.json", `{"scripts":{"test":"node --test","lint":"eslint ."}}`)
	prev, _ := r.detect(Request{Uncommitted: true, VerifyCommands: []string{"make e2e"}})
	r.write("Makefile", "check:\n")
	next, _, _, err := Next(context.Background(), r.dir, prev)
	if err != nil {
		t.Fatal(err)
	}
	want := []VerifyCommand{{"npm test", "test", "package.json scripts.test"}, {"npm run lint", "lint", "package.json scripts.lint"},
		{"make check", "test", "Makefile target check"}, {"make e2e", "", SourceConfig}}
	if d := cmp.Diff(want, next.Verify); d != "" {
		t.Errorf("verify (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"npm test", "npm run lint", "make check"}, Detected(next.Verify)); d != "" {
		t.Errorf("detected (-want +got):\n%s", d)
	}
}
