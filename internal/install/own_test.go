package install

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOwnJudgesContent: after Install, Own recognises every file it wrote
// and its manifest, at their paths in the project, and nothing else: not
// an edited file, not the same content at a path install never writes, not
// a manifest that names another binary, another version, a file more, a
// directory outside the layout, or is formatted otherwise.
func TestOwnJudgesContent(t *testing.T) {
	l := Layout{Owned: []string{"agent", "skill"}, Deep: []string{"skill"}}
	files := map[string][]byte{
		"agent/whetstone-critic.md":       []byte("critic\n"),
		"skill/whetstone-review/SKILL.md": []byte("skill\n"),
	}
	const bin = "/opt/whetstone"
	project := t.TempDir()
	dir := filepath.Join(project, ".client")
	if _, err := Install(dir, l, files, bin); err != nil {
		t.Fatal(err)
	}
	o := &Own{}
	o.Add(".client", Set{Layout: l, Files: files, Binary: bin})
	read := func(rel string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, rel := range []string{"agent/whetstone-critic.md", "skill/whetstone-review/SKILL.md", ManifestName} {
		if !o.Names(".client/"+rel) || !o.Wrote(".client/"+rel, read(rel)) {
			t.Errorf("%s as installed is not recognised", rel)
		}
	}
	manifest := string(read(ManifestName))
	for _, tc := range []struct {
		name, path, data string
	}{
		{"edited", ".client/agent/whetstone-critic.md", "critic\nrm -rf /\n"},
		{"another file's content", ".client/agent/whetstone-critic.md", "skill\n"},
		{"a path install never writes", ".client/agent/mine.md", "critic\n"},
		{"outside the config directory", "agent/whetstone-critic.md", "critic\n"},
		{"another directory's name", ".other/agent/whetstone-critic.md", "critic\n"},
		{"manifest naming another binary", ".client/" + ManifestName, strings.Replace(manifest, bin, "/bin/sh", 1)},
		{"manifest of another version", ".client/" + ManifestName, strings.Replace(manifest, `"version": "`, `"version": "0.0.0-`, 1)},
		{"manifest with a file more", ".client/" + ManifestName, strings.Replace(manifest, `"files": {`, `"files": {`+"\n    \"agent/whetstone-x.md\": \"00\",", 1)},
		{"manifest with a directory outside the layout", ".client/" + ManifestName, strings.Replace(manifest, `"dirs": [`, `"dirs": [`+"\n    \"src\",", 1)},
		{"manifest formatted otherwise", ".client/" + ManifestName, strings.TrimSuffix(manifest, "\n")},
	} {
		if tc.data == manifest {
			t.Fatalf("%s: the case changes nothing", tc.name)
		}
		if o.Wrote(tc.path, []byte(tc.data)) {
			t.Errorf("%s: recognised as whetstone's", tc.name)
		}
	}
	var none *Own
	if none.Names(".client/"+ManifestName) || none.Wrote(".client/agent/whetstone-critic.md", []byte("critic\n")) {
		t.Error("a nil Own recognises a file")
	}
}
