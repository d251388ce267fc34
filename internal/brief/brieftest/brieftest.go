// Package brieftest gives tests a registry with one lens more than the
// built-in one: the fixture testdata/i18n-reviewer.md, a specialist that
// .po files, the path words i18n and locale(s) and added lines calling
// gettext call in. Each package that takes its agents from the registry
// (scope's triggers, doctor, cmd/genagents) shows with it that one source
// file is all a new lens needs.
package brieftest

import (
	_ "embed"
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/whetstone-dev/whetstone/internal/brief"
)

// Lens is the fixture lens's name.
const Lens = "i18n-reviewer"

//go:embed testdata/i18n-reviewer.md
var lens []byte

// Registry is the built-in sources plus the fixture lens.
func Registry(t testing.TB) brief.Registry {
	t.Helper()
	src := fstest.MapFS{}
	err := fs.WalkDir(brief.Sources(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(brief.Sources(), p)
		src[p] = &fstest.MapFile{Data: data}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	src[Lens+".md"] = &fstest.MapFile{Data: lens}
	reg, err := brief.LoadRegistry(src)
	if err != nil {
		t.Fatalf("the registry with %s: %v", Lens, err)
	}
	return reg
}
