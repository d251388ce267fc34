// Command demo shows the whetstone review loop end to end, offline: it copies
// testdata/demo into a temporary git repository (a clean commit, then an
// uncommitted change with three planted bugs), starts a scripted fake model,
// runs the real Claude Code with the plugin on `/whetstone:review`, and
// prints the loop's progress as Claude Code streams it. It exits non-zero
// unless the run ends DONE. `make demo` builds the hook binary, installs the
// pinned Claude Code and runs it with WHETSTONE_CLAUDE set.
//
// The client runs under a throwaway HOME, but whetstone's signing key (the
// one that seals .whetstone/, not an API key) is the user's own when they
// have one, only read, so that a plain `bin/whetstone status`, `stats` or
// `report` works in the demo's project afterwards. A user without a key
// gets none created by the demo: the run is sealed with a key in the
// demo's directory, and the demo prints the commands with
// WHETSTONE_STATE_DIR set to it.
package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/whetstone-dev/whetstone/internal/client/claudecode"
	"github.com/whetstone-dev/whetstone/internal/fakemodel"
	"github.com/whetstone-dev/whetstone/internal/state"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// The planted bugs, as the scripted reviewers report them, and the fixer's
// edits for them. Lines refer to testdata/demo/change/notes.go.
var (
	bugs = map[string]fakemodel.Finding{
		"critic": {Severity: "high", Category: "correctness", File: "notes.go", Line: 39,
			Title:       "Tail returns n+1 lines",
			Description: "lines[len(lines)-n-1:] starts one line too early, so Tail(name, 2) returns three lines."},
		"security-reviewer": {Severity: "high", Category: "security", File: "notes.go", Line: 49,
			Title:       "Note names can escape the store directory",
			Description: "path joins an unchecked name onto Dir; Remove(\"../../etc/hosts\") deletes a file outside the store."},
		"silent-failure-hunter": {Severity: "high", Category: "error-handling", File: "notes.go", Line: 17,
			Title:       "Save ignores the MkdirAll error",
			Description: "When the directory cannot be created, Save goes on and reports the WriteFile error instead of the cause."},
	}
	fixes = []fakemodel.Edit{
		{File: "notes.go", Old: "return lines[len(lines)-n-1:], nil", New: "return lines[len(lines)-n:], nil"},
		{File: "notes.go", Old: "return filepath.Join(s.Dir, name+\".txt\")", New: "return filepath.Join(s.Dir, filepath.Base(name)+\".txt\")"},
		{File: "notes.go", Old: "\tos.MkdirAll(s.Dir, 0o755)\n", New: "\tif err := os.MkdirAll(s.Dir, 0o755); err != nil {\n\t\treturn fmt.Errorf(\"create %s: %w\", s.Dir, err)\n\t}\n"},
		{File: "notes.go", Old: "import (\n\t\"os\"", New: "import (\n\t\"fmt\"\n\t\"os\""},
	}
)

// scenario finds the bugs in iteration 1, fixes them, and comes back clean.
var scenario = fakemodel.Whetstone{
	Findings: func(reviewer string, iteration int) []fakemodel.Finding {
		if f, ok := bugs[reviewer]; ok && iteration == 1 {
			return []fakemodel.Finding{f}
		}
		return nil
	},
	Fixes: func(iteration int) []fakemodel.Edit {
		if iteration == 1 {
			return fixes
		}
		return nil
	},
	ReviewerDelay: 300 * time.Millisecond,
}

func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("demo", flag.ContinueOnError)
	fl.SetOutput(stderr)
	claude := fl.String("claude", os.Getenv("WHETSTONE_CLAUDE"), "the claude binary (default $WHETSTONE_CLAUDE)")
	plugin := fl.String("plugin", cmp.Or(os.Getenv("WHETSTONE_PLUGIN"), "."), "the whetstone plugin directory (default $WHETSTONE_PLUGIN or the current directory)")
	src := fl.String("src", "testdata/demo", "the sample project: base/ is committed, change/ is laid over it uncommitted")
	timeout := fl.Duration("timeout", 5*time.Minute, "give up after this long")
	opencode := fl.String("opencode", "", "run the demo in OpenCode with this opencode binary instead of Claude Code")
	codexBin := fl.String("codex", "", "run the demo in the Codex CLI with this (native) codex binary instead of Claude Code")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if *codexBin != "" {
		return runCodex(*codexBin, *plugin, *src, *timeout, stdout, stderr)
	}
	if *opencode != "" {
		return runOpenCode(*opencode, *plugin, *src, *timeout, stdout, stderr)
	}
	if *claude == "" {
		fmt.Fprintln(stderr, "demo: no claude binary; set WHETSTONE_CLAUDE or pass -claude (scripts/install-claude prints the path)")
		return 2
	}
	d, err := prepare(*plugin, *src)
	if err != nil {
		fmt.Fprintln(stderr, "demo:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := d.run(ctx, *claude, stdout); err != nil {
		fmt.Fprintln(stderr, "demo:", err)
		fmt.Fprintf(stderr, "demo: everything is kept in %s\n", d.tmp)
		return 1
	}
	return 0
}

// demo is one prepared demo: a temp dir holding the project, HOME and logs.
type demo struct {
	tmp, project, home, plugin string
	keyDir                     string // WHETSTONE_STATE_DIR of the hooks
	ownKey                     bool   // keyDir is the demo's, not the user's
}

func prepare(plugin, src string) (*demo, error) {
	plugin, err := filepath.Abs(plugin)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(plugin, ".claude-plugin", "plugin.json")); err != nil {
		return nil, fmt.Errorf("%s is not the whetstone plugin: %w", plugin, err)
	}
	if _, err := os.Stat(filepath.Join(plugin, "bin", "whetstone")); err != nil {
		return nil, fmt.Errorf("no hook binary in %s/bin (run make build): %w", plugin, err)
	}
	tmp, err := os.MkdirTemp("", "whetstone-demo-")
	if err != nil {
		return nil, err
	}
	if t, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = t
	}
	d := &demo{tmp: tmp, project: filepath.Join(tmp, "project"), home: filepath.Join(tmp, "home"), plugin: plugin}
	d.keyDir, d.ownKey = keyDir(d.home)
	for _, dir := range []string{d.home, filepath.Join(tmp, "tmp")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	if err := copyTree(filepath.Join(src, "base"), d.project); err != nil {
		return nil, err
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "notes: a store for short notes"}} {
		if err := d.git(args...); err != nil {
			return nil, err
		}
	}
	if err := copyTree(filepath.Join(src, "change"), d.project); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *demo) git(args ...string) error {
	cmd := exec.Command("git", args...)
	cmd.Dir = d.project
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=demo", "GIT_AUTHOR_EMAIL=demo@example.com",
		"GIT_COMMITTER_NAME=demo", "GIT_COMMITTER_EMAIL=demo@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		dst := filepath.Join(to, rel)
		if e.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
}

func (d *demo) run(ctx context.Context, claude string, out io.Writer) error {
	model, err := fakemodel.Start(scenario.Script(), filepath.Join(d.tmp, "model.jsonl"))
	if err != nil {
		return err
	}
	defer model.Close()
	fmt.Fprintf(out, "whetstone demo — everything lives in %s\n", d.tmp)
	fmt.Fprintf(out, "  project  %s (notes.go has 3 planted bugs, uncommitted)\n", d.project)
	fmt.Fprintf(out, "  model    scripted fake Messages API at %s\n", model.URL)
	fmt.Fprintf(out, "  plugin   %s\n\n", d.plugin)
	drv := claudecode.Driver{Bin: claude, Plugin: d.plugin, Home: d.home, Tmp: filepath.Join(d.tmp, "tmp"), ModelURL: model.URL,
		Debug: filepath.Join(d.tmp, "claude-debug.log")}
	fmt.Fprintln(out, "$ claude -p "+drv.Review())
	cmd := drv.Run(ctx, drv.Review())
	cmd.Dir = d.project
	cmd.Env = append(append(cleanEnv(), drv.Environ()...), "WHETSTONE_STATE_DIR="+d.keyDir)
	stderrLog, err := os.Create(filepath.Join(d.tmp, "claude-stderr.log"))
	if err != nil {
		return err
	}
	defer stderrLog.Close()
	cmd.Stderr = stderrLog
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	streamLog, err := os.Create(filepath.Join(d.tmp, "stream.jsonl"))
	if err != nil {
		return err
	}
	defer streamLog.Close()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start claude: %w", err)
	}
	p := &progress{out: out, project: d.project, agents: map[string]agentCall{}, edits: map[string][]string{}, pending: map[int]int{}}
	sc := bufio.NewScanner(io.TeeReader(pipe, streamLog))
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var ev event
		if json.Unmarshal(sc.Bytes(), &ev) == nil {
			p.handle(ev)
		}
	}
	p.flush()
	waitErr := cmd.Wait()
	if ctx.Err() != nil {
		return fmt.Errorf("claude did not finish in time: %w", ctx.Err())
	}
	if waitErr != nil {
		return fmt.Errorf("claude: %w (stderr in %s)", waitErr, stderrLog.Name())
	}
	if !p.loaded {
		return errors.New("claude did not load the whetstone plugin (see claude-debug.log)")
	}
	return d.conclude(out)
}

// conclude prints the run's outcome and fails unless it is DONE.
func (d *demo) conclude(out io.Writer) error {
	states, _ := filepath.Glob(filepath.Join(d.project, ".whetstone", "runs", "*", "state.json"))
	if len(states) != 1 {
		return fmt.Errorf("found %d runs under .whetstone/runs, want 1", len(states))
	}
	var st struct {
		ID         string `json:"run_id"`
		Phase      string `json:"phase"`
		StopReason string `json:"stop_reason"`
		Verdict    string `json:"verdict"`
		Iteration  int    `json:"iteration"`
	}
	if err := readJSON(states[0], &st); err != nil {
		return err
	}
	report := filepath.Join(filepath.Dir(states[0]), "report.md")
	whetstone := filepath.Join(d.plugin, "bin", "whetstone")
	if d.ownKey {
		whetstone = "WHETSTONE_STATE_DIR=" + d.keyDir + " " + whetstone
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "verdict  %s (run %s, %s after %s)\n", cmp.Or(st.Verdict, "—"), st.ID, strings.ToUpper(st.Phase), plural(st.Iteration, "iteration"))
	fmt.Fprintf(out, "report   %s\n", report)
	fmt.Fprintf(out, "diff     git -C %s diff\n", d.project)
	if d.ownKey {
		fmt.Fprintf(out, "key      the run is sealed with the demo's own key in %s (you have no whetstone key yet; the demo made none for you)\n", d.keyDir)
	} else {
		fmt.Fprintf(out, "key      the run is sealed with your whetstone key in %s (only read)\n", d.keyDir)
	}
	fmt.Fprintf(out, "status   cd %s && %s status   (also: stats, report)\n", d.project, whetstone)
	if st.Phase != "done" {
		return fmt.Errorf("the run ended %s (%s), not DONE", st.Phase, st.StopReason)
	}
	return nil
}

// keyDir is where the demo's hooks find whetstone's key: the user's own
// key directory when a key is already there and reads as a key (it is only
// read), else a directory under the demo's HOME, so the demo never creates
// a key for the user.
func keyDir(home string) (dir string, own bool) {
	if path, err := state.KeyPath(os.Getenv); err == nil {
		if _, err := os.Lstat(path); err == nil {
			if _, err := state.LoadKey(path); err == nil {
				return filepath.Dir(path), false
			}
		}
	}
	return filepath.Join(home, ".local", "state", "whetstone"), true
}

func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "ANTHROPIC_") || strings.HasPrefix(k, "CLAUDE") || k == "HOME" || k == "TMPDIR" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// event is one stream-json line; only the fields the progress report reads.
type event struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	HookEvent string `json:"hook_event"`
	Stdout    string `json:"stdout"`
	Content   string `json:"content"`
	ToolUseID string `json:"tool_use_id"`
	Status    string `json:"status"`
	Parent    string `json:"parent_tool_use_id"`
	Plugins   []struct {
		Name string `json:"name"`
	} `json:"plugins"`
	Message struct {
		ID      string `json:"id"`
		Content []struct {
			Type  string          `json:"type"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		} `json:"content"`
	} `json:"message"`
}

// agentCall is one Agent tool call the orchestrator made.
type agentCall struct {
	name      string // "critic", "fixer", …
	iteration int
}

// progress turns the stream into a short account of the loop.
type progress struct {
	out     io.Writer
	project string
	loaded  bool
	runDir  string
	agents  map[string]agentCall // by Agent tool_use id
	batch   []agentCall          // Agent calls of the message being streamed
	batchID string
	edits   map[string][]string // files the fixer edited, by its Agent tool_use id
	pending map[int]int         // reviewers dispatched and not yet finished, by iteration
}

func (p *progress) printf(format string, args ...any) { fmt.Fprintf(p.out, format+"\n", args...) }

func (p *progress) handle(ev event) {
	// The blocks of one assistant message arrive as separate events; a
	// dispatch is complete when anything but the main thread's next block of
	// the same message arrives.
	if ev.Type != "assistant" || ev.Parent != "" || ev.Message.ID != p.batchID {
		if !(ev.Type == "system" && (ev.Subtype == "hook_started" || ev.Subtype == "hook_response")) {
			p.flush()
		}
	}
	switch {
	case ev.Type == "system" && ev.Subtype == "init":
		for _, pl := range ev.Plugins {
			p.loaded = p.loaded || pl.Name == "whetstone"
		}
	case ev.Type == "system" && ev.Subtype == "hook_response" && ev.HookEvent == "UserPromptSubmit":
		if ctx := hookContext(ev.Stdout); strings.HasPrefix(ctx, "whetstone started") {
			line, _, _ := strings.Cut(ctx, "\n")
			p.printf("%s", line)
		}
	case ev.Type == "system" && ev.Subtype == "hook_response" && ev.HookEvent == "SubagentStop":
		var resp struct{ Decision, Reason string }
		if json.Unmarshal([]byte(ev.Stdout), &resp) == nil && resp.Decision == "block" {
			first, _, _ := strings.Cut(resp.Reason, "\n")
			p.printf("  whetstone sent a report back: %s", first)
		}
	case ev.Type == "assistant" && ev.Parent == "":
		p.batchID = ev.Message.ID
		for _, c := range ev.Message.Content {
			if c.Type != "tool_use" || (c.Name != "Agent" && c.Name != "Task") {
				continue
			}
			var in struct {
				Type        string `json:"subagent_type"`
				Description string `json:"description"`
			}
			json.Unmarshal(c.Input, &in)
			name, ok := strings.CutPrefix(in.Type, "whetstone:")
			if !ok {
				continue
			}
			call := agentCall{name: name}
			if _, it, ok := strings.Cut(in.Description, "iteration "); ok {
				fmt.Sscan(it, &call.iteration)
			}
			p.agents[c.ID] = call
			p.batch = append(p.batch, call)
		}
	case ev.Type == "assistant":
		for _, c := range ev.Message.Content {
			if c.Type == "tool_use" && c.Name == "Edit" {
				var in struct {
					Path string `json:"file_path"`
				}
				json.Unmarshal(c.Input, &in)
				rel, _ := filepath.Rel(p.project, in.Path)
				p.edits[ev.Parent] = append(p.edits[ev.Parent], rel)
			}
		}
	case ev.Type == "system" && ev.Subtype == "task_notification":
		if call, ok := p.agents[ev.ToolUseID]; ok {
			p.finished(call, ev.ToolUseID, ev.Status)
		}
	case ev.Type == "system" && (ev.Subtype == "informational" || ev.Subtype == "notification"):
		// Claude Code prefixes every line of a Stop hook's message.
		if msg, ok := strings.CutPrefix(ev.Content, "Stop says: "); ok {
			p.printf("%s", strings.ReplaceAll(msg, "\nStop says: ", "\n"))
		}
	}
}

// flush prints the dispatch message collected so far.
func (p *progress) flush() {
	if len(p.batch) == 0 {
		return
	}
	var names []string
	for _, c := range p.batch {
		names = append(names, c.name)
	}
	it := p.batch[0].iteration
	for _, c := range p.batch {
		if c.name != "fixer" && c.name != "validator" {
			p.pending[c.iteration]++
		}
	}
	switch {
	case len(p.batch) == 1 && names[0] == "fixer":
		p.printf("iteration %d: dispatched the fixer", it)
	case len(p.batch) == 1:
		p.printf("iteration %d: dispatched %s", it, names[0])
	default:
		p.printf("iteration %d: dispatched %d reviewers in parallel (%s)", it, len(p.batch), strings.Join(names, ", "))
	}
	p.batch, p.batchID = nil, ""
}

// finished reports an agent's validated report, read from the run directory
// where the SubagentStop hook has just stored it.
func (p *progress) finished(call agentCall, toolUseID, status string) {
	dir := p.iterDir(call.iteration)
	switch call.name {
	case "fixer":
		var fix struct {
			Results []struct{ ID, Status string } `json:"results"`
		}
		if dir == "" || readJSON(filepath.Join(dir, "fix.json"), &fix) != nil {
			p.printf("  fixer: %s, no valid report", status)
			return
		}
		var fixed []string
		for _, r := range fix.Results {
			if r.Status == "fixed" {
				fixed = append(fixed, r.ID)
			}
		}
		edits := p.edits[toolUseID]
		p.printf("  fixer: fixed %s (%s: %s)", strings.Join(fixed, " "), plural(len(edits), "edit"), strings.Join(unique(edits), ", "))
	case "validator":
		p.printf("  validator: %s", status)
	default:
		var rep struct {
			Findings []struct {
				Severity, File, Title string
				Line                  int
			} `json:"findings"`
			FixChecks []struct{ ID, Status string } `json:"fix_checks"`
		}
		if dir == "" || readJSON(filepath.Join(dir, call.name+".json"), &rep) != nil {
			p.printf("  %s: %s, no valid report", call.name, status)
			return
		}
		line := fmt.Sprintf("  %s: clean", call.name)
		if n := len(rep.Findings); n > 0 {
			f := rep.Findings[0]
			line = fmt.Sprintf("  %s: %s — [%s] %s:%d %s", call.name, plural(n, "finding"), f.Severity, f.File, f.Line, f.Title)
		}
		if len(rep.FixChecks) > 0 {
			var checks []string
			for _, c := range rep.FixChecks {
				checks = append(checks, c.ID+" "+strings.ReplaceAll(c.Status, "_", " "))
			}
			line += "; checked the fixes: " + strings.Join(checks, ", ")
		}
		p.printf("%s", line)
		if p.pending[call.iteration]--; p.pending[call.iteration] == 0 {
			p.verdict(call.iteration)
		}
	}
}

// verdict prints an iteration's outcome from its verdict.json.
func (p *progress) verdict(iteration int) {
	dir := p.iterDir(iteration)
	if dir == "" {
		return
	}
	var v struct {
		Blocking []string `json:"blocking"`
		Verdict  string   `json:"verdict"`
		Next     string   `json:"next_phase"`
	}
	if readJSON(filepath.Join(dir, "verdict.json"), &v) != nil {
		p.printf("iteration %d: no verdict yet", iteration)
		return
	}
	if len(v.Blocking) == 0 {
		p.printf("iteration %d: clean (%s)", iteration, v.Verdict)
		return
	}
	sort.Strings(v.Blocking)
	p.printf("iteration %d: %s %s → %s", iteration, plural(len(v.Blocking), "blocking finding"), strings.Join(v.Blocking, " "), v.Next)
}

func unique(list []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// iterDir is the run's iter-N directory, once the run exists.
func (p *progress) iterDir(iteration int) string {
	if p.runDir == "" {
		runs, _ := filepath.Glob(filepath.Join(p.project, ".whetstone", "runs", "*"))
		if len(runs) != 1 {
			return ""
		}
		p.runDir = runs[0]
	}
	return filepath.Join(p.runDir, fmt.Sprintf("iter-%d", iteration))
}

// hookContext is the additionalContext of a hook's JSON answer, or its
// plain stdout.
func hookContext(stdout string) string {
	var resp struct {
		Specific struct {
			Context string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if json.Unmarshal([]byte(stdout), &resp) == nil && resp.Specific.Context != "" {
		return resp.Specific.Context
	}
	return strings.TrimSpace(stdout)
}

// plural is "1 finding" or "2 findings".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
