package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/whetstone-dev/whetstone/internal/config"
	"github.com/whetstone-dev/whetstone/internal/hook"
	"github.com/whetstone-dev/whetstone/internal/loop"
	"github.com/whetstone-dev/whetstone/internal/shell"
)

// errUnchanged tells Update to write nothing.
var errUnchanged = errors.New("unchanged")

// Events are the hook subcommands, by Claude Code event name.
var Events = map[string]string{
	"session-start":      "SessionStart",
	"user-prompt-submit": "UserPromptSubmit",
	"pre-tool-use":       "PreToolUse",
	"subagent-stop":      "SubagentStop",
	"stop":               "Stop",
}

// Hook answers one hook event. A nil response means "no opinion": exit 0
// with empty stdout. In a session that owns no run, every event but a
// /whetstone:review prompt returns nil after one stat.
func (a *App) Hook(event string, p hook.Payload) (*hook.Response, error) {
	// Claude Code runs every hook in the session's launch directory, also for
	// subagents; the payload's cwd follows the Bash tool's cd, so it is only
	// the fallback.
	cwd, err := os.Getwd()
	if err != nil {
		if cwd = p.Cwd; !filepath.IsAbs(cwd) {
			return nil, fmt.Errorf("find the project: %w", err)
		}
	}
	proj := Project{Root: FindRoot(cwd)}
	if event == "user-prompt-submit" && config.IsCommand(p.Prompt) {
		return a.startRun(proj, p)
	}
	id := proj.RunOf(p.SessionID)
	if id == "" {
		return nil, nil
	}
	switch event {
	case "session-start":
		return a.sessionStart(proj, id, p)
	case "user-prompt-submit":
		return a.promptDuringRun(proj, id)
	case "pre-tool-use":
		return a.preToolUse(proj, id, p)
	case "subagent-stop":
		return a.subagentStop(proj, id, p)
	case "stop":
		return a.stop(proj, id, p)
	}
	return nil, fmt.Errorf("unknown hook event %q", event)
}

// active loads the session's run when it is still running; nil otherwise.
func active(proj Project, id string) (*loop.Run, error) {
	r, err := proj.Load(id)
	if err != nil {
		return nil, err
	}
	if !r.Active() {
		return nil, nil
	}
	return r, nil
}

func (a *App) sessionStart(proj Project, id string, p hook.Payload) (*hook.Response, error) {
	if p.Source != "compact" && p.Source != "resume" {
		return nil, nil
	}
	r, err := active(proj, id)
	if r == nil || err != nil {
		return nil, err
	}
	how := map[string]string{"compact": "compacted", "resume": "resumed"}[p.Source]
	return hook.Context("SessionStart", fmt.Sprintf("A whetstone review run is in progress in this session (the conversation was %s). Continue it:\n%s", how, r.Instructions())), nil
}

// promptDuringRun reminds the orchestrator of the run when a new turn starts
// (a user prompt, or a background agent's completion notice) and the phase
// has agents nobody dispatched yet.
func (a *App) promptDuringRun(proj Project, id string) (*hook.Response, error) {
	r, err := active(proj, id)
	if r == nil || err != nil {
		return nil, err
	}
	for _, n := range r.Pending() {
		if r.Agents[n] == nil {
			return hook.Context("UserPromptSubmit", r.Instructions()), nil
		}
	}
	return nil, nil
}

// agentName returns the short name of a whetstone agent type, or "".
func agentName(agentType string) string {
	name, ok := strings.CutPrefix(agentType, "whetstone:")
	if !ok {
		return ""
	}
	return name
}

var editTools = []string{"Edit", "Write", "MultiEdit", "NotebookEdit"}

func (a *App) preToolUse(proj Project, id string, p hook.Payload) (*hook.Response, error) {
	switch {
	case p.ToolName == "Agent" || p.ToolName == "Task":
		return a.dispatchGate(proj, id, p)
	case slices.Contains(editTools, p.ToolName) || p.ToolName == "Bash":
		return a.editGate(proj, id, p)
	}
	return nil, nil
}

func (a *App) dispatchGate(proj Project, id string, p hook.Payload) (*hook.Response, error) {
	name := agentName(p.ToolInput.Get("subagent_type").String())
	if name == "" {
		return nil, nil // other plugins' and built-in agents are not ours to gate
	}
	var deny error
	_, err := a.Update(proj, id, func(r *loop.Run) error {
		if !r.Active() {
			return errUnchanged
		}
		deny = r.Dispatch(name)
		if deny != nil {
			return errUnchanged
		}
		return nil
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		return hook.Deny("whetstone could not check this dispatch: " + err.Error()), nil
	}
	if deny != nil {
		return hook.Deny(deny.Error()), nil
	}
	return nil, nil
}

// editGate keeps everyone but the fixer, in the fix phase, from changing
// the project during a run. It reads state without the lock: a gate decision
// needs one consistent snapshot, and renames guarantee that.
func (a *App) editGate(proj Project, id string, p hook.Payload) (*hook.Response, error) {
	data, err := proj.store(id).Read()
	if err != nil {
		return hook.Deny(fmt.Sprintf("whetstone cannot read the state of run %s (%v); no edits until that is fixed (run `whetstone status`)", id, err)), nil
	}
	if v := gjson.GetBytes(data, "version").Int(); v > loop.Version {
		return hook.Deny(fmt.Sprintf("whetstone run %s was written by a newer whetstone (state version %d); upgrade whetstone to continue", id, v)), nil
	}
	phase := loop.Phase(gjson.GetBytes(data, "phase").String())
	if phase == loop.Done || phase == loop.Stopped {
		return nil, nil
	}
	name := agentName(p.AgentType)
	if name == "fixer" && phase == loop.Fix {
		if p.ToolName == "Bash" {
			return nil, nil
		}
		return fixerPath(proj, p), nil
	}
	who := "the orchestrator"
	switch {
	case name != "":
		who = "whetstone:" + name
	case p.AgentType != "":
		who = p.AgentType
	}
	if p.ToolName == "Bash" {
		reason, write := shell.WriteShaped(p.ToolInput.Get("command").String())
		if !write {
			return nil, nil
		}
		return hook.Deny(fmt.Sprintf("whetstone run %s: %s is read-only and this command could change the project (%s). Use read-only commands (git diff, git log, grep, go test, cat) and put what you found in your report.", id, who, reason)), nil
	}
	switch {
	case name != "" && name != "fixer":
		return hook.Deny(fmt.Sprintf("whetstone run %s: %s is a read-only agent and may not %s files. Report the problem as a finding with a suggestion; whetstone:fixer makes the changes.", id, who, strings.ToLower(p.ToolName))), nil
	case name == "fixer":
		return hook.Deny(fmt.Sprintf("whetstone run %s is in the %s phase; whetstone:fixer may edit only in the fix phase.", id, phase)), nil
	default:
		return hook.Deny(fmt.Sprintf("whetstone run %s is in progress (%s phase): only whetstone:fixer may change files, in the fix phase. Do not edit files yourself; follow whetstone's instructions and dispatch the agents they name.", id, phase)), nil
	}
}

// fixerPath lets the fixer edit files inside the project, but not whetstone's
// own state or configuration.
func fixerPath(proj Project, p hook.Payload) *hook.Response {
	path := p.ToolInput.Get("file_path").String()
	if path == "" {
		path = p.ToolInput.Get("notebook_path").String()
	}
	if path == "" {
		return hook.Deny("whetstone: this edit names no file_path")
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(proj.Root, path)
	}
	rel, err := filepath.Rel(proj.Root, filepath.Clean(path))
	switch {
	case err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)):
		return hook.Deny(fmt.Sprintf("whetstone: %s is outside the project (%s); the fixer edits only project files.", path, proj.Root))
	case rel == ".whetstone" || strings.HasPrefix(rel, ".whetstone"+string(filepath.Separator)) || rel == "whetstone.json":
		return hook.Deny(fmt.Sprintf("whetstone: %s belongs to whetstone itself; the fixer changes only the project's code.", rel))
	}
	return nil
}

// stopBlockLimit is how many consecutive Stop blocks whetstone issues before
// it stops the run as no_progress: one fewer than Claude Code's block cap,
// so the client never overrides a block silently.
func (a *App) stopBlockLimit() int {
	limit := 8
	if v, err := strconv.Atoi(a.Getenv("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP")); err == nil && v > 0 {
		limit = v
	}
	return max(limit-1, 1)
}

func (a *App) stop(proj Project, id string, p hook.Payload) (*hook.Response, error) {
	r, err := proj.Load(id)
	if err != nil && !errors.Is(err, errCorrupt) {
		if errors.Is(err, loop.ErrNewerVersion) {
			return hook.Message("whetstone: " + err.Error()), nil
		}
		return nil, err
	}
	if r != nil && r.Active() && waiting(r, p.Background) {
		return nil, nil // this phase's agents are still running in the background
	}
	if r != nil && !r.Active() && r.Announced {
		return nil, nil
	}
	var resp *hook.Response
	_, err = a.Update(proj, id, func(r *loop.Run) error {
		now := a.Now()
		if r.Active() {
			if waiting(r, p.Background) {
				return errUnchanged
			}
			if r.StopBlocks < a.stopBlockLimit() {
				r.StopBlocks++
				resp = hook.Block(r.Instructions())
				return nil
			}
			r.Stop(loop.NoProgress, fmt.Sprintf("the orchestrator ended its turn %d times without dispatching the agents whetstone asked for", r.StopBlocks+1), now)
			if err := a.finish(proj, r); err != nil {
				return err
			}
		}
		if r.Announced {
			return errUnchanged
		}
		r.Announced = true
		resp = hook.Message(r.Summary())
		return nil
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		return nil, err
	}
	return resp, nil
}

// waiting reports whether any agent this phase still expects is running in
// the background.
func waiting(r *loop.Run, tasks []hook.Task) bool {
	for _, t := range tasks {
		if t.Status == "running" && slices.Contains(r.Pending(), agentName(t.AgentType)) {
			return true
		}
	}
	return false
}
