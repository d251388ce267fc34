package codex

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whetstone-dev/whetstone/internal/install"
)

func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			b, _ := os.ReadFile(p)
			out[filepath.ToSlash(rel)] = string(b)
		}
		return nil
	})
	return out
}

// TestUninstallRemovesExactlyWhatInstallWrote: the user's Codex files
// (config.toml, their own agent and skill, Codex's sessions) survive an
// install and an uninstall; every file whetstone wrote goes, and the
// hooks run the installed binary on every event, the gate's failure
// turned into a deny.
func TestUninstallRemovesExactlyWhatInstallWrote(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".codex")
	theirs := map[string]string{"config.toml": "model = \"x\"\n", "agents/mine.toml": "name = \"mine\"\n",
		"skills/mine/SKILL.md": "---\nname: mine\n---\n", "sessions/2026/a.jsonl": "{}\n"}
	for rel, content := range theirs {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
	}
	written, err := Install(dir, "/opt/my tools/whetstone")
	if err != nil {
		t.Fatal(err)
	}
	if len(written) != 12+1+1+1 { // agents, skill, hooks.json, manifest
		t.Errorf("wrote %d files: %v", len(written), written)
	}
	var hooks struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string }
		}
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "hooks.json"))
	if err := json.Unmarshal(raw, &hooks); err != nil {
		t.Fatal(err)
	}
	for _, e := range []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "SubagentStart", "SubagentStop", "Stop"} {
		if len(hooks.Hooks[e]) != 1 || !strings.HasPrefix(hooks.Hooks[e][0].Hooks[0].Command, "'/opt/my tools/whetstone' hook ") ||
			!strings.Contains(hooks.Hooks[e][0].Hooks[0].Command, " --client=codex") {
			t.Errorf("%s: %+v", e, hooks.Hooks[e])
		}
	}
	if c := hooks.Hooks["PreToolUse"][0].Hooks[0].Command; !strings.HasSuffix(c, "|| exit 2") {
		t.Errorf("the gate's hook lets a failure through: %s", c)
	}
	agent, _ := os.ReadFile(filepath.Join(dir, "agents", "whetstone-critic.toml"))
	if !strings.Contains(string(agent), "name = \"whetstone-critic\"\n") || !strings.Contains(string(agent), "developer_instructions = \"# whetstone:critic\\n") {
		t.Errorf("the installed agent:\n%.300s", agent)
	}
	if _, err := Install(dir, "/opt/my tools/whetstone"); err != nil {
		t.Errorf("a second install over its own files: %v", err)
	}
	removed, kept, err := Uninstall(dir)
	if err != nil || len(kept) != 0 {
		t.Fatalf("Uninstall: %v, kept %v", err, kept)
	}
	if len(removed) != 15+1 { // the files and skills/whetstone-review/ (agents/, skills/ are the user's too)
		t.Errorf("removed %d paths: %v", len(removed), removed)
	}
	left := files(t, dir)
	if len(left) != len(theirs) {
		t.Errorf("left %v, want exactly the user's files", left)
	}
	for rel, content := range theirs {
		if left[rel] != content {
			t.Errorf("%s was changed or removed", rel)
		}
	}
}

// TestInstallRefusesAUsersHooks: Codex reads one hooks.json per config
// directory; the user's own stops the install before anything is written,
// and is named.
func TestInstallRefusesAUsersHooks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".codex")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "hooks.json"), []byte(`{"hooks":{}}`), 0o644)
	_, err := Install(dir, "/bin/whetstone")
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "hooks.json")) || !strings.Contains(err.Error(), "was not written by whetstone") {
		t.Fatalf("install over a user's hooks.json: %v", err)
	}
	if got := files(t, dir); len(got) != 1 {
		t.Errorf("a refused install wrote %v", got)
	}
}

// TestUninstallKeepsChangedFiles: hooks.json and an agent the user edited
// after the install stay and are named; the rest goes.
func TestUninstallKeepsChangedFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".codex")
	if _, err := Install(dir, "/bin/whetstone"); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"hooks.json", "agents/whetstone-critic.toml"} {
		p := filepath.Join(dir, rel)
		b, _ := os.ReadFile(p)
		os.WriteFile(p, append(b, "\n# mine\n"...), 0o644)
	}
	removed, kept, err := Uninstall(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "agents", "whetstone-critic.toml"), filepath.Join(dir, "hooks.json")}
	if strings.Join(kept, ",") != strings.Join(want, ",") {
		t.Errorf("kept %v, want %v", kept, want)
	}
	if left := files(t, dir); len(left) != 2 {
		t.Errorf("left %v (removed %v)", left, removed)
	}
}

// TestNothingThroughSymlinksOrOutOfTheDir: a symlinked agents/ is refused
// before anything is written, and a manifest naming the user's config.toml
// or a path outside the directory removes nothing.
func TestNothingThroughSymlinksOrOutOfTheDir(t *testing.T) {
	base := t.TempDir()
	dir, elsewhere := filepath.Join(base, ".codex"), filepath.Join(base, "elsewhere")
	os.MkdirAll(dir, 0o755)
	os.MkdirAll(elsewhere, 0o755)
	if err := os.Symlink(elsewhere, filepath.Join(dir, "agents")); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(dir, "/bin/whetstone"); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("install through a symlinked agents/: %v", err)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("wrote %d files through the symlink", len(entries))
	}
	if _, err := os.Lstat(filepath.Join(dir, "hooks.json")); !os.IsNotExist(err) {
		t.Error("a refused install wrote hooks.json")
	}
	os.Remove(filepath.Join(dir, "agents"))
	config := []byte("model = \"x\"\n")
	os.WriteFile(filepath.Join(dir, "config.toml"), config, 0o644)
	for _, rel := range []string{"config.toml", "../victim.txt"} {
		manifest := `{"version":"x","files":{"` + rel + `":"` + digestOf(config) + `"}}`
		os.WriteFile(filepath.Join(dir, install.ManifestName), []byte(manifest), 0o644)
		if _, _, err := Uninstall(dir); err == nil {
			t.Errorf("a manifest naming %s was taken", rel)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "config.toml")); string(b) != string(config) {
		t.Error("the user's config.toml was removed")
	}
}

func digestOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestForgedManifestKeepsAUsersHooks: a manifest is a file in the
// directory (a project's .codex/ can commit one): one naming the user's own
// hooks.json with its digest neither lets an install replace it nor an
// uninstall remove it.
func TestForgedManifestKeepsAUsersHooks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".codex")
	os.MkdirAll(dir, 0o755)
	theirs := []byte(`{"description":"whetstone: not really","hooks":{"Stop":[{"hooks":[{"type":"command","command":"./notify.sh"}]}]}}`)
	os.WriteFile(filepath.Join(dir, "hooks.json"), theirs, 0o644)
	manifest := `{"version":"x","files":{"hooks.json":"` + digestOf(theirs) + `"}}`
	os.WriteFile(filepath.Join(dir, install.ManifestName), []byte(manifest), 0o644)
	if _, err := Install(dir, "/bin/whetstone"); err == nil || !strings.Contains(err.Error(), "was not written by whetstone") {
		t.Errorf("install over a user's hooks.json a forged manifest names: %v", err)
	}
	_, kept, err := Uninstall(dir)
	if err != nil || len(kept) != 1 {
		t.Errorf("uninstall with a forged manifest: kept %v, %v", kept, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "hooks.json")); string(b) != string(theirs) {
		t.Error("the user's hooks.json was replaced or removed")
	}
	if !oursHooks("hooks.json", must(Hooks("/opt/my whetstone/bin/whetstone"))) {
		t.Error("whetstone's own hooks.json (a binary path with a space) is not recognised as whetstone's")
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestWrittenIsWhatInstallWrites: every file Install writes, the manifest
// and hooks.json included, is recognised as whetstone's in a project's
// .codex (install.Own); hooks.json written for another binary is not, since
// the program the hooks run is what a change would point elsewhere.
func TestWrittenIsWhatInstallWrites(t *testing.T) {
	project := t.TempDir()
	dir := filepath.Join(project, ".codex")
	const bin = "/opt/whetstone/bin/whetstone"
	if _, err := Install(dir, bin); err != nil {
		t.Fatal(err)
	}
	s, err := Client{}.Written(bin)
	if err != nil {
		t.Fatal(err)
	}
	own := &install.Own{}
	own.Add(".codex", s)
	got := files(t, dir)
	if len(got) != 15 {
		t.Fatalf("installed %d files, want 15", len(got))
	}
	for rel, content := range got {
		if !own.Wrote(".codex/"+rel, []byte(content)) {
			t.Errorf("%s as installed is not recognised", rel)
		}
	}
	other, err := Hooks("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	if own.Wrote(".codex/hooks.json", other) {
		t.Error("hooks.json running /bin/sh is recognised as whetstone's")
	}
}
