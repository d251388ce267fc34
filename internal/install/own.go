package install

import (
	"bytes"
	"encoding/json"
	"maps"
	"path"
	"strings"

	"github.com/whetstone-dev/whetstone"
)

// Set is what one client's install writes for one binary: the files, by
// slash path relative to the config directory, in that directory's layout.
type Set struct {
	Layout Layout
	Files  map[string][]byte
	Binary string
}

// Own recognises the files the installs of this whetstone wrote into a
// project, so that a review leaves them out (docs/design.md, "whetstone
// never reviews itself"). It judges content, never a path alone: a file
// is whetstone's only while it holds, byte for byte, what this version's
// install writes there for the binary running now. A file edited since,
// one an older version wrote, and a plugin or hooks.json naming another
// binary (a program the change could point it at) are the project's and
// reviewed like any other. The manifest is judged too: it must list
// exactly the files and digests this install writes, name this binary and
// version, and be as Install formats it.
type Own struct {
	dirs map[string]Set // config directory, slash path relative to the project root → its set
}

// Add records the set an install writes into dir, a slash path relative
// to the project root (".opencode").
func (o *Own) Add(dir string, s Set) {
	if o.dirs == nil {
		o.dirs = map[string]Set{}
	}
	o.dirs[path.Clean(dir)] = s
}

// set finds the config directory p (slash, relative to the project root)
// is in, and p's path relative to it.
func (o *Own) set(p string) (Set, string, bool) {
	if o == nil {
		return Set{}, "", false
	}
	for dir, s := range o.dirs {
		if rel, ok := strings.CutPrefix(p, dir+"/"); ok {
			return s, rel, true
		}
	}
	return Set{}, "", false
}

// Names reports whether p (slash, relative to the project root) is a
// path an install writes: the only files whose content Wrote need read.
func (o *Own) Names(p string) bool {
	s, rel, ok := o.set(p)
	if !ok {
		return false
	}
	_, file := s.Files[rel]
	return file || rel == ManifestName
}

// Wrote reports whether data is exactly what an install of this whetstone
// writes at p (slash, relative to the project root) for the binary running
// now.
func (o *Own) Wrote(p string, data []byte) bool {
	s, rel, ok := o.set(p)
	if !ok {
		return false
	}
	if rel == ManifestName {
		return s.manifest(data)
	}
	want, ok := s.Files[rel]
	return ok && bytes.Equal(want, data)
}

// manifest reports whether data is the manifest Install writes for s: the
// digests of s's files, s's binary, this version, directories it may
// have created, formatted as Install formats them. Which directories it
// created depends on what was there before, so those come from data.
func (s Set) manifest(data []byte) bool {
	var m Manifest
	if json.Unmarshal(data, &m) != nil || m.Version != whetstone.Version || m.Binary != s.Binary {
		return false
	}
	want := make(map[string]string, len(s.Files))
	for rel, b := range s.Files {
		want[rel] = digest(b)
	}
	if !maps.Equal(m.Files, want) {
		return false
	}
	for _, d := range m.Dirs {
		if s.Layout.owned(d, true) != nil {
			return false
		}
	}
	raw, err := json.MarshalIndent(m, "", "  ")
	return err == nil && bytes.Equal(append(raw, '\n'), data)
}

// CommitNote is the one line an install into a project says about git:
// whether to commit what it wrote, and why. The plugin, hooks and manifest
// name this machine's binary by its absolute path, which a teammate's
// checkout would run (Codex's gate denies every call when it cannot), so
// each person installs; a review leaves the files out either way (Own).
func CommitNote(client string) string {
	return "git: do not commit these files; each teammate runs `whetstone install " + client + "`, since they name this machine's whetstone binary by its path. Committed or not, whetstone leaves them out of every review while they hold what it wrote."
}
