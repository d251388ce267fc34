package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
	"github.com/whetstone-dev/whetstone/internal/client"
	"github.com/whetstone-dev/whetstone/internal/config"
	"github.com/whetstone-dev/whetstone/internal/hook"
	"github.com/whetstone-dev/whetstone/internal/loop"
	"github.com/whetstone-dev/whetstone/internal/review"
	"github.com/whetstone-dev/whetstone/internal/safeio"
	"github.com/whetstone-dev/whetstone/internal/scope"
	"github.com/whetstone-dev/whetstone/internal/snapshot"
	"github.com/whetstone-dev/whetstone/internal/state"
)

// detectTimeout bounds choosing the change and running the signal checks,
// and each snapshot, well below the hooks' timeout (hooks/hooks.json:
// 120 s). It is a cap under the hook's own deadline (ctx), never a budget
// of its own: the steps of one hook share that deadline.
const detectTimeout = 90 * time.Second

// startRun handles /whetstone:review: it resumes the session's active run,
// or creates one, and answers with the first phase's instructions. Bad
// flags, bad configuration or a change that cannot be reviewed refuse the
// prompt with one sentence, and leave nothing behind: the change is chosen
// before anything under .whetstone/ is written.
func (a *App) startRun(ctx context.Context, proj Project, p hook.Payload) (*hook.Response, error) {
	refuse := func(err error) (*hook.Response, error) {
		return hook.Block(fmt.Sprintf("whetstone: %v. No review was started.", strings.TrimSuffix(err.Error(), "."))), nil
	}
	// The launcher tells a session without a run by the session its
	// environment names; a run it could not see must not start.
	if env := client.Of(p).SessionEnv(); env != "" && a.Getenv != nil {
		if s := a.Getenv(env); s != "" && s != p.SessionID {
			return refuse(fmt.Errorf("the hook's environment names session %q (%s) but its payload names %q, so whetstone could not gate this session's tools", s, env, p.SessionID))
		}
	}
	args, err := config.ParseArgs(p.Prompt)
	if err != nil {
		return refuse(err)
	}
	if r := a.resumable(proj, p.SessionID); r != nil && !args.Restart {
		return resuming(r, args, clientOf(p)), nil
	}
	// The change's trees are written before the run has an id: under a
	// pending owner, handed to the run once it exists, else removed.
	pending, created := pendingOwner(), ""
	ctx = snapshot.WithOwner(ctx, pending)
	defer func() {
		a.adopt(ctx, proj, pending, created)
		if created != "" {
			a.sweepObjects(ctx, proj, created)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, detectTimeout)
	defer cancel()
	// The project's configuration is read at the change's base, never from
	// the change: the base is chosen first, from the command line alone,
	// and the settings that weaken containment apply only from a file the
	// user trusts (docs/security.md).
	own := a.own(proj)
	first := config.ScopeRequest(config.File{}, args)
	first.Own = own
	chosen, err := scope.Choose(ctx, proj.Root, first)
	if err != nil {
		return refuse(err)
	}
	src, err := config.LoadAt(ctx, proj.Root, chosen.Base())
	if err != nil {
		return refuse(err)
	}
	file, notes := a.contained(ctx, proj, src)
	settings, err := config.Resolve(file, args)
	if err != nil {
		return refuse(err)
	}
	req := config.ScopeRequest(file, args)
	req.Contain, req.Own, req.Budget = a.containCheck(ctx, proj, settings.Sandbox), own, a.checkBudget()
	change, patch, err := chosen.Detect(ctx, req)
	if err != nil {
		return refuse(err)
	}
	if slices.ContainsFunc(change.Files, func(f scope.File) bool { return f.Path == config.FileName || f.OldPath == config.FileName }) {
		notes = append(notes, config.FileName+" is part of this change: it is reviewed as a file; its settings apply from the next review once it is on the base.")
	}
	// The author's intent: the reviewed commits' messages and the
	// description --intent names (a bad file refuses the start).
	if change.Intent, err = scope.ReadIntent(ctx, proj.Root, change, args.Intent); err != nil {
		return refuse(err)
	}
	// Nothing under .whetstone may lead out of the project: a symlinked
	// .whetstone (or runs, sessions) is refused before anything is written.
	for _, d := range []string{proj.dir("runs"), proj.dir("sessions")} {
		if err := safeio.NoSymlinks(proj.Root, d); err != nil {
			return refuse(err)
		}
	}
	if err := os.MkdirAll(proj.dir(), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", proj.dir(), err)
	}
	if err := proj.ensureGitignore(); err != nil {
		return nil, err
	}
	var resp *hook.Response
	err = proj.sessions(p.SessionID).Update(func(old []byte) ([]byte, error) {
		if id := strings.TrimSpace(string(old)); id != "" {
			r, err := proj.Load(id)
			switch {
			case errors.Is(err, loop.ErrNewerVersion):
				return nil, err
			case err == nil && r.Active() && !args.Restart:
				resp = resuming(r, args, clientOf(p))
				return nil, nil
			case err == nil && r.Active():
				if _, err := a.Update(proj, id, func(r *loop.Run) error {
					r.Announced = true
					_, err := a.apply(ctx, proj, r, &loop.Event{Kind: loop.Abort, Now: a.Now(), Detail: "restarted with --restart"}, nil)
					return err
				}); err != nil {
					return nil, err
				}
			}
		}
		roster := config.Roster(settings, file, change.Specialists)
		if len(roster) == 0 {
			return nil, errors.New("every reviewer is disabled (whetstone.json \"reviewers\" or --reviewers); enable at least one")
		}
		r, err := a.create(ctx, proj, p.SessionID, strings.TrimSpace(string(old)), settings, roster, change, patch)
		if r != nil {
			created = r.ID
		}
		if err != nil {
			return nil, err
		}
		skipped := ""
		if n := len(change.Skipped); n > 0 {
			skipped = fmt.Sprintf(", %d skipped by triage (listed, not reviewed)", n)
		}
		// The description names the range (base..head) and its commits.
		told := ""
		for _, n := range notes {
			told += "Tell the user: " + n + "\n"
		}
		resp = hook.Context("UserPromptSubmit", fmt.Sprintf("whetstone started review run %s (depth %s, %s): reviewing %s; %s%s.\n%s%s",
			r.ID, settings.Depth, review.Plural(len(r.Roster), "reviewer"), change.Description, review.Plural(len(change.Files), "changed file"), skipped, told, r.Instructions(clientOf(p))))
		return []byte(r.ID + "\n"), nil
	})
	if err != nil {
		return refuse(err)
	}
	return resp, nil
}

// resuming answers a /whetstone:review that resumes the session's active
// run. A flag that cannot apply to it is named, with how to get a run
// that has it, so the user does not believe a deep review ran.
func resuming(r *loop.Run, args config.Args, c loop.Client) *hook.Response {
	ignored := ignoredArgs(r, args)
	if len(ignored) == 0 {
		return hook.Context("UserPromptSubmit", "Resuming the whetstone run already active in this session (use --restart for a new one).\n"+r.Instructions(c))
	}
	return hook.Context("UserPromptSubmit", fmt.Sprintf("Resumed whetstone run %s, already active in this session. Tell the user: %s; use --restart to start a new run with %s.\n%s",
		r.ID, strings.Join(ignored, "; "), map[bool]string{true: "it", false: "them"}[len(ignored) == 1], r.Instructions(c)))
}

// ignoredArgs names the flags and scope words of a /whetstone:review that
// a resumed run cannot take: its depth, iteration limit and reviewers were
// fixed when it started, and it keeps reviewing the change it started with.
func ignoredArgs(r *loop.Run, a config.Args) []string {
	var out []string
	s := r.Settings
	if a.Depth != "" && a.Depth != s.Depth {
		out = append(out, fmt.Sprintf("--depth %s was ignored (the run's depth is %s)", a.Depth, s.Depth))
	}
	if a.MaxIterations != 0 && a.MaxIterations != s.MaxIterations {
		out = append(out, fmt.Sprintf("--max-iterations %d was ignored (the run's limit is %d)", a.MaxIterations, s.MaxIterations))
	}
	if len(a.Reviewers) > 0 && !sameSet(a.Reviewers, r.Roster) {
		out = append(out, fmt.Sprintf("--reviewers %s was ignored (the run's reviewers are %s)", strings.Join(a.Reviewers, ","), strings.Join(r.Roster, ", ")))
	}
	var scopeWords []string
	for _, f := range []struct {
		set  bool
		word string
	}{{a.Since != "", "--since " + a.Since}, {a.Staged, "--staged"}, {a.Uncommitted, "--uncommitted"}, {a.LastCommit, "--last-commit"}, {a.Force, "--force"}, {a.Intent != "", "--intent " + a.Intent}} {
		if f.set {
			scopeWords = append(scopeWords, f.word)
		}
	}
	scopeWords = append(scopeWords, a.Paths...)
	if len(scopeWords) > 0 {
		what := review.CleanLine(strings.Join(scopeWords, " "))
		out = append(out, fmt.Sprintf("%s %s ignored (a resumed run keeps reviewing the change it started with)", what, map[bool]string{true: "was", false: "were"}[len(scopeWords) == 1]))
	}
	return out
}

func sameSet(a, b []string) bool {
	return len(a) == len(b) && !slices.ContainsFunc(a, func(s string) bool { return !slices.Contains(b, s) })
}

// resumable returns the session's active run, read without the lock, or nil.
func (a *App) resumable(proj Project, session string) *loop.Run {
	id := proj.RunOf(session)
	if id == "" {
		return nil
	}
	r, err := proj.Load(id)
	if err != nil || !r.Active() {
		return nil
	}
	return r
}

// create makes a new run directory with its context, the first iteration's
// diff and the first state. Run ids are the session's first eight
// characters and a sequence number; os.Mkdir claims one atomically.
func (a *App) create(ctx context.Context, proj Project, session, previous string, s loop.Settings, roster []string, change scope.Context, patch []byte) (*loop.Run, error) {
	if err := os.MkdirAll(proj.dir("runs"), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", proj.dir("runs"), err)
	}
	prefix := session[:min(8, len(session))]
	// The session's previous run says where to count from, so a new id
	// costs one mkdir however many runs the project has; the loop only
	// steps over a directory another session with the same prefix took.
	first := 1
	if rest, ok := strings.CutPrefix(previous, prefix+"-"); ok {
		if n, err := strconv.Atoi(rest); err == nil && n > 0 {
			first = n + 1
		}
	}
	var id string
	for n := first; ; n++ {
		id = fmt.Sprintf("%s-%d", prefix, n)
		err := os.Mkdir(proj.runDir(id), 0o755)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("create run directory: %w", err)
		}
	}
	dir := proj.runDir(id)
	// The start's objects become the run's before its baseline, which
	// then finds them instead of writing them again.
	if pending := snapshot.OwnerOf(ctx); pending != "" {
		if err := snapshot.Adopt(ctx, proj.Root, pending, id); err != nil {
			fmt.Fprintf(a.Log, "run %s: %v\n", id, err)
		}
	}
	if err := writeRound(dir, change, patch, nil); err != nil {
		return nil, err
	}
	r := loop.New(id, session, s, roster, a.Now())
	if in := change.Intent; in != nil {
		r.Intent = loop.NewIntent(in.Subjects(), len(in.Commits)+in.Omitted, in.Description != "")
	}
	r.Verify = scope.Detected(change.Verify)
	a.baseline(ctx, proj, r)
	if _, err := proj.saveCold(r, a.Now()); err != nil {
		return nil, err
	}
	data, err := r.Encode(a.Now())
	if err != nil {
		return nil, err
	}
	if err := proj.store(id).Update(func([]byte) ([]byte, error) { return data, nil }); err != nil {
		return nil, err
	}
	// The project's latest run, for `whetstone status` without a scan.
	return r, writeFile(proj.dir("latest"), []byte(id+"\n"))
}

// writeRound writes what the reviewers of one iteration read: context.json
// (rewritten for every iteration), iter-N/diff.patch and, from iteration 2,
// iter-N/fix.patch.
func writeRound(dir string, change scope.Context, diff, fix []byte) error {
	iter := filepath.Join(dir, fmt.Sprintf("iter-%d", change.Iteration))
	if err := os.MkdirAll(iter, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", iter, err)
	}
	if err := writeFile(filepath.Join(iter, "diff.patch"), diff); err != nil {
		return err
	}
	if change.Iteration > 1 {
		if err := writeFile(filepath.Join(iter, "fix.patch"), fix); err != nil {
			return err
		}
	}
	return writeFile(filepath.Join(dir, "context.json"), marshal(change))
}

// maxContextBytes bounds reading context.json back.
const maxContextBytes = 64 << 20

// loadContext reads a run's context.json.
func loadContext(dir string) (scope.Context, error) {
	var c scope.Context
	data, err := readBounded(filepath.Join(dir, "context.json"), maxContextBytes)
	if err == nil {
		err = json.Unmarshal(data, &c)
	}
	if err != nil {
		return c, fmt.Errorf("read the run's context.json: %w", err)
	}
	return c, nil
}

// readBounded reads a regular file of at most limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(data)) > limit {
		err = fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return data, err
}

// nextRound prepares the review iteration a row started (loop.StartRound):
// the working tree is snapshotted, and the new diff, the fix's delta and
// the context are written; after a fix (loop.Focus) the round is narrowed
// to what fix.patch holds. A change that can no longer be computed is an
// error, which stops the run; reviewing a stale diff would be worse.
func (a *App) nextRound(ctx context.Context, proj Project, r *loop.Run, focus bool) error {
	ctx = owned(ctx, r)
	dir := proj.runDir(r.ID)
	prev, err := loadContext(dir)
	if err == nil {
		ctx, cancel := context.WithTimeout(ctx, detectTimeout)
		defer cancel()
		var next scope.Context
		var diff, fix []byte
		if next, diff, fix, err = scope.Next(ctx, proj.Root, prev, scope.Request{Contain: a.containCheck(ctx, proj, r.Settings.Sandbox), Budget: a.checkBudget()}); err == nil {
			err = writeRound(dir, next, diff, fix)
		}
		if err == nil {
			edited, perr := scope.PatchFiles(fix)
			if perr != nil {
				fmt.Fprintf(a.Log, "run %s: the files of iteration %d's fix.patch: %v\n", r.ID, next.Iteration, perr)
			}
			r.Edited = slices.Compact(slices.Sorted(slices.Values(append(r.Edited, edited...))))
			if focus {
				a.focus(proj, r, fix, next)
			}
			r.Verify = scope.Detected(next.Verify)
		}
	}
	return err
}

// focus narrows the round after a fix to the reviewers with something to
// look at (loop.Run.FocusOn); an unreadable fix.patch keeps the whole
// roster.
func (a *App) focus(proj Project, r *loop.Run, fix []byte, next scope.Context) {
	// The globs read at the start: whetstone.json is never read again
	// during a run, least of all from the tree the fixer just changed.
	lenses, err := scope.FixLenses(fix, next, r.Settings.Specialists)
	if err != nil {
		fmt.Fprintf(a.Log, "run %s: the lenses of iteration %d's fix.patch: %v; every reviewer reviews again\n", r.ID, next.Iteration, err)
		return
	}
	r.FocusOn(lenses)
}

// roundDiff is what a review round's merge needs from the change: which
// lines the diff touches (pre-existing findings are judged from it) and how
// the fixer's edits moved the previous round's lines.
func roundDiff(dir string, iteration int, log io.Writer) review.Diff {
	var d review.Diff
	if c, err := loadContext(dir); err != nil || c.Iteration != iteration {
		fmt.Fprintf(log, "no context for iteration %d (%v): every finding counts as in the change\n", iteration, err)
	} else {
		d.Touches = func(file string, line, end int) bool { return c.Touches(file, line, end, review.PreExistingMargin) }
	}
	if iteration > 1 {
		fix, err := readBounded(filepath.Join(dir, fmt.Sprintf("iter-%d", iteration), "fix.patch"), maxContextBytes)
		if err == nil {
			if moved, err := scope.LineMap(fix); err == nil {
				d.Moved = moved
			}
		}
	}
	return d
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
func (a *App) subagentStop(ctx context.Context, proj Project, id string, p hook.Payload, body []byte) (*hook.Response, error) {
	name := agentName(p.AgentType)
	if name == "" || p.AgentID == "" {
		return nil, nil // other plugins' agents and orphan events
	}
	snap, err := active(body)
	if snap == nil || err != nil || !snap.Owns(name, p.AgentID) {
		if err == nil {
			fmt.Fprintf(a.Log, "subagent-stop: %s (%s) is not expected by run %s; ignored\n", p.AgentType, p.AgentID, id)
		}
		return nil, err
	}
	rep, problems := parseReport(proj, snap, name, p.LastMessage)
	// Tokens are counted for every run (status, the summary and stats show
	// them), not only under a token budget: one streamed read of the
	// agent's transcript when it stops.
	tokens := transcriptTokens(p.TranscriptPath, a.Log)
	var resp *hook.Response
	_, err = a.Update(proj, id, func(r *loop.Run) error {
		if r.Phase != snap.Phase || r.Iteration != snap.Iteration || !r.Owns(name, p.AgentID) {
			return errUnchanged
		}
		now := a.Now()
		if problems != nil {
			if r.Reject(name) {
				resp = hook.Block(fmt.Sprintf("whetstone rejected your report (attempt %d of %d). Problems:\n%s\nReply with the corrected, complete JSON report as your whole final message.", r.Agents[name].Rejections, loop.MaxRejections+1, problems))
			} else {
				fmt.Fprintf(a.Log, "run %s: %s failed after %d invalid reports\n", id, name, r.Agents[name].Rejections)
			}
		} else {
			if err := proj.writeReport(r, rep.file, rep.data); err != nil {
				return err
			}
			r.Accept(name)
		}
		r.Count(p.AgentID, tokens)
		if !r.Complete() {
			return nil
		}
		if err := a.conclude(ctx, proj, r, rep, now); err != nil {
			return err
		}
		if nextOnSubagentStop(p) && resp == nil {
			// A client with no Stop analogue to carry the next step: it
			// rides on the result of the dispatch that completed the
			// phase, and a finished run's summary with it.
			resp = hook.Context("SubagentStop", r.Instructions(clientOf(p)))
			r.Announced = !r.Active()
		}
		return nil
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
	for n := 1; n <= r.Digest.LastID; n++ {
		known[fmt.Sprintf("F-%04d", n)] = true
	}
	required := r.Digest.Blocking
	exp := review.Expect{Reviewer: name, Root: proj.Root, Known: known, Required: required,
		FixChecks: r.FixChecks(name), Threshold: r.Settings.ConfidenceThreshold}
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
func (a *App) readReports(proj Project, r *loop.Run, last *report) ([]review.Report, error) {
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
			data, err := proj.readReport(r, n+".json")
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

// conclude moves a complete phase on: a read-only phase's work tree is
// compared with the one recorded when it began (the fix phase's refs and
// HEAD are), the phase's event is fed to the run, and the row that fired
// is carried out (apply).
func (a *App) conclude(ctx context.Context, proj Project, r *loop.Run, last *report, now time.Time) error {
	if err := proj.LoadCold(r); err != nil {
		_, err := a.apply(ctx, proj, r, &loop.Event{Kind: loop.Fail, Now: now, Detail: fmt.Sprintf("the run's ledger cannot be read (%v)", err)}, nil)
		return err
	}
	end := &ended{dir: filepath.Join(proj.runDir(r.ID), fmt.Sprintf("iter-%d", r.Iteration)), iteration: r.Iteration}
	end.current, end.tampered = a.compare(ctx, proj, r)
	e := &loop.Event{Now: now}
	switch r.Phase {
	case loop.Review:
		end.trace = traceRound(r)
		reports, err := a.readReports(proj, r, last)
		if errors.Is(err, state.ErrTampered) {
			_, err := a.apply(ctx, proj, r, &loop.Event{Kind: loop.Fail, Now: now, Detail: fmt.Sprintf("a stored report changed outside whetstone (%v)", err)}, nil)
			return err
		}
		if err != nil {
			return err
		}
		e.Kind, e.Reports, e.Diff = loop.ReviewDone, reports, roundDiff(proj.runDir(r.ID), end.iteration, a.Log)
	case loop.Validate:
		e.Kind = loop.ValidationDone
		if last != nil {
			e.Validation = last.check
		}
	case loop.Fix:
		e.Kind = loop.FixDone
		if last != nil {
			e.Fix = last.fix
		}
	}
	_, err := a.apply(ctx, proj, r, e, end)
	return err
}

// ended is what the hook that concluded a phase knows of it: the
// iteration's directory, the round's trace, and the project as compared
// with the phase's baseline.
type ended struct {
	dir       string
	iteration int
	trace     roundTrace
	current   *snapshot.Snapshot // nil when it could not be compared
	tampered  []snapshot.Change
}

// apply feeds one event to the run and carries out the effects of the row
// that fired, in the order loop.Effect lists them; end is the phase that
// just concluded, nil for an event outside a conclusion. Whatever the
// run's own effects are, Apply did them; this does what touches the
// project. A new round whose change cannot be computed stops the run as
// error, and that row is carried out in turn.
func (a *App) apply(ctx context.Context, proj Project, r *loop.Run, e *loop.Event, end *ended) (loop.Outcome, error) {
	out := r.Apply(e)
	if out.Has(loop.WriteVerdict) && end != nil {
		if err := a.writeVerdict(end.dir, r, end.iteration, end.trace.statuses, e, string(out.Rule), end.tampered); err != nil {
			return out, err
		}
		a.audit(proj, r, end.trace, e, string(out.Rule), e.Now)
	}
	if out.Has(loop.StartRound) {
		if err := a.nextRound(ctx, proj, r, out.Has(loop.Focus)); err != nil {
			return a.apply(ctx, proj, r, &loop.Event{Kind: loop.Fail, Now: a.Now(), Detail: fmt.Sprintf("could not compute the change for iteration %d: %v", r.Iteration, err)}, nil)
		}
	}
	switch {
	case out.Has(loop.KeepBaseline) && end != nil && end.current != nil && !(r.Settings.Restore && len(end.tampered) > 0):
		r.Baseline = end.current
	case out.Has(loop.KeepBaseline) || out.Has(loop.TakeBaseline):
		// No comparison to keep, or a restore changed the project since;
		// after a fix, the fixer's work was snapshotted by nextRound.
		a.baseline(ctx, proj, r)
	}
	if out.Has(loop.WriteReport) {
		return out, a.finish(ctx, proj, r)
	}
	return out, nil
}

// baseline records the work tree, HEAD and refs as the current phase
// begins. Without a baseline (not a git repository any more, git failing)
// the backstop has nothing to compare; that is logged, not fatal.
func (a *App) baseline(ctx context.Context, proj Project, r *loop.Run) {
	ctx = owned(ctx, r)
	ctx, cancel := context.WithTimeout(ctx, detectTimeout)
	defer cancel()
	s, err := snapshot.Take(ctx, proj.Root, r.Settings.MaxUntrackedBytes, a.Now())
	if err != nil {
		// Without a baseline the phase cannot be checked when it ends: it
		// is recorded as unverified now, as a failed comparison is, and
		// no stale baseline of an earlier phase stands in for it.
		fmt.Fprintf(a.Log, "run %s: no baseline for the %s phase: %v\n", r.ID, r.Phase, err)
		r.Baseline = nil
		r.Tampered = append(r.Tampered, fmt.Sprintf("unverified: no baseline could be taken for the %s phase of iteration %d (%v)", r.Phase, r.Iteration, err))
		return
	}
	r.Baseline = &s
}

// compare checks the phase that just ended against its baseline. In a
// read-only phase any change counts; in the fix phase only refs, HEAD and
// the index (the fixer edits files, but may not stage, commit, switch or
// move branches).
// Changes are recorded on the run (it can no longer approve), restored
// when the project asks for it, and returned for verdict.json.
func (a *App) compare(ctx context.Context, proj Project, r *loop.Run) (*snapshot.Snapshot, []snapshot.Change) {
	ctx = owned(ctx, r)
	if r.Baseline == nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, detectTimeout)
	defer cancel()
	now, changes, err := r.Baseline.Compare(ctx, proj.Root)
	if err != nil {
		// What cannot be checked is not taken as untouched: the phase is
		// recorded as unverified, which (like tampering) never approves.
		fmt.Fprintf(a.Log, "run %s: comparing the %s phase with its baseline: %v\n", r.ID, r.Phase, err)
		r.Tampered = append(r.Tampered, fmt.Sprintf("unverified: the work tree could not be compared with its baseline (%v), after the %s phase of iteration %d", err, r.Phase, r.Iteration))
		return nil, []snapshot.Change{{Kind: "unverified", Detail: err.Error()}} // verdict.json says it too
	}
	var files []snapshot.Change
	kept := changes[:0]
	for _, c := range changes {
		if c.Kind == snapshot.KindRef || c.Kind == snapshot.KindHead || c.Kind == snapshot.KindStaged {
			kept = append(kept, c)
		} else if r.Phase != loop.Fix {
			kept = append(kept, c)
			files = append(files, c)
		}
	}
	if len(kept) == 0 {
		return &now, nil
	}
	var restored *snapshot.Change
	if r.Settings.Restore && len(files) > 0 {
		restored = a.restore(ctx, proj, r, files)
	}
	for _, c := range kept {
		what := c.Kind + " " + c.Path
		if c.Detail != "" {
			what += " (" + c.Detail + ")"
		}
		r.Tampered = append(r.Tampered, fmt.Sprintf("%s, during the %s phase of iteration %d", what, r.Phase, r.Iteration))
	}
	if restored != nil {
		r.Tampered = append(r.Tampered, restored.Detail)
		kept = append(kept, *restored)
	}
	return &now, kept
}

// KindRestored is verdict.json's entry for a restore: where the user's
// versions of the restored files are kept and the command that brings
// them back.
const KindRestored = "restored"

// restore puts the files a read-only phase changed back as its baseline
// recorded them (whetstone.json "restore", trusted: docs/security.md).
// Every file removed or overwritten is first copied, as it was, under the
// run's restored/iter-N-<phase>/, and the entry returned says so with the
// one command that brings the copies back; nil when nothing was copied.
func (a *App) restore(ctx context.Context, proj Project, r *loop.Run, files []snapshot.Change) *snapshot.Change {
	ctx = owned(ctx, r)
	rel := filepath.Join(".whetstone", "runs", r.ID, "restored", fmt.Sprintf("iter-%d-%s", r.Iteration, r.Phase))
	keep := filepath.Join(proj.Root, rel)
	if err := safeio.NoSymlinks(proj.Root, keep); err != nil {
		fmt.Fprintf(a.Log, "run %s: restore: %v; nothing restored\n", r.ID, err)
		return nil
	}
	copied, err := r.Baseline.Restore(ctx, proj.Root, files, keep)
	if err != nil {
		fmt.Fprintf(a.Log, "run %s: restore: %v\n", r.ID, err)
	}
	if len(copied) == 0 {
		return nil
	}
	cmd := fmt.Sprintf("cp -a %s/. .", filepath.ToSlash(rel))
	return &snapshot.Change{Path: filepath.ToSlash(rel), Kind: KindRestored,
		Detail: fmt.Sprintf("restored: %s changed during the %s phase of iteration %d %s put back as the phase found them; the versions they had are kept in %s, and `%s` in the project brings them back",
			review.Plural(len(copied), "file"), r.Phase, r.Iteration, map[bool]string{true: "was", false: "were"}[len(copied) == 1], filepath.ToSlash(rel), cmd)}
}

// maxTranscript caps how much of a transcript is read for its token count.
const maxTranscript = 64 << 20

// transcriptTokens sums the tokens of the assistant messages in a subagent's
// transcript (JSONL), counting each message id once: Claude Code writes one
// line per content block, each repeating the message's usage. The file is
// read as a stream, at most maxTranscript bytes. An unreadable transcript
// counts 0: the budget is a safety net, not a reason to lose a report.
func transcriptTokens(path string, log io.Writer) int {
	if path == "" {
		return 0
	}
	f, err := safeio.Open(path, false)
	if err != nil {
		fmt.Fprintf(log, "transcript: %v\n", err)
		return 0
	}
	defer f.Close()
	seen := map[string]bool{}
	total := 0
	sc := bufio.NewScanner(io.LimitReader(f, maxTranscript))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, []byte(`"usage"`)) {
			continue
		}
		m := gjson.GetBytes(line, "message")
		u := m.Get("usage")
		if !u.Exists() {
			continue
		}
		if id := m.Get("id").String(); id != "" {
			if seen[id] {
				continue
			}
			seen[id] = true
		}
		total += int(u.Get("input_tokens").Int() + u.Get("output_tokens").Int() +
			u.Get("cache_creation_input_tokens").Int() + u.Get("cache_read_input_tokens").Int())
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(log, "transcript %s: %v\n", path, err)
	}
	return total
}
