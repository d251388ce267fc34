package loop

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/whetstone-dev/whetstone/internal/brief"
	"github.com/whetstone-dev/whetstone/internal/review"
)

// DispatchMarker starts each line of the instructions that is one Agent call.
const DispatchMarker = "WHETSTONE-DISPATCH "

// Dir is a run's directory relative to the project root.
func (r *Run) Dir() string { return ".whetstone/runs/" + r.ID }

// Client is how the orchestrator's client spells a dispatch: each client
// in internal/client implements it.
type Client interface {
	// DispatchTool is the tool that starts a subagent.
	DispatchTool() string
	// AgentType is the subagent_type of whetstone agent name.
	AgentType(name string) string
	// Background reports whether the dispatch tool takes run_in_background.
	Background() bool
}

// dispatch is one dispatch tool call's input; run_in_background only for
// a client whose dispatch tool takes it.
type dispatch struct {
	Type        string `json:"subagent_type"`
	Description string `json:"description"`
	Prompt      string `json:"prompt"`
	Background  *bool  `json:"run_in_background,omitempty"`
}

// Instructions tells the orchestrator what to do now: the dispatch calls
// of the current phase that are still pending, one WHETSTONE-DISPATCH line
// each, in the words of client c.
func (r *Run) Instructions(c Client) string {
	if !r.Active() {
		return r.Finale()
	}
	pending := r.Pending()
	var b strings.Builder
	fmt.Fprintf(&b, "whetstone run %s · iteration %d of at most %d · %s phase.\n", r.ID, r.Iteration, r.Settings.MaxIterations, r.Phase)
	if n := len(r.Tampered); n > 0 {
		fmt.Fprintf(&b, "The project was changed during a read-only phase, which no agent may do: %s. Those changes must be undone (git checkout or restore them by hand, or set \"restore\": true in whetstone.json); this run can no longer approve.\n",
			review.CleanLine(strings.Join(r.Tampered[max(0, n-5):], "; ")))
	}
	if len(pending) == 0 {
		b.WriteString("Every agent of this phase has been dispatched; wait for them to finish. Do not edit files or review the code yourself.\n")
		return b.String()
	}
	tool := c.DispatchTool()
	what := "these " + review.Plural(len(pending), "agent") + " now with the " + tool + " tool, all in ONE assistant message: each line below is one " + tool + " call"
	if len(pending) == 1 {
		what = "this agent now with the " + tool + " tool: the line below is the " + tool + " call"
	}
	b.WriteString(r.focusLine())
	fmt.Fprintf(&b, "Dispatch %s, its input the JSON after %q, unchanged.\n", what, strings.TrimSpace(DispatchMarker))
	for _, name := range pending {
		d := dispatch{Type: c.AgentType(name), Description: fmt.Sprintf("whetstone %s, iteration %d", name, r.Iteration), Prompt: r.Prompt(name)}
		if c.Background() {
			d.Background = &r.Settings.Background
		}
		call, _ := json.Marshal(d)
		b.WriteString(DispatchMarker)
		b.Write(call)
		b.WriteByte('\n')
	}
	b.WriteString("Then wait: whetstone checks the reports and gives the next step. Do not edit, review or fix code yourself.\n")
	return b.String()
}

// Prompt is the dispatch prompt of an agent of the current phase: one line
// naming the job (JobLine). The orchestrator copies it; the dispatch gate
// allows a dispatch only with exactly this prompt, and the agent's whole
// task (Task) reaches it from whetstone when it starts, so nothing the
// orchestrator writes can change what an agent is asked to do.
func (r *Run) Prompt(name string) string { return JobLine(r.ID, r.Iteration, name) }

// JobLine names an agent's job: "whetstone review · run 1e5fb35f-1 ·
// iteration 2 · reviewer critic", "whetstone fix · run … · iteration 1",
// "whetstone validate · run … · iteration 1".
func JobLine(id string, iteration int, name string) string {
	switch name {
	case "fixer":
		return fmt.Sprintf("whetstone fix · run %s · iteration %d", id, iteration)
	case "validator":
		return fmt.Sprintf("whetstone validate · run %s · iteration %d", id, iteration)
	}
	return fmt.Sprintf("whetstone review · run %s · iteration %d · reviewer %s", id, iteration, name)
}

// Task is the whole of what an agent of the current phase is asked to do,
// given to it when it starts (SubagentStart): a reviewer's task names the
// files that hold the change (docs/design.md) — in a focused round after a
// fix, fix.patch to review instead of the whole change, and its job —, the
// author's intent, the fixes it must check and the run's blocking rule.
func (r *Run) Task(name string) string {
	var b strings.Builder
	dir := fmt.Sprintf("%s/iter-%d", r.Dir(), r.Iteration)
	switch name {
	case "fixer":
		b.WriteString(JobLine(r.ID, r.Iteration, name) + "\n")
		if r.Iteration > 1 {
			// The fixer knows the change from the last round: it reads what it
			// changed then, and the change again only where a finding needs it.
			fmt.Fprintf(&b, "Fix these blocking findings (details: %s/verdict.json; your last fix: %s/fix.patch; the whole change, for context: %s/diff.patch):\n", dir, dir, dir)
		} else {
			fmt.Fprintf(&b, "Fix these blocking findings (details: %s/verdict.json; the change: %s/diff.patch):\n", dir, dir)
		}
		r.listBlocking(&b)
		r.intentLine(&b, name)
		b.WriteString(r.Rule() + "\n")
		b.WriteString("Your report: whetstone.fix/v1, one result per id above.\n")
	case "validator":
		b.WriteString(JobLine(r.ID, r.Iteration, name) + "\n")
		fmt.Fprintf(&b, "Confirm or disprove each of these findings (details: %s/verdict.json; the change: %s/diff.patch):\n", dir, dir)
		r.listBlocking(&b)
		r.intentLine(&b, name)
		b.WriteString(r.Rule() + "\n")
		b.WriteString("Your report: whetstone.validation/v1, one result per id above.\n")
	default:
		// A reviewer's lens and method come with its task, not its brief
		// (brief.Agent.Lens): whole in a review of the whole change; in a
		// focused round the focused method, and the lens whole or in one
		// line (wholeLens).
		a, _ := brief.Load(name) // a roster holds only the registry's reviewers
		b.WriteString(JobLine(r.ID, r.Iteration, name) + "\n")
		focused := r.focused(name)
		if focused {
			r.focusedTask(&b, name, dir, a)
		} else {
			fmt.Fprintf(&b, "The change: %s/diff.patch (base → working tree; untracked files as additions). Its files, hunks, triage and signals: %s/context.json.\n", dir, r.Dir())
		}
		r.intentLine(&b, name)
		if r.Iteration > 1 {
			prev := fmt.Sprintf("%s/iter-%d", r.Dir(), r.Iteration-1)
			if !focused {
				fmt.Fprintf(&b, "What the fixer changed since the last review: %s/fix.patch. ", dir)
			}
			fmt.Fprintf(&b, "Earlier findings: %s/verdict.json; the fixer's: %s/fix.json.\n", prev, prev)
			for _, line := range r.CheckLines(name) {
				b.WriteString(line + "\n")
			}
		}
		b.WriteString(r.Rule() + "\n")
		fmt.Fprintf(&b, "Your report: whetstone.review/v1, \"reviewer\": %q, at most %d findings (more are cut), paths relative to the project root; a finding below confidence %d is kept as a note.\n",
			name, review.MaxReportFindings, r.Settings.ConfidenceThreshold)
		if a.Lens != "" && (!focused || r.wholeLens(name)) {
			b.WriteString("\n" + a.Lens + "\n")
		}
		if a.Method != "" && !focused {
			b.WriteString("\n" + strings.TrimSpace(a.Method) + "\n")
		}
	}
	return b.String()
}

// MaxListed is how many findings a hook answer or a prompt lists; the rest
// are in the iteration's verdict.json.
const MaxListed = 20

// listBlocking lists the open blocking findings, most severe first, at most
// MaxListed. Titles were checked by the validator (one line, no control or
// bidi characters) and are cleaned again here, so none can start a line of
// its own.
func (r *Run) listBlocking(b *strings.Builder) {
	r.listFirst(b, MaxListed, fmt.Sprintf("more blocking findings, listed in %s/iter-%d/verdict.json", r.Dir(), r.Iteration))
}

// listFirst lists at most n of the open blocking findings, most severe
// first, and says how many more there are ("- … and 3 <more>").
func (r *Run) listFirst(b *strings.Builder, n int, more string) {
	listed := r.Digest.Listed[:min(len(r.Digest.Listed), n)]
	for _, e := range listed {
		fmt.Fprintf(b, "- %s [%s] %s:%d %s\n", e.ID, e.Severity, review.CleanLine(e.File), e.Line, review.CleanLine(e.Title))
	}
	if rest := len(r.Digest.Blocking) - len(listed); rest > 0 {
		fmt.Fprintf(b, "- … and %d %s\n", rest, more)
	}
}

// Summary is the account of a finished run, in a few lines: the outcome,
// an error or tampering when there was one, the findings and the most
// severe blocking ones, the files the fixer changed, time and tokens, and
// where the report is. It reads only state.json's digest,
// so the Stop hook that shows it never reads the ledger.
func (r *Run) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "whetstone run %s ", r.ID)
	if r.Phase == Done {
		fmt.Fprintf(&b, "DONE after %s: %s.\n", review.Plural(r.Iteration, "iteration"), r.Verdict)
	} else {
		fmt.Fprintf(&b, "STOPPED (%s) at iteration %d: %s.\n", r.StopReason, r.Iteration, r.VerdictText())
		if r.Error != "" {
			fmt.Fprintf(&b, "Error: %s.\n", strings.TrimSuffix(review.CleanLine(r.Error), "."))
		}
	}
	if len(r.Tampered) > 0 {
		fmt.Fprintf(&b, "The project was changed during a read-only phase (%s), so the run cannot approve.\n", review.CleanLine(strings.Join(r.Tampered[:min(len(r.Tampered), 5)], "; ")))
	}
	b.WriteString(r.FindingsLine() + "\n")
	r.listFirst(&b, summaryListed, "more blocking, in the report")
	if n := len(r.Edited); n > 0 {
		fmt.Fprintf(&b, "The fixer changed %s, left uncommitted: %s.\n", review.Plural(n, "file"), review.CleanLine(strings.Join(r.Edited[:min(n, summaryListed)], ", ")))
	}
	fmt.Fprintf(&b, "Time: %s; tokens: %s.\n", FormatDuration(r.Elapsed(r.Updated)), FormatTokens(r.Tokens))
	fmt.Fprintf(&b, "Report: %s/report.md", r.Dir())
	return b.String()
}

// summaryListed is how many blocking findings and edited files a summary
// names.
const summaryListed = 5

// Finale is what the orchestrator is given once when a run ends: the
// summary and what to do with it. Its final message relays the result to
// the user, who never sees a hook's message otherwise.
func (r *Run) Finale() string {
	return r.Summary() + "\nThe whetstone run is over. In your final message, tell the user this result in a few lines: the outcome and verdict, the open findings (the blocking ones by id and title), which files the fixer changed (uncommitted), and the report's path. Do not dispatch agents, review or fix anything, or start another review."
}

// FindingsLine is one sentence on the run's findings: how many were
// raised, in how many review rounds, and which are open.
func (r *Run) FindingsLine() string {
	rounds := review.Plural(r.Rounds, "review round")
	if r.Digest.LastID == 0 {
		return fmt.Sprintf("Findings: none in %s.", rounds)
	}
	open := r.OpenLine()
	if open == "" {
		return fmt.Sprintf("Findings: %d raised in %s; none open.", r.Digest.LastID, rounds)
	}
	return fmt.Sprintf("Findings: %d raised in %s; open: %s.", r.Digest.LastID, rounds, open)
}

// OpenLine lists the open findings by severity and how many block
// ("2 high, 1 low; 2 blocking"), or "" when none is open.
func (r *Run) OpenLine() string {
	c := r.Counts()
	var parts []string
	for _, s := range review.Severities {
		if c[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c[s], s))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("%s; %d blocking", strings.Join(parts, ", "), len(r.Digest.Blocking))
}

// Elapsed is how long the run took: until it finished, or until now.
func (r *Run) Elapsed(now time.Time) time.Duration {
	end := now
	if !r.Active() && !r.Finished.IsZero() {
		end = r.Finished
	}
	return max(end.Sub(r.Created), 0)
}

// FormatDuration renders a duration for people: 45s, 3m05s, 2h04m.
func FormatDuration(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// FormatTokens renders a token count for people: "not counted" for 0
// (no transcript was readable), else 950, 12.3k, 1.2M.
func FormatTokens(n int) string {
	switch {
	case n <= 0:
		return "not counted"
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}
