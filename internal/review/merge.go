package review

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// Finding statuses in the ledger.
const (
	StatusOpen      = "open"      // raised in the latest review
	StatusReopened  = "reopened"  // resolved earlier, raised again
	StatusResolved  = "resolved"  // open earlier, not raised by a later review
	StatusDisproved = "disproved" // the validator showed it is not a problem
)

// Entry is one finding identity of a run: what it is, where, and its history
// across iterations. The ledger of a run is a slice of entries in id order.
type Entry struct {
	ID         string   `json:"id"`
	Status     string   `json:"status"`
	Severity   string   `json:"severity"`
	Confidence int      `json:"confidence"`
	Category   string   `json:"category"`
	File       string   `json:"file"`
	Line       int      `json:"line"`
	EndLine    int      `json:"end_line"`
	Title      string   `json:"title"`
	Reviewers  []string `json:"reviewers"`
	Blocking   bool     `json:"blocking"`
	First      int      `json:"first_iteration"`
	Last       int      `json:"last_iteration"`
	Claim      string   `json:"claim,omitempty"` // the fixer's latest status for it
}

// Open reports whether the entry is still a live finding.
func (e Entry) Open() bool { return e.Status == StatusOpen || e.Status == StatusReopened }

// Merged is one finding of a review round after duplicates were folded: the
// most severe report of it, the reviewers that raised it and its identity.
type Merged struct {
	ID        string   `json:"id"`
	Status    string   `json:"status"`
	New       bool     `json:"new"`
	Blocking  bool     `json:"blocking"`
	Reviewers []string `json:"reviewers"`
	Finding
}

// Policy is what decides whether a finding blocks.
type Policy struct {
	Iteration           int
	ConfidenceThreshold int    // findings below it never block
	BlockingSeverity    string // after iteration 1, new findings below it do not block
}

// Blocks reports whether a finding keeps the loop going: confident enough,
// not merely informational, and — after the first iteration — either known
// from an earlier iteration or at least as severe as the blocking severity.
// The last rule stops fresh reviewers from moving the goalposts.
func (p Policy) Blocks(f Finding, isNew bool) bool {
	if f.Confidence < p.ConfidenceThreshold || f.Severity == "info" {
		return false
	}
	return p.Iteration <= 1 || !isNew || SeverityRank(f.Severity) <= SeverityRank(p.BlockingSeverity)
}

// Merge folds the reports of one review round into findings, matches them to
// the ledger's identities (keeping ids stable across iterations) and returns
// the new ledger and the round's findings. Reports are processed in reviewer
// order, so the result does not depend on the order they arrived in.
func Merge(ledger []Entry, reports []Report, p Policy) ([]Entry, []Merged) {
	reports = slices.Clone(reports)
	slices.SortFunc(reports, func(a, b Report) int { return cmp.Compare(a.Reviewer, b.Reviewer) })
	clusters := cluster(reports)

	next := make([]Entry, len(ledger))
	copy(next, ledger)
	byKey := map[string][]int{} // file|category → ledger indexes
	byID := map[string]int{}
	for i, e := range next {
		byKey[key(e.File, e.Category)] = append(byKey[key(e.File, e.Category)], i)
		byID[e.ID] = i
	}
	matched := make([]bool, len(next))
	titles := make([][]string, len(next))
	for i, e := range next {
		titles[i] = words(e.Title)
	}
	round := make([]Merged, 0, len(clusters))
	for _, c := range clusters {
		i := match(titles, next, byKey, byID, matched, c)
		m := Merged{Reviewers: c.reviewers, Finding: c.rep}
		if i < 0 {
			next = append(next, Entry{ID: fmt.Sprintf("F-%04d", len(next)+1), First: p.Iteration})
			i = len(next) - 1
			matched = append(matched, true)
			titles = append(titles, nil)
			m.New = true
		}
		e := &next[i]
		switch {
		case m.New:
			e.Status = StatusOpen
		case e.Status == StatusResolved:
			e.Status = StatusReopened
		case e.Status == StatusDisproved:
			// Reviewers raised it again after the validator disproved it: it
			// stays disproved, but its details are refreshed below.
		default:
			e.Status = StatusOpen
		}
		e.Severity, e.Confidence, e.Category, e.File = c.rep.Severity, c.rep.Confidence, c.rep.Category, c.rep.File
		e.Line, e.EndLine, e.Title, e.Reviewers, e.Last = c.rep.Line, c.rep.EndLine, c.rep.Title, c.reviewers, p.Iteration
		e.Blocking = e.Open() && p.Blocks(c.rep, m.New)
		m.ID, m.Status, m.Blocking = e.ID, e.Status, e.Blocking
		round = append(round, m)
	}
	// A reviewer's fix_check that says a claimed fix did not work keeps the
	// finding open even when nobody re-raised it as a finding.
	notFixed := map[string][]string{}
	for _, r := range reports {
		for _, fc := range r.FixChecks {
			if fc.Status != "fixed" {
				notFixed[fc.ID] = append(notFixed[fc.ID], r.Reviewer)
			}
		}
	}
	for i := range next {
		e := &next[i]
		if matched[i] {
			continue
		}
		if who, ok := notFixed[e.ID]; ok && e.Open() {
			e.Last, e.Reviewers = p.Iteration, who
			e.Blocking = p.Blocks(Finding{Severity: e.Severity, Confidence: e.Confidence}, false)
			round = append(round, Merged{ID: e.ID, Status: e.Status, Blocking: e.Blocking, Reviewers: who, Finding: Finding{
				Severity: e.Severity, Confidence: e.Confidence, Category: e.Category, File: e.File,
				Line: e.Line, EndLine: e.EndLine, Title: e.Title,
				Description: "The fix for this finding did not hold (fix_checks).",
			}})
			continue
		}
		if e.Open() {
			e.Status, e.Blocking = StatusResolved, false
		}
	}
	slices.SortFunc(round, func(a, b Merged) int { return cmp.Compare(a.ID, b.ID) })
	return next, round
}

type group struct {
	rep       Finding
	reviewers []string
	members   []Finding
	words     [][]string
}

// cluster folds duplicates across reviewers: same file and category,
// overlapping or near lines, similar titles.
func cluster(reports []Report) []*group {
	var all []*group
	byKey := map[string][]*group{}
	for _, r := range reports {
		for _, f := range r.Findings {
			w := words(f.Title)
			k := key(f.File, f.Category)
			var g *group
			for _, cand := range byKey[k] {
				if cand.same(f, w) {
					g = cand
					break
				}
			}
			if g == nil {
				g = &group{rep: f}
				byKey[k] = append(byKey[k], g)
				all = append(all, g)
			} else if better(f, g.rep) {
				g.rep = f
			}
			if g.rep.Prior == "" && f.Prior != "" {
				g.rep.Prior = f.Prior
			}
			g.members = append(g.members, f)
			g.words = append(g.words, w)
			if !slices.Contains(g.reviewers, r.Reviewer) {
				g.reviewers = append(g.reviewers, r.Reviewer)
			}
		}
	}
	return all
}

func (g *group) same(f Finding, w []string) bool {
	for i, m := range g.members {
		sim := similarity(w, g.words[i])
		switch {
		case f.Prior != "" && f.Prior == m.Prior:
			return true
		case overlap(f, m) && sim >= 0.2:
			return true
		case distance(f, m) <= 3 && sim >= 0.5:
			return true
		}
	}
	return false
}

// better reports whether a is a stronger report of a finding than b.
func better(a, b Finding) bool {
	if ra, rb := SeverityRank(a.Severity), SeverityRank(b.Severity); ra != rb {
		return ra < rb
	}
	return a.Confidence > b.Confidence
}

// match finds the ledger entry a round's finding is a new sighting of: the
// one it names as prior, or the most similar one in the same file and
// category. It returns -1 for a finding never seen before.
func match(titles [][]string, ledger []Entry, byKey map[string][]int, byID map[string]int, matched []bool, g *group) int {
	if i, ok := byID[g.rep.Prior]; ok && !matched[i] {
		matched[i] = true
		return i
	}
	w := words(g.rep.Title)
	best, bestSim := -1, 0.0
	for _, i := range byKey[key(g.rep.File, g.rep.Category)] {
		if matched[i] {
			continue
		}
		e := ledger[i]
		sim := similarity(w, titles[i])
		near := abs(e.Line-g.rep.Line) <= 10
		if (sim >= 0.6 || (near && sim >= 0.3)) && sim > bestSim {
			best, bestSim = i, sim
		}
	}
	if best >= 0 {
		matched[best] = true
	}
	return best
}

func key(file, category string) string { return file + "\x00" + strings.ToLower(category) }

func overlap(a, b Finding) bool {
	return a.Line <= max(b.EndLine, b.Line) && b.Line <= max(a.EndLine, a.Line)
}

func distance(a, b Finding) int {
	if overlap(a, b) {
		return 0
	}
	return min(abs(a.Line-max(b.EndLine, b.Line)), abs(b.Line-max(a.EndLine, a.Line)))
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

var stop = map[string]bool{"a": true, "an": true, "the": true, "is": true, "in": true, "of": true, "on": true, "to": true, "and": true, "or": true, "for": true, "be": true, "not": true, "when": true, "with": true, "can": true, "may": true}

// words returns the distinct lower-case words of a title, without stop words.
func words(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if !stop[w] && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// similarity is the Jaccard index of two word sets.
func similarity(a, b []string) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	common := 0
	for _, w := range a {
		if slices.Contains(b, w) {
			common++
		}
	}
	return float64(common) / float64(len(a)+len(b)-common)
}
