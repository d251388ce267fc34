package opencode

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whetstone-dev/whetstone/internal/install"
)

// ManifestName is the manifest install writes.
const ManifestName = install.ManifestName

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestUninstallRemovesExactlyWhatInstallWrote: a user's files and what
// OpenCode writes into the directory survive an install and an uninstall;
// every file whetstone wrote, and only the directories it created, go.
func TestUninstallRemovesExactlyWhatInstallWrote(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".opencode")
	theirs := map[string]string{"agent/mine.md": "mine\n", "package.json": "{}\n", "node_modules/x/index.js": "x\n", ".gitignore": "node_modules\n"}
	for rel, content := range theirs {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
	}
	written, err := Install(dir, "/opt/whetstone/bin/whetstone")
	if err != nil {
		t.Fatal(err)
	}
	if len(written) != 12+1+1+1+1 { // agents, command, skill, plugin, manifest
		t.Errorf("wrote %d files: %v", len(written), written)
	}
	plugin, _ := os.ReadFile(filepath.Join(dir, "plugin", "whetstone.ts"))
	if !strings.Contains(string(plugin), `const INSTALLED_BIN = "/opt/whetstone/bin/whetstone"`) {
		t.Error("the installed plugin does not name the binary")
	}
	skill, _ := os.ReadFile(filepath.Join(dir, "skill", "whetstone-review", "SKILL.md"))
	if !strings.HasPrefix(string(skill), "---\nname: whetstone-review\ndescription: ") {
		t.Errorf("the installed skill has no name and description:\n%.200s", skill)
	}
	if _, err := Install(dir, "/opt/whetstone/bin/whetstone"); err != nil {
		t.Errorf("a second install over its own files: %v", err)
	}
	removed, kept, err := Uninstall(dir)
	if err != nil || len(kept) != 0 {
		t.Fatalf("Uninstall: %v, kept %v", err, kept)
	}
	// the files, plugin/, command/, skill/ and skill/whetstone-review/
	// (agent/ is the user's too)
	if len(removed) != 16+4 {
		t.Errorf("removed %d paths: %v", len(removed), removed)
	}
	var left []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			left = append(left, filepath.ToSlash(rel))
		}
		return nil
	})
	if len(left) != len(theirs) {
		t.Errorf("left %v, want exactly the user's and OpenCode's files", left)
	}
	for rel, content := range theirs {
		if b, err := os.ReadFile(filepath.Join(dir, rel)); err != nil || string(b) != content {
			t.Errorf("%s was changed or removed (%v)", rel, err)
		}
	}
}

// TestInstallIntoAFreshDirRemovesIt: a config dir the install created goes
// with the uninstall.
func TestInstallIntoAFreshDirRemovesIt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "config", "opencode")
	if _, err := Install(dir, "/bin/whetstone"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Uninstall(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is still there (%v)", dir, err)
	}
	if _, err := os.Lstat(filepath.Dir(dir)); err != nil {
		t.Errorf("the parent, not whetstone's, was removed: %v", err)
	}
}

// TestNothingThroughSymlinksOrOutOfTheDir: a symlinked plugin directory is
// refused before anything is written, and a manifest naming a path outside
// its directory removes nothing.
func TestNothingThroughSymlinksOrOutOfTheDir(t *testing.T) {
	base := t.TempDir()
	dir, elsewhere := filepath.Join(base, ".opencode"), filepath.Join(base, "elsewhere")
	os.MkdirAll(dir, 0o755)
	os.MkdirAll(elsewhere, 0o755)
	if err := os.Symlink(elsewhere, filepath.Join(dir, "plugin")); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(dir, "/bin/whetstone"); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("install through a symlinked plugin/: %v", err)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("wrote %d files through the symlink", len(entries))
	}
	os.Remove(filepath.Join(dir, "plugin"))
	victim := filepath.Join(base, "victim.txt")
	os.WriteFile(victim, []byte("v"), 0o644)
	manifest := `{"version":"x","files":{"../victim.txt":"` + digest([]byte("v")) + `"}}`
	os.WriteFile(filepath.Join(dir, ManifestName), []byte(manifest), 0o644)
	if _, _, err := Uninstall(dir); err == nil || !strings.Contains(err.Error(), "outside its directory") {
		t.Errorf("a manifest naming ../victim.txt: %v", err)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("the file outside the directory was removed: %v", err)
	}
}

// TestInstallRefusesAUsersFile: a file of the same name that whetstone did
// not write stops the install before anything is written.
func TestInstallRefusesAUsersFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".opencode")
	os.MkdirAll(filepath.Join(dir, "command"), 0o755)
	os.WriteFile(filepath.Join(dir, "command", "whetstone-review.md"), []byte("mine"), 0o644)
	if _, err := Install(dir, "/bin/whetstone"); err == nil || !strings.Contains(err.Error(), "was not written by whetstone") {
		t.Fatalf("install over a user's file: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "plugin")); !os.IsNotExist(err) {
		t.Error("a refused install wrote something")
	}
}

// TestNoSymlinkedSkillDir: a symlinked skill/ or skill/whetstone-review/
// is refused by install before anything is written, and by uninstall
// before anything is removed; nothing is written or removed through it.
func TestNoSymlinkedSkillDir(t *testing.T) {
	for _, link := range []string{"skill", "skill/whetstone-review"} {
		t.Run(link, func(t *testing.T) {
			base := t.TempDir()
			dir, elsewhere := filepath.Join(base, ".opencode"), filepath.Join(base, "elsewhere")
			os.MkdirAll(filepath.Join(dir, filepath.Dir(link)), 0o755)
			os.MkdirAll(elsewhere, 0o755)
			if err := os.Symlink(elsewhere, filepath.Join(dir, link)); err != nil {
				t.Fatal(err)
			}
			if _, err := Install(dir, "/bin/whetstone"); err == nil || !strings.Contains(err.Error(), "symlink") {
				t.Errorf("install through a symlinked %s: %v", link, err)
			}
			if _, err := os.Lstat(filepath.Join(dir, "plugin")); !os.IsNotExist(err) {
				t.Error("a refused install wrote the plugin")
			}
			if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
				t.Errorf("wrote %d files through the symlink", len(entries))
			}

			// Installed, then the skill's directory replaced by a symlink to
			// a copy of the same files: uninstall removes nothing.
			os.Remove(filepath.Join(dir, link))
			if _, err := Install(dir, "/bin/whetstone"); err != nil {
				t.Fatal(err)
			}
			real := filepath.Join(dir, filepath.FromSlash(link))
			if err := os.CopyFS(filepath.Join(elsewhere, "copy"), os.DirFS(real)); err != nil {
				t.Fatal(err)
			}
			os.RemoveAll(real)
			os.Symlink(filepath.Join(elsewhere, "copy"), real)
			if _, _, err := Uninstall(dir); err == nil || !strings.Contains(err.Error(), "symlink") {
				t.Errorf("uninstall through a symlinked %s: %v", link, err)
			}
			var left int
			filepath.Walk(elsewhere, func(p string, info os.FileInfo, err error) error {
				if err == nil && !info.IsDir() {
					left++
				}
				return nil
			})
			if left != 1 {
				t.Errorf("uninstall removed files through the symlink: %d left", left)
			}
			if _, err := os.Lstat(filepath.Join(dir, "plugin", "whetstone.ts")); err != nil {
				t.Errorf("a refused uninstall removed the plugin: %v", err)
			}
		})
	}
}

// TestUninstallKeepsAChangedSkill: a skill the user edited after the
// install stays, with its directory, and is named.
func TestUninstallKeepsAChangedSkill(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".opencode")
	if _, err := Install(dir, "/bin/whetstone"); err != nil {
		t.Fatal(err)
	}
	skill := filepath.Join(dir, "skill", "whetstone-review", "SKILL.md")
	os.WriteFile(skill, []byte("---\nname: whetstone-review\ndescription: mine\n---\nmine\n"), 0o644)
	_, kept, err := Uninstall(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != 1 || kept[0] != skill {
		t.Errorf("kept %v, want exactly %s", kept, skill)
	}
	if b, _ := os.ReadFile(skill); !strings.Contains(string(b), "mine") {
		t.Error("the changed skill was removed or rewritten")
	}
	if _, err := os.Lstat(filepath.Join(dir, "plugin")); !os.IsNotExist(err) {
		t.Error("the plugin was not removed")
	}
}

// TestACommittedManifestRemovesOnlyWhetstonesFiles: a manifest is a file
// of the repository, so anyone may write one. Naming the user's or
// OpenCode's files (with their digests), or a directory reached through a
// symlinked folder, it makes neither uninstall nor install remove
// anything: both refuse before touching a file.
func TestACommittedManifestRemovesOnlyWhetstonesFiles(t *testing.T) {
	theirs := map[string]string{"package.json": "{}\n", "agent/mine.md": "mine\n", "node_modules/x/index.js": "x\n", "plugin/other.ts": "other\n"}
	for _, verb := range []string{"uninstall", "install"} {
		for rel, content := range theirs {
			t.Run(verb+" "+rel, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), ".opencode")
				for rel, content := range theirs {
					os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755)
					os.WriteFile(filepath.Join(dir, rel), []byte(content), 0o644)
				}
				manifest := `{"version":"x","files":{"` + rel + `":"` + digest([]byte(content)) + `"}}`
				os.WriteFile(filepath.Join(dir, ManifestName), []byte(manifest), 0o644)
				var err error
				if verb == "install" {
					_, err = Install(dir, "/bin/whetstone")
				} else {
					_, _, err = Uninstall(dir)
				}
				if err == nil || !strings.Contains(err.Error(), "a path whetstone never writes") {
					t.Errorf("%s with a manifest naming %s: %v", verb, rel, err)
				}
				for rel, content := range theirs {
					if b, err := os.ReadFile(filepath.Join(dir, rel)); err != nil || string(b) != content {
						t.Errorf("%s was removed or changed (%v)", rel, err)
					}
				}
			})
		}
	}
}

// TestNoDirectoryRemovedThroughASymlink: a manifest listing
// skill/whetstone-review among the directories it created, with skill/ a
// symlink to a folder outside the project: the empty folder there stays.
func TestNoDirectoryRemovedThroughASymlink(t *testing.T) {
	base := t.TempDir()
	dir, elsewhere := filepath.Join(base, "project", ".opencode"), filepath.Join(base, "elsewhere")
	victim, file := filepath.Join(elsewhere, "whetstone-review"), filepath.Join(elsewhere, "whetstone.md")
	os.MkdirAll(victim, 0o755)
	os.WriteFile(file, []byte("mine\n"), 0o644)
	os.MkdirAll(dir, 0o755)
	if err := os.Symlink(elsewhere, filepath.Join(dir, "skill")); err != nil {
		t.Fatal(err)
	}
	// os.Remove of a "directory" unlinks a file as well.
	manifest := `{"version":"x","files":{},"dirs":["skill/whetstone-review","skill/whetstone.md"]}`
	os.WriteFile(filepath.Join(dir, ManifestName), []byte(manifest), 0o644)
	if _, _, err := Uninstall(dir); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("uninstall through a symlinked skill/: %v", err)
	}
	if _, err := os.Lstat(victim); err != nil {
		t.Errorf("a directory outside the project was removed: %v", err)
	}
	if _, err := os.Lstat(file); err != nil {
		t.Errorf("a file outside the project was removed: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, ManifestName)); err != nil {
		t.Errorf("a refused uninstall removed the manifest: %v", err)
	}
}

// TestNoFileWrittenThroughASymlink: a plugin file that is a symlink to a
// file outside the project is refused; the file it points at is unchanged.
func TestNoFileWrittenThroughASymlink(t *testing.T) {
	base := t.TempDir()
	dir, victim := filepath.Join(base, "project", ".opencode"), filepath.Join(base, "victim.ts")
	os.MkdirAll(filepath.Join(dir, "plugin"), 0o755)
	os.WriteFile(victim, []byte("mine\n"), 0o644)
	if err := os.Symlink(victim, filepath.Join(dir, "plugin", "whetstone.ts")); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(dir, "/bin/whetstone"); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("install over a symlinked plugin file: %v", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "mine\n" {
		t.Errorf("the file outside the project was written: %q", b)
	}
	if _, err := os.Lstat(filepath.Join(dir, "agent")); !os.IsNotExist(err) {
		t.Error("a refused install wrote something")
	}
}

// TestADirectoryEntryNeverRemovesAFile: a manifest listing files among
// the directories it created (os.Remove unlinks either) removes none of
// them: a user's file is not whetstone's to name, and whetstone's own
// changed plugin is kept.
func TestADirectoryEntryNeverRemovesAFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".opencode")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "package.json"), []byte("{}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, ManifestName), []byte(`{"version":"x","files":{},"dirs":["package.json"]}`), 0o644)
	if _, _, err := Uninstall(dir); err == nil || !strings.Contains(err.Error(), "a path whetstone never writes") {
		t.Errorf("uninstall with package.json among the directories: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "package.json")); err != nil {
		t.Errorf("package.json was removed: %v", err)
	}

	if _, err := Install(dir, "/bin/whetstone"); err == nil {
		t.Fatal("install over a manifest naming package.json")
	}
	os.Remove(filepath.Join(dir, ManifestName))
	if _, err := Install(dir, "/bin/whetstone"); err != nil {
		t.Fatal(err)
	}
	plugin := filepath.Join(dir, "plugin", "whetstone.ts")
	os.WriteFile(plugin, []byte("// mine\n"), 0o644)
	b, _ := os.ReadFile(filepath.Join(dir, ManifestName))
	os.WriteFile(filepath.Join(dir, ManifestName), []byte(strings.Replace(string(b), `"dirs": [`, `"dirs": ["plugin/whetstone.ts", `, 1)), 0o644)
	_, kept, err := Uninstall(dir)
	if err != nil || len(kept) != 1 || kept[0] != plugin {
		t.Errorf("Uninstall: %v, kept %v, want the changed plugin kept", err, kept)
	}
	if b, _ := os.ReadFile(plugin); string(b) != "// mine\n" {
		t.Errorf("the changed plugin was removed: %q", b)
	}
}

// TestWrittenIsWhatInstallWrites: every file Install writes, the plugin and
// the manifest included, is recognised as whetstone's in a project's
// .opencode (install.Own); the plugin written for another binary is not.
func TestWrittenIsWhatInstallWrites(t *testing.T) {
	project := t.TempDir()
	dir := filepath.Join(project, ".opencode")
	const bin = "/opt/whetstone/bin/whetstone"
	written, err := Install(dir, bin)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Client{}.Written(bin)
	if err != nil {
		t.Fatal(err)
	}
	own := &install.Own{}
	own.Add(".opencode", s)
	if len(written) != 12+1+1+1+1 { // agents, command, skill, plugin, manifest
		t.Fatalf("wrote %d files: %v", len(written), written)
	}
	for _, p := range written {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(project, p)
		if !own.Wrote(filepath.ToSlash(rel), b) {
			t.Errorf("%s as installed is not recognised", rel)
		}
	}
	other, err := Files("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	if own.Wrote(".opencode/plugin/whetstone.ts", other["plugin/whetstone.ts"]) {
		t.Error("the plugin running /bin/sh is recognised as whetstone's")
	}
}
