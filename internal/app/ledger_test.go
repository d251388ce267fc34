package app

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
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
	root := t.TempDir()
	proj := Project{Root: root, Key: bytes.Repeat([]byte{7}, 32)}
	a := &App{Now: func() time.Time { return time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC) }, Getenv: func(string) string { return "" }, Log: os.Stderr}
	const id = "sess-l-1"
	dir := proj.runDir(id)
	r := loop.New(id, "sess-l", loop.Settings{Depth: "standard"}, []string{"critic"}, a.Now())
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
	a.fail(proj, id, errors.New("forged"))
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
