package loop

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/whetstone-dev/whetstone/internal/review"
)

// TestEveryMoveIsARow drives runs of every depth through random sequences
// of every event kind and checks, after each Apply, that the run moved
// exactly as the row that fired declares: to its next phase, into a new
// iteration only with StartRound, with a verdict only with Judge and a
// stop reason only when it stops; and that an event no row takes changes
// none of these. Every row of the table fires somewhere in the drive.
func TestEveryMoveIsARow(t *testing.T) {
	fired := map[int]bool{}
	for seed := range uint64(400) {
		rng := rand.New(rand.NewPCG(seed, 20))
		s := settings([]string{"quick", "standard", "deep"}[rng.IntN(3)])
		s.MaxIterations = 1 + rng.IntN(4)
		if rng.IntN(3) == 0 {
			s.BudgetMinutes = 3 + rng.IntN(20)
		}
		if rng.IntN(3) == 0 {
			s.BudgetTokens = 1000
		}
		roster := []string{"critic", "pedant"}
		r := New("r-1", "s", s, roster, t0)
		now := t0
		for step := 0; step < 40 && r.Active(); step++ {
			now = now.Add(time.Duration(rng.IntN(4)) * time.Minute)
			e := randomEvent(rng, r, now)
			before := *r
			out := r.Apply(e)
			if err := movedAsDeclared(&before, r, e.Kind, out); err != nil {
				t.Fatalf("seed %d step %d, %s in %s: %v", seed, step, e.Kind, before.Phase, err)
			}
			if out.Fired() {
				fired[rowOf(&before, e.Kind, out.Rule)] = true
			}
		}
	}
	for i, w := range table {
		if !fired[i] {
			t.Errorf("row %d (%s on %s: %s) never fired in the drive", i, cmpPhase(w.phase), w.on, w.rule)
		}
	}
}

func cmpPhase(p Phase) string {
	if p == anyPhase {
		return "any phase"
	}
	return string(p)
}

// rowOf is the index of the row named rule that takes event kind in the
// phase the run was in.
func rowOf(before *Run, kind EventKind, rule Rule) int {
	for i, w := range table {
		if (w.phase == anyPhase || w.phase == before.Phase) && w.on == kind && w.rule == rule {
			return i
		}
	}
	return -1
}

// movedAsDeclared compares a run before and after Apply of an event of
// kind with what the outcome declares.
func movedAsDeclared(before, after *Run, kind EventKind, out Outcome) error {
	if !out.Fired() {
		if out.Effects != 0 || out.Next != anyPhase {
			return fmt.Errorf("no row fired, but the outcome declares %+v", out)
		}
		if after.Phase != before.Phase || after.Iteration != before.Iteration || after.Verdict != before.Verdict || after.StopReason != before.StopReason {
			return fmt.Errorf("no row fired, but the run moved: %s/%d/%q/%q → %s/%d/%q/%q", before.Phase, before.Iteration, before.Verdict, before.StopReason,
				after.Phase, after.Iteration, after.Verdict, after.StopReason)
		}
		return nil
	}
	want := before.Phase
	if out.Next != anyPhase {
		want = out.Next
	}
	if after.Phase != want {
		return fmt.Errorf("row %q declares phase %q; the run is in %q", out.Rule, want, after.Phase)
	}
	iteration := before.Iteration
	if out.Has(StartRound) {
		iteration++
	}
	if after.Iteration != iteration {
		return fmt.Errorf("row %q: iteration %d → %d (StartRound %v)", out.Rule, before.Iteration, after.Iteration, out.Has(StartRound))
	}
	if stopped := out.Next == Stopped; stopped && after.StopReason != string(out.Rule) || !stopped && after.StopReason != "" {
		return fmt.Errorf("row %q (to %q) left the stop reason %q", out.Rule, out.Next, after.StopReason)
	}
	if out.Has(Judge) != (after.Verdict != "") {
		return fmt.Errorf("row %q: Judge %v, verdict %q", out.Rule, out.Has(Judge), after.Verdict)
	}
	if out.Has(Judge) && (after.Rounds == 0 || len(after.RoundFailed) > 0) && after.Verdict != review.RequestChanges && after.Verdict != review.Block {
		return fmt.Errorf("row %q approved (%s) a run with %d rounds, failed reviewers %v", out.Rule, after.Verdict, after.Rounds, after.RoundFailed)
	}
	if out.Has(WriteReport) == after.Active() {
		return fmt.Errorf("row %q: WriteReport %v, run active %v", out.Rule, out.Has(WriteReport), after.Active())
	}
	if out.Has(WriteVerdict) != (kind == ReviewDone) {
		return fmt.Errorf("row %q: WriteVerdict %v on %s", out.Rule, out.Has(WriteVerdict), kind)
	}
	if begins := after.Active() && (after.Phase != before.Phase || after.Iteration != before.Iteration); begins != (out.Has(KeepBaseline) || out.Has(TakeBaseline)) {
		return fmt.Errorf("row %q: a new phase %v, a baseline %v", out.Rule, begins, out.Has(KeepBaseline) || out.Has(TakeBaseline))
	}
	return nil
}

// randomEvent is any event kind, with what the table reads of it: reports
// that block or not, reviewers that fail, a validator that confirms or
// disproves, a fixer that fixes, disputes or fails, tokens spent.
func randomEvent(rng *rand.Rand, r *Run, now time.Time) *Event {
	kinds := []EventKind{ReviewDone, ValidationDone, FixDone, Idle, Tick, Abort, Fail}
	weights := []int{30, 12, 20, 12, 8, 1, 1}
	kind := pick(rng, kinds, weights)
	// The phase's own event is the likeliest: runs get somewhere.
	if rng.IntN(3) > 0 {
		kind = map[Phase]EventKind{Review: ReviewDone, Validate: ValidationDone, Fix: FixDone}[r.Phase]
	}
	e := &Event{Kind: kind, Now: now, Limit: 1 + rng.IntN(3)}
	if rng.IntN(8) == 0 {
		r.Register(r.Expected[0], "agent")
		r.Count("agent", 400+rng.IntN(800))
	}
	switch kind {
	case ReviewDone:
		for _, name := range r.Expected {
			if rng.IntN(6) == 0 {
				for range MaxRejections + 1 {
					r.Reject(name)
				}
				continue
			}
			rep := answer(r, []string{"fixed", "not_fixed"}[rng.IntN(2)])
			rep.Reviewer = name
			if rng.IntN(2) == 0 {
				rep.Verdict = "issues_found"
				rep.Findings = bug(fmt.Sprintf("wrong sum %d", rng.IntN(2))).Findings
			}
			e.Reports = append(e.Reports, rep)
		}
	case ValidationDone:
		if rng.IntN(5) > 0 {
			e.Validation = &review.ValidationReport{}
			for _, id := range r.Digest.Blocking {
				e.Validation.Results = append(e.Validation.Results, review.Check{ID: id, Status: []string{"confirmed", "disproved"}[rng.IntN(2)]})
			}
		}
	case FixDone:
		if rng.IntN(5) > 0 {
			e.Fix = &review.FixReport{}
			for _, id := range r.Digest.Blocking {
				e.Fix.Results = append(e.Fix.Results, review.FixResult{ID: id, Status: []string{"fixed", "disputed"}[rng.IntN(2)]})
			}
		}
	case Abort, Fail:
		e.Detail = "driven"
	}
	return e
}

func pick[T any](rng *rand.Rand, items []T, weights []int) T {
	total := 0
	for _, w := range weights {
		total += w
	}
	n := rng.IntN(total)
	for i, w := range weights {
		if n < w {
			return items[i]
		}
		n -= w
	}
	return items[len(items)-1]
}

// TestOnlyTheTableMovesARun type-checks every package of the module that
// uses this one and fails when code outside transition.go assigns a run's
// phase, iteration, stop reason or verdict: those move only by a row of
// the table. The check itself is tested on code that does.
func TestOnlyTheTableMovesARun(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the module")
	}
	exports, pkgs := goList(t)
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		if f := exports[path]; f != "" {
			return os.Open(f)
		}
		return nil, fmt.Errorf("no export data for %s", path)
	})
	const self = "github.com/whetstone-dev/whetstone/internal/loop"
	checked := 0
	for _, p := range pkgs {
		if p.ImportPath != self && !slices.Contains(p.Imports, self) {
			continue
		}
		var files []string
		for _, f := range p.GoFiles {
			files = append(files, filepath.Join(p.Dir, f))
		}
		found, err := movers(imp, p.ImportPath, files, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range found {
			if filepath.Base(m.file) != "transition.go" || p.ImportPath != self {
				t.Errorf("%s: %s is set outside the transition table", m.pos, m.field)
			}
		}
		checked++
	}
	if checked < 3 {
		t.Fatalf("only %d packages checked: the listing is wrong", checked)
	}
	// The check finds what it must.
	bad := `package bad

import "github.com/whetstone-dev/whetstone/internal/loop"

func f(r *loop.Run, other struct{ Phase loop.Phase }) *loop.Run {
	other.Phase = loop.Done // not a run: allowed
	r.Phase = loop.Done
	r.Iteration++
	r.StopReason, r.Verdict = "x", "y"
	return &loop.Run{Phase: loop.Review}
}
`
	found, err := movers(imp, "bad", nil, map[string]string{"bad.go": bad})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range found {
		got = append(got, m.field)
	}
	if want := []string{"Phase", "Iteration", "StopReason", "Verdict", "Phase"}; !slices.Equal(got, want) {
		t.Errorf("the check found %v in code that sets %v", got, want)
	}
}

// listFlags are go list's build flags: the test binary's (race_test.go).
var listFlags []string

type listed struct {
	ImportPath, Dir, Export string
	GoFiles, Imports        []string
}

// goList lists the module's packages and the export data of everything
// they import (built, or taken from the build cache, by go list).
func goList(t *testing.T) (map[string]string, []listed) {
	t.Helper()
	args := append(append([]string{"list"}, listFlags...), "-export", "-deps", "-json=ImportPath,Dir,Export,GoFiles,Imports", "github.com/whetstone-dev/whetstone/...")
	cmd := exec.Command("go", args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	exports := map[string]string{}
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
		if strings.HasPrefix(p.ImportPath, "github.com/whetstone-dev/whetstone/") {
			pkgs = append(pkgs, p)
		}
	}
	return exports, pkgs
}

// mover is an assignment to one of a run's moving fields.
type mover struct {
	pos, file, field string
}

// movers type-checks a package (files on disk, or sources by name) and
// lists where it assigns loop.Run's Phase, Iteration, StopReason or
// Verdict, or sets them in a loop.Run literal.
func movers(imp types.Importer, path string, files []string, sources map[string]string) ([]mover, error) {
	fset := token.NewFileSet()
	var parsed []*ast.File
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			return nil, err
		}
		parsed = append(parsed, af)
	}
	for name, src := range sources {
		af, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			return nil, err
		}
		parsed = append(parsed, af)
	}
	info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}, Types: map[ast.Expr]types.TypeAndValue{}}
	if _, err := (&types.Config{Importer: imp}).Check(path, fset, parsed, info); err != nil {
		return nil, fmt.Errorf("type-check %s: %w", path, err)
	}
	moving := []string{"Phase", "Iteration", "StopReason", "Verdict"}
	isRun := func(t types.Type) bool {
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		n, ok := t.(*types.Named)
		return ok && n.Obj().Name() == "Run" && n.Obj().Pkg() != nil && strings.HasSuffix(n.Obj().Pkg().Path(), "internal/loop")
	}
	var out []mover
	add := func(at token.Pos, field string) {
		p := fset.Position(at)
		out = append(out, mover{pos: p.String(), file: p.Filename, field: field})
	}
	runField := func(e ast.Expr) {
		sel, ok := ast.Unparen(e).(*ast.SelectorExpr)
		if !ok || !slices.Contains(moving, sel.Sel.Name) {
			return
		}
		if s := info.Selections[sel]; s != nil && s.Kind() == types.FieldVal && isRun(s.Recv()) {
			add(sel.Pos(), sel.Sel.Name)
		}
	}
	for _, f := range parsed {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				for _, l := range n.Lhs {
					runField(l)
				}
			case *ast.IncDecStmt:
				runField(n.X)
			case *ast.UnaryExpr: // &r.Phase hands it out to be set
				if n.Op == token.AND {
					runField(n.X)
				}
			case *ast.CompositeLit:
				if tv, ok := info.Types[n]; ok && isRun(tv.Type) {
					for _, el := range n.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok {
							if id, ok := kv.Key.(*ast.Ident); ok && slices.Contains(moving, id.Name) {
								add(kv.Pos(), id.Name)
							}
						}
					}
				}
			}
			return true
		})
	}
	return out, nil
}
