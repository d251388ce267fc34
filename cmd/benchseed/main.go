// Command benchseed gives scripts/bench a run with history: in the project
// in the working directory, the session's run is driven through review
// rounds of the reviewers (-reviewers) × -per new blocking findings each
// (the report cap is the validator's, which seeding does not call) and fix
// phases, until the ledger holds at least -entries findings or the run is
// at -iteration, and is left in the fix phase. With -resolve the fixer
// claims every open finding fixed and the next round's reviewers confirm
// it (fix_checks), so each round resolves the one before, as in a run that
// converges; without it every finding stays open.
//
// With -join FILE it then enters the next review round and plays it
// through the hooks: every reviewer dispatched and started, all but the
// last with their reports stored (each -join-per findings, default 10,
// and a fix check for each finding the round asks it about); the last
// reviewer's SubagentStop payload, the one that concludes the round, is
// written to FILE, and -iteration is then the joined round's.
//
// With -runs it also creates that many finished old runs (copies of a
// small one) for the O(1) checks.
//
//	benchseed -session S [-entries N] [-iteration K] [-per P] [-reviewers a,b] [-resolve] [-join FILE [-join-per P]] [-runs R]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/client"
	"github.com/whetstone-dev/whetstone/internal/hook"
	"github.com/whetstone-dev/whetstone/internal/loop"
	"github.com/whetstone-dev/whetstone/internal/review"
)

// core is the default roster: the five core reviewers.
const core = "critic,pedant,witness,security-reviewer,silent-failure-hunter"

type options struct {
	session   string
	entries   int
	iteration int
	per       int
	joinPer   int
	reviewers []string
	resolve   bool
	join      string
	runs      int
}

func main() {
	var o options
	var names string
	flag.StringVar(&o.session, "session", "", "the session that owns the run")
	flag.IntVar(&o.entries, "entries", 0, "ledger entries to reach")
	flag.IntVar(&o.iteration, "iteration", 0, "iteration to reach (the join's, with -join)")
	flag.IntVar(&o.per, "per", 40, "new findings per reviewer per round")
	flag.IntVar(&o.joinPer, "join-per", 10, "with -join: new findings per reviewer in the joined round")
	flag.StringVar(&names, "reviewers", core, "the run's reviewers, comma-separated")
	flag.BoolVar(&o.resolve, "resolve", false, "each round resolves the findings of the one before")
	flag.StringVar(&o.join, "join", "", "play the next review round but its last report; write that report's payload here")
	flag.IntVar(&o.runs, "runs", 0, "old runs to add")
	flag.Parse()
	o.reviewers = strings.Split(names, ",")
	if o.entries == 0 && o.iteration == 0 {
		o.entries = 40
	}
	if err := seed(o); err != nil {
		fmt.Fprintln(os.Stderr, "benchseed:", err)
		os.Exit(1)
	}
}

func seed(o options) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	a := &app.App{Now: time.Now, Getenv: os.Getenv, Log: os.Stderr}
	proj, err := a.Open(wd)
	if err != nil {
		return err
	}
	resp, err := a.Hook(context.Background(), "user-prompt-submit", payload(map[string]any{"session_id": o.session, "hook_event_name": "UserPromptSubmit",
		"cwd": wd, "prompt": "/whetstone:review --reviewers " + strings.Join(o.reviewers, ",")}))
	if err != nil {
		return err
	}
	id := proj.RunOf(o.session)
	if id == "" {
		return fmt.Errorf("no run started: %+v", resp)
	}
	// With -join the seeded rounds stop one iteration short of it.
	last := o.iteration
	if o.join != "" {
		last--
	}
	r, err := proj.Load(id)
	if err != nil {
		return err
	}
	for round := 0; (o.entries > 0 && r.Digest.LastID < o.entries) || r.Iteration < last; round++ {
		r, err = a.Update(proj, id, func(r *loop.Run) error {
			if err := proj.LoadCold(r); err != nil {
				return err
			}
			if r.Phase == loop.Fix {
				r.Apply(&loop.Event{Kind: loop.FixDone, Now: time.Now(), Fix: fixReport(r, o)})
			}
			r.Apply(&loop.Event{Kind: loop.ReviewDone, Now: time.Now(), Reports: reports(r, o, round)})
			return nil
		})
		if err != nil {
			return err
		}
		if r.Phase != loop.Fix {
			return fmt.Errorf("round %d left the run in %s (%s)", round, r.Phase, r.StopReason)
		}
	}
	if o.join != "" {
		if err := join(a, proj, wd, id, o); err != nil {
			return err
		}
		if r, err = proj.Load(id); err != nil {
			return err
		}
	}
	fmt.Printf("%s: %s phase, iteration %d, %d ledger entries\n", id, r.Phase, r.Iteration, r.Digest.LastID)
	return oldRuns(proj, id, o.runs)
}

// join enters the next review round (after a fix, when the run is in the
// fix phase) and plays it through the hooks but the last report, whose
// payload it writes to o.join.
func join(a *app.App, proj app.Project, wd, id string, o options) error {
	r, err := a.Update(proj, id, func(r *loop.Run) error {
		if r.Phase == loop.Fix {
			if err := proj.LoadCold(r); err != nil {
				return err
			}
			r.Apply(&loop.Event{Kind: loop.FixDone, Now: time.Now(), Fix: fixReport(r, o)})
		}
		return nil
	})
	if err != nil {
		return err
	}
	if r.Phase != loop.Review {
		return fmt.Errorf("the run is in the %s phase, not review", r.Phase)
	}
	round := r.Iteration + 1000 // findings unlike every seeded round's
	o.per = o.joinPer
	reps := reports(r, o, round)
	for _, name := range r.Expected {
		if _, err := a.Hook(context.Background(), "pre-tool-use", payload(map[string]any{"session_id": o.session, "hook_event_name": "PreToolUse", "cwd": wd,
			"tool_name": "Agent", "tool_input": map[string]any{"subagent_type": "whetstone:" + name, "description": "d",
				"prompt": fmt.Sprintf("whetstone review · run %s · iteration %d · reviewer %s", id, r.Iteration, name)}})); err != nil {
			return err
		}
		if _, err := a.Hook(context.Background(), "subagent-start", payload(map[string]any{"session_id": o.session, "hook_event_name": "SubagentStart", "cwd": wd,
			"agent_id": "agent-" + name, "agent_type": "whetstone:" + name})); err != nil {
			return err
		}
	}
	for i, name := range r.Expected {
		var rep review.Report
		for _, x := range reps {
			if x.Reviewer == name {
				rep = x
			}
		}
		rep.Schema = "whetstone.review/v1"
		body, err := json.Marshal(rep)
		if err != nil {
			return err
		}
		p := map[string]any{"session_id": o.session, "hook_event_name": "SubagentStop", "cwd": wd, "agent_id": "agent-" + name,
			"agent_type": "whetstone:" + name, "stop_hook_active": false, "background_tasks": []any{},
			"last_assistant_message": "Review done.\n\n```json\n" + string(body) + "\n```\n"}
		if i == len(r.Expected)-1 {
			data, err := json.Marshal(p)
			if err != nil {
				return err
			}
			return os.WriteFile(o.join, data, 0o644)
		}
		resp, err := a.Hook(context.Background(), "subagent-stop", payload(p))
		if err != nil {
			return err
		}
		if resp != nil {
			return fmt.Errorf("%s's report was refused: %s", name, resp.Reason)
		}
	}
	return nil
}

func payload(v map[string]any) hook.Payload {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	p, err := client.Parse(data)
	if err != nil {
		panic(err)
	}
	return p
}

// fixReport is the fixer's report: with -resolve every open finding is
// claimed fixed, else none is.
func fixReport(r *loop.Run, o options) *review.FixReport {
	f := &review.FixReport{Schema: "whetstone.fix/v1"}
	if o.resolve {
		for _, id := range r.Digest.Blocking {
			f.Results = append(f.Results, review.FixResult{ID: id, Status: "fixed", Note: "done", Files: []string{"main.go"}})
		}
	}
	return f
}

// reports is one round: each reviewer o.per new findings, in files of
// their own, and "fixed" for every finding the round asks it about.
func reports(r *loop.Run, o options, round int) []review.Report {
	var out []review.Report
	for k, name := range o.reviewers {
		rep := review.Report{Reviewer: name, Verdict: "issues_found"}
		for j := 0; j < o.per; j++ {
			rep.Findings = append(rep.Findings, review.Finding{Severity: "high", Confidence: 90, Category: "correctness",
				File: fmt.Sprintf("internal/pkg%d/file%02d.go", round, k*8+j%8), Line: 10 + 30*j, EndLine: 12 + 30*j,
				Title:       fmt.Sprintf("round %d %s distinct problem number %d in handling of input", round, name, j),
				Description: "What is wrong and why it matters.", Evidence: "the code", Suggestion: "fix it"})
		}
		for _, id := range r.FixChecks(name) {
			rep.FixChecks = append(rep.FixChecks, review.FixCheck{ID: id, Status: review.CheckFixed})
		}
		out = append(out, rep)
	}
	return out
}

// oldRuns copies the seeded run's directory n times as finished runs of
// other sessions, so scans would show in the timings.
func oldRuns(proj app.Project, id string, n int) error {
	if n == 0 {
		return nil
	}
	src := filepath.Join(proj.Root, ".whetstone", "runs", id, "state.json")
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		dir := filepath.Join(proj.Root, ".whetstone", "runs", fmt.Sprintf("0ld%05d-1", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		// A copied state does not verify under its new name: whatever
		// reads it pays the read, which is what a scan would cost.
		if err := os.WriteFile(filepath.Join(dir, "state.json"), data, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("%d old runs\n", n)
	return nil
}
