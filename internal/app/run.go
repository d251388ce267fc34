package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
	"github.com/whetstone-dev/whetstone/internal/config"
	"github.com/whetstone-dev/whetstone/internal/hook"
	"github.com/whetstone-dev/whetstone/internal/loop"
	"github.com/whetstone-dev/whetstone/internal/review"
	"github.com/whetstone-dev/whetstone/internal/scope"
	"github.com/whetstone-dev/whetstone/internal/state"
)

// startRun handles /whetstone:review: it resumes the session's active run,
// or creates one, and answers with the first phase's instructions. Bad
// flags or configuration refuse the prompt with a message; no run is made.
func (a *App) startRun(proj Project, p hook.Payload) (*hook.Response, error) {
	refuse := func(err error) (*hook.Response, error) {
		return hook.Block(fmt.Sprintf("whetstone: %v. No review was started.", err)), nil
	}
	args, err := config.ParseArgs(p.Prompt)
	if err != nil {
		return refuse(err)
	}
	file, err := config.Load(proj.Root)
	if err != nil {
		return refuse(err)
	}
	settings, err := config.Resolve(file, args)
	if err != nil {
		return refuse(err)
	}
	var resp *hook.Response
	sessions := state.Store{Path: proj.sessionFile(p.SessionID)}
	err = sessions.Update(func(old []byte) ([]byte, error) {
		if id := strings.TrimSpace(string(old)); id != "" {
			r, err := proj.Load(id)
			switch {
			case errors.Is(err, loop.ErrNewerVersion):
				return nil, err
			case err == nil && r.Active() && !args.Restart:
				resp = hook.Context("UserPromptSubmit", "Resuming the whetstone run already active in this session (use --restart for a new one).\n"+r.Instructions())
				return nil, nil
			case err == nil && r.Active():
				if _, err := a.Update(proj, id, func(r *loop.Run) error {
					r.Stop(loop.Aborted, "restarted with --restart", a.Now())
					r.Announced = true
					return a.finish(proj, r)
				}); err != nil {
					return nil, err
				}
			}
		}
		ctx := scope.Detect(proj.Root, args.Scope, file.Triage)
		if len(ctx.Files) == 0 && ctx.Scope == "" {
			return nil, fmt.Errorf("nothing to review: no uncommitted changes and no last commit to compare with; name what to review after %s", config.Command)
		}
		if file.MaxFiles > 0 && len(ctx.Files) > file.MaxFiles {
			return nil, fmt.Errorf("the change touches %d files, more than max_files (%d) in %s; name a narrower scope", len(ctx.Files), file.MaxFiles, config.FileName)
		}
		r, err := a.create(proj, p.SessionID, settings, config.Roster(settings, file, ctx.Signals), ctx)
		if err != nil {
			return nil, err
		}
		resp = hook.Context("UserPromptSubmit", fmt.Sprintf("whetstone started review run %s (depth %s, %d reviewer(s), %d changed file(s)).\n%s", r.ID, settings.Depth, len(r.Roster), len(ctx.Files), r.Instructions()))
		return []byte(r.ID + "\n"), nil
	})
	if err != nil {
		return refuse(err)
	}
	return resp, nil
}

// create makes a new run directory and its first state. Run ids are the
// session's first eight characters and a sequence number; os.Mkdir claims
// one atomically.
func (a *App) create(proj Project, session string, s loop.Settings, roster []string, ctx scope.Context) (*loop.Run, error) {
	if err := os.MkdirAll(proj.dir("runs"), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", proj.dir("runs"), err)
	}
	if err := writeIfMissing(proj.dir(".gitignore"), "*\n"); err != nil {
		return nil, err
	}
	prefix := session[:min(8, len(session))]
	var id string
	for n := 1; ; n++ {
		id = fmt.Sprintf("%s-%d", prefix, n)
		err := os.Mkdir(proj.runDir(id), 0o755)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("create run directory: %w", err)
		}
	}
	if err := writeFile(filepath.Join(proj.runDir(id), "context.json"), marshal(ctx)); err != nil {
		return nil, err
	}
	r := loop.New(id, session, s, roster, a.Now())
	data, err := r.Encode(a.Now())
	if err != nil {
		return nil, err
	}
	return r, writeFile(filepath.Join(proj.runDir(id), "state.json"), data)
}

func writeIfMissing(path, content string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// report is a validated agent report, ready to store.
type report struct {
	file   string // file name inside iter-N
	data   []byte
	review *review.Report
	fix    *review.FixReport
	check  *review.ValidationReport
}

// subagentStop validates a whetstone agent's final report, sends an invalid
// one back (at most loop.MaxRejections times), stores a valid one, and moves
// the run on when the phase's last report arrives. Validation happens before
// the lock; the phase is re-checked under it, so exactly one hook concludes
// a phase however many run at once.
func (a *App) subagentStop(proj Project, id string, p hook.Payload) (*hook.Response, error) {
	name := agentName(p.AgentType)
	if name == "" || p.AgentID == "" {
		return nil, nil // other plugins' agents and orphan events
	}
	snap, err := active(proj, id)
	if snap == nil || err != nil || !snap.Owns(name, p.AgentID) {
		if err == nil {
			fmt.Fprintf(a.Log, "subagent-stop: %s (%s) is not expected by run %s; ignored\n", p.AgentType, p.AgentID, id)
		}
		return nil, err
	}
	rep, problems := parseReport(proj, snap, name, p.LastMessage)
	tokens := 0
	if snap.Settings.BudgetTokens > 0 {
		tokens = transcriptTokens(p.TranscriptPath)
	}
	var resp *hook.Response
	_, err = a.Update(proj, id, func(r *loop.Run) error {
		if r.Phase != snap.Phase || r.Iteration != snap.Iteration || !r.Owns(name, p.AgentID) {
			return errUnchanged
		}
		now := a.Now()
		if problems != nil {
			if r.Reject(name, p.AgentID) {
				tokens = 0 // counted once, when the agent is done
				resp = hook.Block(fmt.Sprintf("whetstone rejected your report (attempt %d of %d). Problems:\n%s\nReply with the corrected, complete JSON report as your whole final message.", r.Agents[name].Rejections, loop.MaxRejections+1, problems))
			} else {
				fmt.Fprintf(a.Log, "run %s: %s failed after %d invalid reports\n", id, name, r.Agents[name].Rejections)
			}
		} else {
			if err := writeFile(filepath.Join(proj.runDir(id), fmt.Sprintf("iter-%d", r.Iteration), rep.file), rep.data); err != nil {
				return err
			}
			r.Accept(name, p.AgentID)
		}
		r.Tokens += tokens
		if !r.Complete() {
			return nil
		}
		return a.conclude(proj, r, rep, now)
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		return nil, err
	}
	return resp, nil
}

// parseReport extracts and validates an agent's final message.
func parseReport(proj Project, r *loop.Run, name, msg string) (*report, error) {
	raw, err := review.Extract(msg)
	if err != nil {
		return nil, review.Problems{{Path: "$", Msg: err.Error()}}
	}
	known := map[string]bool{}
	for _, e := range r.Findings {
		known[e.ID] = true
	}
	var required []string
	for _, e := range r.Blocking() {
		required = append(required, e.ID)
	}
	exp := review.Expect{Reviewer: name, Root: proj.Root, Known: known, Required: required}
	var rep report
	var ps review.Problems
	switch name {
	case "fixer":
		var f review.FixReport
		f, ps = review.ValidateFix(raw, exp)
		rep.file, rep.fix = "fix.json", &f
	case "validator":
		var v review.ValidationReport
		v, ps = review.ValidateValidation(raw, exp)
		rep.file, rep.check = "validation.json", &v
	default:
		exp.Required = nil
		var rv review.Report
		rv, ps = review.ValidateReview(raw, exp)
		rep.file, rep.review = name+".json", &rv
	}
	if ps != nil {
		return nil, ps
	}
	var v any
	switch {
	case rep.review != nil:
		v = rep.review
	case rep.fix != nil:
		v = rep.fix
	default:
		v = rep.check
	}
	rep.data = marshal(v)
	return &rep, nil
}

// readReports loads the reports of a complete review round. The report that
// completed it was just validated and is used as is; the others are decoded
// in parallel, since decoding is most of a large round's cost.
func (a *App) readReports(dir string, r *loop.Run, last *report) ([]review.Report, error) {
	var names []string
	for _, n := range r.Expected {
		if r.Agents[n].Status == loop.Reported {
			names = append(names, n)
		}
	}
	reports := make([]review.Report, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		if last != nil && last.review != nil && last.review.Reviewer == n {
			reports[i] = *last.review
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			data, err := os.ReadFile(filepath.Join(dir, n+".json"))
			if err == nil {
				err = json.Unmarshal(data, &reports[i])
			}
			if err != nil {
				errs[i] = fmt.Errorf("read %s's report: %w", n, err)
			}
		}()
	}
	wg.Wait()
	return reports, errors.Join(errs...)
}

// conclude moves a complete phase on and writes what the transition produced.
func (a *App) conclude(proj Project, r *loop.Run, last *report, now time.Time) error {
	dir := filepath.Join(proj.runDir(r.ID), fmt.Sprintf("iter-%d", r.Iteration))
	iteration := r.Iteration
	switch r.Phase {
	case loop.Review:
		statuses := map[string]string{}
		for _, n := range r.Expected {
			statuses[n] = r.Agents[n].Status
		}
		reports, err := a.readReports(dir, r, last)
		if err != nil {
			return err
		}
		round, rule := r.ConcludeReview(reports, now)
		if err := a.writeVerdict(dir, r, iteration, statuses, round, rule); err != nil {
			return err
		}
		a.analytics(proj, r, iteration, round, rule, now)
	case loop.Validate:
		var v *review.ValidationReport
		if last != nil {
			v = last.check
		}
		r.ConcludeValidation(v, now)
	case loop.Fix:
		var f *review.FixReport
		if last != nil {
			f = last.fix
		}
		r.ConcludeFix(f, now)
	}
	if !r.Active() {
		return a.finish(proj, r)
	}
	return nil
}

// transcriptTokens sums the input and output tokens of the assistant turns
// in a subagent's transcript (JSONL). An unreadable transcript counts 0: the
// budget is a safety net, not a reason to lose a report.
func transcriptTokens(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	total := 0
	for _, line := range bytes.Split(data, []byte("\n")) {
		u := gjson.GetBytes(line, "message.usage")
		if u.Exists() {
			total += int(u.Get("input_tokens").Int() + u.Get("output_tokens").Int() +
				u.Get("cache_creation_input_tokens").Int() + u.Get("cache_read_input_tokens").Int())
		}
	}
	return total
}
