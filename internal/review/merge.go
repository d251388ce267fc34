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

// maxTitles is how many wordings of one finding the ledger remembers for
// matching later sightings.
const maxTitles = 4

// Entry is one finding identity of a run: what it is, where, and its history
// across iterations. The ledger of a run is a slice of entries in id order.
type Entry struct {
	ID          string   `json:"id"`
	Status      string   `json:"status"`
	Severity    string   `json:"severity"`
	Confidence  int      `json:"confidence"`
	Category    string   `json:"category"`
	Rule        string   `json:"rule,omitempty"`
	File        string   `json:"file"`
	Line        int      `json:"line"`
	EndLine     int      `json:"end_line"`
	Title       string   `json:"title"`
	Titles      []string `json:"titles,omitempty"` // earlier wordings, for matching
	Reviewers   []string `json:"reviewers"`
	Blocking    bool     `json:"blocking"` // blocks while open (spec §5)
	PreExisting bool     `json:"pre_existing,omitempty"`
	First       int      `json:"first_iteration"`
	Last        int      `json:"last_iteration"`
	Claim       string   `json:"claim,omitempty"` // the fixer's latest status for it
}

// Open reports whether the entry is still a live finding.
func (e Entry) Open() bool { return e.Status == StatusOpen || e.Status == StatusReopened }

// Merged is one finding of a review round after duplicates were folded: the
// most severe report of it, the reviewers that raised it and its identity.
type Merged struct {
	ID          string   `json:"id"`
	Status      string   `json:"status"`
	New         bool     `json:"new"`
	Blocking    bool     `json:"blocking"`
	PreExisting bool     `json:"pre_existing,omitempty"`
	Reviewers   []string `json:"reviewers"`
	Finding
}

// Diff is what Merge knows about the change under review.
type Diff struct {
	// Touches reports whether lines line..end of file are part of the change
	// (within PreExistingMargin of a changed hunk). Nil: every line is.
	Touches func(file string, line, end int) bool
	// Moved maps a line of the previous review's tree to this review's (the
	// fixer's edits move code). Nil: lines did not move.
	Moved func(file string, line int) (string, int)
}

// sighting is one reported finding with what matching needs precomputed.
type sighting struct {
	f        Finding
	reviewer string
	words    []string
}

// group is one finding of a round: the sightings that are the same bug.
type group struct {
	rep       Finding
	reviewers []string
	members   []*sighting
	inChange  bool
}

// Merge folds the reports of one review round into findings, matches them to
// the ledger's identities (keeping ids stable across iterations) and returns
// the new ledger and the round's findings. Identity never depends on the
// order reports or findings arrive in, nor on the category a reviewer chose
// (spec §5): the same file, overlapping or near lines and a similar title,
// the same rule key nearby, or an explicit prior make one finding.
func Merge(ledger []Entry, reports []Report, p Policy, d Diff) ([]Entry, []Merged) {
	next := slices.Clone(ledger)
	if d.Moved != nil {
		for i := range next {
			e := &next[i]
			file, line := d.Moved(e.File, e.Line)
			_, end := d.Moved(e.File, max(e.EndLine, e.Line))
			e.File, e.Line, e.EndLine = file, line, max(end, line)
		}
	}
	groups := cluster(reports)
	for _, g := range groups {
		g.inChange = d.Touches == nil
		for _, m := range g.members {
			if d.Touches != nil && d.Touches(m.f.File, m.f.Line, max(m.f.EndLine, m.f.Line)) {
				g.inChange = true
			}
		}
	}
	assigned := match(next, groups)

	matched := make([]bool, len(next))
	round := make([]Merged, 0, len(groups))
	for gi, g := range groups {
		i, isNew := assigned[gi], assigned[gi] < 0
		var prev *Entry
		if isNew {
			next = append(next, Entry{ID: fmt.Sprintf("F-%04d", len(next)+1), First: p.Iteration, Status: StatusOpen})
			matched = append(matched, true)
			i = len(next) - 1
		} else {
			prev = &Entry{Blocking: next[i].Blocking}
			matched[i] = true
		}
		e := &next[i]
		switch e.Status {
		case StatusResolved:
			e.Status = StatusReopened
		case StatusDisproved:
			// Raised again after the validator disproved it: it stays
			// disproved, with its details refreshed below.
		default:
			if !isNew {
				e.Status = StatusOpen
			}
		}
		for _, m := range g.members {
			if !slices.Contains(e.Titles, m.f.Title) && len(e.Titles) < maxTitles {
				e.Titles = append(e.Titles, m.f.Title)
			}
		}
		e.Severity, e.Confidence, e.Category, e.Rule, e.File = g.rep.Severity, g.rep.Confidence, g.rep.Category, g.rep.Rule, g.rep.File
		e.Line, e.EndLine, e.Title, e.Reviewers, e.Last = g.rep.Line, max(g.rep.EndLine, g.rep.Line), g.rep.Title, g.reviewers, p.Iteration
		e.PreExisting = !g.inChange
		e.Blocking = p.Blocks(g.rep, prev, e.PreExisting)
		round = append(round, Merged{ID: e.ID, Status: e.Status, New: isNew, Blocking: e.Open() && e.Blocking,
			PreExisting: e.PreExisting, Reviewers: g.reviewers, Finding: g.rep})
	}
	// A reviewer's fix_check that says a claimed fix did not work keeps the
	// finding open even when nobody re-raised it as a finding.
	notFixed := map[string][]string{}
	for _, r := range reports {
		for _, fc := range r.FixChecks {
			if fc.Status != "fixed" && !slices.Contains(notFixed[fc.ID], r.Reviewer) {
				notFixed[fc.ID] = append(notFixed[fc.ID], r.Reviewer)
			}
		}
	}
	for i := range next {
		e := &next[i]
		if matched[i] || !e.Open() {
			continue
		}
		who, ok := notFixed[e.ID]
		if !ok {
			e.Status = StatusResolved
			continue
		}
		slices.Sort(who)
		e.Last, e.Reviewers = p.Iteration, who
		round = append(round, Merged{ID: e.ID, Status: e.Status, Blocking: e.Blocking, PreExisting: e.PreExisting, Reviewers: who,
			Finding: Finding{Severity: e.Severity, Confidence: e.Confidence, Category: e.Category, Rule: e.Rule, File: e.File,
				Line: e.Line, EndLine: e.EndLine, Title: e.Title,
				Description: "The fix for this finding did not hold (fix_checks)."}})
	}
	slices.SortFunc(round, func(a, b Merged) int { return cmp.Compare(a.ID, b.ID) })
	return next, round
}

// cluster folds the sightings of one round into groups. It compares only
// findings of the same file whose lines lie within PreExistingMargin of each
// other (a sweep over the findings sorted by line), plus findings naming the
// same prior, and joins them with a union-find, so the result is the same
// whatever order the reports and their findings came in.
func cluster(reports []Report) []*group {
	var all []*sighting
	for _, r := range reports {
		for _, f := range r.Findings {
			if f.EndLine < f.Line {
				f.EndLine = f.Line
			}
			all = append(all, &sighting{f: f, reviewer: r.Reviewer, words: words(f.Title)})
		}
	}
	slices.SortFunc(all, func(a, b *sighting) int {
		return cmp.Or(cmp.Compare(a.f.File, b.f.File), cmp.Compare(a.f.Line, b.f.Line), cmp.Compare(a.f.EndLine, b.f.EndLine),
			cmp.Compare(SeverityRank(a.f.Severity), SeverityRank(b.f.Severity)), cmp.Compare(b.f.Confidence, a.f.Confidence),
			cmp.Compare(a.f.Title, b.f.Title), cmp.Compare(a.reviewer, b.reviewer), cmp.Compare(a.f.Category, b.f.Category),
			cmp.Compare(a.f.Rule, b.f.Rule), cmp.Compare(a.f.Prior, b.f.Prior), cmp.Compare(a.f.Description, b.f.Description))
	})
	parent := make([]int, len(all))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	union := func(a, b int) {
		if ra, rb := find(a), find(b); ra != rb {
			parent[max(ra, rb)] = min(ra, rb)
		}
	}
	byPrior := map[string]int{}
	for i, s := range all {
		if s.f.Prior != "" {
			if j, ok := byPrior[s.f.Prior]; ok {
				union(i, j)
			} else {
				byPrior[s.f.Prior] = i
			}
		}
		// all is sorted by file and line: later findings of the same file
		// that start within reach of this one's end are the only candidates.
		end := s.f.EndLine
		for j := i + 1; j < len(all) && all[j].f.File == s.f.File && all[j].f.Line <= end+PreExistingMargin; j++ {
			if sameRound(s, all[j]) {
				union(i, j)
			}
		}
	}
	byRoot := map[int]*group{}
	var groups []*group
	for i, s := range all {
		r := find(i)
		g := byRoot[r]
		if g == nil {
			g = &group{rep: s.f}
			byRoot[r] = g
			groups = append(groups, g)
		} else if better(s.f, g.rep) {
			g.rep = s.f
		}
		if g.rep.Prior == "" && s.f.Prior != "" {
			g.rep.Prior = s.f.Prior
		}
		if g.rep.Rule == "" && s.f.Rule != "" {
			g.rep.Rule = s.f.Rule
		}
		g.members = append(g.members, s)
		if !slices.Contains(g.reviewers, s.reviewer) {
			g.reviewers = append(g.reviewers, s.reviewer)
		}
	}
	for _, g := range groups {
		slices.Sort(g.reviewers)
	}
	// New findings get their ids in this order: most severe first.
	slices.SortStableFunc(groups, func(a, b *group) int {
		return cmp.Or(cmp.Compare(SeverityRank(a.rep.Severity), SeverityRank(b.rep.Severity)),
			cmp.Compare(a.rep.File, b.rep.File), cmp.Compare(a.rep.Line, b.rep.Line), cmp.Compare(a.rep.Title, b.rep.Title))
	})
	return groups
}

// sameRound decides whether two sightings of one round, in the same file
// and within PreExistingMargin lines of each other, are the same bug.
func sameRound(a, b *sighting) bool {
	if a.f.Rule != "" && strings.EqualFold(a.f.Rule, b.f.Rule) {
		return true
	}
	sim := similarity(a.words, b.words)
	return sim >= 0.3 || (overlap(a.f, b.f) && sim >= 0.2)
}

// better reports whether a is a stronger report of a finding than b.
func better(a, b Finding) bool {
	if ra, rb := SeverityRank(a.Severity), SeverityRank(b.Severity); ra != rb {
		return ra < rb
	}
	return a.Confidence > b.Confidence
}

// nearLedger is how far a finding may be from a ledger entry's (moved)
// lines and still be its sighting, given a similar title or the same rule.
const nearLedger = 10

// match assigns each group the ledger entry it is a new sighting of, or -1:
// first the entry a member names as prior, then, best score first, an
// unmatched entry of the same file whose lines are near and whose title (any
// of its wordings) is similar, or whose rule key is the same. Scoring every
// candidate pair before assigning makes the result independent of order.
func match(ledger []Entry, groups []*group) []int {
	out := make([]int, len(groups))
	taken := make([]bool, len(ledger))
	byID := map[string]int{}
	byFile := map[string][]int{}
	for i, e := range ledger {
		byID[e.ID] = i
		byFile[e.File] = append(byFile[e.File], i)
	}
	for gi, g := range groups {
		out[gi] = -1
		for _, m := range g.members {
			if i, ok := byID[m.f.Prior]; ok && !taken[i] && out[gi] < 0 {
				out[gi], taken[i] = i, true
			}
		}
	}
	type pair struct {
		g, e  int
		score float64
	}
	var pairs []pair
	wordings := map[int][][]string{} // ledger index → the words of each title it was seen under
	for gi, g := range groups {
		if out[gi] >= 0 {
			continue
		}
		for _, i := range byFile[g.rep.File] {
			if taken[i] {
				continue
			}
			if wordings[i] == nil {
				wordings[i] = append(wordings[i], words(ledger[i].Title))
				for _, t := range ledger[i].Titles {
					wordings[i] = append(wordings[i], words(t))
				}
			}
			if s := score(ledger[i], wordings[i], g); s > 0 {
				pairs = append(pairs, pair{gi, i, s})
			}
		}
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.e, b.e), cmp.Compare(a.g, b.g))
	})
	for _, p := range pairs {
		if out[p.g] < 0 && !taken[p.e] {
			out[p.g], taken[p.e] = p.e, true
		}
	}
	return out
}

// score rates how likely a group is a new sighting of a ledger entry, whose
// wordings are given as word sets: 0 for not at all, otherwise higher for
// more similar titles and nearer lines.
func score(e Entry, ew [][]string, g *group) float64 {
	best := 0.0
	for _, m := range g.members {
		dist := distance(m.f, Finding{Line: e.Line, EndLine: e.EndLine})
		sim := 0.0
		for _, w := range ew {
			sim = max(sim, similarity(m.words, w))
		}
		ok := sim >= 0.6 ||
			(dist <= nearLedger && sim >= 0.3) ||
			(dist <= PreExistingMargin && sim >= 0.2) ||
			(dist <= nearLedger && m.f.Rule != "" && strings.EqualFold(m.f.Rule, e.Rule))
		if ok {
			best = max(best, 1+sim-float64(min(dist, 1000))/1000)
		}
	}
	return best
}

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

var stop = map[string]bool{"a": true, "an": true, "the": true, "is": true, "in": true, "of": true, "on": true, "to": true,
	"and": true, "or": true, "for": true, "be": true, "not": true, "when": true, "with": true, "can": true, "may": true,
	"it": true, "its": true, "this": true, "that": true, "at": true, "by": true, "from": true, "are": true, "was": true,
	"into": true, "than": true, "then": true, "but": true, "if": true, "as": true, "via": true, "has": true, "have": true, "does": true}

// words returns the distinct stemmed lower-case words of a title, without
// stop words, sorted: a set that similarity compares in linear time.
func words(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if stop[w] {
			continue
		}
		out = append(out, stem(w))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// stem folds the commonest English inflections, so "skips", "skipped" and
// "skipping" meet "skip", and "closes" meets "closed". It is deliberately crude: titles are short and are
// only compared with each other.
func stem(w string) string {
	for _, suf := range []string{"ing", "ed", "s"} {
		base, ok := strings.CutSuffix(w, suf)
		if !ok || len(base) < 3 || strings.HasSuffix(w, "ss") {
			continue
		}
		if n := len(base); suf != "s" && base[n-1] == base[n-2] && !strings.ContainsRune("lsz", rune(base[n-1])) {
			base = base[:n-1] // dropped → drop
		}
		w = base
		break
	}
	if base, ok := strings.CutSuffix(w, "e"); ok && len(base) >= 3 {
		return base // close, closes, closed → clos
	}
	return w
}

// similarity is the Jaccard index of two sorted word sets.
func similarity(a, b []string) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	common, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch c := strings.Compare(a[i], b[j]); {
		case c == 0:
			common++
			i++
			j++
		case c < 0:
			i++
		default:
			j++
		}
	}
	return float64(common) / float64(len(a)+len(b)-common)
}
