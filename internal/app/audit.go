package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/whetstone-dev/whetstone/internal/loop"
	"github.com/whetstone-dev/whetstone/internal/review"
	"github.com/whetstone-dev/whetstone/internal/safeio"
	"github.com/whetstone-dev/whetstone/internal/state"
)

// A review round leaves two traces besides verdict.json, both written by
// the hook that concludes the round, under the run's lock: a section of
// the run's rounds.md (the audit trail a person reads) and one line of the
// project's analytics.jsonl (what `whetstone stats` and other tools
// aggregate). Neither ever fails the hook: losing a trace must not stop a
// review; what went wrong is logged.

// AnalyticsSchema names the format of an analytics.jsonl record.
const AnalyticsSchema = "whetstone.analytics/v1"

// maxAnalyticsLines is how many records analytics.jsonl holds; the record
// that would be one more first moves the file to .whetstone/archive/.
const maxAnalyticsLines = 1000

// maxAnalyticsRecord bounds one record (one line).
const maxAnalyticsRecord = 4 << 10

// maxAnalytics bounds the file a hook reads to count its lines: a file
// larger than 1000 records of the largest size was not written by
// whetstone alone, and is archived unread.
const maxAnalytics = maxAnalyticsLines * maxAnalyticsRecord

// analyticsWait bounds the wait for the analytics lock. Past it the record
// is appended without the lock (one write of under 4 KiB does not tear);
// only the rotation is skipped, and the next round does it.
const analyticsWait = 2 * time.Second

// Record is one line of analytics.jsonl: one review round.
type Record struct {
	Schema      string           `json:"schema"`
	At          time.Time        `json:"at"`
	Run         string           `json:"run_id"`
	Round       int              `json:"round"`     // the run's review rounds so far, this one included
	Iteration   int              `json:"iteration"` // the loop iteration the round reviewed
	Depth       string           `json:"depth"`
	Status      string           `json:"status"` // the transition rule that fired: fix, validate, confirm, converged, stalled, max_iterations, budget, nothing to fix
	Next        loop.Phase       `json:"next_phase"`
	Clean       bool             `json:"clean"`        // no blocking finding and no failed reviewer
	CleanPasses int              `json:"clean_passes"` // consecutive clean rounds, this one included
	Findings    int              `json:"findings"`     // the round's merged findings
	Blocking    int              `json:"blocking"`
	New         int              `json:"new"`
	Reopened    int              `json:"reopened"`
	PreExisting int              `json:"pre_existing"`
	BySeverity  map[string]int   `json:"by_severity"`
	Reviewers   []ReviewerRecord `json:"reviewers"`
	DurationMS  int64            `json:"duration_ms"` // from the round's start to its conclusion
	Tokens      int              `json:"tokens"`      // the round's agents' transcripts
}

// ReviewerRecord is one reviewer's part of a round.
type ReviewerRecord struct {
	Name     string `json:"name"`
	Status   string `json:"status"`   // reported | failed
	Findings int    `json:"findings"` // in its valid report
	Tokens   int    `json:"tokens"`
}

// roundTrace is what a concluded review round leaves, gathered by conclude
// before the transition clears the phase's agents.
type roundTrace struct {
	iteration int
	names     []string          // the round's reviewers, in roster order
	statuses  map[string]string // reviewer → reported | failed
	tokens    map[string]int    // reviewer → transcript tokens
	started   time.Time
}

// traceRound gathers a review round's agents, tokens and start before the
// run moves on. The run's history is loaded (conclude loads it first).
func traceRound(r *loop.Run) roundTrace {
	t := roundTrace{iteration: r.Iteration, statuses: map[string]string{}, tokens: map[string]int{}, started: r.Created}
	t.names = r.Expected
	for _, n := range r.Expected {
		t.statuses[n] = r.Agents[n].Status
	}
	for _, in := range r.Instances {
		t.tokens[in.Agent] += in.Tokens
	}
	for i := len(r.History) - 1; i >= 0; i-- {
		if s := r.History[i]; s.Phase == loop.Review && s.Iteration == r.Iteration {
			t.started = s.At
			break
		}
	}
	return t
}

// record builds the analytics record of a concluded round.
func (t roundTrace) record(r *loop.Run, e *loop.Event, rule string, now time.Time) Record {
	rec := Record{Schema: AnalyticsSchema, At: now.UTC(), Run: r.ID, Round: r.Rounds, Iteration: t.iteration,
		Depth: r.Settings.Depth, Status: rule, Next: r.Phase, CleanPasses: r.CleanStreak,
		Findings: len(e.Round), BySeverity: map[string]int{}, Reviewers: []ReviewerRecord{},
		DurationMS: max(now.Sub(t.started).Milliseconds(), 0)}
	failed := false
	for _, m := range e.Round {
		rec.BySeverity[m.Severity]++
		if m.Blocking {
			rec.Blocking++
		}
		if m.New {
			rec.New++
		}
		if m.Status == review.StatusReopened {
			rec.Reopened++
		}
		if m.PreExisting {
			rec.PreExisting++
		}
	}
	found := map[string]int{}
	for _, rep := range e.Reports {
		found[rep.Reviewer] = len(rep.Findings)
	}
	for _, n := range t.names {
		rec.Reviewers = append(rec.Reviewers, ReviewerRecord{Name: n, Status: t.statuses[n], Findings: found[n], Tokens: t.tokens[n]})
		rec.Tokens += t.tokens[n]
		failed = failed || t.statuses[n] == loop.Failed
	}
	rec.Clean = rec.Blocking == 0 && !failed
	return rec
}

// audit writes a concluded review round's traces: its section of
// rounds.md and its analytics record.
func (a *App) audit(proj Project, r *loop.Run, t roundTrace, e *loop.Event, rule string, now time.Time) {
	rec := t.record(r, e, rule, now)
	if err := appendOwn(proj.Root, filepath.Join(proj.runDir(r.ID), "rounds.md"), []byte(roundSection(r, rec, e.Round))); err != nil {
		fmt.Fprintf(a.Log, "rounds.md: %v\n", err)
	}
	line, err := json.Marshal(rec)
	if err == nil && len(line) >= maxAnalyticsRecord {
		// Reviewer details are what can grow; the totals always fit.
		rec.Reviewers = nil
		line, err = json.Marshal(rec)
	}
	if err != nil {
		fmt.Fprintf(a.Log, "analytics: %v\n", err)
		return
	}
	if err := appendAnalytics(proj, append(line, '\n'), now); err != nil {
		fmt.Fprintf(a.Log, "analytics: %v\n", err)
	}
}

// roundSection is a round's section of rounds.md. Every text a reviewer
// wrote goes through review.InlineMD or CodeMD (see Markdown).
func roundSection(r *loop.Run, rec Record, round []review.Merged) string {
	var b strings.Builder
	md := review.InlineMD
	if rec.Round == 1 {
		fmt.Fprintf(&b, "# whetstone review rounds of run %s\n\n", md(r.ID))
	}
	fmt.Fprintf(&b, "## Round %d · iteration %d · %s\n\n", rec.Round, rec.Iteration, rec.At.Format(time.RFC3339))
	var who []string
	for _, rv := range rec.Reviewers {
		who = append(who, fmt.Sprintf("%s (%s, %s)", md(rv.Name), rv.Status, review.Plural(rv.Findings, "finding")))
	}
	fmt.Fprintf(&b, "- Reviewers: %s\n", strings.Join(who, ", "))
	status := "clean"
	if !rec.Clean {
		status = "not clean"
	}
	fmt.Fprintf(&b, "- Status: %s; decision: %s; next: %s\n", status, md(rec.Status), rec.Next)
	fmt.Fprintf(&b, "- Findings: %s (%d new, %d reopened, %d blocking, %d pre-existing)\n",
		review.Plural(rec.Findings, "finding"), rec.New, rec.Reopened, rec.Blocking, rec.PreExisting)
	fmt.Fprintf(&b, "- Consecutive clean passes: %d\n", rec.CleanPasses)
	fmt.Fprintf(&b, "- Duration: %s · tokens: %d\n", (time.Duration(rec.DurationMS) * time.Millisecond).Round(time.Second), rec.Tokens)
	if len(round) > 0 {
		b.WriteString("\n| id | status | severity | conf. | location | title | reviewers |\n|---|---|---|---|---|---|---|\n")
		for _, m := range round {
			status := m.Status
			if m.Blocking {
				status += ", blocking"
			}
			if m.PreExisting {
				status += ", pre-existing"
			}
			var rs []string
			for _, n := range m.Reviewers {
				rs = append(rs, md(n))
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %s | %s |\n", md(m.ID), md(status), md(m.Severity), m.Confidence,
				strings.ReplaceAll(review.CodeMD(fmt.Sprintf("%s:%d", m.File, m.Line)), "|", `\|`), md(m.Title), strings.Join(rs, ", "))
		}
	}
	b.WriteString("\n")
	return b.String()
}

// appendOwn appends data to one of whetstone's own files with one write,
// never through a symlink, a FIFO or a device.
func appendOwn(root, path string, data []byte) error {
	if err := safeio.NoSymlinks(root, filepath.Dir(path)); err != nil {
		return err
	}
	f, err := safeio.OpenAppend(path)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// appendAnalytics appends one record to analytics.jsonl, first moving a
// full file (1000 records) to .whetstone/archive/. Counting, moving and
// appending happen under analytics.jsonl.lock, so runs concluding rounds
// at the same moment lose no record, tear none, and archive a full file
// exactly once. It never follows a symlink out of .whetstone/ and never
// blocks on a FIFO or a device put where the file should be.
func appendAnalytics(proj Project, line []byte, now time.Time) error {
	path := proj.dir("analytics.jsonl")
	if err := safeio.NoSymlinks(proj.Root, filepath.Dir(path)); err != nil {
		return err
	}
	unlock, err := state.Lock(path, analyticsWait)
	if err != nil {
		// Appending without the lock loses nothing: one short write does
		// not tear. The next round rotates.
		if aerr := appendOwn(proj.Root, path, line); aerr != nil {
			return errors.Join(err, aerr)
		}
		return err
	}
	defer unlock()
	if full, err := analyticsFull(path); err != nil {
		return err
	} else if full {
		if err := archiveAnalytics(proj, path, now); err != nil {
			return err
		}
	}
	return appendOwn(proj.Root, path, line)
}

// analyticsFull reports whether analytics.jsonl holds maxAnalyticsLines
// records (or is too large to be counted). A missing file is empty; a
// FIFO, device or symlink is an error.
func analyticsFull(path string) (bool, error) {
	f, err := safeio.Open(path, true)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return false, err
	}
	if info.Size() > maxAnalytics {
		return true, nil
	}
	// Counted in a small buffer: a file of 1000 records is ~500 KiB.
	buf := make([]byte, 32<<10)
	lines := 0
	for r := io.LimitReader(f, maxAnalytics); ; {
		n, err := r.Read(buf)
		lines += bytes.Count(buf[:n], []byte{'\n'})
		if errors.Is(err, io.EOF) {
			return lines >= maxAnalyticsLines, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// archiveAnalytics moves analytics.jsonl to
// .whetstone/archive/analytics-<UTC time>.jsonl, never over an earlier
// archive. The caller holds the analytics lock.
func archiveAnalytics(proj Project, path string, now time.Time) error {
	dir := proj.dir("archive")
	if err := safeio.NoSymlinks(proj.Root, dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := safeio.NoSymlinks(proj.Root, dir); err != nil {
		return err
	}
	stamp := now.UTC().Format("20060102T150405Z")
	for i := range 100 {
		name := "analytics-" + stamp + ".jsonl"
		if i > 0 {
			name = fmt.Sprintf("analytics-%s-%d.jsonl", stamp, i)
		}
		dst := filepath.Join(dir, name)
		if _, err := os.Lstat(dst); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := os.Rename(path, dst); err != nil {
			return fmt.Errorf("archive: %w", err)
		}
		return nil
	}
	return fmt.Errorf("archive: 100 archives named %s already", stamp)
}
