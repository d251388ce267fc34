// Package inspect shows runs to a person or a script at the command line:
// `whetstone status`, `whetstone stats` and the report `whetstone report`
// prints. It reads runs through internal/app's Project and Run API and
// changes nothing; the hooks never call it.
package inspect

import (
	"fmt"
	"strings"
	"time"

	"github.com/whetstone-dev/whetstone/internal/loop"
	"github.com/whetstone-dev/whetstone/internal/paint"
	"github.com/whetstone-dev/whetstone/internal/review"
)

// StatusSchema names the format of `whetstone status --json`.
const StatusSchema = "whetstone.status/v1"

// Status is what `whetstone status --json` prints: a run as a person or a
// script watches it, documented in docs/cli.md. It is built from state.json
// alone (never the ledger), so it costs the same for any run.
type Status struct {
	Schema        string        `json:"schema"`
	Run           string        `json:"run_id"`
	Session       string        `json:"session_id"`
	Revision      int           `json:"revision"`    // state.json's revision: it grows with every change
	StopBlocks    int           `json:"stop_blocks"` // consecutive Stop hooks blocked to remind the orchestrator
	Active        bool          `json:"active"`
	Abandoned     bool          `json:"abandoned,omitempty"` // active, but no hook activity for AbandonedAfter
	Phase         loop.Phase    `json:"phase"`
	Iteration     int           `json:"iteration"`
	MaxIterations int           `json:"max_iterations"`
	Depth         string        `json:"depth"`
	Verdict       string        `json:"verdict,omitempty"`
	StopReason    string        `json:"stop_reason,omitempty"`
	Error         string        `json:"error,omitempty"`
	Agents        []AgentStatus `json:"agents"`
	Open          Severities    `json:"open"`
	Blocking      []string      `json:"blocking"`
	Raised        int           `json:"raised"`
	Rounds        int           `json:"rounds"`
	CleanPasses   int           `json:"clean_passes"`
	Tampered      []string      `json:"tampered,omitempty"`
	Created       time.Time     `json:"created"`
	Updated       time.Time     `json:"updated"`
	Finished      *time.Time    `json:"finished,omitempty"`
	Elapsed       int64         `json:"elapsed_seconds"`
	Tokens        int           `json:"tokens"`
	BudgetMinutes int           `json:"budget_minutes,omitempty"`
	BudgetTokens  int           `json:"budget_tokens,omitempty"`
	Report        string        `json:"report,omitempty"`
}

// AgentStatus is one agent the current phase expects.
type AgentStatus struct {
	Name       string `json:"name"`
	Status     string `json:"status"` // not dispatched | dispatched | reported | failed
	Rejections int    `json:"rejections,omitempty"`
	Why        string `json:"why,omitempty"` // a focused round after a fix: why this reviewer looks again
}

// Severities counts findings by severity, most severe first.
type Severities struct {
	Critical int `json:"critical"`
	High     int `json:"high"`
	Medium   int `json:"medium"`
	Low      int `json:"low"`
	Info     int `json:"info"`
}

func severitiesOf(c map[string]int) Severities {
	return Severities{c["critical"], c["high"], c["medium"], c["low"], c["info"]}
}

// StatusOf describes a run at now.
func StatusOf(r *loop.Run, now time.Time) Status {
	s := Status{Schema: StatusSchema, Run: r.ID, Session: r.Session, Active: r.Active(), Phase: r.Phase,
		Iteration: r.Iteration, MaxIterations: r.Settings.MaxIterations, Depth: r.Settings.Depth,
		Verdict: r.Verdict, StopReason: r.StopReason, Error: r.Error, Agents: []AgentStatus{},
		Open: severitiesOf(r.Counts()), Blocking: r.Digest.Blocking, Raised: r.Digest.LastID,
		Rounds: r.Rounds, CleanPasses: r.CleanStreak, Tampered: r.Tampered, Created: r.Created, Updated: r.Updated,
		Elapsed: int64(r.Elapsed(now).Seconds()), Tokens: r.Tokens, BudgetMinutes: r.Settings.BudgetMinutes,
		BudgetTokens: r.Settings.BudgetTokens, StopBlocks: r.StopBlocks, Revision: r.Revision, Abandoned: Abandoned(r, now)}
	if s.Blocking == nil {
		s.Blocking = []string{}
	}
	for _, n := range r.Expected {
		as := AgentStatus{Name: n, Status: "not dispatched", Why: r.Focus[n]}
		if ag := r.Agents[n]; ag != nil {
			as.Status, as.Rejections = ag.Status, ag.Rejections
		}
		s.Agents = append(s.Agents, as)
	}
	if !r.Active() {
		if !r.Finished.IsZero() {
			s.Finished = &r.Finished
		}
		s.Report = r.Dir() + "/report.md"
	}
	return s
}

// Text renders the status for a terminal, coloured when colour is set.
func (s Status) Text(colour bool) string {
	p := paint.Painter(colour)
	var b strings.Builder
	if s.Active {
		fmt.Fprintf(&b, "whetstone run %s · %s phase · iteration %d of at most %d · depth %s\n",
			s.Run, p.Bold(string(s.Phase)), s.Iteration, s.MaxIterations, s.Depth)
	} else if s.Phase == loop.Done {
		fmt.Fprintf(&b, "whetstone run %s · %s after %s: %s\n", s.Run, p.Bold("DONE"), review.Plural(s.Iteration, "iteration"), p.Verdict(s.Verdict))
	} else {
		fmt.Fprintf(&b, "whetstone run %s · %s (%s) at iteration %d: %s\n", s.Run, p.Bold("STOPPED"), s.StopReason, s.Iteration, p.Verdict(s.Verdict))
	}
	if s.Abandoned {
		fmt.Fprintf(&b, "  %s no hook activity since %s: abandoned? `whetstone abort --run %s` ends it; resuming session %s continues it\n",
			p.Yellow("!"), s.Updated.UTC().Format(time.RFC3339), s.Run, review.CleanLine(s.Session))
	}
	if s.Error != "" {
		fmt.Fprintf(&b, "  error:    %s\n", review.CleanLine(s.Error))
	}
	if len(s.Tampered) > 0 {
		fmt.Fprintf(&b, "  %s the project was changed during a read-only phase: %s\n", p.Red("!"), review.CleanLine(strings.Join(s.Tampered[max(0, len(s.Tampered)-5):], "; ")))
	}
	elapsed := loop.FormatDuration(time.Duration(s.Elapsed) * time.Second)
	if s.BudgetMinutes > 0 {
		elapsed += fmt.Sprintf(" of %d min budget", s.BudgetMinutes)
	}
	tokens := loop.FormatTokens(s.Tokens)
	if s.BudgetTokens > 0 {
		tokens += " of " + loop.FormatTokens(s.BudgetTokens) + " budget"
	}
	fmt.Fprintf(&b, "  session:  %s · started %s · %s elapsed · tokens %s\n", s.Session, s.Created.UTC().Format(time.RFC3339), elapsed, tokens)
	if len(s.Agents) > 0 {
		width := 0
		for _, a := range s.Agents {
			width = max(width, len(a.Name))
		}
		for i, a := range s.Agents {
			label := "            "
			if i == 0 {
				label = "  agents:   "
			}
			st := a.Status
			switch st {
			case loop.Reported:
				st = p.Green(st)
			case loop.Failed:
				st = p.Red(st)
			}
			if a.Rejections > 0 {
				st += fmt.Sprintf(" (%s rejected)", review.Plural(a.Rejections, "report"))
			}
			if a.Why != "" {
				st += " · " + review.CleanLine(a.Why)
			}
			fmt.Fprintf(&b, "%s%-*s  %s\n", label, width, a.Name, st)
		}
	}
	fmt.Fprintf(&b, "  findings: %s\n", s.findings(p))
	fmt.Fprintf(&b, "  rounds:   %d review %s, %d consecutive clean %s\n", s.Rounds, review.PluralWord(s.Rounds, "round"), s.CleanPasses, review.PluralWord(s.CleanPasses, "pass"))
	if s.Report != "" {
		fmt.Fprintf(&b, "  report:   %s\n", s.Report)
	}
	return b.String()
}

func (s Status) findings(p paint.Painter) string {
	if s.Raised == 0 {
		return "none raised"
	}
	var parts []string
	for i, n := range []int{s.Open.Critical, s.Open.High, s.Open.Medium, s.Open.Low, s.Open.Info} {
		if n > 0 {
			part := fmt.Sprintf("%d %s", n, review.Severities[i])
			if i < 2 {
				part = p.Red(part)
			}
			parts = append(parts, part)
		}
	}
	if len(parts) == 0 {
		return fmt.Sprintf("%d raised, none open", s.Raised)
	}
	return fmt.Sprintf("%d raised; open: %s; %d blocking", s.Raised, strings.Join(parts, ", "), len(s.Blocking))
}
