package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/whetstone-dev/whetstone/internal/loop"
	"github.com/whetstone-dev/whetstone/internal/review"
)

// TestLedgerMovesWithTheState: the ledger a state names is the one a hook
// reads; a ledger written by an update whose state never landed (a crash
// in between) is ignored and cleared by the next one; and an older ledger
// put back under the current name does not verify.
func TestLedgerMovesWithTheState(t *testing.T) {
	const id = "sess-l-1"
	proj, a := ledgerRun(t, id)
	dir := proj.runDir(id)
	first, err := os.ReadFile(filepath.Join(dir, "ledger-1.json"))
	if err != nil {
		t.Fatalf("the first ledger: %v", err)
	}

	// A crash after writing the next ledger, before the state: a file no
	// state names.
	orphan := filepath.Join(dir, "ledger-2.json")
	if err := os.WriteFile(orphan, []byte("half a ledger"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A bookkeeping update, then one that changes the ledger.
	if _, err := a.note(proj, id, func(r *loop.Run) error { r.StopBlocks++; return nil }); err != nil {
		t.Fatal(err)
	}
	entry := review.Entry{ID: "F-0001", File: "a.go", Line: 3, Title: "kept"}
	got, err := a.Update(proj, id, func(r *loop.Run) error {
		if err := proj.LoadCold(r); err != nil {
			return err
		}
		r.Findings = append(r.Findings, entry)
		return nil
	})
	if err != nil {
		t.Fatalf("an update over the orphan: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "ledger*"))
	want := filepath.Join(dir, "ledger-3.json")
	if got.LedgerRev != 3 || len(files) != 1 || files[0] != want {
		t.Fatalf("ledger_rev %d, files %v; want only %s", got.LedgerRev, files, want)
	}
	back, err := proj.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := proj.LoadCold(back); err != nil || len(back.Findings) != 1 || back.Findings[0].Title != "kept" {
		t.Fatalf("reloaded ledger: %v, %+v", err, back.Findings)
	}

	// The first ledger, sealed and genuine, put back under the current
	// name: a rollback of the findings, refused.
	if err := os.WriteFile(want, first, 0o644); err != nil {
		t.Fatal(err)
	}
	back, _ = proj.Load(id)
	if err := proj.LoadCold(back); err == nil || !strings.Contains(err.Error(), "ledger") {
		t.Fatalf("an older ledger under the current name loaded: err %v, %d findings", err, len(back.Findings))
	}

	// A state that does not verify ends the run as error; the ledgers are
	// kept aside with it, not overwritten by the error record's own.
	if err := os.WriteFile(filepath.Join(dir, "state.json"), []byte("{forged"), 0o644); err != nil {
		t.Fatal(err)
	}
	a.fail(context.Background(), proj, id, errors.New("forged"))
	if _, err := a.Update(proj, id, func(r *loop.Run) error { r.Tokens++; return nil }); err != nil {
		t.Fatal(err)
	}
	aside, _ := filepath.Glob(filepath.Join(dir, "ledger-3.json.unverified-*"))
	if len(aside) != 1 {
		t.Errorf("the ledger kept aside: %v", aside)
	}
	if back, err = proj.Load(id); err != nil || back.StopReason != "error" {
		t.Fatalf("after a corrupt state: %v, %+v", err, back)
	}
}

// TestDecodeSettled: a segment read with gjson gives what encoding/json
// gives, for every field of an entry, empty and null lists included.
func TestDecodeSettled(t *testing.T) {
	in := []review.Entry{
		{ID: "F-0001", Status: review.StatusResolved, Severity: "high", Confidence: 90, Category: "correctness", Rule: "go/err",
			File: "a \"quoted\" \\ path.go", Line: 3, EndLine: 9, Title: "ünïcode \u2028 title", Titles: []string{"one", "two"},
			Reviewers: []string{"critic", "pedant"}, Blocking: true, PreExisting: true, First: 1, Last: 4, Claim: "fixed",
			ClaimNote: "done\nnow", Reopens: 2},
		{ID: "F-0002", Status: review.StatusWithdrawn, Reviewers: []string{}},
		{ID: "F-0003", Status: review.StatusDisproved},
	}
	// The first entry sets every field: a field added to review.Entry and
	// not to decodeSettled's switch fails here.
	full := reflect.ValueOf(in[0])
	for i := range full.NumField() {
		if full.Field(i).IsZero() {
			t.Fatalf("the test's first entry leaves review.Entry.%s unset; set it (and decode it in decodeSettled)", full.Type().Field(i).Name)
		}
	}
	data, err := json.Marshal(segment{Version: ledgerVersion, Findings: in})
	if err != nil {
		t.Fatal(err)
	}
	var want segment
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	got := map[string]review.Entry{}
	if err := decodeSettled(data, interner{}, func(e review.Entry) { got[e.ID] = e }); err != nil {
		t.Fatal(err)
	}
	for _, e := range want.Findings {
		if !reflect.DeepEqual(got[e.ID], e) {
			t.Errorf("%s: got %+v, want %+v", e.ID, got[e.ID], e)
		}
	}
	for _, bad := range []string{`{"findings":[1]}`, `{"findings":{}}`, `{"findings":[`} {
		if err := decodeSettled([]byte(bad), interner{}, func(review.Entry) {}); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}

// TestLedgerSegments: a finding that settles goes to a segment written
// once; a later update rewrites the head only; a finding reopened moves
// back to the head; the ledger reads back the same; a ledger of a newer
// format is refused with a clear error.
func TestLedgerSegments(t *testing.T) {
	const id = "sess-s-1"
	proj, a := ledgerRun(t, id)
	dir := proj.runDir(id)
	update := func(fn func(r *loop.Run)) *loop.Run {
		t.Helper()
		got, err := a.Update(proj, id, func(r *loop.Run) error {
			if err := proj.LoadCold(r); err != nil {
				return err
			}
			fn(r)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	update(func(r *loop.Run) {
		r.Findings = append(r.Findings,
			review.Entry{ID: "F-0001", Status: review.StatusResolved, File: "a.go", Line: 3, Title: "settled"},
			review.Entry{ID: "F-0002", Status: review.StatusOpen, File: "a.go", Line: 9, Title: "open"})
	})
	segments := func() []string {
		files, _ := filepath.Glob(filepath.Join(dir, "ledger-*.settled.json"))
		return files
	}
	first := segments()
	if len(first) != 1 {
		t.Fatalf("segments after a finding settled: %v", first)
	}
	before, _ := os.ReadFile(first[0])
	update(func(r *loop.Run) { r.Findings[1].Last = 2 }) // the open one changes
	if got := segments(); !slices.Equal(got, first) {
		t.Fatalf("a change to an open finding wrote a segment: %v", got)
	}
	if after, _ := os.ReadFile(first[0]); !bytes.Equal(before, after) {
		t.Fatal("a segment was rewritten")
	}
	update(func(r *loop.Run) { r.Findings[0].Status, r.Findings[0].Reopens = review.StatusReopened, 1 })
	back, err := proj.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := proj.LoadCold(back); err != nil {
		t.Fatal(err)
	}
	want := []review.Entry{
		{ID: "F-0001", Status: review.StatusReopened, File: "a.go", Line: 3, Title: "settled", Reopens: 1},
		{ID: "F-0002", Status: review.StatusOpen, File: "a.go", Line: 9, Title: "open", Last: 2},
	}
	if !reflect.DeepEqual(back.Findings, want) {
		t.Fatalf("ledger read back:\n%+v\nwant\n%+v", back.Findings, want)
	}

	// A head from a newer whetstone: refused, saying so.
	path := proj.ledgerPath(id, back.LedgerRev)
	if err := proj.writeSealed(path, kindLedger, []byte(`{"version":3,"findings":[],"history":[]}`)); err != nil {
		t.Fatal(err)
	}
	back, _ = proj.Load(id)
	if err := proj.LoadCold(back); !errors.Is(err, loop.ErrNewerVersion) || !strings.Contains(err.Error(), "upgrade whetstone") {
		t.Fatalf("a newer ledger: %v", err)
	}
}

// TestLedgerSweepKeepsWhatIsNotItsOwn: the sweep (after the lock) removes
// only files older than the revision its update wrote, never a later
// hook's; and a ledger that cannot be read starts again with its segments
// kept aside, not swept away with the settled findings in them.
func TestLedgerSweepKeepsWhatIsNotItsOwn(t *testing.T) {
	const id = "sess-w-1"
	proj, a := ledgerRun(t, id)
	dir := proj.runDir(id)
	got, err := a.Update(proj, id, func(r *loop.Run) error {
		if err := proj.LoadCold(r); err != nil {
			return err
		}
		r.Findings = append(r.Findings, review.Entry{ID: "F-0001", Status: review.StatusResolved, File: "a.go", Line: 3, Title: "settled"})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// Files a later hook wrote after this one released the lock.
	later := []string{fmt.Sprintf("ledger-%d.json", got.LedgerRev+1), fmt.Sprintf("ledger-%d.settled.json", got.LedgerRev+1)}
	for _, n := range later {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	proj.sweepLedgers(got)
	for _, n := range later {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("the sweep removed a later hook's %s: %v", n, err)
		}
	}
	for _, n := range later {
		os.Remove(filepath.Join(dir, n))
	}

	// The head is lost; the next update that adds history starts again.
	segs, _ := filepath.Glob(filepath.Join(dir, "ledger-*.settled.json"))
	if len(segs) != 1 {
		t.Fatalf("segments: %v", segs)
	}
	if err := os.Remove(proj.ledgerPath(id, got.LedgerRev)); err != nil {
		t.Fatal(err)
	}
	setArchive(proj.ledgerPath(id, got.LedgerRev), nil) // another process: nothing cached
	if _, err := a.Update(proj, id, func(r *loop.Run) error {
		r.History = append(r.History, loop.Step{At: a.Now(), Iteration: 1, Phase: r.Phase, Note: "a step"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(segs[0]); err == nil {
		t.Fatalf("%s is still named as a segment after its head was lost", segs[0])
	}
	if aside, _ := filepath.Glob(segs[0] + ".unreadable-*"); len(aside) != 1 {
		t.Errorf("the lost head's segment was not kept aside: %v", aside)
	}
}

// ledgerRun is a project holding one saved run, id, with its first
// ledger, and the App that wrote it.
func ledgerRun(t *testing.T, id string) (Project, *App) {
	t.Helper()
	proj := Project{Root: t.TempDir(), Key: bytes.Repeat([]byte{7}, 32)}
	a := &App{Now: func() time.Time { return time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC) }, Getenv: func(string) string { return "" }, Log: os.Stderr}
	r := loop.New(id, strings.TrimSuffix(id, "-1"), loop.Settings{Depth: "standard"}, []string{"critic"}, a.Now())
	if _, err := proj.saveCold(r, a.Now()); err != nil {
		t.Fatal(err)
	}
	data, err := r.Encode(a.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := proj.store(id).Update(func([]byte) ([]byte, error) { return data, nil }); err != nil {
		t.Fatal(err)
	}
	return proj, a
}

// TestEntryPrintSeesEveryField: changing any one field of a finding
// changes its fingerprint, so a settled finding changed only there is
// written to a new segment (a field added to review.Entry must be added
// to entryPrint too).
func TestEntryPrintSeesEveryField(t *testing.T) {
	base := review.Entry{ID: "F-0001", Status: review.StatusResolved, Severity: "high", Confidence: 80, Category: "correctness",
		Rule: "r", File: "a.go", Line: 3, EndLine: 4, Title: "t", Titles: []string{"t"}, Reviewers: []string{"critic"},
		First: 1, Last: 2, Claim: "fixed", ClaimNote: "n", Reopens: 1}
	v := reflect.ValueOf(&base).Elem()
	for i := range v.NumField() {
		changed := base
		changed.Titles, changed.Reviewers = slices.Clone(base.Titles), slices.Clone(base.Reviewers)
		f := reflect.ValueOf(&changed).Elem().Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(f.String() + "x")
		case reflect.Int:
			f.SetInt(f.Int() + 1)
		case reflect.Bool:
			f.SetBool(!f.Bool())
		case reflect.Slice:
			f.Set(reflect.Append(f, reflect.ValueOf("x")))
		default:
			t.Fatalf("field %s of kind %s: teach this test and entryPrint about it", v.Type().Field(i).Name, f.Kind())
		}
		if entryPrint(changed) == entryPrint(base) {
			t.Errorf("changing %s leaves the fingerprint as it was", v.Type().Field(i).Name)
		}
	}
	// Fields run into one another only with their lengths: "ab"+"" is not "a"+"b".
	a, b := base, base
	a.Rule, a.File = "ab", ""
	b.Rule, b.File = "a", "b"
	if entryPrint(a) == entryPrint(b) {
		t.Error("fields that run together give the same fingerprint")
	}
}

// TestInIDOrder: a ledger is put in compareIDs order, by number when its
// ids are F-0001 … F-n each once, and by sorting otherwise.
func TestInIDOrder(t *testing.T) {
	ids := func(es []review.Entry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.ID)
		}
		return out
	}
	for _, in := range [][]string{
		{"F-0003", "F-0001", "F-0004", "F-0002"},
		{"F-0002", "F-0001", "F-10000", "F-0003"}, // a gap
		{"F-0002", "F-0001", "F-0002"},            // twice
		{"F-0002", "F-1", "x", "F-0003"},          // not numbers alike
		{},
	} {
		var es []review.Entry
		for i, id := range in {
			es = append(es, review.Entry{ID: id, Line: i})
		}
		want := slices.Clone(es)
		slices.SortStableFunc(want, func(a, b review.Entry) int { return compareIDs(a.ID, b.ID) })
		inIDOrder(es)
		if !slices.Equal(ids(es), ids(want)) {
			t.Errorf("%v: got %v, want %v", in, ids(es), ids(want))
		}
	}
}

// TestIDNumber: only ids as the merge writes them (F-%04d) have a number.
func TestIDNumber(t *testing.T) {
	for id, want := range map[string]int{"F-0001": 1, "F-0042": 42, "F-9999": 9999, "F-10000": 10000,
		"F-1": -1, "F-00001": -1, "F-01234": -1, "G-0001": -1, "F-00a1": -1, "F-+001": -1, "F-0000000000001": -1, "": -1} {
		n, ok := idNumber(id)
		if !ok {
			n = -1
		}
		if n != want || want == -1 && ok {
			t.Errorf("idNumber(%q) = %d, %v; want %d", id, n, ok, want)
		}
		if ok && fmt.Sprintf("F-%04d", n) != id {
			t.Errorf("idNumber(%q) = %d, which is written %s", id, n, fmt.Sprintf("F-%04d", n))
		}
	}
}
