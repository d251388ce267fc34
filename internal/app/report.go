package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/whetstone-dev/whetstone"
	"github.com/whetstone-dev/whetstone/internal/hook"
	"github.com/whetstone-dev/whetstone/internal/loop"
	runreport "github.com/whetstone-dev/whetstone/internal/report"
	"github.com/whetstone-dev/whetstone/internal/review"
	"github.com/whetstone-dev/whetstone/internal/safeio"
	"github.com/whetstone-dev/whetstone/internal/scope"
	"github.com/whetstone-dev/whetstone/internal/snapshot"
)

// Verdict is verdict.json: one review round's merged findings and outcome.
type Verdict struct {
	Schema    string            `json:"schema"`
	Run       string            `json:"run_id"`
	Iteration int               `json:"iteration"`
	Reviewers map[string]string `json:"reviewers"` // reviewer → reported | failed
	Findings  []review.Merged   `json:"findings"`
	Blocking  []string          `json:"blocking"`
	Verdict   string            `json:"verdict"`
	Decision  string            `json:"decision"` // the transition rule that fired
	Next      loop.Phase        `json:"next_phase"`
	// Tampered lists what changed in the project during the round, which no
	// read-only agent may do; a run with such changes cannot approve.
	Tampered []snapshot.Change `json:"tampered,omitempty"`
	// Dropped counts the round's findings left out, the least severe: past
	// review.MaxRoundFindings in the round, and past review.MaxReportFindings
	// in one reviewer's report.
	Dropped int `json:"dropped,omitempty"`
	// Normalised lists, by reviewer, what whetstone read differently from
	// how the report was written (review.Report.Normalised).
	Normalised map[string][]string `json:"normalised,omitempty"`
}

func (a *App) writeVerdict(dir string, r *loop.Run, iteration int, statuses map[string]string, e *loop.Event, rule string, tampered []snapshot.Change) error {
	round := e.Round
	v := Verdict{Schema: review.SchemaVerdict, Run: r.ID, Iteration: iteration, Reviewers: statuses,
		Findings: round, Blocking: []string{}, Decision: rule, Next: r.Phase, Tampered: tampered, Dropped: e.Dropped}
	for _, rep := range e.Reports {
		v.Dropped += rep.Dropped
		if len(rep.Normalised) > 0 {
			if v.Normalised == nil {
				v.Normalised = map[string][]string{}
			}
			v.Normalised[rep.Reviewer] = rep.Normalised
		}
	}
	v.Verdict = review.Approve
	for _, m := range round {
		if m.Status != review.StatusDisproved {
			v.Verdict = review.Worst(v.Verdict, review.Judge(m.Severity, m.Confidence, r.Settings.ConfidenceThreshold, m.Blocking, m.PreExisting))
		}
		if m.Blocking {
			v.Blocking = append(v.Blocking, m.ID)
		}
	}
	if len(tampered) > 0 && (v.Verdict == review.Approve || v.Verdict == review.ApproveWithNotes) {
		v.Verdict = review.RequestChanges
	}
	if v.Findings == nil {
		v.Findings = []review.Merged{}
	}
	return writeFile(filepath.Join(dir, "verdict.json"), marshal(v))
}

// finish writes a finished run's report files: report.md, report.json and
// report.sarif (each format with a File). All are rendered before any is
// written.
func (a *App) finish(ctx context.Context, proj Project, r *loop.Run) error {
	rep := a.Report(ctx, proj, r)
	dir := proj.runDir(r.ID)
	files := map[string][]byte{}
	for _, f := range runreport.Formats {
		if f.File == "" {
			continue
		}
		data, err := f.Render(rep, whetstone.Version)
		if err != nil {
			return err
		}
		files[f.File] = data
	}
	for name, data := range files {
		if err := writeFile(filepath.Join(dir, name), data); err != nil {
			return err
		}
	}
	// The run has ended: its trees and kept indexes leave .git, and the
	// files its report quotes stay readable from quoted.json.
	if err := proj.keepQuoted(ctx, r, rep); err != nil {
		fmt.Fprintf(a.Log, "run %s: %v\n", r.ID, err)
	}
	a.releaseObjects(ctx, proj, r.ID)
	return nil
}

// quotedFile keeps, in a run's directory, the files of its last reviewed
// tree that its report quotes: the tree leaves .git when the run ends
// (releaseObjects), and `whetstone report` renders the same report after.
const quotedFile = "quoted.json"

// keepQuoted writes quotedFile with the files rep's excerpts come from.
func (p Project) keepQuoted(ctx context.Context, r *loop.Run, rep *runreport.Report) error {
	c, err := loadContext(p.runDir(r.ID))
	if err != nil || c.Tree == "" {
		return nil
	}
	files := map[string]string{}
	for _, f := range rep.Findings {
		if f.Excerpt == nil || files[f.Excerpt.File] != "" {
			continue
		}
		qctx, cancel := context.WithTimeout(ctx, quoteTimeout)
		data, _, err := scope.ReadTreeFile(qctx, p.Root, c.Tree, f.Excerpt.File, maxQuoted)
		cancel()
		if err == nil {
			files[f.Excerpt.File] = string(data)
		}
	}
	if len(files) == 0 {
		return nil
	}
	if err := writeFile(filepath.Join(p.runDir(r.ID), quotedFile), marshal(files)); err != nil {
		return fmt.Errorf("keep the quoted files: %w", err)
	}
	return nil
}

// quoted reads a run's quotedFile; nil when there is none.
func (p Project) quoted(id string) map[string]string {
	data, err := readBounded(filepath.Join(p.runDir(id), quotedFile), maxContextBytes)
	if err != nil {
		return nil
	}
	var files map[string]string
	_ = json.Unmarshal(data, &files)
	return files
}

// Change returns a run's context.json, or the zero Context when it cannot
// be read: a report is still worth writing without it.
func (p Project) Change(id string) scope.Context {
	c, _ := loadContext(p.runDir(id))
	return c
}

// maxVerdict caps a verdict.json (100 findings of at most 60 000 characters
// of text each fit).
const maxVerdict = 16 << 20

// Report builds the report of a run, finished or not, from its state, its
// ledger and the files of each iteration. A file that cannot be used is
// named in the report's "unavailable" list; the report is made anyway.
// Quoting code ends with ctx (a hook's deadline).
func (a *App) Report(ctx context.Context, proj Project, r *loop.Run) *runreport.Report {
	in := runreport.Input{Version: whetstone.Version, Run: r, Now: a.Now()}
	if err := proj.LoadCold(r); err != nil {
		in.Unavailable = append(in.Unavailable, fmt.Sprintf("the ledger: %v (findings and history are missing)", err))
	}
	c, err := loadContext(proj.runDir(r.ID))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		in.Unavailable = append(in.Unavailable, fmt.Sprintf("context.json: %v", err))
	}
	in.Change = c
	in.Code = proj.code(ctx, r, c)
	note := func(err error) {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			in.Unavailable = append(in.Unavailable, err.Error())
		}
	}
	for n := 1; n <= r.Iteration; n++ {
		it := runreport.Iteration{Reviews: map[string]*review.Report{}}
		dir := fmt.Sprintf("iter-%d", n)
		if data, err := safeio.ReadOwn(proj.Root, filepath.Join(proj.runDir(r.ID), dir, "verdict.json"), maxVerdict); err == nil {
			var v runreport.Verdict
			if err := json.Unmarshal(data, &v); err != nil {
				note(fmt.Errorf("%s/verdict.json: %w", dir, err))
			} else {
				it.Verdict = &v
			}
		} else {
			note(fmt.Errorf("%s/verdict.json: %w", dir, err))
		}
		if it.Verdict != nil {
			for _, name := range slices.Sorted(maps.Keys(it.Verdict.Reviewers)) {
				if it.Verdict.Reviewers[name] != loop.Reported || !hook.ValidName(name) {
					continue
				}
				var rv review.Report
				note(proj.readStored(r.ID, n, name+".json", &rv))
				it.Reviews[name] = &rv
			}
		}
		var fix review.FixReport
		if err := proj.readStored(r.ID, n, "fix.json", &fix); err == nil {
			it.Fix = &fix
		} else {
			note(err)
		}
		var check review.ValidationReport
		if err := proj.readStored(r.ID, n, "validation.json", &check); err == nil {
			it.Validation = &check
		} else {
			note(err)
		}
		in.Iterations = append(in.Iterations, it)
	}
	return runreport.Build(in)
}

// maxQuoted bounds how much of one file a report reads to quote from it;
// quoteTimeout bounds each git command it runs for that.
const (
	maxQuoted    = 1 << 20
	quoteTimeout = 10 * time.Second
)

// code is what the report shows of the code: the web address of origin
// (GitHub or GitLab), the files of the last reviewed tree and each
// iteration's fix.patch. What cannot be read is left out: the report shows
// less, and says nothing false.
func (p Project) code(ctx context.Context, r *loop.Run, c scope.Context) runreport.Code {
	octx, cancel := context.WithTimeout(ctx, quoteTimeout)
	code := runreport.Code{Tree: c.Iteration, FixPatches: map[int][]byte{}}
	if url, err := scope.OriginURL(octx, p.Root); err == nil {
		code.Web, _ = runreport.WebRemote(url)
	}
	cancel()
	for n := 2; n <= r.Iteration; n++ {
		if fix, err := readBounded(filepath.Join(p.runDir(r.ID), fmt.Sprintf("iter-%d", n), "fix.patch"), maxContextBytes); err == nil {
			code.FixPatches[n] = fix
		}
	}
	if c.Tree != "" {
		var kept map[string]string
		var once sync.Once
		code.Read = func(file string) ([]byte, error) {
			ctx, cancel := context.WithTimeout(ctx, quoteTimeout)
			defer cancel()
			data, _, err := scope.ReadTreeFile(ctx, p.Root, c.Tree, file, maxQuoted)
			if err != nil { // the run ended: its tree has left .git
				once.Do(func() { kept = p.quoted(r.ID) })
				if k, ok := kept[file]; ok {
					return []byte(k), nil
				}
			}
			return data, err
		}
	}
	return code
}
