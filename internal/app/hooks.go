package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	"github.com/whetstone-dev/whetstone/internal/client"
	"github.com/whetstone-dev/whetstone/internal/config"
	"github.com/whetstone-dev/whetstone/internal/hook"
	"github.com/whetstone-dev/whetstone/internal/loop"
	"github.com/whetstone-dev/whetstone/internal/safeio"
	"github.com/whetstone-dev/whetstone/internal/state"
)

// errUnchanged tells Update to write nothing.
var errUnchanged = errors.New("unchanged")

// Events are the hook subcommands, by Claude Code event name.
var Events = map[string]string{
	"session-start":      "SessionStart",
	"user-prompt-submit": "UserPromptSubmit",
	"pre-tool-use":       "PreToolUse",
	// A skill's inline shell command (Claude Code 2.1.332): gated like a
	// tool call (gate.go, skillShell).
	"pre-skill-shell-command": "PreSkillShellCommand",
	"subagent-start":          "SubagentStart",
	"subagent-stop":           "SubagentStop",
	"stop":                    "Stop",
}

// Hook answers one hook event. A nil response means "no opinion": exit 0
// with empty stdout. In a session that owns no run, every event but a
// /whetstone:review prompt returns nil after one stat. The answer is in
// the names of the payload's client (client.Client.Phrase). ctx carries
// the hook's deadline: every bounded step (choosing the change, snapshots,
// the sandbox probe, quoting code in a report) ends with it, whatever its
// own cap.
func (a *App) Hook(ctx context.Context, event string, p hook.Payload) (*hook.Response, error) {
	resp, err := a.answer(ctx, event, p)
	if resp != nil {
		client.Of(p).Phrase(resp)
	}
	return resp, err
}

// PreToolUse answers a pre-tool-use payload as read (bad is the error
// reading or decoding it), and fails closed: a call whetstone cannot read,
// decode or judge is denied whenever its session has a run in progress
// (the session id is peeked before the full decode), or, when the payload
// names no readable session, whenever any run of the project is in
// progress. Outside a run such a call passes, as every call does.
// No objection is answered as the client wants it (client.Client.Pass),
// every answer in its names.
func (a *App) PreToolUse(ctx context.Context, p hook.Payload, bad error) (resp *hook.Response) {
	session, name := hook.Peek(p.Raw)
	defer func() {
		if v := recover(); v != nil {
			resp = hook.Deny(fmt.Sprintf("whetstone failed while checking this call (%v); nothing runs until that is fixed (`whetstone status`)", v))
		}
		c, err := client.Lookup(name)
		if err != nil {
			c = client.Default()
		}
		if resp == nil {
			resp = c.Pass()
		}
		if resp != nil {
			c.Phrase(resp)
		}
	}()
	if bad == nil {
		bad = hook.CheckToolCall(p)
	}
	if bad != nil {
		if a.Stderr != nil {
			fmt.Fprintf(a.Stderr, "whetstone: hook pre-tool-use: %v\n", bad)
		}
		return a.unjudged(p.Cwd, session, bad)
	}
	resp, err := a.answer(ctx, "pre-tool-use", p)
	if err != nil {
		// A session's run is known by now: a gate that cannot decide
		// denies (hooks.json also blocks on a gate's failure or timeout).
		return hook.Deny(fmt.Sprintf("whetstone could not check this call (%v); nothing runs until that is fixed (`whetstone status`)", err))
	}
	return resp
}

// unjudged answers a tool call whetstone could not decode or judge (why):
// denied while the session's run, or with no session to tell, any run of
// the project, is in progress; nil otherwise.
func (a *App) unjudged(cwd, session string, why error) *hook.Response {
	proj, err := a.hookProject(cwd)
	if err != nil {
		return hook.Deny(fmt.Sprintf("whetstone cannot check this call (%v) nor find its project (%v); it is refused", why, err))
	}
	if session != "" {
		id, err := runOf(proj, session)
		switch {
		case err != nil:
			return hook.Deny(fmt.Sprintf("whetstone cannot check this call (%v) nor tell whether this session's review is running (%v), so it is refused.", why, err))
		case id != "" && inProgress(proj, id):
			return hook.Deny(fmt.Sprintf("whetstone run %s: whetstone cannot check this call (%v), so it is refused while the review runs. Make the call with plain, smaller input.", id, why))
		}
		return nil
	}
	entries, _ := os.ReadDir(proj.dir("sessions"))
	for i, e := range entries {
		if i == maxSessions {
			break
		}
		if id := proj.RunOf(e.Name()); id != "" && inProgress(proj, id) {
			return hook.Deny(fmt.Sprintf("whetstone run %s is in progress in this project and whetstone cannot check this call (%v) nor tell whose it is, so it is refused.", id, why))
		}
	}
	return nil
}

// maxSessions bounds the session files unjudged reads.
const maxSessions = 4096

// runOf is the run the session owns ("" for none), or an error when its
// session file exists but cannot be read as one (a symlink, another
// file's content): a run whetstone cannot name is not "no run".
func runOf(proj Project, session string) (string, error) {
	if id := proj.RunOf(session); id != "" {
		return id, nil
	}
	return "", noSession(proj, session)
}

// noSession is nil when the session has no session file, and an error
// when it has one RunOf could not read.
func noSession(proj Project, session string) error {
	if _, err := os.Lstat(proj.sessionFile(session)); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return fmt.Errorf("its session file %s cannot be read as one", proj.sessionFile(session))
}

// inProgress reports whether a run's state does not say it has ended,
// read unverified: an unreadable state counts as in progress, and a
// forged "done" would end the run as error on the next verified read,
// which gates nothing either.
func inProgress(proj Project, id string) bool {
	data, err := safeio.ReadOwn(proj.Root, filepath.Join(proj.runDir(id), "state.json"), state.MaxState)
	if err != nil {
		return true
	}
	phase := loop.Phase(gjson.GetBytes(data, "phase").String())
	return phase != loop.Done && phase != loop.Stopped
}

// hookProject is the project a hook answers for: Claude Code runs every
// hook in the session's launch directory, also for subagents; the
// payload's cwd follows the Bash tool's cd, so it is only the fallback.
func (a *App) hookProject(payloadCwd string) (Project, error) {
	cwd, err := a.getwd()
	if err != nil {
		if cwd = payloadCwd; !filepath.IsAbs(cwd) {
			return Project{}, fmt.Errorf("find the project: %w", err)
		}
	}
	return Project{Root: FindRoot(cwd)}, nil
}

func (a *App) answer(ctx context.Context, event string, p hook.Payload) (*hook.Response, error) {
	proj, err := a.hookProject(p.Cwd)
	if err != nil {
		return nil, err
	}
	if event == "user-prompt-submit" && config.IsCommand(p.Prompt) {
		if err := a.keyed(&proj); err != nil {
			return hook.Block(fmt.Sprintf("whetstone: %v. No review was started.", err)), nil
		}
		defer a.syncSession(proj, p.SessionID)
		return a.startRun(ctx, proj, p)
	}
	if event == "pre-tool-use" {
		if args, ok := reviewSkill(p); ok {
			defer a.syncSession(proj, p.SessionID)
			return a.startFromSkill(ctx, proj, p, args)
		}
	}
	id := proj.RunOf(p.SessionID)
	if id == "" {
		if event == "pre-tool-use" {
			if err := noSession(proj, p.SessionID); err != nil { // RunOf found no run: runOf's second step
				return hook.Deny(fmt.Sprintf("whetstone cannot tell whether this session's review is running: %v. The call is refused; `whetstone status` shows the runs.", err)), nil
			}
		}
		return nil, nil
	}
	if err := a.keyed(&proj); err != nil {
		return a.release(proj, event, p.SessionID, id, err.Error()), nil
	}
	body, err := proj.store(id).Read()
	if err != nil {
		// A newer whetstone seals its own way: its state is never rewritten,
		// the session is let go. Anything else that does not verify was
		// changed outside whetstone: the run ends as error.
		if v := proj.version(id); v > loop.Version {
			return a.release(proj, event, p.SessionID, id, fmt.Sprintf("its state was written by a newer whetstone (state version %d; this one reads %d); upgrade whetstone", v, loop.Version)), nil
		}
		if !errors.Is(err, state.ErrTampered) {
			return a.release(proj, event, p.SessionID, id, err.Error()), nil
		}
		a.fail(ctx, proj, id, err)
		if body, err = proj.store(id).Read(); err != nil {
			return a.release(proj, event, p.SessionID, id, err.Error()), nil
		}
	}
	if a.tick(ctx, proj, id, body) {
		if body, err = proj.store(id).Read(); err != nil {
			return nil, err
		}
	}
	a.syncActive(proj, p.SessionID, id, body)
	switch event {
	case "session-start":
		return a.sessionStart(body, p)
	case "user-prompt-submit":
		return a.promptDuringRun(proj, id, body, p)
	case "pre-tool-use":
		return a.preToolUse(ctx, proj, id, p, body)
	case "pre-skill-shell-command":
		return a.skillShell(proj, id, p, body), nil
	case "subagent-start":
		return a.subagentStart(proj, id, p)
	case "subagent-stop":
		return a.subagentStop(ctx, proj, id, p, body)
	case "stop":
		return a.stop(ctx, proj, id, p, body)
	}
	return nil, fmt.Errorf("unknown hook event %q", event)
}

// reviewSkill reports whether a tool call is the orchestrator invoking
// whetstone's review as a skill, and with which arguments (the client
// knows its skill's name and input). Only the main thread starts a run: a
// subagent's call is judged as any other reading tool.
func reviewSkill(p hook.Payload) (args string, ok bool) {
	if p.ToolName != "Skill" || p.AgentID != "" || p.AgentType != "" {
		return "", false
	}
	return client.Of(p).ReviewSkill(p)
}

// startFromSkill starts (or resumes) the session's run for a Skill call as
// a typed /whetstone:review does, with the call's arguments. The first
// instruction rides on the call (PreToolUse additionalContext, which the
// model reads with the skill's text); a review that cannot start denies
// the call with the reason, for the model to pass on.
func (a *App) startFromSkill(ctx context.Context, proj Project, p hook.Payload, args string) (*hook.Response, error) {
	if err := a.keyed(&proj); err != nil {
		return hook.Deny(fmt.Sprintf("whetstone: %v. No review was started.", err)), nil
	}
	p.Prompt = strings.TrimSpace(config.Command + " " + strings.Join(strings.Fields(args), " "))
	resp, err := a.startRun(ctx, proj, p)
	if err != nil || resp == nil {
		return resp, err
	}
	if resp.Decision == "block" {
		return hook.Deny(resp.Reason + " Tell the user this, and do not review the change yourself."), nil
	}
	return hook.Context("PreToolUse", resp.Specific.AdditionalContext), nil
}

// keyed loads the per-user key into proj, once per process.
func (a *App) keyed(proj *Project) error {
	a.keyOnce.Do(func() {
		a.keyPath, a.keyErr = state.KeyPath(a.Getenv)
		if a.keyErr == nil {
			a.key, a.keyErr = state.LoadKey(a.keyPath)
		}
	})
	proj.Key, proj.keyPath = a.key, a.keyPath
	if a.keyErr != nil {
		return fmt.Errorf("whetstone cannot use its key (%v)", a.keyErr)
	}
	return nil
}

// release lets go of a session whose run cannot be continued (its
// directory was deleted, it was written by a newer whetstone, the key is
// unusable): the session no longer owns the run, so no later hook is
// blocked, and the model and the user are told once.
func (a *App) release(proj Project, event, session, id, why string) *hook.Response {
	_ = os.Remove(proj.sessionFile(session))
	_ = proj.markActive(session, id, false) // nothing is enforced any more
	msg := fmt.Sprintf("whetstone released this session from run %s: %s. Nothing is enforced any more; `whetstone status` shows the run and `whetstone abort --run %s` ends it.", id, why, id)
	fmt.Fprintln(a.Log, msg)
	switch event {
	case "stop", "subagent-stop":
		return hook.Message(msg)
	}
	return hook.Context(Events[event], msg)
}

// fail stops a run whose state or reports do not verify as error: the run
// can never end with a verdict from state nobody can vouch for.
func (a *App) fail(ctx context.Context, proj Project, id string, why error) {
	st := proj.store(id)
	session := ""
	err := st.Repair(func(old []byte) ([]byte, error) {
		now := a.Now()
		r := a.errorRun(st, id, old, fmt.Sprintf("its state changed outside whetstone (%v)", why), now)
		session = r.Session
		if err := a.finish(ctx, proj, r); err != nil {
			fmt.Fprintf(a.Log, "run %s: %v\n", id, err)
		}
		return r.Encode(now)
	})
	if err != nil {
		fmt.Fprintf(a.Log, "run %s: marking it as error failed: %v\n", id, err)
	} else if hook.ValidName(session) {
		_ = proj.markActive(session, id, false)
	}
}

// errorRun is the record that replaces a state nobody can vouch for (it
// does not verify, or does not decode): the run stopped as error. Nothing
// found is trusted but what names the run, since findings, phase and
// verdict may be forged; what was found is kept aside, losing nothing.
func (a *App) errorRun(st state.Store, id string, old []byte, why string, now time.Time) *loop.Run {
	if old != nil {
		aside := fmt.Sprintf("%s.unverified-%d", st.Path, now.UnixNano())
		if err := writeFile(aside, old); err != nil {
			fmt.Fprintf(a.Log, "run %s: keeping the unverified state aside: %v\n", id, err)
		}
	}
	// The record starts a ledger of its own; the run's ledgers are kept
	// aside with the state that named them.
	dir := filepath.Dir(st.Path)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if isLedger(e) {
			path := filepath.Join(dir, e.Name())
			if err := os.Rename(path, fmt.Sprintf("%s.unverified-%d", path, now.UnixNano())); err != nil {
				fmt.Fprintf(a.Log, "run %s: keeping a ledger aside: %v\n", id, err)
			}
		}
	}
	found, _ := loop.Decode(old) // nil when it does not decode
	r, _ := loop.Unverified(id, found, why+"; what was found is kept as state.json.unverified-*", now)
	return r
}

// tick stops an active run whose time budget is spent, at whatever hook
// notices first, and reports whether it did. It reads only the state's
// phase, settings and creation time.
func (a *App) tick(ctx context.Context, proj Project, id string, body []byte) bool {
	minutes := gjson.GetBytes(body, "settings.budget_minutes").Int()
	if phase := loop.Phase(gjson.GetBytes(body, "phase").String()); minutes <= 0 || phase.Ended() {
		return false
	}
	if !loop.TimeSpent(int(minutes), gjson.GetBytes(body, "created").Time(), a.Now()) {
		return false
	}
	_, err := a.Update(proj, id, func(r *loop.Run) error {
		out, err := a.apply(ctx, proj, r, &loop.Event{Kind: loop.Tick, Now: a.Now()}, nil)
		if !out.Fired() {
			return errUnchanged
		}
		return err
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		fmt.Fprintf(a.Log, "run %s: budget check: %v\n", id, err)
	}
	return err == nil
}

// active decodes the run's verified state, read once by Hook, when the run
// is still running; nil otherwise.
func active(body []byte) (*loop.Run, error) {
	r, err := loop.Decode(body)
	if err != nil || !r.Active() {
		return nil, err
	}
	return r, nil
}

func (a *App) sessionStart(body []byte, p hook.Payload) (*hook.Response, error) {
	if p.Source != "compact" && p.Source != "resume" {
		return nil, nil
	}
	r, err := active(body)
	if r == nil || err != nil {
		return nil, err
	}
	how := map[string]string{"compact": "compacted", "resume": "resumed"}[p.Source]
	return hook.Context("SessionStart", fmt.Sprintf("A whetstone review run is in progress in this session (the conversation was %s). Continue it:\n%s", how, r.Instructions(clientOf(p)))), nil
}

// promptDuringRun reminds the orchestrator of the run when a new turn starts
// (a user prompt, or a background agent's completion notice) and the phase
// has agents nobody dispatched yet; when the run has ended and nobody was
// told, that turn carries the summary (the Stop that would have told it
// finds it announced).
func (a *App) promptDuringRun(proj Project, id string, body []byte, p hook.Payload) (*hook.Response, error) {
	if phase := loop.Phase(gjson.GetBytes(body, "phase").String()); (phase == loop.Done || phase == loop.Stopped) && !gjson.GetBytes(body, "announced").Bool() {
		var resp *hook.Response
		_, err := a.note(proj, id, func(r *loop.Run) error {
			if r.Active() || r.Announced {
				return errUnchanged
			}
			r.Announced = true
			resp = hook.Context("UserPromptSubmit", r.Finale())
			resp.SystemMessage = r.Summary()
			return nil
		})
		if err != nil && !errors.Is(err, errUnchanged) {
			return nil, err
		}
		return resp, nil
	}
	r, err := active(body)
	if r == nil || err != nil {
		return nil, err
	}
	for _, n := range r.Pending() {
		if r.Agents[n] == nil {
			return hook.Context("UserPromptSubmit", r.Instructions(clientOf(p))), nil
		}
	}
	return nil, nil
}

// clientOf is the client whose words a hook's answer uses.
func clientOf(p hook.Payload) loop.Client { return client.Of(p) }

// nextOnSubagentStop reports whether p's client takes the next instruction
// on the SubagentStop that completes a phase (client.Client).
func nextOnSubagentStop(p hook.Payload) bool { return client.Of(p).NextOnSubagentStop() }

// agentName returns the short name of a whetstone agent type, or "".
func agentName(agentType string) string {
	name, ok := strings.CutPrefix(agentType, "whetstone:")
	if !ok {
		return ""
	}
	return name
}

// dispatchGate lets the orchestrator launch the agents the phase expects,
// each with its job line and nothing else, and denies the rest. It reads
// the verified state the hook already holds and writes nothing: the
// instance is recorded when it starts (subagent-start, under the lock),
// where the phase is checked again.
func (a *App) dispatchGate(p hook.Payload, body []byte) (*hook.Response, error) {
	name := agentName(p.Dispatch)
	if name == "" {
		return nil, nil // other plugins' and built-in agents are not ours to gate
	}
	// The whole call, not only its prompt: a field beside the job line
	// (a resumed or forked conversation, items, another model) would
	// start the agent with context whetstone did not give it.
	if why := client.CheckDispatch(p); why != "" && !loop.Phase(gjson.GetBytes(body, "phase").String()).Ended() {
		return hook.Deny(fmt.Sprintf("whetstone run %s: a dispatch of %s may carry only %s, and %s, so it is refused: dispatch it again with the input of its %s line, unchanged.",
			gjson.GetBytes(body, "run_id").String(), p.Dispatch, client.DispatchFieldList(client.Of(p)), why, strings.TrimSpace(loop.DispatchMarker))), nil
	}
	prompt := p.ToolInput.Get("prompt").String()
	if mayDispatch(body, name, prompt) {
		return nil, nil
	}
	r, err := loop.Decode(body)
	if err != nil {
		return hook.Deny("whetstone could not check this dispatch: " + err.Error()), nil
	}
	if !r.Active() {
		return nil, nil // a finished run gates nothing
	}
	if err := r.Dispatch(name, prompt); err != nil {
		return hook.Deny(err.Error()), nil
	}
	return nil, nil
}

// mayDispatch is loop.MayDispatch, the rule Dispatch applies, over the
// state's JSON read without decoding it. Anything it refuses goes to
// Dispatch itself, for the decision and the reason.
func mayDispatch(body []byte, name, prompt string) bool {
	for _, c := range name { // a gjson path and query hold it unquoted
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return loop.MayDispatch(loop.Phase(gjson.GetBytes(body, "phase").String()),
		gjson.GetBytes(body, `expected.#(=="`+name+`")`).Exists(),
		gjson.GetBytes(body, "agents."+name+".status").String(), prompt,
		func() string {
			return loop.JobLine(gjson.GetBytes(body, "run_id").String(), int(gjson.GetBytes(body, "iteration").Int()), name)
		}) == loop.Allowed
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

func (a *App) stop(ctx context.Context, proj Project, id string, p hook.Payload, body []byte) (*hook.Response, error) {
	r, err := loop.Decode(body)
	if err != nil {
		return nil, err
	}
	if r.Active() && waiting(r, p.Background) {
		return nil, nil // this phase's agents are still running in the background
	}
	if !r.Active() && r.Announced {
		return nil, nil
	}
	// A Stop that only counts a block, or announces the end, is
	// bookkeeping (note); one that ends the run writes its reports and is
	// written durably. The decoded copy tells which, under no lock: note
	// itself falls back to Update if the state moved in between.
	update := a.note
	if r.Active() && !r.Apply(&loop.Event{Kind: loop.Idle, Now: a.Now(), Limit: a.stopBlockLimit()}).Has(loop.CountBlock) {
		update = a.Update
	}
	var resp *hook.Response
	_, err = update(proj, id, func(r *loop.Run) error {
		resp = nil
		now := a.Now()
		if r.Active() {
			if waiting(r, p.Background) {
				return errUnchanged
			}
			out, err := a.apply(ctx, proj, r, &loop.Event{Kind: loop.Idle, Now: now, Limit: a.stopBlockLimit()}, nil)
			if err != nil {
				return err
			}
			if out.Has(loop.CountBlock) {
				resp = hook.Block(r.Instructions(clientOf(p)))
				return nil
			}
		}
		if r.Announced {
			return errUnchanged
		}
		// The end is told once: to the orchestrator, whose final message
		// relays it (one block, never a loop: the next Stop finds it
		// announced), and to the user as the client's message.
		r.Announced = true
		resp = &hook.Response{Decision: "block", Reason: r.Finale(), SystemMessage: r.Summary()}
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

// subagentStart registers a whetstone agent's instance with the current
// phase and iteration, and gives it its task (loop.Run.Task): the
// dispatch prompt is one line, and what an agent is asked to do comes from
// whetstone, never from the orchestrator. Only registered instances'
// reports count, so a straggler from an earlier iteration or an agent the
// phase does not expect is ignored when it stops, and is told so.
func (a *App) subagentStart(proj Project, id string, p hook.Payload) (*hook.Response, error) {
	name := agentName(p.AgentType)
	if name == "" || p.AgentID == "" {
		return nil, nil
	}
	var task string
	_, err := a.note(proj, id, func(r *loop.Run) error {
		if _, known := r.Instances[p.AgentID]; known {
			task = r.Task(name)
			return errUnchanged
		}
		if !r.Register(name, p.AgentID) {
			fmt.Fprintf(a.Log, "subagent-start: %s (%s) is not expected by run %s (%s phase, iteration %d); its report will not count\n", p.AgentType, p.AgentID, id, r.Phase, r.Iteration)
			task = fmt.Sprintf("whetstone run %s does not expect %s now (%s phase, iteration %d): whatever you report will not count. Reply with one line saying so, and do nothing else.", id, p.AgentType, r.Phase, r.Iteration)
			return errUnchanged
		}
		task = r.Task(name)
		return nil
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		return nil, err
	}
	if task == "" {
		return nil, nil
	}
	return hook.Context("SubagentStart", "Your task, from whetstone:\n"+task), nil
}
