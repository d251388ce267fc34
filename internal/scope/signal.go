package scope

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/whetstone-dev/whetstone/internal/gitrun"
	"github.com/whetstone-dev/whetstone/internal/sandbox"
	"github.com/whetstone-dev/whetstone/internal/snapshot"
)

const (
	maxCandidates = 50
	maxSignalOut  = 4 << 10
)

// diagnostic is the "file:line[:col]: message" line most tools print.
var diagnostic = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:vet: )?([^:\s][^:]*):(\d+)(?::\d+)?: (.+)$`)
})

// tscDiagnostic is tsc's "file(line,col): message".
var tscDiagnostic = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([^(\s][^(]*)\((\d+),\d+\): (.+)$`)
})

// check is one deterministic tool to run.
type check struct {
	tool string
	args []string
	env  []string
	// names parses output that lists file names, not diagnostics (gofmt -l).
	names string
	// eslintJSON parses eslint's --format json (its file:line formats
	// left core ESLint in version 9).
	eslintJSON bool
	// code marks a checker that runs the project's code (its node_modules,
	// a JavaScript configuration, mypy plugins, build scripts): it runs
	// only through Request.Contain.
	code bool
	// goEnv marks one of whetstone's Go checks, run in the goSandbox
	// environment.
	goEnv bool
	// waitDelay, when set, replaces runCheck's wait for the pipes after
	// a kill.
	waitDelay time.Duration
	// skip, when set, is why the check does not run: its signal is
	// "skipped" with this as the output.
	skip string
}

// Contain runs a checker that executes the project's code in whetstone's
// sandbox: it returns the command line that runs argv there, or why argv
// may not run at all (no sandbox, and whetstone.json does not let code run
// without one). The app provides it; without one such checkers are
// skipped.
type Contain func(argv []string) (wrapped []string, why string)

// notReviewedTree is why a checker that reads the working tree does not
// run in a staged or last-commit review whose working tree holds more.
const notReviewedTree = "not run: the working tree, which it reads, is not the reviewed state"

// checks runs the deterministic tools, each within the request's timeout
// and all within its Budget, and returns their signals in a fixed order.
// The cheap ones (git diff --check, gofmt, eslint, ruff) run at once; the
// heavy toolchains (heavyTools) one after another beside them. Every
// checker that applies is accounted for: it ran (clean, candidates,
// failed, timeout) or it is "skipped" with why (not installed, no
// node_modules, modules not in the cache, no sandbox, the working tree is
// not the reviewed state); a checker the project does not configure has
// no signal. The Go tools apply to a Go module at root and run in the
// goSandbox environment; `go build -o os.DevNull` never writes a binary.
// Every file operand follows "--". The project's configured checkers
// (projectChecks) follow, run through req.Contain.
func checks(ctx context.Context, g gitrun.Git, c Context, req Request) []Signal {
	start := time.Now()
	timeout := orDefault(req.CheckTimeout, DefaultCheckTimeout)
	changed := map[string]bool{}
	var gofiles, literal []string
	for _, f := range c.Files {
		literal = append(literal, ":(literal)"+f.Path)
		if f.Triage == "skip" {
			continue
		}
		changed[f.Path] = true
		if f.Status != "deleted" && strings.HasSuffix(f.Path, ".go") {
			gofiles = append(gofiles, f.Path)
		}
	}
	list := []check{{tool: "git diff --check", args: append([]string{"git", "-c", "core.quotepath=off", "diff", "--check", "--no-color", "--relative", c.Base, c.Tree, "--"}, literal...)}}
	if goModule(g.Dir) {
		list = append(list, goChecks(gofiles)...)
	}
	list = append(list, projectChecks(g.Dir, c)...)
	var prep *Signal
	switch {
	case len(list) == 1:
	case !treeIsReviewed(ctx, g, c): // hashes the work tree in staged and last-commit modes: once
		for i := 1; i < len(list); i++ {
			list[i].skip = notReviewedTree
		}
	case list[1].goEnv:
		if _, err := exec.LookPath("go"); err != nil {
			for i := range list {
				if list[i].goEnv {
					list[i].skip = "not run: go is not on PATH"
				}
			}
			break
		}
		sb, err := newGoSandbox(ctx, g.Dir, req.Network)
		if err != nil {
			prep = &Signal{Tool: "go", Command: "go env GOWORK", Status: "failed", Output: bound(err.Error())}
			list = slices.DeleteFunc(list, func(ch check) bool { return ch.goEnv })
			break
		}
		defer sb.close()
		for i := range list {
			if list[i].goEnv {
				list[i].env = sb.env
			}
		}
	}
	var deadline time.Time
	if req.Budget > 0 {
		deadline = start.Add(req.Budget)
	}
	signals := make([]*Signal, len(list))
	type queued struct {
		tool string
		run  func()
	}
	var heavy []queued
	var wg sync.WaitGroup
	for i, ch := range list {
		skipped := func(why string) {
			signals[i] = &Signal{Tool: ch.tool, Command: strings.Join(ch.args, " "), Status: "skipped", Output: why}
		}
		if ch.skip != "" {
			skipped(ch.skip)
			continue
		}
		if s, ok := unchanged(ch, req); ok {
			signals[i] = &s
			continue
		}
		found, err := exec.LookPath(ch.args[0])
		if ch.code && !strings.Contains(ch.args[0], "/") {
			// The project's checker runs in the sandbox, so it is looked up
			// as the agents' commands are: on the caller's PATH, an
			// activated virtualenv's ruff included (whetstone's own PATH
			// holds no directory of the project's: internal/toolpath).
			found, err = lookCaller(ch.args[0])
			if err != nil {
				skipped("not run: the project configures " + ch.tool + " but " + ch.args[0] + " is not on PATH")
				continue
			}
		}
		if err != nil && !strings.Contains(ch.args[0], "/") {
			skipped("not run: " + ch.args[0] + " is not on PATH")
			continue
		}
		run := ch
		if ch.code {
			why := "it runs the project's code and whetstone was given no sandbox to run it in"
			if req.Contain != nil {
				// The program found here, by its path: in the sandbox the
				// same one runs, or Contain says why it cannot (a directory
				// the sandbox replaces), rather than whatever a search of
				// the sandbox's PATH would find or "command not found".
				argv := slices.Clone(ch.args)
				if !strings.Contains(argv[0], "/") {
					argv[0] = found
				}
				run.args, why = req.Contain(argv)
			}
			if why != "" {
				skipped("not run: " + why)
				continue
			}
		}
		one := func() {
			limit, cut := timeout, false
			if !deadline.IsZero() {
				left := time.Until(deadline)
				if left <= 0 {
					skipped(notFinished(req.Budget))
					return
				}
				if left < limit {
					limit, cut = left, true
				}
			}
			if cut {
				// Past the budget the hook answers: it does not wait for
				// go build's compilers to close the pipe.
				run.waitDelay = 200 * time.Millisecond
			}
			s := runCheck(ctx, g.Dir, run, limit, changed)
			if cut && s.Status == "timeout" {
				s.Status, s.Output = "skipped", notFinished(req.Budget)
			}
			s.Command = strings.Join(ch.args, " ")
			signals[i] = s
		}
		if slices.Contains(heavyTools, ch.tool) {
			heavy = append(heavy, queued{ch.tool, one})
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			one()
		}()
	}
	// The heavy toolchains run one after another, beside the cheap checks:
	// two at once on a two-core machine (go build and go vet of a cold
	// cache) took twice the memory and no less time.
	slices.SortStableFunc(heavy, func(a, b queued) int {
		return slices.Index(heavyTools, a.tool) - slices.Index(heavyTools, b.tool)
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, q := range heavy {
			q.run()
		}
	}()
	wg.Wait()
	out := []Signal{}
	if prep != nil {
		out = append(out, *prep)
	}
	for _, s := range signals {
		if s != nil {
			out = append(out, *s)
		}
	}
	return out
}

// heavyTools are the checks that compile or type-check the whole project,
// each a toolchain that may take every core and hundreds of MB: checks
// runs them one after another, in this order. go vet comes first: it
// type-checks every package too, and on a warm cache it finishes where
// go build, which links the commands, may not (cli/cli: 1.5 s and 3.8 s).
var heavyTools = []string{"go vet", "go build", "staticcheck", "tsc", "mypy", "cargo clippy"}

// notFinished is the output of a check stopped, or never started, because
// the checks ran past the hook's budget.
func notFinished(budget time.Duration) string {
	return fmt.Sprintf("not finished: ran past the hook's %s budget for checks, which keeps the prompt from waiting (a cold build cache?); its output is unknown, run it to see", budget)
}

// unchanged returns the signal of ch on the tree before the fix when the
// fix touched none of the files ch reads (Next): the same check on the
// same files says the same. A check that did not finish (timeout, not
// finished) runs again, as does one whose command line changed.
func unchanged(ch check, req Request) (Signal, bool) {
	if req.fixed == nil {
		return Signal{}, false
	}
	i := slices.IndexFunc(req.prev, func(s Signal) bool { return s.Tool == ch.tool })
	if i < 0 {
		return Signal{}, false
	}
	s := req.prev[i]
	if s.Status == "timeout" || strings.HasPrefix(s.Output, "not finished") || s.Command != strings.Join(ch.args, " ") {
		return Signal{}, false
	}
	for _, f := range req.fixed {
		if reads(ch.tool, f) {
			return Signal{}, false
		}
	}
	return s, true
}

// reads reports whether a fix's change to f can change what tool reports.
// The Go toolchain reads Go, assembly and cgo sources, the module files
// and vendor/, and any file's presence (a //go:embed pattern): so any
// file added, deleted or renamed. gofmt reads the changed .go files
// only; the project's checkers their sources and configuration files.
// git diff --check and a tool not listed always run again.
func reads(tool string, f File) bool {
	ext := func(exts ...string) bool {
		for _, p := range []string{f.Path, f.OldPath} {
			if p != "" && slices.Contains(exts, path.Ext(p)) {
				return true
			}
		}
		return false
	}
	named := func(names ...string) bool {
		return slices.Contains(names, path.Base(f.Path)) || f.OldPath != "" && slices.Contains(names, path.Base(f.OldPath))
	}
	moved := f.Status != "modified"
	js := []string{".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".json", ".yml", ".yaml"}
	switch tool {
	case "go build", "go vet", "staticcheck":
		return moved || ext(".go", ".s", ".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".m", ".syso", ".swig") ||
			named("go.mod", "go.sum", "go.work", "go.work.sum") || strings.HasPrefix(f.Path, "vendor/")
	case "gofmt":
		return ext(".go")
	case "tsc", "eslint":
		return moved || ext(js...) || strings.HasPrefix(path.Base(f.Path), ".eslintrc")
	case "ruff", "mypy":
		return ext(".py", ".pyi", ".toml", ".ini", ".cfg")
	case "cargo clippy":
		return moved || ext(".rs", ".toml") || named("Cargo.lock")
	}
	return true
}

// goChecks are whetstone's checks of a Go module: go build, go vet, gofmt
// on the changed Go files (when there are any) and staticcheck, which is
// optional: absent, its signal says so.
func goChecks(gofiles []string) []check {
	list := []check{
		{tool: "go build", args: []string{"go", "build", "-o", os.DevNull, "--", "./..."}, goEnv: true},
		{tool: "go vet", args: []string{"go", "vet", "--", "./..."}, goEnv: true},
	}
	if len(gofiles) > 0 {
		list = append(list, check{tool: "gofmt", args: append([]string{"gofmt", "-l", "--"}, gofiles...), names: "not formatted with gofmt", goEnv: true})
	}
	return append(list, check{tool: "staticcheck", args: []string{"staticcheck", "--", "./..."}, goEnv: true})
}

// goModule reports whether root holds a Go module, which the Go checks
// apply to (checks asks treeIsReviewed and finds go next).
func goModule(root string) bool {
	_, err := os.Stat(filepath.Join(root, "go.mod"))
	return err == nil
}

// treeIsReviewed reports whether the working tree, which the tools read,
// holds exactly the reviewed state.
func treeIsReviewed(ctx context.Context, g gitrun.Git, c Context) bool {
	if c.Mode == ModeStaged || c.Mode == ModeLastCommit {
		tree, _, err := snapshot.WorkTree(ctx, g, c.MaxUntracked)
		return err == nil && tree == c.Tree
	}
	return true
}

// projectChecks are the checkers the project configures (ecosystem.go,
// configuredCheckers): tsc --noEmit and eslint from its node_modules
// (skipped, saying so, when node_modules lacks them), ruff and mypy on
// PATH, cargo clippy. eslint, ruff and mypy take the changed
// files that are not skipped; tsc and clippy check the whole project, as
// their configuration says. All run through Contain: node_modules, an
// eslint.config.js, a mypy plugin and a build.rs are the project's code,
// and a ruff on PATH may be the project's own virtualenv's.
func projectChecks(root string, c Context) []check {
	var js, py []string
	for _, f := range c.Files {
		if f.Triage == "skip" || f.Status == "deleted" {
			continue
		}
		switch path.Ext(f.Path) {
		case ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts":
			js = append(js, f.Path)
		case ".py", ".pyi":
			py = append(py, f.Path)
		}
	}
	on := configuredCheckers(root)
	var list []check
	if on.tsc {
		list = append(list, check{tool: "tsc", args: []string{"node_modules/.bin/tsc", "--noEmit", "--pretty", "false"}, code: true, skip: notInstalled(on.tscBin, "tsc")})
	}
	if on.eslint && len(js) > 0 {
		list = append(list, check{tool: "eslint", args: append([]string{"node_modules/.bin/eslint", "--format", "json", "--"}, js...), code: true, eslintJSON: true, skip: notInstalled(on.eslintBin, "eslint")})
	}
	if on.ruff && len(py) > 0 {
		list = append(list, check{tool: "ruff", args: append([]string{"ruff", "check", "--no-cache", "--"}, py...), code: true})
	}
	if on.mypy && len(py) > 0 {
		list = append(list, check{tool: "mypy", args: append([]string{"mypy", "--no-error-summary", "--no-color-output", "--"}, py...), code: true})
	}
	if on.clippy {
		list = append(list, check{tool: "cargo clippy", args: []string{"cargo", "clippy", "--offline", "--quiet", "--message-format", "short"}, code: true})
	}
	return list
}

// notInstalled is why a checker the project configures and installs in
// node_modules does not run when node_modules/.bin lacks it, or "".
func notInstalled(installed bool, name string) string {
	if installed {
		return ""
	}
	return "not run: the project configures " + name + " but node_modules/.bin/" + name + " is missing (dependencies not installed)"
}

// runCheck runs one check in dir and sorts what it prints into candidates
// on the changed files.
func runCheck(ctx context.Context, dir string, ch check, timeout time.Duration, changed map[string]bool) *Signal {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, ch.args[0], ch.args[1:]...)
	cmd.Dir = dir
	// A fresh slice: ch.env is shared by the checks that run at once, and
	// an append into its spare capacity would be a data race.
	cmd.Env = slices.Concat(os.Environ(), ch.env, []string{"LC_ALL=C", "GIT_OPTIONAL_LOCKS=0"})
	if ch.args[0] == "git" {
		cmd.Env = append(cmd.Env, gitrun.ObjectsEnv(dir)...) // git diff --check reads the run's trees
	}
	cmd.WaitDelay = time.Second // go build's compilers may hold the pipe after a timeout kill: the budget wins
	if ch.waitDelay > 0 {
		cmd.WaitDelay = ch.waitDelay
	}
	out := &gitrun.Capped{Max: 1 << 20, Lossy: true}
	cmd.Stdout, cmd.Stderr = out, out
	err := cmd.Run()
	s := &Signal{Tool: ch.tool, Command: strings.Join(ch.args, " "), Status: "clean"}
	text := out.Buf.String()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		hint := ""
		if ch.goEnv && ch.names == "" { // not gofmt, which reads no cache
			hint = " (a cold Go build cache? one `go build ./...` warms it)"
		}
		s.Status, s.Output = "timeout", fmt.Sprintf("timeout: over the %s budget%s\n", timeout, hint)+bound(text)
		return s
	}
	if err != nil && offlineFailure(text) {
		s.Status, s.Output = "skipped", offline
		return s
	}
	var found []Candidate
	ok := false
	if ch.eslintJSON {
		found, ok = eslintReport(text)
	}
	if !ok {
		found = diagnostics(text, ch.names)
	}
	s.Candidates = onChanged(dir, found, changed)
	switch {
	case len(s.Candidates) > 0:
		s.Status = "candidates"
	case err != nil:
		s.Status, s.Output = "failed", bound(text)
	}
	return s
}

// tooManyErrors is the message of the line the Go type checker prints after
// its first ten errors: it says where it stopped, not what is wrong.
const tooManyErrors = "too many errors"

// diagnostics parses the lines of tool output into candidates: each line a
// file name with message names (gofmt -l) when names is set, else a
// "file:line[:col]: message" or tsc's "file(line,col): message".
func diagnostics(text, names string) []Candidate {
	var out []Candidate
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			continue
		}
		c := Candidate{File: line, Message: names}
		if names == "" {
			m := diagnostic().FindStringSubmatch(line)
			if m == nil {
				m = tscDiagnostic().FindStringSubmatch(line)
			}
			if m == nil || m[3] == tooManyErrors {
				continue
			}
			c.File, c.Message = m[1], m[3]
			c.Line, _ = strconv.Atoi(m[2])
		}
		out = append(out, c)
	}
	return out
}

// onChanged keeps the candidates on changed files, their names made
// relative to dir and clean, sorted and deduplicated, at most
// maxCandidates.
func onChanged(dir string, found []Candidate, changed map[string]bool) []Candidate {
	var out []Candidate
	for _, c := range found {
		if filepath.IsAbs(c.File) {
			if rel, err := filepath.Rel(dir, c.File); err == nil {
				c.File = rel
			}
		}
		c.File = path.Clean(filepath.ToSlash(c.File))
		if changed[c.File] {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, cmpCandidate)
	out = slices.Compact(out)
	return out[:min(len(out), maxCandidates)]
}

// eslintReport reads eslint's JSON report (one line of the output) into
// candidates, straight from the JSON: a file name may hold a newline or a
// colon that a "file:line: message" line could not carry. ok is false when
// no line is a report (eslint failed), so the output is kept as it is.
func eslintReport(text string) (found []Candidate, ok bool) {
	for line := range strings.Lines(text) {
		var files []struct {
			FilePath string `json:"filePath"`
			Messages []struct {
				Line    int    `json:"line"`
				Message string `json:"message"`
				RuleID  string `json:"ruleId"`
			} `json:"messages"`
		}
		if !strings.HasPrefix(line, "[") || json.Unmarshal([]byte(line), &files) != nil {
			continue
		}
		for _, f := range files {
			for _, m := range f.Messages {
				if m.Line > 0 {
					msg := strings.Join(strings.Fields(m.Message), " ")
					if m.RuleID != "" {
						msg += " [" + m.RuleID + "]"
					}
					found = append(found, Candidate{File: f.FilePath, Line: m.Line, Message: msg})
				}
			}
		}
		return found, true
	}
	return nil, false
}

func cmpCandidate(a, b Candidate) int {
	if c := strings.Compare(a.File, b.File); c != 0 {
		return c
	}
	if a.Line != b.Line {
		return a.Line - b.Line
	}
	return strings.Compare(a.Message, b.Message)
}

// bound keeps the last maxSignalOut bytes of a tool's output, where the
// error usually is.
func bound(s string) string {
	if len(s) <= maxSignalOut {
		return s
	}
	return "…" + strings.ToValidUTF8(s[len(s)-maxSignalOut:], "")
}

// lookCaller finds name as the caller's shell would: on the PATH it had
// before whetstone dropped the project's directories from its own
// (sandbox.CallerPath), else on PATH.
func lookCaller(name string) (string, error) {
	path, ok := os.LookupEnv(sandbox.CallerPath)
	if !ok {
		return exec.LookPath(name)
	}
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}
