// Package install writes a client's whetstone files (a plugin, the agents,
// the review command and skill: what the client's package in
// internal/client says) into the client's config directory, and removes
// exactly those again. A manifest in that directory records every file it
// wrote with its digest, and every directory it created: uninstall removes
// a file only if it still holds what was written, a directory only if it
// created it and it is empty, and never anything else — neither the user's
// own files nor what the client installs there itself (OpenCode's
// package.json, node_modules/, .gitignore).
package install

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/whetstone-dev/whetstone"
	"github.com/whetstone-dev/whetstone/internal/safeio"
)

// ManifestName is the manifest's file name in the config directory.
const ManifestName = "whetstone-manifest.json"

// maxManifest bounds reading a manifest back.
const maxManifest = 1 << 20

// Manifest is what an install wrote.
type Manifest struct {
	Version string            `json:"version"`
	Binary  string            `json:"binary"`
	Files   map[string]string `json:"files"`          // slash path relative to the config dir → sha256
	Dirs    []string          `json:"dirs,omitempty"` // directories it created, deepest last
}

// Layout is where a client's whetstone files live in its config
// directory: whetstone owns only the entries named whetstone* of the
// folders Owned (a file each, or in Deep a folder of files), and the files
// Whole of the config directory itself, which a client reads as one file
// (Codex's hooks.json). A manifest naming anything else is refused.
type Layout struct {
	Owned []string
	Deep  []string
	Whole []string
	// Ours says whether a Whole file's content is whetstone's: a manifest
	// is only a file in the directory (a project's can be committed), so
	// a Whole file it names is replaced or removed only when Ours agrees.
	Ours func(rel string, data []byte) bool
}

// ours reports whether the Whole file rel with content b is whetstone's
// (every other file is decided by the manifest alone).
func (l Layout) ours(rel string, b []byte) bool {
	return !slices.Contains(l.Whole, rel) || l.Ours != nil && l.Ours(rel, b)
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// readManifest reads dir's manifest; a missing one is an empty manifest.
func readManifest(dir string, l Layout) (Manifest, error) {
	m := Manifest{Files: map[string]string{}}
	b, err := safeio.ReadFile(filepath.Join(dir, ManifestName), maxManifest, true)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		return m, fmt.Errorf("read %s: %w", filepath.Join(dir, ManifestName), err)
	}
	if m.Files == nil {
		m.Files = map[string]string{}
	}
	for rel := range m.Files {
		if err := l.owned(rel, false); err != nil {
			return m, fmt.Errorf("%s names %q: %w; nothing was changed", filepath.Join(dir, ManifestName), rel, err)
		}
	}
	for _, rel := range m.Dirs {
		if err := l.owned(rel, true); err != nil {
			return m, fmt.Errorf("%s names %q: %w; nothing was changed", filepath.Join(dir, ManifestName), rel, err)
		}
	}
	return m, nil
}

// safePath reports whether a manifest entry stays inside its directory.
func safePath(rel string) bool {
	return rel != "" && !path.IsAbs(rel) && path.Clean(rel) == rel && !strings.HasPrefix(rel, "../") && rel != ".." && !strings.Contains(rel, "\\")
}

// owned checks that a manifest entry is a path whetstone writes (a file)
// or may have created (a directory): relative, clean, and a whetstone*
// entry of one of the owned folders (the folders themselves, and the
// config directory ".", for dir). A committed manifest naming anything
// else — the user's agent/mine.md, OpenCode's package.json, ../x — is
// refused.
func (l Layout) owned(rel string, dir bool) error {
	if !safePath(rel) {
		return errors.New("a path outside its directory")
	}
	parts := strings.Split(rel, "/")
	switch {
	case !dir && slices.Contains(l.Whole, rel):
		return nil
	case !slices.Contains(l.Owned, parts[0]):
		if dir && rel == "." {
			return nil
		}
	case len(parts) == 1:
		if dir {
			return nil
		}
	case strings.HasPrefix(parts[1], "whetstone") && (slices.Contains(l.Deep, parts[0]) || len(parts) == 2):
		return nil
	}
	names := make([]string, len(l.Owned))
	for i, d := range l.Owned {
		names[i] = d + "/"
	}
	list := strings.Join(names, ", ")
	if n := len(names); n > 1 {
		list = strings.Join(names[:n-1], ", ") + " and " + names[n-1]
	}
	return fmt.Errorf("a path whetstone never writes (its files are %s entries named whetstone*)", list)
}

// Install writes files (by slash path relative to dir, in layout l) into
// dir and returns the paths written; the manifest names binary, the
// whetstone the files run. A file that is there already and was not
// written by an earlier install (or was changed since) is the user's:
// Install refuses before writing anything.
func Install(dir string, l Layout, files map[string][]byte, binary string) ([]string, error) {
	names := make([]string, 0, len(files))
	for rel := range files {
		names = append(names, rel)
	}
	slices.Sort(names)
	if err := noSymlinks(dir, names); err != nil {
		return nil, err
	}
	old, err := readManifest(dir, l)
	if err != nil {
		return nil, err
	}
	if err := noSymlinks(dir, append(slices.Collect(maps.Keys(old.Files)), old.Dirs...)); err != nil {
		return nil, err
	}
	for _, rel := range names {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		info, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !info.Mode().IsRegular() {
			return nil, fmt.Errorf("%s is there already and is not a regular file; nothing was installed", p)
		}
		b, err := safeio.ReadFile(p, 16<<20, true)
		if err != nil {
			return nil, err
		}
		if old.Files[rel] != digest(b) || !l.ours(rel, b) {
			return nil, fmt.Errorf("%s is there already and was not written by whetstone (or was changed since); move it away to install, nothing was installed", p)
		}
	}
	m := Manifest{Version: whetstone.Version, Binary: binary, Files: map[string]string{}, Dirs: old.Dirs}
	var written []string
	for _, rel := range names {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		created, err := mkdirs(dir, path.Dir(rel))
		if err != nil {
			return written, err
		}
		for _, d := range created {
			if !slices.Contains(m.Dirs, d) {
				m.Dirs = append(m.Dirs, d)
			}
		}
		if err := safeio.WriteAtomic(p, files[rel], safeio.WriteOptions{}); err != nil {
			return written, err
		}
		m.Files[rel] = digest(files[rel])
		written = append(written, p)
	}
	// What an earlier version wrote and this one does not: removed, if
	// unchanged.
	for rel, sum := range old.Files {
		if _, ok := files[rel]; !ok {
			removeIfSame(filepath.Join(dir, filepath.FromSlash(rel)), rel, sum, l)
		}
	}
	raw, _ := json.MarshalIndent(m, "", "  ")
	if err := safeio.WriteAtomic(filepath.Join(dir, ManifestName), append(raw, '\n'), safeio.WriteOptions{}); err != nil {
		return written, err
	}
	return append(written, filepath.Join(dir, ManifestName)), nil
}

// Uninstall removes what the manifest in dir (in layout l) lists and
// returns the paths removed and the files it kept because they changed
// since.
func Uninstall(dir string, l Layout) (removed, kept []string, err error) {
	if err := noSymlinks(dir, nil); err != nil {
		return nil, nil, err
	}
	m, err := readManifest(dir, l)
	if err != nil {
		return nil, nil, err
	}
	if _, err := os.Lstat(filepath.Join(dir, ManifestName)); err != nil {
		return nil, nil, fmt.Errorf("whetstone is not installed in %s (no %s)", dir, ManifestName)
	}
	names := slices.Sorted(maps.Keys(m.Files))
	if err := noSymlinks(dir, append(slices.Clone(names), m.Dirs...)); err != nil {
		return nil, nil, err
	}
	for _, rel := range names {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		switch ok, err := removeIfSame(p, rel, m.Files[rel], l); {
		case err != nil:
			return removed, kept, err
		case ok:
			removed = append(removed, p)
		default:
			if _, err := os.Lstat(p); err == nil {
				kept = append(kept, p)
			}
		}
	}
	for i := len(m.Dirs) - 1; i >= 0; i-- {
		p := filepath.Join(dir, filepath.FromSlash(m.Dirs[i]))
		// os.Remove unlinks a file too: only a real directory, and only
		// when empty.
		if info, err := os.Lstat(p); err == nil && info.IsDir() && os.Remove(p) == nil {
			removed = append(removed, p)
		}
	}
	if err := os.Remove(filepath.Join(dir, ManifestName)); err != nil {
		return removed, kept, err
	}
	removed = append(removed, filepath.Join(dir, ManifestName))
	if m.Dirs != nil && slices.Contains(m.Dirs, ".") && os.Remove(dir) == nil {
		removed = append(removed, dir)
	}
	return removed, kept, nil
}

// Embedded is every file under root in fsys (a client's generated files,
// embedded in the binary), by slash path relative to root.
func Embedded(fsys fs.ReadFileFS, root string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fsys.ReadFile(p)
		out[strings.TrimPrefix(p, root+"/")] = b
		return err
	})
	return out, err
}

// removeIfSame removes the regular file p (rel in layout l) if it still
// has digest sum and is whetstone's (Layout.ours).
func removeIfSame(p, rel, sum string, l Layout) (bool, error) {
	b, err := safeio.ReadFile(p, 16<<20, true)
	if err != nil || digest(b) != sum || !l.ours(rel, b) {
		return false, nil
	}
	if err := os.Remove(p); err != nil {
		return false, err
	}
	return true, nil
}

// mkdirs creates rel (slash path) under dir, dir itself included, and
// returns the directories it created, relative to dir ("." for dir).
func mkdirs(dir, rel string) ([]string, error) {
	var created []string
	// The directory's own parents (~/.config) are not whetstone's: made
	// when missing, never removed.
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	parts := []string{"."}
	if rel != "." {
		acc := ""
		for _, part := range strings.Split(rel, "/") {
			acc = path.Join(acc, part)
			parts = append(parts, acc)
		}
	}
	for _, r := range parts {
		p := filepath.Join(dir, filepath.FromSlash(r))
		info, err := os.Lstat(p)
		if err == nil {
			if !info.IsDir() {
				return created, fmt.Errorf("%s is not a directory", p)
			}
			continue
		}
		if err := os.Mkdir(p, 0o755); err != nil {
			return created, err
		}
		created = append(created, r)
	}
	return created, nil
}

// noSymlinks refuses a config directory that is a symlink, or holds one
// at any of rels or in a directory on the way to one (skill/,
// skill/whetstone-review/, ...): nothing is written or removed through
// one. Each path that exists must also resolve to itself below the
// config directory's real path, so nothing the checks missed (a symlink
// swapped in between) leads out.
func noSymlinks(dir string, rels []string) error {
	check := []string{".", ManifestName}
	for _, rel := range rels {
		for d := rel; d != "."; d = path.Dir(d) {
			check = append(check, d)
		}
	}
	slices.Sort(check)
	check = slices.Compact(check)
	real := ""
	for _, rel := range check {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		info, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symlink; whetstone writes or removes nothing through one", p)
		}
		if real == "" {
			if real, err = filepath.EvalSymlinks(dir); err != nil {
				return err
			}
		}
		got, err := filepath.EvalSymlinks(p)
		if err != nil {
			return err
		}
		if want := filepath.Join(real, filepath.FromSlash(rel)); got != want {
			return fmt.Errorf("%s leads to %s, not %s; whetstone writes or removes nothing through a symlink", p, got, want)
		}
	}
	return nil
}

// Status is what an install in a config directory looks like now: whether
// there is one (a manifest), the binary and version it names, and what is
// wrong with it (files changed or missing, a binary that is gone).
type Status struct {
	Installed bool
	Binary    string
	Version   string
	Files     int
	Problems  []string
}

// Inspect reads the install in dir, if any, in layout l, and checks it:
// every file it wrote still holds what was written, the binary its hooks
// run is there. It reads, never writes, and nothing through a symlink.
func Inspect(dir string, l Layout) (Status, error) {
	var st Status
	if _, err := os.Lstat(filepath.Join(dir, ManifestName)); errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	st.Installed = true
	m, err := readManifest(dir, l)
	if err != nil {
		return st, err
	}
	names := slices.Sorted(maps.Keys(m.Files))
	if err := noSymlinks(dir, names); err != nil {
		return st, err
	}
	st.Binary, st.Version, st.Files = m.Binary, m.Version, len(m.Files)
	for _, rel := range names {
		b, err := safeio.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)), 16<<20, true)
		switch {
		case err != nil:
			st.Problems = append(st.Problems, rel+" is missing")
		case digest(b) != m.Files[rel]:
			st.Problems = append(st.Problems, rel+" was changed since whetstone wrote it")
		case !l.ours(rel, b):
			st.Problems = append(st.Problems, rel+" was not written by whetstone")
		}
	}
	if info, err := os.Stat(m.Binary); err != nil || !info.Mode().IsRegular() || info.Mode()&0o111 == 0 {
		st.Problems = append(st.Problems, "the binary its hooks run, "+m.Binary+", is not there")
	}
	return st, nil
}
