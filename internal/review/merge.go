package review

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Finding statuses in the ledger.
const (
	StatusOpen      = "open"      // raised in the latest review
	StatusReopened  = "reopened"  // resolved or withdrawn earlier, raised again
	StatusResolved  = "resolved"  // open earlier, let go by a later review (fix_checks)
	StatusDisproved = "disproved" // the validator showed it is not a problem
	StatusWithdrawn = "withdrawn" // its reviewers accepted the fixer's dispute (fix_checks)
)

// Fix-check answers: a reviewer's word on a finding it raised that the fixer
// reported on. Only CheckFixed and CheckWithdrawn let a blocking finding go.
const (
	CheckFixed          = "fixed"
	CheckNotFixed       = "not_fixed"
	CheckPartiallyFixed = "partially_fixed"
	CheckWithdrawn      = "withdrawn"
)

// CheckStatuses are the fix-check answers a reviewer may give.
var CheckStatuses = []string{CheckFixed, CheckNotFixed, CheckPartiallyFixed, CheckWithdrawn}

// MaxClaimNote is how much of the fixer's note the ledger keeps for the
// reviewers' prompts; fix.json holds all of it.
const MaxClaimNote = 240

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
	Claim       string   `json:"claim,omitempty"`      // the fixer's latest status for it
	ClaimNote   string   `json:"claim_note,omitempty"` // and its note: one line, at most MaxClaimNote characters
	Reopens     int      `json:"reopens,omitempty"`    // times it came back after it was resolved
}

// Open reports whether the entry is still a live finding.
func (e Entry) Open() bool { return e.Status == StatusOpen || e.Status == StatusReopened }

// Merged is one finding of a review round after duplicates were folded: the
// most severe report of it, the reviewers that raised it and its identity.
type Merged struct {
	ID          string   `json:"id"`
	Status      string   `json:"status"`
	New         bool     `json:"new"`
	Kept        bool     `json:"kept,omitempty"` // not raised again, kept open by its fix checks; described in an earlier round
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
	// Reviewers are the reviewers dispatched this round; nil means every
	// reviewer. A finding none of them raised is not theirs to let go.
	Reviewers []string
	// FixOnly says the round reviewed the fixer's work (fix.patch) and the
	// findings each reviewer was asked to check, not the whole change: not
	// raising a finding again then says nothing about it.
	FixOnly bool
}

// looked reports whether the round looked at e at all: it reviewed the
// whole change and one of e's reviewers was dispatched. Otherwise an open
// finding nobody raised again and nobody answered for is left as it is.
func (d Diff) looked(e Entry) bool {
	return !d.FixOnly && (d.Reviewers == nil || slices.ContainsFunc(e.Reviewers, func(n string) bool { return slices.Contains(d.Reviewers, n) }))
}

// MaxRoundFindings caps the merged findings one review round records. A
// round past it keeps the most severe (then the most confident) and says how
// many it dropped (Round.Dropped): a runaway round cannot flood the ledger,
// verdict.json, the fixer or a hook's answer.
const MaxRoundFindings = 100

// roundCap is MaxRoundFindings; a variable so benchmarks can lift it.
var roundCap = MaxRoundFindings

// The merge never compares every pair of findings: a sighting is compared
// with at most maxNeighbours later sightings of its file and line window,
// and with at most maxNear ledger entries near its lines, maxNear spanning
// many lines and maxFar whose titles share its rarest words. Only a pile-up
// of more findings than that on the same lines, or of more look-alike
// titles in one file, can miss a duplicate; a round stays linear in its
// number of findings.
const (
	maxNeighbours = 32
	maxNear       = 32
	maxFar        = 16
)

// testHookCompared, when set, is told how many pairs of findings (or of a
// finding and a ledger entry) one merge compared.
var testHookCompared func(n int)

// sighting is one reported finding with what matching needs precomputed.
type sighting struct {
	f        Finding
	reviewer string
	words    []int32
	prefix   []int32 // its rarest words, for finding similar ledger titles
}

// group is one finding of a round: the sightings that are the same bug.
type group struct {
	rep       Finding
	reviewers []string
	members   []*sighting
	inChange  bool
}

// Round is the outcome of merging one review round.
type Round struct {
	Ledger   []Entry  // the run's ledger after the round
	Findings []Merged // the round's findings in id order
	// Dropped counts the findings past MaxRoundFindings: they got no id
	// and are in neither Ledger nor Findings, and an earlier finding that
	// one of them raised again is left as it was (it is not resolved).
	Dropped int
}

// Merge is MergeRound for callers that do not need Round.Dropped.
func Merge(ledger []Entry, reports []Report, p Policy, d Diff) ([]Entry, []Merged) {
	r := MergeRound(ledger, reports, p, d)
	return r.Ledger, r.Findings
}

// MergeRound folds the reports of one review round into findings, matches
// them to the ledger's identities (keeping ids stable across iterations) and
// returns the new ledger and the round's findings. Identity never depends on
// the order reports or findings arrive in, nor on the category a reviewer
// chose (spec §5): the same file, overlapping or near lines and a similar
// title, the same rule key nearby, or an explicit prior make one finding.
// At most MaxRoundFindings newly raised findings are kept; the round's
// findings also list every earlier one still open that nobody raised again:
// a fix_check said it is not fixed, or (blocking) no check let it go.
func MergeRound(ledger []Entry, reports []Report, p Policy, d Diff) Round {
	return merge(ledger, false, reports, p, d)
}

// MergeRoundOwned is MergeRound for a caller that hands ledger over and
// uses it no more: the new ledger is built in its memory, and in its spare
// capacity when that holds the round's new findings, so a large ledger is
// not copied (the hook that concludes a review round).
func MergeRoundOwned(ledger []Entry, reports []Report, p Policy, d Diff) Round {
	return merge(ledger, true, reports, p, d)
}

func merge(ledger []Entry, owned bool, reports []Report, p Policy, d Diff) Round {
	tok := tokens{ids: map[string]int32{}}
	groups, compared := cluster(reports, &tok)
	groups, dropped := mostSevereGroups(groups, roundCap)
	// The new ledger, with room for the round's new findings: a large
	// ledger is copied once at most.
	next := ledger
	if !owned || cap(ledger)-len(ledger) < len(groups) {
		next = make([]Entry, len(ledger), len(ledger)+len(groups))
		copy(next, ledger)
	}
	if d.Moved != nil {
		for i := range next {
			e := &next[i]
			file, line := d.Moved(e.File, e.Line)
			_, end := d.Moved(e.File, max(e.EndLine, e.Line))
			e.File, e.Line, e.EndLine = file, line, max(end, line)
		}
	}
	for _, g := range groups {
		g.inChange = d.Touches == nil
		for _, m := range g.members {
			if d.Touches != nil && d.Touches(m.f.File, m.f.Line, max(m.f.EndLine, m.f.Line)) {
				g.inChange = true
			}
		}
	}
	lx := newLedgerIndex(next, &tok)
	taken := make([]bool, len(next))
	assigned := lx.match(groups, taken, &compared)
	// A dropped finding that raises an earlier one again keeps it from
	// being resolved: it is still there, just past the cap.
	matched := make([]bool, len(taken), cap(next))
	copy(matched, taken)
	lx.match(dropped, matched, &compared)

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
		}
		e := &next[i]
		switch e.Status {
		case StatusResolved, StatusWithdrawn:
			e.Status = StatusReopened
			e.Reopens++
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
	checks := fixChecks(reports)
	for i := range next {
		e := &next[i]
		if matched[i] || !e.Open() {
			continue
		}
		if len(checks[e.ID]) == 0 && !e.Blocking && !d.looked(*e) {
			// Nobody was asked about it and nobody who could see it again
			// looked: it stays as it was, listed as still open.
			round = append(round, Merged{ID: e.ID, Status: e.Status, Kept: true, PreExisting: e.PreExisting, Reviewers: e.Reviewers,
				Finding: Finding{Severity: e.Severity, Confidence: e.Confidence, Category: e.Category, Rule: e.Rule, File: e.File,
					Line: e.Line, EndLine: e.EndLine, Title: e.Title, Description: notLooked}})
			continue
		}
		status, who := settle(*e, checks[e.ID])
		if status != StatusOpen {
			e.Status = status
			continue
		}
		desc := stillOpen(*e, who, reports)
		if len(who) == 0 {
			// A blocking finding nobody gave a verdict on (its reviewers
			// failed this round) stays with the reviewers it had.
			who = e.Reviewers
		}
		e.Last, e.Reviewers = p.Iteration, who
		round = append(round, Merged{ID: e.ID, Status: e.Status, Kept: true, Blocking: e.Blocking, PreExisting: e.PreExisting, Reviewers: who,
			Finding: Finding{Severity: e.Severity, Confidence: e.Confidence, Category: e.Category, Rule: e.Rule, File: e.File,
				Line: e.Line, EndLine: e.EndLine, Title: e.Title, Description: desc}})
	}
	slices.SortFunc(round, func(a, b Merged) int { return cmp.Compare(a.ID, b.ID) })
	if testHookCompared != nil {
		testHookCompared(compared)
	}
	return Round{Ledger: next, Findings: round, Dropped: len(dropped)}
}

// notLooked is the description of an open finding a focused round did not
// look at (verdict.json lists it as kept).
const notLooked = "Still open: this round reviewed the fixer's work, and none of its reviewers was asked about this finding. Its description is in the verdict.json of the round that last raised it."

// fixChecks gathers a round's fix checks: finding id → reviewer → answer.
func fixChecks(reports []Report) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, r := range reports {
		for _, fc := range r.FixChecks {
			if out[fc.ID] == nil {
				out[fc.ID] = map[string]string{}
			}
			out[fc.ID][r.Reviewer] = fc.Status
		}
	}
	return out
}

// settle decides an open finding nobody raised again this round from its
// reviewers' fix checks: open while any says not_fixed or partially_fixed
// (who lists them); else withdrawn when any withdrew it (or said fixed of
// one the fixer disputed or deferred), resolved when one says fixed.
// Without any answer a blocking finding stays open (who is empty) — only a
// verdict lets it go — and a non-blocking one is resolved.
func settle(e Entry, checks map[string]string) (status string, who []string) {
	withdrawn, fixed := false, false
	for _, name := range slices.Sorted(maps.Keys(checks)) {
		switch checks[name] {
		case CheckWithdrawn:
			withdrawn = true
		case CheckFixed:
			fixed = true
		default:
			who = append(who, name)
		}
	}
	switch {
	case len(who) > 0:
		return StatusOpen, who
	case withdrawn || (fixed && (e.Claim == "disputed" || e.Claim == "deferred")):
		// The fixer changed nothing for a disputed or deferred finding: its
		// reviewers letting it go accept the dispute, whatever word they use.
		return StatusWithdrawn, nil
	case fixed || !e.Blocking:
		return StatusResolved, nil
	}
	return StatusOpen, nil
}

// stillOpen says why a finding nobody raised again is still open: the
// fixer's word and each keeping reviewer's answer (who), or that no
// reviewer answered.
func stillOpen(e Entry, who []string, reports []Report) string {
	why := "Not raised again, but still open"
	if e.Claim != "" {
		why += " after the fixer's " + e.Claim
		if e.ClaimNote != "" {
			why += " (" + e.ClaimNote + ")"
		}
	}
	var answers []string
	for _, r := range reports {
		for _, fc := range r.FixChecks {
			if fc.ID == e.ID && slices.Contains(who, r.Reviewer) {
				a := r.Reviewer + " answered " + fc.Status
				if fc.Note != "" {
					a += " (" + fc.Note + ")"
				}
				answers = append(answers, a)
			}
		}
	}
	if len(answers) == 0 {
		answers = []string{"no reviewer that raised it gave a verdict on it this round"}
	}
	return why + ": " + strings.Join(answers, "; ") + ". Its description is in the verdict.json of the round that last raised it."
}

// mostSevereGroups keeps the n most severe groups, then the most confident,
// and returns them and the rest, each in the order given.
func mostSevereGroups(groups []*group, n int) (kept, dropped []*group) {
	if len(groups) <= n {
		return groups, nil
	}
	order := make([]int, len(groups))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(SeverityRank(groups[a].rep.Severity), SeverityRank(groups[b].rep.Severity)),
			cmp.Compare(groups[b].rep.Confidence, groups[a].rep.Confidence))
	})
	keep := make([]bool, len(groups))
	for _, i := range order[:n] {
		keep[i] = true
	}
	for i, g := range groups {
		if keep[i] {
			kept = append(kept, g)
		} else {
			dropped = append(dropped, g)
		}
	}
	return kept, dropped
}

// cluster folds the sightings of one round into groups. It compares only
// findings of the same file whose lines lie within PreExistingMargin of each
// other (a sweep over the findings sorted by line, at most maxNeighbours
// ahead), plus findings naming the same prior, and joins them with a
// union-find, so the result is the same whatever order the reports and their
// findings came in. It returns the groups and how many pairs it compared.
func cluster(reports []Report, tok *tokens) ([]*group, int) {
	var all []*sighting
	for _, r := range reports {
		for _, f := range r.Findings {
			if f.EndLine < f.Line {
				f.EndLine = f.Line
			}
			all = append(all, &sighting{f: f, reviewer: r.Reviewer})
		}
	}
	slices.SortFunc(all, func(a, b *sighting) int {
		return cmp.Or(cmp.Compare(a.f.File, b.f.File), cmp.Compare(a.f.Line, b.f.Line), cmp.Compare(a.f.EndLine, b.f.EndLine),
			cmp.Compare(SeverityRank(a.f.Severity), SeverityRank(b.f.Severity)), cmp.Compare(b.f.Confidence, a.f.Confidence),
			cmp.Compare(a.f.Title, b.f.Title), cmp.Compare(a.reviewer, b.reviewer), cmp.Compare(a.f.Category, b.f.Category),
			cmp.Compare(a.f.Rule, b.f.Rule), cmp.Compare(a.f.Prior, b.f.Prior), cmp.Compare(a.f.Description, b.f.Description))
	})
	// Words are interned after sorting, so token ids do not depend on the
	// order the reports came in either.
	for _, s := range all {
		s.words = tok.set(s.f.Title)
	}
	parent := make([]int, len(all))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
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
	compared := 0
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
		for j := i + 1; j < len(all) && j <= i+maxNeighbours && all[j].f.File == s.f.File && all[j].f.Line <= end+PreExistingMargin; j++ {
			compared++
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
	return groups, compared
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
	if ta, tb := a.Category == TestsCategory, b.Category == TestsCategory; ta != tb {
		return tb // the bug, not its missing test, speaks for the group (Policy.Blocks)
	}
	return a.Confidence > b.Confidence
}

// nearLedger is how far a finding may be from a ledger entry's (moved)
// lines and still be its sighting, given a similar title or the same rule.
const nearLedger = 10

// farSimilarity is how similar a title must be to a ledger entry's for a
// finding anywhere else in its file to be a new sighting of it.
const farSimilarity = 0.6

// wideSpan is the longest range of lines the ledger index finds by its
// start; entries spanning more are kept aside and are candidates for every
// sighting of their file.
const wideSpan = 50

// ledgerIndex finds, for a sighting, the ledger entries that can be its
// earlier sightings: those of its file near its lines, and those whose title
// may be similar enough to match from anywhere in the file.
type ledgerIndex struct {
	ledger   []Entry
	files    map[string]*fileIndex
	wordings [][][]int32 // ledger index → the word set of each title it was seen under
	rank     []int32     // token → its place in the rarest-first order of words
	stamp    []int       // per entry: the probe that last returned it
	probe    int
}

// fileIndex is the ledger entries of one file, by line and by title word.
type fileIndex struct {
	byLine []int // entries spanning at most wideSpan lines, by first line
	wide   []int
	byWord map[int32][]int // word → entries with it in a wording's prefix, in ledger order
}

// newLedgerIndex indexes the ledger. Every sighting's title must be in tok
// already: the rarest-first order covers the words known when it is built.
func newLedgerIndex(ledger []Entry, tok *tokens) *ledgerIndex {
	lx := &ledgerIndex{ledger: ledger, files: map[string]*fileIndex{},
		wordings: make([][][]int32, len(ledger)), stamp: make([]int, len(ledger))}
	for i, e := range ledger {
		ws := [][]int32{tok.set(e.Title)}
		for _, t := range e.Titles {
			if t == e.Title {
				ws = append(ws, ws[0]) // the same words: tokenised once
				continue
			}
			ws = append(ws, tok.set(t))
		}
		lx.wordings[i] = ws
	}
	// Rarest first: by how many wordings hold the word, then by the word,
	// so the order is the same whatever order the titles came in.
	df := make([]int, len(tok.names))
	for _, ws := range lx.wordings {
		for _, w := range ws {
			for _, t := range w {
				df[t]++
			}
		}
	}
	order := make([]int32, len(tok.names))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		return cmp.Or(cmp.Compare(df[a], df[b]), cmp.Compare(tok.names[a], tok.names[b]))
	})
	lx.rank = make([]int32, len(order))
	for r, t := range order {
		lx.rank[t] = int32(r)
	}
	for i, e := range ledger {
		ix := lx.files[e.File]
		if ix == nil {
			ix = &fileIndex{byWord: map[int32][]int{}}
			lx.files[e.File] = ix
		}
		for k, w := range lx.wordings[i] {
			if k > 0 && len(w) > 0 && len(lx.wordings[i][0]) > 0 && &w[0] == &lx.wordings[i][0][0] {
				continue // the title's words again (newLedgerIndex shares them)
			}
			for _, t := range lx.prefix(w) {
				if p := ix.byWord[t]; len(p) == 0 || p[len(p)-1] != i {
					ix.byWord[t] = append(p, i)
				}
			}
		}
		if max(e.EndLine, e.Line)-e.Line > wideSpan {
			ix.wide = append(ix.wide, i)
		} else {
			ix.byLine = append(ix.byLine, i)
		}
	}
	for _, ix := range lx.files {
		slices.SortStableFunc(ix.byLine, func(a, b int) int { return cmp.Compare(ledger[a].Line, ledger[b].Line) })
	}
	return lx
}

// prefix returns the rarest words of a set, as many as it takes to share
// one with every set at least farSimilarity similar to it (prefix
// filtering): such a set lacks at most a (1-farSimilarity) share of its
// words, and the prefixes of two such sets, cut in the same order, meet.
func (lx *ledgerIndex) prefix(words []int32) []int32 {
	if len(words) == 0 {
		return nil
	}
	w := slices.Clone(words)
	slices.SortFunc(w, func(a, b int32) int { return cmp.Compare(lx.rank[a], lx.rank[b]) })
	return w[:len(w)-int(math.Ceil(farSimilarity*float64(len(w))))+1]
}

// candidates returns the untaken entries of m's file that may be its
// earlier sightings: up to maxNear near its lines, nearest first; up to
// maxNear spanning many lines; and up to maxFar whose titles share a word
// of their prefix with m's. Each source looks at no more than twice its
// limit, taken entries included.
func (lx *ledgerIndex) candidates(m *sighting, taken []bool) []int {
	ix := lx.files[m.f.File]
	if ix == nil {
		return nil
	}
	lx.probe++
	var out []int
	add := func(i int) bool {
		if taken[i] || lx.stamp[i] == lx.probe {
			return false
		}
		lx.stamp[i] = lx.probe
		out = append(out, i)
		return true
	}
	// Near: walk out from m's first line in both directions.
	lines := ix.byLine
	lo := lx.lineAt(lines, m.f.Line) - 1
	hi := lo + 1
	from, to := m.f.Line-nearLedger-wideSpan, m.f.EndLine+nearLedger
	for n, steps := 0, 0; n < maxNear && steps < 2*maxNear; steps++ {
		up := hi < len(lines) && lx.ledger[lines[hi]].Line <= to
		down := lo >= 0 && lx.ledger[lines[lo]].Line >= from
		if !up && !down {
			break
		}
		if up && (!down || lx.ledger[lines[hi]].Line-m.f.Line <= m.f.Line-lx.ledger[lines[lo]].Line) {
			if add(lines[hi]) {
				n++
			}
			hi++
		} else {
			if add(lines[lo]) {
				n++
			}
			lo--
		}
	}
	for n, k := 0, 0; k < min(len(ix.wide), 2*maxNear) && n < maxNear; k++ {
		if add(ix.wide[k]) {
			n++
		}
	}
	if m.prefix == nil {
		m.prefix = lx.prefix(m.words)
	}
	n, steps := 0, 0
	for _, w := range m.prefix {
		for _, i := range ix.byWord[w] {
			if n >= maxFar || steps >= 2*maxFar {
				return out
			}
			steps++
			if add(i) {
				n++
			}
		}
	}
	return out
}

// lineAt returns the position of the first entry of lines starting at or
// after line.
func (lx *ledgerIndex) lineAt(lines []int, line int) int {
	pos, _ := slices.BinarySearchFunc(lines, line, func(i, line int) int {
		return cmp.Or(cmp.Compare(lx.ledger[i].Line, line), 1)
	})
	return pos
}

// match assigns each group the ledger entry it is a new sighting of, or -1,
// and marks that entry taken: first the entry a member names as prior, then,
// best score first, an untaken entry of the same file whose lines are near
// and whose title (any of its wordings) is similar, or whose rule key is the
// same. Scoring every candidate pair before assigning makes the result
// independent of order. compared counts the pairs scored.
func (lx *ledgerIndex) match(groups []*group, taken []bool, compared *int) []int {
	out := make([]int, len(groups))
	byID := make(map[string]int, len(lx.ledger))
	for i, e := range lx.ledger {
		byID[e.ID] = i
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
	best := map[int]float64{} // entry → best score of the group at hand
	for gi, g := range groups {
		if out[gi] >= 0 {
			continue
		}
		clear(best)
		for _, m := range g.members {
			for _, i := range lx.candidates(m, taken) {
				*compared++
				if s := score(lx.ledger[i], lx.wordings[i], m); s > best[i] {
					best[i] = s
				}
			}
		}
		for i, s := range best {
			pairs = append(pairs, pair{gi, i, s})
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

// score rates how likely a sighting is a new sighting of a ledger entry,
// whose wordings are given as word sets: 0 for not at all, otherwise higher
// for more similar titles and nearer lines.
func score(e Entry, ew [][]int32, m *sighting) float64 {
	dist := distance(m.f, Finding{Line: e.Line, EndLine: e.EndLine})
	sim := 0.0
	for _, w := range ew {
		sim = max(sim, similarity(m.words, w))
	}
	ok := sim >= farSimilarity ||
		(dist <= nearLedger && sim >= 0.3) ||
		(dist <= PreExistingMargin && sim >= 0.2) ||
		(dist <= nearLedger && m.f.Rule != "" && strings.EqualFold(m.f.Rule, e.Rule))
	if !ok {
		return 0
	}
	return 1 + sim - float64(min(dist, 1000))/1000
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

// tokens interns the words of titles as small integers, so word sets are
// sorted integer slices that similarity compares in linear time.
type tokens struct {
	ids   map[string]int32
	names []string
	buf   []byte           // the word being read
	words map[string]int32 // a lower-case word read before → its token, -1 for a stop word
}

// set returns the distinct stemmed lower-case words of a title, without
// stop words, as a sorted set of token ids.
// It lower-cases and splits as strings.FieldsFunc(strings.ToLower(s), not
// a letter or digit) does, in one pass into t.buf, and looks each word up
// once: only a word not seen before is copied and stemmed (the ledger
// index tokenises every wording of a run).
func (t *tokens) set(s string) []int32 {
	var out []int32
	if t.words == nil {
		t.words = map[string]int32{}
	}
	word := func() {
		if len(t.buf) == 0 {
			return
		}
		id, ok := t.words[string(t.buf)]
		if !ok {
			id = t.intern(string(t.buf))
		}
		if id >= 0 {
			out = append(out, id)
		}
		t.buf = t.buf[:0]
	}
	for _, r := range s {
		if r < utf8.RuneSelf {
			if 'A' <= r && r <= 'Z' {
				r += 'a' - 'A'
			}
		} else {
			r = unicode.ToLower(r)
		}
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			word()
			continue
		}
		t.buf = utf8.AppendRune(t.buf, r)
	}
	word()
	slices.Sort(out)
	return slices.Compact(out)
}

// intern gives a lower-case word's token: its stem's, or -1 for a stop
// word.
func (t *tokens) intern(w string) int32 {
	id := int32(-1)
	if !stop[w] {
		s := stem(w)
		var ok bool
		if id, ok = t.ids[s]; !ok {
			id = int32(len(t.names))
			t.ids[s] = id
			t.names = append(t.names, s)
		}
	}
	t.words[w] = id
	return id
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
func similarity(a, b []int32) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	common, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			common++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(common) / float64(len(a)+len(b)-common)
}
