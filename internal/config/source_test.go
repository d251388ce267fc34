package config

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// parseIn parses dir's whetstone.json, for the tests of Parse.
func parseIn(dir string) (File, error) {
	data, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		return File{}, err
	}
	return Parse(data)
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.org"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestLoadAt: whetstone.json is read as committed at a revision, never
// from the work tree: an untracked or edited file changes nothing, and a
// symlink, a file too large or a commit without one are what they are.
func TestLoadAt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", "empty")
	empty := git(t, dir, "rev-parse", "HEAD")
	if src, err := LoadAt(ctx, dir, empty); err != nil || src.Found() || src.File.Depth != "" {
		t.Errorf("LoadAt(a commit without whetstone.json) = %+v, %v; want the zero File", src, err)
	}
	// An untracked file is the change's, not the base's.
	os.WriteFile(filepath.Join(dir, FileName), []byte(`{"sandbox": "off"}`), 0o644)
	if src, err := LoadAt(ctx, dir, "HEAD"); err != nil || src.Found() {
		t.Errorf("LoadAt(HEAD) with an untracked whetstone.json = %+v, %v; want none", src, err)
	}
	os.WriteFile(filepath.Join(dir, FileName), []byte(`{"depth": "quick"}`), 0o644)
	git(t, dir, "add", FileName)
	git(t, dir, "commit", "-q", "-m", "config")
	base := git(t, dir, "rev-parse", "HEAD")
	os.WriteFile(filepath.Join(dir, FileName), []byte(`{"sandbox": "off", "restore": true}`), 0o644)
	src, err := LoadAt(ctx, dir, base)
	if err != nil || src.File.Depth != "quick" || src.File.Sandbox != "" || string(src.Data) != `{"depth": "quick"}` || src.Rev != base {
		t.Errorf("LoadAt(base) with an edited work tree = %+v, %v; want the committed file", src, err)
	}
	// From a subdirectory, the root's own file is read.
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	if src, err := LoadAt(ctx, filepath.Join(dir, "sub"), base); err != nil || src.Found() {
		t.Errorf("LoadAt(sub) = %+v, %v; want none (sub has no whetstone.json)", src, err)
	}
	os.Remove(filepath.Join(dir, FileName))
	os.Symlink("other.json", filepath.Join(dir, FileName))
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "symlink")
	if _, err := LoadAt(ctx, dir, "HEAD"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("LoadAt(a symlinked whetstone.json) err = %v, want not a regular file", err)
	}
	os.Remove(filepath.Join(dir, FileName))
	os.WriteFile(filepath.Join(dir, FileName), []byte(`{"depth": "quick"`+strings.Repeat(" ", MaxFile)+`}`), 0o644)
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "large")
	if _, err := LoadAt(ctx, dir, "HEAD"); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("LoadAt(a whetstone.json over MaxFile) err = %v, want larger than", err)
	}
	os.WriteFile(filepath.Join(dir, FileName), []byte(`{"depth": "quick", "max_iteration": 3}`), 0o644)
	git(t, dir, "commit", "-q", "-am", "typo")
	if _, err := LoadAt(ctx, dir, "HEAD"); err == nil || !strings.Contains(err.Error(), `unknown field "max_iteration"`) {
		t.Errorf("LoadAt(a bad whetstone.json) err = %v", err)
	}
}

// TestWeakening: the settings that weaken containment are named, and an
// untrusted file applies everything else.
func TestWeakening(t *testing.T) {
	f, err := Parse([]byte(`{"depth": "deep", "sandbox": "off", "verify_commands": ["python3"], "restore": true, "checks_network": true, "pre_existing_blocks": true}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`"sandbox": "off"`, `"verify_commands"`, `"restore": true`, `"checks_network": true`}
	if diff := cmp.Diff(want, f.Weakening()); diff != "" {
		t.Errorf("Weakening (-want +got):\n%s", diff)
	}
	c := f.Contained()
	if c.Weakening() != nil || c.Depth != "deep" || !c.PreExistingBlocks {
		t.Errorf("Contained = %+v; want every weakening setting off and the others kept", c)
	}
	for _, body := range []string{`{}`, `{"sandbox": "auto"}`, `{"depth": "quick", "checks": false}`} {
		if f, _ := Parse([]byte(body)); f.Weakening() != nil {
			t.Errorf("Weakening(%s) = %v, want none", body, f.Weakening())
		}
	}
	if f, _ := Parse([]byte(`{"sandbox": "if-available"}`)); !cmp.Equal(f.Weakening(), []string{`"sandbox": "if-available"`}) {
		t.Errorf("Weakening(if-available) = %v", f.Weakening())
	}
}

// BenchmarkLoadAt is what reading whetstone.json at the base adds to the
// start of a run: three git processes (rev-parse, ls-tree, cat-file).
func BenchmarkLoadAt(b *testing.B) {
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, FileName), []byte(`{"depth": "quick", "sandbox": "off"}`), 0o644)
	for _, args := range [][]string{{"init", "-q"}, {"add", FileName}, {"-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "config"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	ctx := context.Background()
	for b.Loop() {
		if src, err := LoadAt(ctx, dir, "HEAD"); err != nil || src.File.Depth != "quick" {
			b.Fatalf("LoadAt = %+v, %v", src, err)
		}
	}
}
