// Package loop is whetstone's state machine: a run's phases, the agents each
// phase expects, and the rules that move a run from one phase to the next.
// It does no I/O; the caller loads and stores a Run under the state lock.
package loop

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	"github.com/whetstone-dev/whetstone/internal/review"
	"github.com/whetstone-dev/whetstone/internal/snapshot"
)

// Version is the state file format this binary reads and writes (2: the
// ledger's settled findings in segments, internal/app/ledger.go).
const Version = 2

// ErrNewerVersion means the state file was written by a newer whetstone.
var ErrNewerVersion = errors.New("state file written by a newer whetstone")

// Phase is where a run is.
type Phase string

// Phases of a run (spec §2).
const (
	Review   Phase = "review"   // R1: reviewers in parallel
	Validate Phase = "validate" // V: deep depth only
	Fix      Phase = "fix"      // R2: the fixer
	Done     Phase = "done"
	Stopped  Phase = "stopped"
)

// Reasons a run stops.
const (
	MaxIterations = "max_iterations"
	Stalled       = "stalled"
	Budget        = "budget"
	NoProgress    = "no_progress"
	Aborted       = "aborted"
	Error         = "error"
)

// Agent statuses within a phase.
const (
	Dispatched = "dispatched"
	Reported   = "reported"
	Failed     = "failed"
)

// MaxRejections is how often an agent's invalid report is sent back to it
// before the agent is recorded as failed.
const MaxRejections = 2

// Settings are a run's knobs, from whetstone.json and the command's flags.
type Settings struct {
	Depth               string   `json:"depth"`
	MaxIterations       int      `json:"max_iterations"`
	ConfidenceThreshold int      `json:"confidence_threshold"`
	FixSeverity         string   `json:"fix_severity,omitempty"` // the least severity that blocks in iteration 1 ("": low)
	BlockingSeverity    string   `json:"blocking_severity"`
	Reviewers           []string `json:"reviewers,omitempty"`
	BudgetMinutes       int      `json:"budget_minutes,omitempty"`
	BudgetTokens        int      `json:"budget_tokens,omitempty"`
	PreExistingBlocks   bool     `json:"pre_existing_blocks,omitempty"`
	Background          bool     `json:"background,omitempty"` // dispatch agents with run_in_background: true
	VerifyCommands      []string `json:"verify_commands,omitempty"`
	Sandbox             string   `json:"sandbox,omitempty"`             // "" or "auto": code only in bubblewrap; "if-available"; "off" (config.File.Sandbox)
	Restore             bool     `json:"restore,omitempty"`             // undo writes made in a read-only phase
	MaxUntrackedBytes   int64    `json:"max_untracked_bytes,omitempty"` // untracked files above this are listed, not hashed (0: the default)
	// Specialists are whetstone.json's path globs that call a specialist
	// in, as read at the start (the fix rounds' focus applies them), so
	// no later hook reads whetstone.json again.
	Specialists map[string][]string `json:"specialists,omitempty"`
}

// Agent is one agent of the current phase.
type Agent struct {
	Status     string `json:"status"`
	Rejections int    `json:"rejections,omitempty"` // invalid reports, over all its instances
}

// Instance is one running copy of an agent, registered when it starts
// (SubagentStart) in the current phase and iteration. Only registered
// instances may report; the map is cleared whenever the phase changes, so a
// straggler from an earlier phase is never counted.
type Instance struct {
	Agent  string `json:"agent"`
	Tokens int    `json:"tokens,omitempty"` // its transcript's tokens, as last counted
}

// Step is one line of a run's history.
type Step struct {
	At        time.Time `json:"at"`
	Iteration int       `json:"iteration"`
	Phase     Phase     `json:"phase"`
	Note      string    `json:"note"`
}

// Run is the whole state of one review run: state.json.
type Run struct {
	Version     int                  `json:"version"`
	Revision    int                  `json:"revision"`
	ID          string               `json:"run_id"`
	Session     string               `json:"session_id"`
	Phase       Phase                `json:"phase"`
	Iteration   int                  `json:"iteration"`
	StopReason  string               `json:"stop_reason,omitempty"`
	Verdict     string               `json:"verdict,omitempty"`
	Error       string               `json:"error,omitempty"`
	Settings    Settings             `json:"settings"`
	Roster      []string             `json:"roster"`
	Expected    []string             `json:"expected"`
	Focus       map[string]string    `json:"focus,omitempty"`  // a focused round after a fix: each expected reviewer → why (FocusOn)
	Intent      *Intent              `json:"intent,omitempty"` // what the tasks quote of the author's intent (context.json has it all)
	Agents      map[string]*Agent    `json:"agents"`
	Instances   map[string]*Instance `json:"instances,omitempty"`    // by agent_id
	Rounds      int                  `json:"rounds"`                 // completed review rounds
	RoundFailed []string             `json:"round_failed,omitempty"` // reviewers that failed in the last review round
	CleanStreak int                  `json:"clean_streak"`
	LastOpen    []string             `json:"last_open,omitempty"`
	Claimed     []string             `json:"claimed,omitempty"` // findings the last fixer says it fixed
	Recheck     []string             `json:"recheck,omitempty"` // findings the next review round must give a verdict on
	Digest      Digest               `json:"digest"`            // the ledger in brief: all a hook needs of it
	StopBlocks  int                  `json:"stop_blocks"`
	Announced   bool                 `json:"announced,omitempty"`
	Tokens      int                  `json:"tokens,omitempty"`
	LedgerRev   int                  `json:"ledger_rev,omitempty"` // the revision whose ledger file holds the cold part
	Baseline    *snapshot.Snapshot   `json:"baseline,omitempty"`   // the work tree when this read-only phase began
	Tampered    []string             `json:"tampered,omitempty"`   // changes made during read-only phases, in words
	Edited      []string             `json:"edited,omitempty"`     // files the fixer changed, left uncommitted for the user
	Verify      []string             `json:"verify"`               // the project's detected verification commands (context.json "verify"); the shell gate reads them
	Created     time.Time            `json:"created"`
	Updated     time.Time            `json:"updated"`
	Finished    time.Time            `json:"finished,omitzero"` // when it reached DONE or STOPPED

	// The cold part, kept out of state.json so that no hook's cost grows
	// with history: the ledger of findings and the history. Only the hook
	// that concludes a phase and the reports load it (LoadCold); a Run
	// without it still appends its new steps to History.
	Findings []review.Entry `json:"-"`
	History  []Step         `json:"-"`
	cold     bool
	afterFix bool // the review round just entered follows a fix: FocusOn may narrow it
}

// Digest is what hooks need of the ledger, recomputed whenever it changes.
type Digest struct {
	Blocking []string            `json:"blocking"`          // ids of open blocking findings, sorted
	Listed   []Brief             `json:"listed,omitempty"`  // the most severe of them, at most MaxListed
	Counts   map[string]int      `json:"counts,omitempty"`  // open findings by severity
	Checks   map[string][]string `json:"checks,omitempty"`  // reviewer → findings it raised that it must give a verdict on
	Unfixed  map[string]Claim    `json:"unfixed,omitempty"` // of those, the first MaxListed the fixer did not claim to fix
	LastID   int                 `json:"last_id,omitempty"` // findings are F-0001 … F-<LastID>
	Verdict  string              `json:"verdict,omitempty"` // the verdict over the open findings alone
}

// Claim is what the fixer said of a finding it did not claim to fix:
// not_fixed, disputed, deferred, or "" when it said nothing (it failed or
// left the id out), with its note.
type Claim struct {
	Status string `json:"status,omitempty"`
	Note   string `json:"note,omitempty"`
}

// Brief is one open blocking finding, as prompts list it.
type Brief struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Title    string `json:"title"`
}

// LoadCold gives the run its ledger and history (from its ledger file).
func (r *Run) LoadCold(findings []review.Entry, history []Step) {
	if findings == nil {
		findings = []review.Entry{}
	}
	r.Findings, r.History, r.cold = findings, history, true
}

// ColdLoaded reports whether the ledger and history were loaded; when not,
// History holds only the steps added since the run was decoded.
func (r *Run) ColdLoaded() bool { return r.cold }

// summarize recomputes the Digest from the ledger.
func (r *Run) summarize() {
	s := Digest{Blocking: []string{}, Counts: map[string]int{}, Checks: map[string][]string{}, Unfixed: map[string]Claim{}, Verdict: review.Approve}
	var blocking []review.Entry
	recheck := map[string]bool{}
	for _, id := range slices.Concat(r.Recheck, r.Claimed) { // Claimed alone: a state written before Recheck
		recheck[id] = true
	}
	for _, e := range r.Findings {
		if n, err := strconv.Atoi(strings.TrimPrefix(e.ID, "F-")); err == nil {
			s.LastID = max(s.LastID, n)
		}
		if e.Open() && recheck[e.ID] {
			for _, name := range e.Reviewers {
				s.Checks[name] = append(s.Checks[name], e.ID)
			}
			if e.Claim != "fixed" && len(s.Unfixed) < MaxListed {
				s.Unfixed[e.ID] = Claim{Status: e.Claim, Note: e.ClaimNote}
			}
		}
		if !e.Open() {
			continue
		}
		s.Counts[e.Severity]++
		s.Verdict = review.Worst(s.Verdict, review.Judge(e.Severity, e.Confidence, r.Settings.ConfidenceThreshold, e.Blocking, e.PreExisting))
		if e.Blocking {
			s.Blocking = append(s.Blocking, e.ID)
			blocking = append(blocking, e)
		}
	}
	slices.Sort(s.Blocking)
	slices.SortStableFunc(blocking, func(a, b review.Entry) int {
		return review.SeverityRank(a.Severity) - review.SeverityRank(b.Severity)
	})
	for _, e := range blocking[:min(len(blocking), MaxListed)] {
		s.Listed = append(s.Listed, Brief{ID: e.ID, Severity: e.Severity, File: e.File, Line: e.Line, Title: e.Title})
	}
	r.Digest = s
}

// New starts a run in the first review phase.
func New(id, session string, s Settings, roster []string, now time.Time) *Run {
	r := &Run{Version: Version, ID: id, Session: session, Settings: s, Roster: roster, Created: now, Findings: []review.Entry{}, cold: true}
	r.summarize()
	r.enter(Review, 1, now, "run started")
	return r
}

// Decode parses state.json. A newer version is ErrNewerVersion; anything
// unreadable is an error that names the problem.
func Decode(data []byte) (*Run, error) {
	// The version is read without decoding the file: one pass, not two.
	if v := gjson.GetBytes(data, "version"); v.Type == gjson.Number && v.Int() > Version {
		return nil, fmt.Errorf("%w (version %d; this binary reads version %d): upgrade whetstone", ErrNewerVersion, v.Int(), Version)
	}
	var r Run
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("corrupt state: %w", err)
	}
	if r.Version < 1 || r.ID == "" || r.Phase == "" {
		return nil, fmt.Errorf("corrupt state: missing version, run_id or phase")
	}
	if r.Agents == nil {
		r.Agents = map[string]*Agent{}
	}
	r.unjudged()
	return &r, nil
}

// Encode renders state.json, bumping the revision. It is compact: hooks
// read it, people read `whetstone status`.
func (r *Run) Encode(now time.Time) ([]byte, error) {
	// Written by this binary, it is this binary's format (its ledger is):
	// an older whetstone must refuse it, not read part of it.
	r.Version = Version
	r.Revision++
	r.Updated = now
	b, err := json.Marshal(r)
	return append(b, '\n'), err
}

// Active reports whether the run still needs work.
func (r *Run) Active() bool { return !r.Phase.Ended() }

// Ended reports whether a run in this phase has ended (done or stopped).
func (p Phase) Ended() bool { return p == Done || p == Stopped }

// NoVerdict is how a finished run without a verdict (aborted, error) is
// shown in summaries, status, reports and stats.
const NoVerdict = "—"

// VerdictText is the run's verdict in words: NoVerdict when it has none.
func (r *Run) VerdictText() string {
	if r.Verdict == "" {
		return NoVerdict
	}
	return r.Verdict
}

// Expects reports whether the current phase waits for the named agent.
func (r *Run) Expects(name string) bool { return r.Active() && slices.Contains(r.Expected, name) }

// Pending lists the expected agents that have neither reported nor failed.
func (r *Run) Pending() []string {
	var out []string
	for _, n := range r.Expected {
		if a := r.Agents[n]; a == nil || (a.Status != Reported && a.Status != Failed) {
			out = append(out, n)
		}
	}
	return out
}

// Dispatch says why the orchestrator may not launch an agent now: the
// phase does not expect it, it already reported, or the prompt is not
// the one whetstone issued (Prompt); nil when it may. It
// records nothing: an agent's instance is recorded when it starts
// (Register), so the dispatch gate needs no lock and writes nothing.
func (r *Run) Dispatch(name, prompt string) error {
	status := ""
	if a := r.Agents[name]; a != nil {
		status = a.Status
	}
	switch MayDispatch(r.Phase, r.Expects(name), status, prompt, func() string { return r.Prompt(name) }) {
	case NotExpected:
		return fmt.Errorf("whetstone:%s is not part of the %s phase (iteration %d); dispatch only %s", name, r.Phase, r.Iteration, r.pendingTypes())
	case AlreadyDone:
		return fmt.Errorf("whetstone:%s already %s in this phase; do not dispatch it again", name, status)
	case WrongPrompt:
		return fmt.Errorf("dispatch whetstone:%s with exactly the prompt whetstone issued, %q, and nothing else: whetstone gives the agent its task when it starts", name, r.Prompt(name))
	}
	return nil
}

// Refusal is why the dispatch rule refuses an agent; Allowed when it does not.
type Refusal int

// The dispatch rule's answers.
const (
	Allowed     Refusal = iota
	NotExpected         // the run ended, or its phase does not expect the agent
	AlreadyDone         // the agent already reported or failed in this phase
	WrongPrompt         // the prompt is not the one whetstone issued
)

// MayDispatch is the dispatch rule over what it reads of a run: its phase,
// whether the phase expects the agent, the agent's status in it ("" when
// none started) and the prompt whetstone issued (want, asked last).
// Dispatch and the hook's fast path, which reads these from state.json
// without decoding it, both ask it, so the rule exists once.
func MayDispatch(phase Phase, expected bool, status, prompt string, want func() string) Refusal {
	switch {
	case phase == "" || phase.Ended() || !expected:
		return NotExpected
	case status == Reported || status == Failed:
		return AlreadyDone
	case strings.TrimSpace(prompt) != want():
		return WrongPrompt
	}
	return Allowed
}

// Register records an instance of an agent starting (SubagentStart). It
// reports false, and records nothing, when the phase does not expect the
// agent or the agent has already finished.
func (r *Run) Register(name, agentID string) bool {
	if agentID == "" || !r.Expects(name) {
		return false
	}
	if a := r.Agents[name]; a != nil && (a.Status == Reported || a.Status == Failed) {
		return false
	}
	if r.Instances == nil {
		r.Instances = map[string]*Instance{}
	}
	if r.Instances[agentID] == nil {
		r.Instances[agentID] = &Instance{Agent: name}
	}
	if r.Agents[name] == nil {
		// A re-dispatch after a rejected instance keeps the agent's record:
		// whichever registered instance reports validly first counts.
		r.Agents[name] = &Agent{Status: Dispatched}
	}
	r.StopBlocks = 0 // an agent started: the orchestrator is making progress
	return true
}

// Count records an instance's token count (its whole transcript, read again
// at each stop) so the run's total counts every message once.
func (r *Run) Count(agentID string, tokens int) {
	if in := r.Instances[agentID]; in != nil && tokens > in.Tokens {
		r.Tokens += tokens - in.Tokens
		in.Tokens = tokens
	}
}

func (r *Run) pendingTypes() string {
	p := r.Pending()
	if len(p) == 0 {
		return "nothing (wait for the running agents)"
	}
	for i, n := range p {
		p[i] = "whetstone:" + n
	}
	return strings.Join(p, ", ")
}

// Reject records an invalid report and reports whether the agent gets
// another try; after MaxRejections the agent is recorded as failed.
func (r *Run) Reject(name string) (retry bool) {
	a := r.agent(name)
	a.Rejections++
	r.StopBlocks = 0
	if a.Rejections > MaxRejections {
		a.Status = Failed
		return false
	}
	return true
}

// Accept records a valid report.
func (r *Run) Accept(name string) {
	r.agent(name).Status = Reported
	r.StopBlocks = 0
}

func (r *Run) agent(name string) *Agent {
	a := r.Agents[name]
	if a == nil {
		a = &Agent{Status: Dispatched}
		r.Agents[name] = a
	}
	return a
}

// Owns reports whether an agent instance's stop event counts: the instance
// was registered in this phase and iteration as the named agent, and that
// agent has not finished yet.
func (r *Run) Owns(name, agentID string) bool {
	in := r.Instances[agentID]
	if in == nil || in.Agent != name || !r.Expects(name) {
		return false
	}
	a := r.Agents[name]
	return a == nil || a.Status == Dispatched
}

// Complete reports whether every expected agent has reported or failed.
func (r *Run) Complete() bool { return r.Active() && len(r.Pending()) == 0 }

// Failed lists the agents of this phase recorded as failed.
func (r *Run) Failed() []string {
	var out []string
	for _, n := range r.Expected {
		if a := r.Agents[n]; a != nil && a.Status == Failed {
			out = append(out, n)
		}
	}
	return out
}

// Policy is the blocking rule with this run's settings, for the current
// iteration.
func (r *Run) Policy() review.Policy {
	s := r.Settings
	return review.Policy{Iteration: r.Iteration, ConfidenceThreshold: s.ConfidenceThreshold, FixSeverity: s.FixSeverity,
		BlockingSeverity: s.BlockingSeverity, PreExistingBlocks: s.PreExistingBlocks}
}

// Rule is the blocking rule in words, with this run's settings.
func (r *Run) Rule() string { return r.Policy().Rule() }

// FixChecks lists the findings the named reviewer must give a verdict on
// (fix_checks) in the round after a fix: the open ones it raised (in their
// latest sighting) that the fixer reported on — fixed, not_fixed, disputed
// or deferred — or that still block. Each reviewer checks its own findings
// only; no finding is let go without its word (review.MergeRound).
func (r *Run) FixChecks(name string) []string { return r.Digest.Checks[name] }

// CheckLines are the lines of a reviewer's prompt that ask for its fix
// checks: the ids, then each one the fixer did not claim to fix with the
// fixer's status and note (one line each, cleaned, at most
// review.MaxClaimNote characters). None when there is nothing to check.
func (r *Run) CheckLines(name string) []string {
	ids := r.FixChecks(name)
	if len(ids) == 0 {
		return nil
	}
	lines := []string{fmt.Sprintf("Check what the fixer did with these findings you raised, one fix_checks entry each (fixed | not_fixed | partially_fixed | withdrawn): %s. ", strings.Join(ids, ", ")) +
		"withdrawn: you accept the fixer's dispute; note: what you checked; a missing entry sends the report back. Raise one still open again with \"prior\": \"<id>\", never as new; a problem the fix introduced is new."}
	var unfixed []string
	more := 0
	for _, id := range ids {
		c, ok := r.Digest.Unfixed[id]
		if !ok {
			if !slices.Contains(r.Claimed, id) {
				more++
			}
			continue
		}
		line := "- " + id + " " + cmp.Or(c.Status, "no answer from the fixer")
		if c.Note != "" {
			line += ": " + review.ShortLine(c.Note, review.MaxClaimNote)
		}
		unfixed = append(unfixed, line)
	}
	if more > 0 {
		unfixed = append(unfixed, fmt.Sprintf("- … and %d more the fixer did not claim to fix (see fix.json)", more))
	}
	if len(unfixed) > 0 {
		lines = append(lines, "The fixer did not fix these (its full notes are in fix.json). Answer withdrawn only if its reason convinces you the finding does not hold; otherwise not_fixed, and the finding keeps blocking:")
		lines = append(lines, unfixed...)
	}
	return lines
}

// Counts summarises open findings by severity.
func (r *Run) Counts() map[string]int { return r.Digest.Counts }
