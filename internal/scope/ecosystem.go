package scope

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/whetstone-dev/whetstone/internal/safeio"
)

// VerifyCommand is one command that builds, tests or lints the project,
// detected from its files or listed in whetstone.json's verify_commands.
// The agents may run exactly these (docs/sandbox.md); each runs the
// project's code, so only in the sandbox.
type VerifyCommand struct {
	Command string `json:"command"`        // the exact line, such as "npm test"
	Kind    string `json:"kind,omitempty"` // build | test | lint; none for verify_commands
	Source  string `json:"source"`         // where it comes from, such as "package.json scripts.test"
}

// SourceConfig is the Source of a whetstone.json verify_commands entry.
const SourceConfig = "whetstone.json verify_commands"

// maxManifest bounds each project file detection reads; a larger one is
// ignored, as if absent.
const maxManifest = 1 << 20

// GoVerify are the detected commands of a Go module. The shell gate allows
// the go tool's own flags around them (shell.DefaultVerify) only when they
// are detected.
var GoVerify = []string{"go build -o /dev/null ./...", "go vet ./...", "go test ./..."}

// DetectVerify returns the project's own build, test and lint commands,
// found from the files at root, followed by configured (whetstone.json's
// verify_commands). Only files directly at root are read, each bounded;
// a symlink is followed only when it stays inside the project.
func DetectVerify(root string, configured []string) []VerifyCommand {
	p := newProject(root)
	var out []VerifyCommand
	add := func(kind, source string, cmd string) {
		if !slices.ContainsFunc(out, func(v VerifyCommand) bool { return v.Command == cmd }) {
			out = append(out, VerifyCommand{Command: cmd, Kind: kind, Source: source})
		}
	}
	for _, mod := range []string{"go.mod", "go.work"} {
		if p.file(mod) {
			for i, kind := range []string{"build", "lint", "test"} {
				add(kind, mod, GoVerify[i])
			}
			break
		}
	}
	p.node(add)
	p.python(add)
	if p.file("Cargo.toml") {
		add("build", "Cargo.toml", "cargo build")
		add("test", "Cargo.toml", "cargo test")
		add("lint", "Cargo.toml", "cargo clippy")
	}
	if p.file("pom.xml") {
		add("test", "pom.xml", "mvn -q test")
	}
	for _, build := range []string{"build.gradle", "build.gradle.kts"} {
		if !p.file(build) {
			continue
		}
		if p.file("gradlew") {
			add("test", build+" and gradlew", "./gradlew test")
		} else {
			add("test", build, "gradle test")
		}
	}
	p.make(add)
	for _, c := range configured {
		if c = strings.Join(strings.Fields(c), " "); c != "" {
			add("", SourceConfig, c)
		}
	}
	if out == nil {
		out = []VerifyCommand{}
	}
	return out
}

// Detected returns the commands of vs that were detected from the
// project's files, not configured: the ones the gate matches exactly.
func Detected(vs []VerifyCommand) []string {
	out := []string{}
	for _, v := range vs {
		if v.Source != SourceConfig {
			out = append(out, v.Command)
		}
	}
	return out
}

// configured returns the commands of vs that came from whetstone.json.
func configured(vs []VerifyCommand) []string {
	var out []string
	for _, v := range vs {
		if v.Source == SourceConfig {
			out = append(out, v.Command)
		}
	}
	return out
}

// project reads files at the root of the project, bounded and without
// leaving it. real is root with its symlinks resolved, once.
type project struct{ root, real string }

func newProject(root string) project {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		real = "" // nothing is within it: every file reads as missing
	}
	return project{root: root, real: real}
}

// path returns the real path of name under root, or "" when it does not
// exist or leads outside the project.
func (p project) path(name string) string {
	real, err := filepath.EvalSymlinks(filepath.Join(p.root, name))
	if err != nil {
		return ""
	}
	if p.real == "" || !safeio.Within(p.real, real) {
		return ""
	}
	return real
}

// file reports whether name is a regular file of the project.
func (p project) file(name string) bool {
	real := p.path(name)
	if real == "" {
		return false
	}
	info, err := os.Stat(real)
	return err == nil && info.Mode().IsRegular()
}

// read returns the content of name, nil when it is missing, too large or
// leads outside the project.
func (p project) read(name string) []byte {
	data, err := safeio.ReadIn(p.root, filepath.Join(p.root, name), maxManifest)
	if err != nil {
		return nil
	}
	return data
}

// node adds package.json's test, build, lint and typecheck scripts, run
// with the package manager that package.json's packageManager field or
// the lockfile names (npm when neither does).
func (p project) node(add func(kind, source, cmd string)) {
	data := p.read("package.json")
	if data == nil {
		return
	}
	var pkg struct {
		Scripts        map[string]any `json:"scripts"`
		PackageManager string         `json:"packageManager"`
	}
	if json.Unmarshal(data, &pkg) != nil {
		return
	}
	pm := p.packageManager(pkg.PackageManager)
	for _, s := range []struct{ script, kind string }{{"test", "test"}, {"build", "build"}, {"lint", "lint"}, {"typecheck", "lint"}} {
		if body, ok := pkg.Scripts[s.script].(string); !ok || strings.TrimSpace(body) == "" {
			continue
		}
		cmd := pm + " run " + s.script
		if s.script == "test" && pm != "bun" { // bun test is bun's own runner, not the script
			cmd = pm + " test"
		}
		add(s.kind, "package.json scripts."+s.script, cmd)
	}
}

// packageManager chooses npm, pnpm, yarn or bun.
func (p project) packageManager(field string) string {
	name, _, _ := strings.Cut(field, "@")
	switch name {
	case "npm", "pnpm", "yarn", "bun":
		return name
	}
	for _, l := range []struct{ file, pm string }{
		{"package-lock.json", "npm"}, {"pnpm-lock.yaml", "pnpm"}, {"yarn.lock", "yarn"}, {"bun.lockb", "bun"}, {"bun.lock", "bun"},
	} {
		if p.file(l.file) {
			return l.pm
		}
	}
	return "npm"
}

// python adds the Python test command: python3 -m pytest when pytest is
// configured (pytest.ini, conftest.py, pyproject.toml's
// [tool.pytest.ini_options], setup.cfg's [tool:pytest], tox.ini's
// [pytest]); otherwise python3 -m unittest, with discovery in tests/ or
// test/ when that holds test*.py files, or at the root when test*.py
// files lie there.
func (p project) python(add func(kind, source, cmd string)) {
	for _, c := range []struct{ file, section string }{
		{"pytest.ini", ""}, {"pyproject.toml", "[tool.pytest.ini_options]"}, {"setup.cfg", "[tool:pytest]"}, {"tox.ini", "[pytest]"}, {"conftest.py", ""},
	} {
		if c.section == "" && p.file(c.file) || c.section != "" && p.section(c.file, c.section) {
			source := c.file
			if c.section != "" {
				source += " " + c.section
			}
			add("test", source, "python3 -m pytest")
			return
		}
	}
	for _, dir := range []string{"tests", "test"} {
		if p.pyTests(dir) {
			add("test", dir+"/test*.py", "python3 -m unittest discover -s "+dir)
			return
		}
	}
	if p.pyTests(".") {
		add("test", "test*.py", "python3 -m unittest")
	}
}

// pyTests reports whether dir, a directory of the project, holds a
// test*.py file (unittest's default pattern), looking at its first
// thousand entries.
func (p project) pyTests(dir string) bool {
	real := p.path(dir)
	if real == "" {
		return false
	}
	d, err := os.Open(real)
	if err != nil {
		return false
	}
	defer d.Close()
	names, _ := d.Readdirnames(1000)
	for _, n := range names {
		if strings.HasPrefix(n, "test") && strings.HasSuffix(n, ".py") && p.file(filepath.Join(dir, n)) {
			return true
		}
	}
	return false
}

// section reports whether the INI or TOML file name has a line that is
// exactly header (a table such as [tool.pytest.ini_options]), or starts
// with it followed by a dot when header ends in "." (any [tool.ruff.…]).
// A line scan is enough: whetstone only asks whether the tool is
// configured, and the standard library has no TOML parser.
func (p project) section(name, header string) bool {
	data := p.read(name)
	if data == nil {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, maxManifest)
	prefix := strings.TrimSuffix(header, "]")
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == header || strings.HasPrefix(line, prefix+".") && strings.HasSuffix(line, "]") {
			return true
		}
	}
	return false
}

// makeTarget matches a rule line of a makefile and captures its targets.
var makeTarget = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([A-Za-z0-9_.\-/ ]+?)\s*::?(?:[^=]|$)`)
})

// make adds make test, make check and make lint when the makefile GNU make
// would read (GNUmakefile, makefile, Makefile) has a rule for the target.
func (p project) make(add func(kind, source, cmd string)) {
	for _, name := range []string{"GNUmakefile", "makefile", "Makefile"} {
		data := p.read(name)
		if data == nil {
			continue
		}
		targets := map[string]bool{}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, maxManifest)
		for sc.Scan() {
			if m := makeTarget().FindStringSubmatch(sc.Text()); m != nil {
				for _, t := range strings.Fields(m[1]) {
					targets[t] = true
				}
			}
		}
		for _, t := range []struct{ target, kind string }{{"test", "test"}, {"check", "test"}, {"lint", "lint"}} {
			if targets[t.target] {
				add(t.kind, name+" target "+t.target, "make "+t.target)
			}
		}
		return
	}
}

// checkers tells which of the project's configured checkers apply: each
// needs its configuration in the project. tscBin and eslintBin say
// whether node_modules/.bin holds the project's own tsc and eslint.
type checkers struct {
	tsc, eslint, ruff, mypy, clippy bool
	tscBin, eslintBin               bool
}

// configuredCheckers looks for the checkers' configuration at root.
func configuredCheckers(root string) checkers {
	p := newProject(root)
	var c checkers
	c.tsc = p.file("tsconfig.json")
	c.tscBin = p.file("node_modules/.bin/tsc")
	for _, f := range []string{"eslint.config.js", "eslint.config.mjs", "eslint.config.cjs", "eslint.config.ts", ".eslintrc", ".eslintrc.js", ".eslintrc.cjs", ".eslintrc.json", ".eslintrc.yml", ".eslintrc.yaml"} {
		c.eslint = c.eslint || p.file(f)
	}
	c.eslintBin = c.eslint && p.file("node_modules/.bin/eslint")
	c.ruff = p.file("ruff.toml") || p.file(".ruff.toml") || p.section("pyproject.toml", "[tool.ruff]")
	c.mypy = p.file("mypy.ini") || p.file(".mypy.ini") || p.section("pyproject.toml", "[tool.mypy]") || p.section("setup.cfg", "[mypy]")
	c.clippy = p.file("Cargo.toml")
	return c
}
