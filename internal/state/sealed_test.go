package state_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/whetstone-dev/whetstone/internal/safeio"
	"github.com/whetstone-dev/whetstone/internal/state"
)

// sealedStore returns a keyed store for run id under a fresh project root.
func sealedStore(t *testing.T, key state.Key, root, id string) state.Store {
	t.Helper()
	return state.Store{Root: root, Path: filepath.Join(root, ".whetstone", "runs", id, "state.json"), Key: key, Wait: 2 * time.Second}
}

func put(body string) func([]byte) ([]byte, error) {
	return func([]byte) ([]byte, error) { return []byte(body), nil }
}

func TestSealedStoreRoundTrip(t *testing.T) {
	key, root := testKey(t), t.TempDir()
	s := sealedStore(t, key, root, "r1")
	var seen [][]byte
	for _, body := range []string{`{"n":1}`, "{\n  \"n\": 2\n}\n"} {
		if err := s.Update(func(old []byte) ([]byte, error) {
			seen = append(seen, old)
			return []byte(body), nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if seen[0] != nil || string(seen[1]) != `{"n":1}` {
		t.Errorf("Update passed %q; want nil, then the first body without its seal", seen)
	}
	got, err := s.Read()
	if err != nil || string(got) != "{\n  \"n\": 2\n}\n" {
		t.Errorf("Read = %q, %v", got, err)
	}
	raw, _ := os.ReadFile(s.Path)
	if _, err := state.Open(key, state.KindState, ".whetstone/runs/r1/state.json", raw); err != nil {
		t.Errorf("the file on disk is not sealed for its name: %v", err)
	}
	// The name is relative to the root: the same project reached through
	// another path (here a symlink to it) verifies.
	alias := filepath.Join(t.TempDir(), "alias")
	if err := os.Symlink(root, alias); err != nil {
		t.Fatal(err)
	}
	if _, err := sealedStore(t, key, alias, "r1").Read(); err != nil {
		t.Errorf("Read through a symlinked project root: %v", err)
	}
}

// TestSealedStoreRefusesForgery writes the state file behind the store's
// back in every way an agent could, and checks that Read says ErrTampered
// and Update neither calls fn nor writes.
func TestSealedStoreRefusesForgery(t *testing.T) {
	key := testKey(t)
	forged := `{"phase":"done","verdict":"pass"}`
	tests := []struct {
		name  string
		forge func(t *testing.T, s state.Store, root string)
	}{
		{"plain JSON", func(t *testing.T, s state.Store, _ string) { writeRaw(t, s.Path, forged) }},
		{"field changed", func(t *testing.T, s state.Store, _ string) {
			raw, _ := os.ReadFile(s.Path)
			writeRaw(t, s.Path, strings.Replace(string(raw), `"review"`, `"done"  `, 1))
		}},
		{"sealed with another key", func(t *testing.T, s state.Store, _ string) {
			writeRaw(t, s.Path, string(state.Seal(testKey(t), state.KindState, ".whetstone/runs/r1/state.json", []byte(forged))))
		}},
		{"copied from another run", func(t *testing.T, s state.Store, root string) {
			other := sealedStore(t, key, root, "r2")
			if err := other.Update(put(forged)); err != nil {
				t.Fatal(err)
			}
			raw, _ := os.ReadFile(other.Path)
			writeRaw(t, s.Path, string(raw))
		}},
		{"a report sealed under the state's name", func(t *testing.T, s state.Store, _ string) {
			writeRaw(t, s.Path, string(state.Seal(key, state.KindReport, ".whetstone/runs/r1/state.json", []byte(forged))))
		}},
		{"symlink to a sealed file", func(t *testing.T, s state.Store, root string) {
			other := sealedStore(t, key, root, "r2")
			if err := other.Update(put(forged)); err != nil {
				t.Fatal(err)
			}
			replaceWith(t, s.Path, func(p string) error { return os.Symlink(other.Path, p) })
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			s := sealedStore(t, key, root, "r1")
			if err := s.Update(put(`{"phase":"review"}`)); err != nil {
				t.Fatal(err)
			}
			tt.forge(t, s, root)
			before, _ := os.ReadFile(s.Path)
			beforeInfo, _ := os.Lstat(s.Path)

			if data, err := s.Read(); !errors.Is(err, state.ErrTampered) {
				t.Errorf("Read = %q, %v; want ErrTampered", data, err)
			}
			called := false
			err := s.Update(func([]byte) ([]byte, error) { called = true; return []byte(`{"phase":"fix"}`), nil })
			if !errors.Is(err, state.ErrTampered) {
				t.Errorf("Update = %v, want ErrTampered", err)
			}
			if called {
				t.Error("Update called fn on a forged file")
			}
			after, _ := os.ReadFile(s.Path)
			afterInfo, _ := os.Lstat(s.Path)
			if !bytes.Equal(before, after) || !os.SameFile(beforeInfo, afterInfo) {
				t.Error("Update wrote over the forged file")
			}

			// Repair sees the file as it is (nothing for a symlink) and
			// seals what it is given in its place.
			var got []byte
			if err := s.Repair(func(old []byte) ([]byte, error) {
				got = old
				return []byte(`{"phase":"stopped","reason":"error"}`), nil
			}); err != nil {
				t.Fatalf("Repair: %v", err)
			}
			if beforeInfo.Mode()&fs.ModeSymlink != 0 {
				if got != nil {
					t.Errorf("Repair passed %q for a symlink; want nil", got)
				}
			} else if !bytes.Equal(got, before) {
				t.Errorf("Repair passed %q; want the forged content %q", got, before)
			}
			if data, err := s.Read(); err != nil || string(data) != `{"phase":"stopped","reason":"error"}` {
				t.Errorf("Read after Repair = %q, %v", data, err)
			}
			if fi, err := os.Lstat(s.Path); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("state file after Repair: %v, %v; want a regular file", fi.Mode(), err)
			}
		})
	}
}

// TestSealedStoreErrors: a keyed store needs a root to name its file, and
// writes only what it can seal.
func TestSealedStoreErrors(t *testing.T) {
	key, root := testKey(t), t.TempDir()
	noRoot := state.Store{Path: filepath.Join(root, "state.json"), Key: key}
	if err := noRoot.Update(put(`{}`)); err == nil || !strings.Contains(err.Error(), "no project root") {
		t.Errorf("Update without Root = %v", err)
	}
	s := sealedStore(t, key, root, "r1")
	for _, body := range []string{"x", "[1]", ""} {
		if err := s.Update(put(body)); err == nil || !strings.Contains(err.Error(), "only a JSON object") {
			t.Errorf("Update(%q) = %v, want a refusal", body, err)
		}
	}
	if _, err := os.Lstat(s.Path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("something was written: %v", err)
	}
	big := `{"pad":"` + strings.Repeat("x", state.MaxState) + `"}`
	if err := s.Update(put(big)); err == nil || !strings.Contains(err.Error(), "over the cap") {
		t.Errorf("Update over MaxState = %v", err)
	}
}

// TestStoreRefusesSpecialFiles puts what is not a regular file in place of
// state.json: every read fails at once (a FIFO must not hang the hook),
// without a key with safeio's error, with one as ErrTampered too.
func TestStoreRefusesSpecialFiles(t *testing.T) {
	tests := []struct {
		name  string
		make  func(t *testing.T, path string)
		want  error
		isNil bool // Repair passes nil: nothing of it is worth keeping
	}{
		{"FIFO", func(t *testing.T, p string) {
			replaceWith(t, p, func(p string) error { return mkfifo(p) })
		}, safeio.ErrNotRegular, true},
		{"symlink to /dev/zero", func(t *testing.T, p string) {
			replaceWith(t, p, func(p string) error { return os.Symlink("/dev/zero", p) })
		}, safeio.ErrSymlink, true},
		{"symlink to a file outside", func(t *testing.T, p string) {
			outside := filepath.Join(t.TempDir(), "secret")
			writeRaw(t, outside, `{"secret":1}`)
			replaceWith(t, p, func(p string) error { return os.Symlink(outside, p) })
		}, safeio.ErrSymlink, true},
		{"directory", func(t *testing.T, p string) {
			replaceWith(t, p, func(p string) error { return os.Mkdir(p, 0o755) })
		}, safeio.ErrNotRegular, true},
		{"sparse file over the cap", func(t *testing.T, p string) {
			if err := os.Truncate(p, 1<<30); err != nil {
				t.Fatal(err)
			}
		}, safeio.ErrTooLarge, true},
	}
	for _, keyed := range []bool{false, true} {
		for _, tt := range tests {
			name := tt.name
			if keyed {
				name += " keyed"
			}
			t.Run(name, func(t *testing.T) {
				root := t.TempDir()
				var key state.Key
				if keyed {
					key = testKey(t)
				}
				s := sealedStore(t, key, root, "r1")
				if err := s.Update(put(`{"n":1}`)); err != nil {
					t.Fatal(err)
				}
				tt.make(t, s.Path)
				done := make(chan error, 1)
				go func() { _, err := s.Read(); done <- err }()
				select {
				case err := <-done:
					if !errors.Is(err, tt.want) {
						t.Errorf("Read = %v, want %v", err, tt.want)
					}
					if keyed != errors.Is(err, state.ErrTampered) {
						t.Errorf("Read = %v; ErrTampered should be there exactly when the store has a key", err)
					}
				case <-time.After(5 * time.Second):
					t.Fatal("Read hangs")
				}
				called := false
				err := s.Update(func([]byte) ([]byte, error) { called = true; return []byte(`{"n":2}`), nil })
				if !errors.Is(err, tt.want) || called {
					t.Errorf("Update = %v (fn called: %v), want %v without calling fn", err, called, tt.want)
				}
				var got []byte = []byte("unset")
				err = s.Repair(func(old []byte) ([]byte, error) { got = old; return []byte(`{"n":3}`), nil })
				if tt.name == "directory" {
					// Nothing replaces a directory; Repair says so.
					if err == nil {
						t.Error("Repair over a directory succeeded")
					}
					return
				}
				if err != nil || got != nil {
					t.Fatalf("Repair = %v, passed %q; want success with nil", err, got)
				}
				if data, err := s.Read(); err != nil || string(data) != `{"n":3}` {
					t.Errorf("Read after Repair = %q, %v", data, err)
				}
			})
		}
	}
}

// TestWriteReplacesSymlink: a symlink at the target is replaced by the new
// file, and what it pointed to is left alone.
func TestWriteReplacesSymlink(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "outside.json")
	writeRaw(t, outside, "keep")
	path := filepath.Join(dir, "report.json")
	if err := os.Symlink(outside, path); err != nil {
		t.Fatal(err)
	}
	if err := state.WriteFile(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("%s after WriteFile: %v, %v; want a regular file", path, fi.Mode(), err)
	}
	if data, _ := os.ReadFile(path); string(data) != "new" {
		t.Errorf("content = %q", data)
	}
	if data, _ := os.ReadFile(outside); string(data) != "keep" {
		t.Errorf("the symlink's target was written: %q", data)
	}
}

// TestSymlinkedDirectory: a directory below the project root that is a
// symlink (here .whetstone/runs/r1 pointing out of the project) is refused
// by every read and write, and nothing is written where it points.
func TestSymlinkedDirectory(t *testing.T) {
	for _, link := range []string{".whetstone", ".whetstone/runs", ".whetstone/runs/r1"} {
		t.Run(link, func(t *testing.T) {
			root, outside := t.TempDir(), t.TempDir()
			at := filepath.Join(root, filepath.FromSlash(link))
			if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, at); err != nil {
				t.Fatal(err)
			}
			s := sealedStore(t, testKey(t), root, "r1")
			if _, err := s.Read(); !errors.Is(err, safeio.ErrSymlink) {
				t.Errorf("Read = %v, want ErrSymlink", err)
			}
			for name, write := range map[string]func() error{
				"Update": func() error { return s.Update(put(`{}`)) },
				"Repair": func() error { return s.Repair(put(`{}`)) },
				"WriteOwn": func() error {
					return state.WriteOwn(root, filepath.Join(filepath.Dir(s.Path), "iter-1", "a.json"), []byte(`{}`))
				},
			} {
				if err := write(); !errors.Is(err, safeio.ErrSymlink) {
					t.Errorf("%s = %v, want ErrSymlink", name, err)
				}
			}
			var found []string
			_ = filepath.WalkDir(outside, func(p string, d fs.DirEntry, err error) error {
				if p != outside {
					found = append(found, p)
				}
				return nil
			})
			if len(found) > 0 {
				t.Errorf("written outside the project: %v", found)
			}
		})
	}
	t.Run("WriteOwn below a clean tree", func(t *testing.T) {
		root := t.TempDir()
		path := filepath.Join(root, ".whetstone", "runs", "r1", "iter-1", "a.json")
		if err := state.WriteOwn(root, path, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		if data, _ := os.ReadFile(path); string(data) != `{}` {
			t.Errorf("content = %q", data)
		}
	})
}

// TestLockIsNotFollowed: a symlink in place of the lock file is refused,
// so the lock cannot create or hold a file out of the project.
func TestLockIsNotFollowed(t *testing.T) {
	root := t.TempDir()
	s := sealedStore(t, nil, root, "r1")
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "created-by-lock")
	if err := os.Symlink(target, s.Path+".lock"); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(put(`{}`)); err == nil {
		t.Error("Update through a symlinked lock succeeded")
	}
	if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the lock followed its symlink: %v", err)
	}
}

// TestStaleTempIsReplaced: a temp file left by a writer killed before its
// rename (or a symlink planted under that name) does not stop the next
// update and is gone after it.
func TestStaleTempIsReplaced(t *testing.T) {
	root := t.TempDir()
	s := sealedStore(t, testKey(t), root, "r1")
	if err := s.Update(put(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(s.Path)
	outside := filepath.Join(t.TempDir(), "outside")
	writeRaw(t, outside, "keep")
	for _, plant := range []func(string) error{
		func(p string) error { return os.WriteFile(p, []byte("half a wr"), 0o600) },
		func(p string) error { return os.Symlink(outside, p) },
	} {
		if err := plant(filepath.Join(dir, ".state.json.tmp-update")); err != nil {
			t.Fatal(err)
		}
		if err := s.Update(put(`{"n":2}`)); err != nil {
			t.Fatalf("Update over a stale temp: %v", err)
		}
		if extra := leftovers(t, dir); len(extra) > 0 {
			t.Errorf("files left behind: %v", extra)
		}
	}
	if data, _ := os.ReadFile(outside); string(data) != "keep" {
		t.Errorf("a symlinked temp was followed: %q", data)
	}
}

func writeRaw(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// replaceWith removes path and makes something else there.
func replaceWith(t *testing.T, path string, make func(string) error) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := make(path); err != nil {
		t.Fatal(err)
	}
}
