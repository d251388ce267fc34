package inspect

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/whetstone-dev/whetstone/internal/app"
	"github.com/whetstone-dev/whetstone/internal/loop"
	"github.com/whetstone-dev/whetstone/internal/paint"
	"github.com/whetstone-dev/whetstone/internal/review"
	"github.com/whetstone-dev/whetstone/internal/state"
)

// StatsSchema names the format of `whetstone stats --json`.
const StatsSchema = "whetstone.stats/v1"

// Stats is what `whetstone stats` reports over a project's runs,
// documented in docs/cli.md. It is computed from each run's sealed state
// and ledger (not from analytics.jsonl, which anyone can edit), so it reads
// every run: unlike status, its cost grows with the number of runs.
type Stats struct {
	Schema      string          `json:"schema"`
	Since       *time.Time      `json:"since,omitempty"`
	Runs        int             `json:"runs"`
	Active      int             `json:"active"`       // active runs with hook activity in the last AbandonedAfter
	Abandoned   int             `json:"abandoned"`    // active runs without (Abandoned)
	Verdicts    map[string]int  `json:"verdicts"`     // finished runs by verdict
	NoVerdict   int             `json:"no_verdict"`   // finished runs without one: aborted or ended by an error
	StopReasons map[string]int  `json:"stop_reasons"` // finished runs by how they ended: converged or a stop reason
	Converge    Converge        `json:"rounds_to_converge"`
	Findings    int             `json:"findings"`
	BySeverity  Severities      `json:"by_severity"`
	Reviewers   []ReviewerStats `json:"reviewers"`
	FixRate     Rate            `json:"fix_rate"`           // blocking findings resolved
	ReopenRate  Rate            `json:"reopen_rate"`        // resolved findings that came back
	Disproved   Rate            `json:"disproved_rate"`     // findings the validator disproved
	PreExisting Rate            `json:"pre_existing_share"` // findings outside the change
	Time        Spread          `json:"seconds"`            // finished runs, creation to end
	Tokens      Spread          `json:"tokens"`             // finished runs with counted tokens
	PerRun      []RunStats      `json:"per_run"`            // every run counted, oldest first
}

// RunStats is one run in brief: how it ended and what it cost. Tokens is
// null when the run's transcripts were not counted.
type RunStats struct {
	ID         string    `json:"run_id"`
	Created    time.Time `json:"created"`
	Phase      string    `json:"phase"`
	StopReason string    `json:"stop_reason,omitempty"`
	Verdict    string    `json:"verdict,omitempty"`
	Iterations int       `json:"iterations"`
	Seconds    int64     `json:"seconds"` // finished or abandoned: creation to the last change; active: creation to now
	Tokens     *int      `json:"tokens"`
	// Abandoned: active, but no hook activity for AbandonedAfter;
	// Idle is how long, in seconds.
	Abandoned bool  `json:"abandoned,omitempty"`
	Idle      int64 `json:"idle_seconds,omitempty"`
}

// runLines is how many runs, the latest, Text lists one per line.
const runLines = 10

// Converge is how many review rounds the runs that converged (DONE) took.
type Converge struct {
	Runs      int         `json:"runs"`
	Median    int         `json:"median"`
	Max       int         `json:"max"`
	Histogram map[int]int `json:"histogram"` // rounds → runs
}

// ReviewerStats counts the findings a reviewer raised (in their latest
// sighting), by severity.
type ReviewerStats struct {
	Name       string     `json:"name"`
	Findings   int        `json:"findings"`
	BySeverity Severities `json:"by_severity"`
}

// Rate is Count of Of; Rate is null when Of is 0.
type Rate struct {
	Count int      `json:"count"`
	Of    int      `json:"of"`
	Rate  *float64 `json:"rate"`
}

func rate(count, of int) Rate {
	r := Rate{Count: count, Of: of}
	if of > 0 {
		v := float64(count) / float64(of)
		r.Rate = &v
	}
	return r
}

// Spread sums and summarises a quantity over runs.
type Spread struct {
	Runs   int   `json:"runs"`
	Total  int64 `json:"total"`
	Median int64 `json:"median"`
	Max    int64 `json:"max"`
}

func spread(v []int64) Spread {
	s := Spread{Runs: len(v)}
	if len(v) == 0 {
		return s
	}
	slices.Sort(v)
	for _, x := range v {
		s.Total += x
	}
	s.Median, s.Max = v[len(v)/2], v[len(v)-1]
	return s
}

// ParseSince reads --since: a date (2026-11-01, midnight UTC), an RFC 3339
// time, or an age such as 7d or 12h before now.
func ParseSince(v string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if days, ok := strings.CutSuffix(v, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return now.Add(-time.Duration(n) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("want a date (2026-11-01), an RFC 3339 time or an age (7d, 12h); got %q", v)
}

// StatsOf summarises the project's runs created at or after since (all runs
// when since is zero), at now. Runs that cannot be read are left out and
// named: those sealed with another key in one error.
func StatsOf(proj app.Project, since, now time.Time) (Stats, []error, error) {
	runs, unreadable, err := proj.Runs()
	if err != nil {
		return Stats{}, unreadable, err
	}
	unreadable = leftOut(proj, runs, unreadable)
	st := Stats{Schema: StatsSchema, Verdicts: map[string]int{}, StopReasons: map[string]int{},
		Converge: Converge{Histogram: map[int]int{}}, Reviewers: []ReviewerStats{}, PerRun: []RunStats{}}
	if !since.IsZero() {
		st.Since = &since
	}
	severities := map[string]int{}
	reviewers := map[string]*ReviewerStats{}
	var rounds []int
	var seconds, tokens []int64
	var blocking, fixed, resolved, reopened, disproved, preExisting int
	for _, r := range runs {
		if r.Created.Before(since) {
			continue
		}
		st.Runs++
		one := RunStats{ID: r.ID, Created: r.Created.UTC(), Phase: string(r.Phase), StopReason: r.StopReason, Verdict: r.Verdict,
			Iterations: r.Iteration, Seconds: int64(r.Elapsed(r.Updated).Seconds())}
		if r.Tokens > 0 {
			tokens := r.Tokens
			one.Tokens = &tokens
		}
		switch {
		case Abandoned(r, now):
			one.Abandoned, one.Idle = true, int64(now.Sub(r.Updated).Seconds())
			st.Abandoned++
		case r.Active():
			one.Seconds = int64(r.Elapsed(now).Seconds())
			st.Active++
		}
		st.PerRun = append(st.PerRun, one)
		if !r.Active() {
			if r.Verdict == "" {
				st.NoVerdict++
			} else {
				st.Verdicts[r.Verdict]++
			}
			how := r.StopReason
			if r.Phase == loop.Done {
				how = "converged"
				rounds = append(rounds, r.Rounds)
			}
			st.StopReasons[how]++
			seconds = append(seconds, int64(r.Elapsed(r.Updated).Seconds()))
			if r.Tokens > 0 {
				tokens = append(tokens, int64(r.Tokens))
			}
		}
		if err := proj.LoadCold(r); err != nil {
			unreadable = append(unreadable, fmt.Errorf("run %s: its findings are left out: %w", r.ID, err))
			continue
		}
		for _, e := range r.Findings {
			st.Findings++
			severities[e.Severity]++
			for _, n := range e.Reviewers {
				rs := reviewers[n]
				if rs == nil {
					rs = &ReviewerStats{Name: n}
					reviewers[n] = rs
				}
				rs.Findings++
				rs.BySeverity = addSeverity(rs.BySeverity, e.Severity)
			}
			if e.Blocking || e.Status == review.StatusResolved {
				blocking++
				if e.Status == review.StatusResolved {
					fixed++
				}
			}
			if e.Status == review.StatusResolved || e.Reopens > 0 {
				resolved++
			}
			if e.Reopens > 0 {
				reopened++
			}
			if e.Status == review.StatusDisproved {
				disproved++
			}
			if e.PreExisting {
				preExisting++
			}
		}
	}
	st.BySeverity = severitiesOf(severities)
	for _, n := range slices.Sorted(maps.Keys(reviewers)) {
		st.Reviewers = append(st.Reviewers, *reviewers[n])
	}
	slices.SortStableFunc(st.Reviewers, func(a, b ReviewerStats) int { return cmp.Compare(b.Findings, a.Findings) })
	st.FixRate, st.ReopenRate = rate(fixed, blocking), rate(reopened, resolved)
	st.Disproved, st.PreExisting = rate(disproved, st.Findings), rate(preExisting, st.Findings)
	if len(rounds) > 0 {
		slices.Sort(rounds)
		st.Converge.Runs, st.Converge.Median, st.Converge.Max = len(rounds), rounds[len(rounds)/2], rounds[len(rounds)-1]
		for _, n := range rounds {
			st.Converge.Histogram[n]++
		}
	}
	st.Time, st.Tokens = spread(seconds), spread(tokens)
	return st, unreadable, nil
}

// AbandonedAfter is how long an active run goes without hook activity
// before status and stats call it abandoned: its session was closed, or
// left, in the middle of the run. Hooks change a run at every agent's
// start and stop, so a live run is never idle that long. Abandoned is a
// word, not a phase: the run is still active to whetstone, resuming the
// session continues it and `whetstone abort` ends it.
const AbandonedAfter = 12 * time.Hour

// Abandoned reports whether r is active but has had no hook activity for
// AbandonedAfter at now.
func Abandoned(r *loop.Run, now time.Time) bool {
	return r.Active() && now.Sub(r.Updated) >= AbandonedAfter
}

// roughly renders a long duration in its largest unit: 3d, 12h; a short
// one as loop.FormatDuration does.
func roughly(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
	case d >= time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return loop.FormatDuration(d)
}

// maxNamed is how many run ids an error about several runs names.
const maxNamed = 5

// leftOut summarises the errors of the runs Runs could not load: those
// whose state does not verify with this key (the usual innocent cause is
// a run made under another HOME or WHETSTONE_STATE_DIR, as make demo's)
// become one error naming them; every other error stays as it is.
func leftOut(proj app.Project, runs []*loop.Run, errs []error) []error {
	var other []error
	tampered := 0
	for _, e := range errs {
		if errors.Is(e, state.ErrTampered) {
			tampered++
		} else {
			other = append(other, e)
		}
	}
	if tampered == 0 {
		return errs
	}
	what := review.Plural(tampered, "run")
	if len(other) == 0 {
		// Every run left out is one of these: they are the run
		// directories with no run loaded.
		loaded := map[string]bool{}
		for _, r := range runs {
			loaded[r.ID] = true
		}
		var ids []string
		entries, _ := os.ReadDir(filepath.Join(proj.Root, ".whetstone", "runs"))
		for _, e := range entries {
			if !loaded[e.Name()] && app.ValidRunID(e.Name()) {
				ids = append(ids, e.Name())
			}
		}
		if len(ids) == tampered {
			what += " (" + strings.Join(ids[:min(len(ids), maxNamed)], ", ")
			if len(ids) > maxNamed {
				what += fmt.Sprintf(" and %d more", len(ids)-maxNamed)
			}
			what += ")"
		}
	}
	return append(other, fmt.Errorf("%s left out: %s not verify with the key %s: sealed with another key (another HOME, XDG_STATE_HOME or WHETSTONE_STATE_DIR, as make demo's runs are) or changed since",
		what, map[bool]string{true: "its state does", false: "their states do"}[tampered == 1], proj.KeyPath()))
}

func addSeverity(s Severities, sev string) Severities {
	switch sev {
	case "critical":
		s.Critical++
	case "high":
		s.High++
	case "medium":
		s.Medium++
	case "low":
		s.Low++
	case "info":
		s.Info++
	}
	return s
}

// barWidth is the longest bar of a chart, in characters.
const barWidth = 24

// Text renders the stats for a terminal: counts with small bars.
func (s Stats) Text(colour bool) string {
	p := paint.Painter(colour)
	var b strings.Builder
	b.WriteString("whetstone stats · " + review.Plural(s.Runs, "run"))
	var live []string
	if s.Active > 0 {
		live = append(live, fmt.Sprintf("%d active", s.Active))
	}
	if s.Abandoned > 0 {
		live = append(live, fmt.Sprintf("%d abandoned: no hook activity for %s", s.Abandoned, roughly(AbandonedAfter)))
	}
	if len(live) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(live, ", "))
	}
	if s.Since != nil {
		b.WriteString(" created since " + s.Since.UTC().Format(time.RFC3339))
	}
	b.WriteString("\n")
	if s.Runs == 0 {
		return b.String()
	}
	finished := s.Runs - s.Active - s.Abandoned
	if finished > 0 {
		b.WriteString("\nVerdicts of the finished runs\n")
		var rows []row
		for _, v := range []string{review.Approve, review.ApproveWithNotes, review.RequestChanges, review.Block} {
			if s.Verdicts[v] > 0 {
				rows = append(rows, row{p.Verdict(v), len(v), s.Verdicts[v]})
			}
		}
		if s.NoVerdict > 0 {
			const none = loop.NoVerdict + " (aborted or error)"
			rows = append(rows, row{none, len([]rune(none)), s.NoVerdict})
		}
		chart(&b, rows)
		b.WriteString("\nHow they ended\n")
		rows = nil
		for _, k := range slices.Sorted(maps.Keys(s.StopReasons)) {
			rows = append(rows, row{k, len(k), s.StopReasons[k]})
		}
		chart(&b, rows)
	}
	if c := s.Converge; c.Runs > 0 {
		fmt.Fprintf(&b, "\nReview rounds to converge (%s): median %d, at most %d\n", review.Plural(c.Runs, "run"), c.Median, c.Max)
		var rows []row
		for _, n := range slices.Sorted(maps.Keys(c.Histogram)) {
			label := review.Plural(n, "round")
			rows = append(rows, row{label, len(label), c.Histogram[n]})
		}
		chart(&b, rows)
	}
	if s.Findings == 0 {
		b.WriteString("\nFindings: none\n")
	} else {
		fmt.Fprintf(&b, "\nFindings: %d", s.Findings)
		sv := s.BySeverity
		fmt.Fprintf(&b, " (%d critical, %d high, %d medium, %d low, %d info)\n", sv.Critical, sv.High, sv.Medium, sv.Low, sv.Info)
		width := len("reviewer")
		for _, r := range s.Reviewers {
			width = max(width, len(r.Name))
		}
		fmt.Fprintf(&b, "  %-*s  %5s  %4s %4s %4s %4s %4s\n", width, "reviewer", "total", "crit", "high", "med", "low", "info")
		for _, r := range s.Reviewers {
			sv := r.BySeverity
			fmt.Fprintf(&b, "  %-*s  %5d  %4d %4d %4d %4d %4d\n", width, review.CleanLine(r.Name), r.Findings, sv.Critical, sv.High, sv.Medium, sv.Low, sv.Info)
		}
		b.WriteString("\nRates\n")
		for _, x := range []struct {
			name     string
			r        Rate
			of, tail string
		}{
			{"fixed", s.FixRate, "blocking finding", ""},
			{"reopened", s.ReopenRate, "finding", " resolved at least once"},
			{"disproved", s.Disproved, "finding", ""},
			{"pre-existing", s.PreExisting, "finding", ""},
		} {
			pct := "   -"
			if x.r.Rate != nil {
				pct = fmt.Sprintf("%3.0f%%", *x.r.Rate*100)
			}
			fmt.Fprintf(&b, "  %-12s  %s  (%d of %s%s)\n", x.name, pct, x.r.Count, review.Plural(x.r.Of, x.of), x.tail)
		}
	}
	if s.Abandoned > 0 {
		fmt.Fprintf(&b, "\n%s abandoned: `whetstone abort --run ID` ends one; resuming its session continues it.\n", review.Plural(s.Abandoned, "run"))
	}
	if t := s.Time; t.Runs > 0 {
		fmt.Fprintf(&b, "\nTime: %s in total; median %s, longest %s per finished run\n",
			loop.FormatDuration(time.Duration(t.Total)*time.Second), loop.FormatDuration(time.Duration(t.Median)*time.Second), loop.FormatDuration(time.Duration(t.Max)*time.Second))
	}
	if t := s.Tokens; t.Runs > 0 {
		fmt.Fprintf(&b, "Tokens: %s in total; median %s, most %s per run (%s counted)\n",
			loop.FormatTokens(int(t.Total)), loop.FormatTokens(int(t.Median)), loop.FormatTokens(int(t.Max)), review.Plural(t.Runs, "run"))
	}
	s.runs(&b)
	return b.String()
}

// runs lists the latest runs, newest first, one a line: what each cost.
func (s Stats) runs(b *strings.Builder) {
	list := s.PerRun[max(0, len(s.PerRun)-runLines):]
	if len(list) == 0 {
		return
	}
	if len(list) < len(s.PerRun) {
		fmt.Fprintf(b, "\nRuns (the latest %d of %d)\n", len(list), len(s.PerRun))
	} else {
		b.WriteString("\nRuns\n")
	}
	outcomes := make([]string, len(list))
	idWidth, outWidth := len("run"), len("outcome")
	for i, r := range list {
		o := strings.ToUpper(r.Phase)
		if r.Abandoned {
			o = fmt.Sprintf("ABANDONED (%s, idle %s)", o, roughly(time.Duration(r.Idle)*time.Second))
		}
		if r.StopReason != "" {
			o += " (" + r.StopReason + ")"
		}
		if r.Verdict != "" {
			o += " " + r.Verdict
		}
		outcomes[i] = review.CleanLine(o)
		idWidth, outWidth = max(idWidth, len(review.CleanLine(r.ID))), max(outWidth, len(outcomes[i]))
	}
	fmt.Fprintf(b, "  %-*s  %-16s  %-*s  %10s  %8s  %11s\n", idWidth, "run", "created", outWidth, "outcome", "iterations", "time", "tokens")
	for i := len(list) - 1; i >= 0; i-- {
		r := list[i]
		tokens := "not counted"
		if r.Tokens != nil {
			tokens = loop.FormatTokens(*r.Tokens)
		}
		took := loop.FormatDuration(time.Duration(r.Seconds) * time.Second)
		if r.Abandoned {
			took = "—" // it never ended; the outcome says how long it has been idle
		}
		took = strings.Repeat(" ", max(0, 8-utf8.RuneCountInString(took))) + took
		fmt.Fprintf(b, "  %-*s  %-16s  %-*s  %10d  %s  %11s\n", idWidth, review.CleanLine(r.ID), r.Created.Format("2006-01-02 15:04"),
			outWidth, outcomes[i], r.Iterations, took, tokens)
	}
}

// row is one line of a bar chart: a label (possibly coloured; width is its
// printed width) and a count.
type row struct {
	label string
	width int
	n     int
}

// chart writes rows as labelled counts with bars scaled to the largest.
func chart(b *strings.Builder, rows []row) {
	width, most := 0, 0
	for _, r := range rows {
		width, most = max(width, r.width), max(most, r.n)
	}
	for _, r := range rows {
		bar := 0
		if most > 0 {
			bar = max(1, r.n*barWidth/most)
		}
		fmt.Fprintf(b, "  %s%s  %4d  %s\n", r.label, strings.Repeat(" ", width-r.width), r.n, strings.Repeat("█", bar))
	}
}
