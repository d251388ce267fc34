package app

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/tidwall/gjson"
	"github.com/whetstone-dev/whetstone/internal/loop"
	"github.com/whetstone-dev/whetstone/internal/review"
	"github.com/whetstone-dev/whetstone/internal/safeio"
	"github.com/whetstone-dev/whetstone/internal/state"
)

// The ledger of a run is kept in two parts, so that concluding a phase
// costs about the same in iteration 20 as in iteration 1:
//
//   - the head, ledger-<rev>.json: the findings still in play (every one
//     not settled), the history, and the list of segments. It is small and
//     rewritten by every update that changes the cold part.
//   - segments, ledger-<rev>.settled.json: findings that were settled
//     (resolved, withdrawn, disproved), appended when they settle and
//     never rewritten. A later segment, and the head, override an earlier
//     copy of the same id (a finding reopened, or whose lines a fix moved).
//
// Both are sealed (kind "ledger" and "ledger-segment") under names that hold
// the revision that wrote them, so neither can be swapped for an older
// genuine one. Format version 1 (one ledger file holding every finding) is
// still read; it is rewritten as version 2 by the next update.

// maxLedger caps a ledger file (head or segment).
const maxLedger = 64 << 20

// ledgerVersion is the format of the ledger files this binary writes.
const ledgerVersion = 2

// Kinds of sealed ledger file.
const (
	kindLedger  = "ledger"
	kindSegment = "ledger-segment"
)

// cold is a ledger head: a run's unsettled findings and history, which only
// the hook that concludes a phase and the reports read (state.json has a
// digest), and the revisions of its segments, oldest first.
type cold struct {
	Version  int            `json:"version,omitempty"` // 0: version 1, every finding here
	Findings []review.Entry `json:"findings"`
	History  []loop.Step    `json:"history"`
	Segments []int          `json:"segments,omitempty"`
}

// segment is a ledger segment: findings as they were when they settled
// (decodeSettled reads it).
type segment struct {
	Version  int            `json:"version"`
	Findings []review.Entry `json:"findings"`
}

// ledgerPath names the ledger head written with state revision rev:
// ledger-<rev>.json (ledger.json for a run begun before ledgers were
// numbered). state.json names its ledger's revision, so the two change
// together: an update writes the new ledger under a new name first, and
// only the state's rename makes it the run's; a crash in between leaves a
// file no state names, which the next update overwrites. The number is also
// in the name the ledger's MAC binds, so an older ledger put back in place
// of the current one does not verify.
func (p Project) ledgerPath(id string, rev int) string {
	if rev == 0 {
		return filepath.Join(p.runDir(id), "ledger.json")
	}
	return filepath.Join(p.runDir(id), fmt.Sprintf("ledger-%d.json", rev))
}

// segmentPath names the segment written with state revision rev.
func (p Project) segmentPath(id string, rev int) string {
	return filepath.Join(p.runDir(id), fmt.Sprintf("ledger-%d.settled.json", rev))
}

// archive is what a process knows of a ledger head it read or wrote: its
// segments and a fingerprint of the latest copy of each finding in them
// (entryPrint), so that the next save writes only what changed. It is
// keyed by the head's path.
type archive struct {
	segments []int
	settled  map[string]uint64
}

// printSeed seeds the fingerprints of one process.
var printSeed = maphash.MakeSeed()

// entryPrint fingerprints every field of a finding. Two copies with the
// same fingerprint are taken to be the same: the seed is random per
// process and never leaves it, so a collision (odds 2^-64 per finding
// saved) cannot be aimed at.
func entryPrint(e review.Entry) uint64 {
	var buf [512]byte
	b := buf[:0]
	for _, s := range [...]string{e.ID, e.Status, e.Severity, e.Category, e.Rule, e.File, e.Title, e.Claim, e.ClaimNote} {
		b = appendField(b, s)
	}
	for _, list := range [...][]string{e.Titles, e.Reviewers} {
		b = binary.LittleEndian.AppendUint64(b, uint64(len(list)))
		for _, s := range list {
			b = appendField(b, s)
		}
	}
	for _, n := range [...]int{e.Confidence, e.Line, e.EndLine, e.First, e.Last, e.Reopens} {
		b = binary.LittleEndian.AppendUint64(b, uint64(n))
	}
	for _, v := range [...]bool{e.Blocking, e.PreExisting} {
		if v {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	return maphash.Bytes(printSeed, b)
}

// appendField appends a string after its length, so that no two fields
// run together.
func appendField(b []byte, s string) []byte {
	return append(binary.LittleEndian.AppendUint64(b, uint64(len(s))), s...)
}

var (
	archivesMu sync.Mutex
	archives   = map[string]*archive{}
)

func archiveOf(path string) *archive {
	archivesMu.Lock()
	defer archivesMu.Unlock()
	return archives[path]
}

func setArchive(path string, a *archive) {
	archivesMu.Lock()
	defer archivesMu.Unlock()
	archives[path] = a
}

// readSealedFile reads and verifies one of a run's sealed files.
func (p Project) readSealedFile(path, kind string, limit int64) ([]byte, error) {
	if err := safeio.NoSymlinks(p.Root, filepath.Dir(path)); err != nil {
		return nil, err
	}
	return p.readSealedIn(path, kind, limit)
}

// readSealedIn is readSealedFile for a file of a directory just checked
// (the segments, in the directory of the head read before them): only a
// symlink as the file itself is refused.
func (p Project) readSealedIn(path, kind string, limit int64) ([]byte, error) {
	data, err := safeio.ReadFile(path, limit, true)
	if err != nil {
		return nil, err
	}
	name, err := state.Name(p.Root, path)
	if err != nil {
		return nil, err
	}
	return state.Open(p.Key, kind, name, data)
}

// maxPlacedIDs caps the ids a ledger load places by number (a ledger holds
// a few thousand findings at most).
const maxPlacedIDs = 1 << 16

// LoadCold gives r its ledger and history, verified. Steps r added before
// loading stay last.
func (p Project) LoadCold(r *loop.Run) error {
	if r.ColdLoaded() {
		return nil
	}
	var c cold
	path := p.ledgerPath(r.ID, r.LedgerRev)
	data, err := p.readSealedFile(path, kindLedger, maxLedger)
	switch {
	case errors.Is(err, fs.ErrNotExist) && r.LedgerRev == 0:
	case err != nil:
		return err
	default:
		if v := ledgerVersionOf(data); v > ledgerVersion {
			return fmt.Errorf("%s: %w (ledger version %d; this binary reads version %d): upgrade whetstone", path, loop.ErrNewerVersion, v, ledgerVersion)
		}
		if err := json.Unmarshal(data, &c); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	ar := &archive{segments: c.Segments, settled: map[string]uint64{}}
	findings := c.Findings
	if len(c.Segments) > 0 {
		// The segments' findings, each id's latest copy, then the head's
		// over them; the ledger is in id order.
		// With room for a round's new findings: the merge adds them in
		// place (review.MergeRoundOwned).
		// Capped: ids past the cap go to the map, so a stray last_id
		// costs no memory.
		n := min(max(r.Digest.LastID, len(c.Findings)), maxPlacedIDs)
		findings = make([]review.Entry, 0, n+review.MaxRoundFindings)
		// Where each id is in findings: F-<n> by its number, plus one
		// (0: not yet), any other id in a map.
		byNum := make([]int32, n+1)
		other := map[string]int32{}
		add := func(e review.Entry) {
			var at int32
			n, ok := idNumber(e.ID)
			if ok && n < len(byNum) {
				at = byNum[n]
			} else {
				at = other[e.ID]
			}
			if at > 0 {
				findings[at-1] = e
				return
			}
			findings = append(findings, e)
			if ok && n < len(byNum) {
				byNum[n] = int32(len(findings))
			} else {
				other[e.ID] = int32(len(findings))
			}
		}
		in := interner{}
		for _, rev := range c.Segments {
			spath := p.segmentPath(r.ID, rev)
			data, err := p.readSealedIn(spath, kindSegment, maxLedger)
			if err != nil {
				return fmt.Errorf("ledger segment: %w", err)
			}
			if v := ledgerVersionOf(data); v > ledgerVersion {
				return fmt.Errorf("%s: %w (ledger version %d; this binary reads version %d): upgrade whetstone", spath, loop.ErrNewerVersion, v, ledgerVersion)
			}
			err = decodeSettled(data, in, func(e review.Entry) {
				ar.settled[e.ID] = entryPrint(e)
				add(e)
			})
			if err != nil {
				return fmt.Errorf("%s: %w", spath, err)
			}
		}
		for _, e := range c.Findings {
			add(e)
		}
		inIDOrder(findings)
	}
	setArchive(path, ar)
	r.LoadCold(findings, append(c.History, r.History...))
	return nil
}

// ledgerVersionOf peeks at a ledger head's version without decoding it.
func ledgerVersionOf(data []byte) int64 {
	return gjson.GetBytes(data, "version").Int()
}

// inIDOrder sorts a ledger by id (compareIDs). Ids are F-0001 up, one per
// finding, so each usually has its place by its number alone; any other
// set of ids (a gap, a number twice) is sorted.
func inIDOrder(findings []review.Entry) {
	place := make([]int32, len(findings)) // findings[i] goes to place[i]
	seen := make([]bool, len(findings))
	for i, e := range findings {
		n, ok := idNumber(e.ID)
		if !ok || n < 1 || n > len(findings) || seen[n-1] {
			slices.SortFunc(findings, func(a, b review.Entry) int { return compareIDs(a.ID, b.ID) })
			return
		}
		seen[n-1], place[i] = true, int32(n-1)
	}
	for i := range findings {
		for int(place[i]) != i {
			j := place[i]
			findings[i], findings[j] = findings[j], findings[i]
			place[i], place[j] = place[j], place[i]
		}
	}
}

// interner shares one copy of the strings a ledger repeats (statuses,
// severities, categories, files, reviewers, claims).
type interner map[string]string

func (in interner) get(s string) string {
	if t, ok := in[s]; ok {
		return t
	}
	t := strings.Clone(s)
	in[t] = t
	return t
}

// decodeSettled passes a segment's findings to add, in order. A segment
// is sealed and written by whetstone, so its shape is known: it is read in
// one pass with gjson rather than by reflection, which is most of a large
// ledger's load (TestDecodeSettled checks it against encoding/json). The
// findings' strings are copies, the repeated ones shared through in, so
// that data is not kept.
func decodeSettled(data []byte, in interner, add func(review.Entry)) error {
	if !gjson.ValidBytes(data) {
		return errors.New("not valid JSON")
	}
	findings := gjson.Get(unsafe.String(unsafe.SliceData(data), len(data)), "findings")
	if !findings.IsArray() {
		return errors.New("no findings array")
	}
	strs := func(v gjson.Result, str func(string) string) []string {
		if !v.IsArray() {
			return nil
		}
		out := []string{}
		v.ForEach(func(_, x gjson.Result) bool {
			out = append(out, str(x.Str))
			return true
		})
		return out
	}
	var bad error
	findings.ForEach(func(_, f gjson.Result) bool {
		if !f.IsObject() {
			bad = errors.New("a finding is not an object")
			return false
		}
		var e review.Entry
		var titles gjson.Result
		f.ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case "id":
				e.ID = strings.Clone(v.Str)
			case "status":
				e.Status = in.get(v.Str)
			case "severity":
				e.Severity = in.get(v.Str)
			case "confidence":
				e.Confidence = int(v.Int())
			case "category":
				e.Category = in.get(v.Str)
			case "rule":
				e.Rule = in.get(v.Str)
			case "file":
				e.File = in.get(v.Str)
			case "line":
				e.Line = int(v.Int())
			case "end_line":
				e.EndLine = int(v.Int())
			case "title":
				e.Title = strings.Clone(v.Str)
			case "titles":
				titles = v
			case "reviewers":
				e.Reviewers = strs(v, in.get)
			case "blocking":
				e.Blocking = v.Bool()
			case "pre_existing":
				e.PreExisting = v.Bool()
			case "first_iteration":
				e.First = int(v.Int())
			case "last_iteration":
				e.Last = int(v.Int())
			case "claim":
				e.Claim = in.get(v.Str)
			case "claim_note":
				e.ClaimNote = strings.Clone(v.Str)
			case "reopens":
				e.Reopens = int(v.Int())
			}
			return true
		})
		// A wording is most often the title itself: one copy.
		e.Titles = strs(titles, func(t string) string {
			if t == e.Title {
				return e.Title
			}
			return strings.Clone(t)
		})
		add(e)
		return true
	})
	return bad
}

// idNumber is n for an id F-<n> as the merge writes them (F-%04d).
func idNumber(id string) (int, bool) {
	digits, ok := strings.CutPrefix(id, "F-")
	if !ok || len(digits) < 4 || len(digits) > 9 || len(digits) > 4 && digits[0] == '0' {
		return 0, false
	}
	n := 0
	for _, c := range []byte(digits) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// compareIDs orders finding ids F-0001 … F-9999, F-10000 … by number.
func compareIDs(a, b string) int {
	na, ea := strconv.Atoi(strings.TrimPrefix(a, "F-"))
	nb, eb := strconv.Atoi(strings.TrimPrefix(b, "F-"))
	if ea != nil || eb != nil || na == nb {
		return strings.Compare(a, b)
	}
	return na - nb
}

// settled reports whether a finding is done with: it goes to a segment.
func settled(e review.Entry) bool {
	return e.Status == review.StatusResolved || e.Status == review.StatusWithdrawn || e.Status == review.StatusDisproved
}

// saveCold writes the run's next ledger head when the update changed the
// cold part (a loaded ledger: a phase concluded; or new history steps),
// preceded by a segment of the findings that settled or changed since
// they were archived, and reports whether it did: the head it replaces is
// removed once the state naming the new one is written (sweepLedgers).
func (p Project) saveCold(r *loop.Run, now time.Time) (bool, error) {
	if !r.ColdLoaded() {
		if len(r.History) == 0 {
			return false, nil
		}
		if err := p.LoadCold(r); err != nil {
			// A ledger that cannot be read (forged, a FIFO, too large,
			// missing, a segment lost) is kept aside, and a new one starts
			// with this update's steps.
			path := p.ledgerPath(r.ID, r.LedgerRev)
			aside := fmt.Sprintf("%s.unreadable-%d", path, now.UnixNano())
			if rerr := os.Rename(path, aside); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
				return false, fmt.Errorf("%v; and keeping it aside failed: %w", err, rerr)
			}
			// Its segments go aside with it: the sweep would remove them
			// as no longer named, and they are the settled findings.
			p.segmentsAside(r.ID, now)
			r.LoadCold(nil, r.History)
			setArchive(path, nil)
		}
	}
	old := archiveOf(p.ledgerPath(r.ID, r.LedgerRev))
	if old == nil {
		old = &archive{settled: map[string]uint64{}}
	}
	next := &archive{segments: slices.Clone(old.segments), settled: old.settled}
	head := cold{Version: ledgerVersion, Findings: []review.Entry{}, History: r.History}
	var fresh []review.Entry
	for _, e := range r.Findings {
		switch prev, ok := old.settled[e.ID]; {
		case !settled(e):
			head.Findings = append(head.Findings, e)
		case !ok || prev != entryPrint(e):
			fresh = append(fresh, e)
		}
	}
	rev := r.Revision + 1 // the revision Encode gives the state
	if len(fresh) > 0 {
		data, err := json.Marshal(segment{Version: ledgerVersion, Findings: fresh})
		if err != nil {
			return false, err
		}
		if err := p.writeSealed(p.segmentPath(r.ID, rev), kindSegment, data); err != nil {
			return false, err
		}
		next.settled = make(map[string]uint64, len(old.settled)+len(fresh))
		maps.Copy(next.settled, old.settled)
		for _, e := range fresh {
			next.settled[e.ID] = entryPrint(e)
		}
		next.segments = append(next.segments, rev)
	}
	head.Segments = next.segments
	data, err := json.Marshal(head)
	if err != nil {
		return false, err
	}
	path := p.ledgerPath(r.ID, rev)
	if err := p.writeSealed(path, kindLedger, data); err != nil {
		return false, err
	}
	setArchive(path, next)
	r.LedgerRev = rev
	return true, nil
}

// writeSealed seals data as kind under path's name and writes it.
func (p Project) writeSealed(path, kind string, data []byte) error {
	name, err := state.Name(p.Root, path)
	if err != nil {
		return err
	}
	return state.WriteOwn(p.Root, path, state.Seal(p.Key, kind, name, data))
}

// sweepLedgers removes the run's ledger files other than the head its
// state now names and that head's segments: the head just replaced, and
// any a crash left behind. Only updates that wrote a ledger pay for the
// listing.
func (p Project) sweepLedgers(r *loop.Run) {
	path := p.ledgerPath(r.ID, r.LedgerRev)
	keep := map[string]bool{filepath.Base(path): true}
	ar := archiveOf(path)
	if ar == nil {
		return // not known here: keep everything
	}
	for _, rev := range ar.segments {
		keep[filepath.Base(p.segmentPath(r.ID, rev))] = true
	}
	entries, _ := os.ReadDir(p.runDir(r.ID))
	for _, e := range entries {
		// The sweep runs after the lock is released: a file of a later
		// revision is another hook's, written since, and stays.
		if rev, ok := ledgerRev(e.Name()); ok && rev < r.LedgerRev && !keep[e.Name()] && isLedger(e) {
			_ = os.Remove(filepath.Join(p.runDir(r.ID), e.Name()))
		}
	}
}

// ledgerRev is the revision a ledger file's name carries: ledger.json 0,
// ledger-<rev>.json and ledger-<rev>.settled.json rev.
func ledgerRev(name string) (int, bool) {
	if name == "ledger.json" {
		return 0, true
	}
	s, ok := strings.CutPrefix(name, "ledger-")
	if !ok {
		return 0, false
	}
	if s, ok = strings.CutSuffix(s, ".json"); !ok {
		return 0, false
	}
	rev, err := strconv.Atoi(strings.TrimSuffix(s, ".settled"))
	return rev, err == nil && rev > 0
}

// segmentsAside renames every segment of run id to
// <name>.unreadable-<now>, out of the sweep's way, when its head could
// not be read and the ledger starts again.
func (p Project) segmentsAside(id string, now time.Time) {
	dir := p.runDir(id)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if n := e.Name(); e.Type().IsRegular() && strings.HasPrefix(n, "ledger-") && strings.HasSuffix(n, ".settled.json") {
			path := filepath.Join(dir, n)
			_ = os.Rename(path, fmt.Sprintf("%s.unreadable-%d", path, now.UnixNano()))
		}
	}
}

// isLedger reports whether a run directory's entry is a ledger file (a
// head or a segment).
func isLedger(e fs.DirEntry) bool {
	name := e.Name()
	return e.Type().IsRegular() && (name == "ledger.json" || strings.HasPrefix(name, "ledger-") && strings.HasSuffix(name, ".json"))
}
