package scope

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/whetstone-dev/whetstone/internal/brief/brieftest"
)

// TestSpecialistsNewLens: a lens added as one source file (the fixture
// i18n-reviewer) is called in by its own triggers, by path word, extension
// and added line, with the same reasons and exceptions as the built-in
// specialists; the built-in registry does not know it.
func TestSpecialistsNewLens(t *testing.T) {
	r := newRepo(t)
	r.write("README", "r\n")
	r.commit("base")
	r.write("docs/i18n.md", "# Translations\n")
	reg := brieftest.Registry(t)
	c, _ := r.detect(Request{Uncommitted: true, Agents: &reg})
	if d := cmp.Diff([]Specialist{{brieftest.Lens, `docs/i18n.md: path names "i18n", but it is documentation`}}, c.NotCalled); d != "" || len(c.Specialists) != 0 {
		t.Errorf("called %v; not called with the new lens (-want +got):\n%s", c.Specialists, d)
	}
	r.commit("docs")
	r.write("locales/fr.json", "{\"hello\": \"bonjour\"}\n")
	c, _ = r.detect(Request{Uncommitted: true, Agents: &reg})
	if d := cmp.Diff([]Specialist{{brieftest.Lens, `locales/fr.json: path names "locales"`}}, c.Specialists); d != "" {
		t.Errorf("specialists with the new lens (-want +got):\n%s", d)
	}
	r.commit("translations")
	r.write("web/greet.go", "package web\n\nfunc greet() string { return gettext(\"hello\") }\n")
	c, _ = r.detect(Request{Uncommitted: true, Agents: &reg})
	if d := cmp.Diff([]Specialist{{brieftest.Lens, `web/greet.go:3 adds "gettext("`}}, c.Specialists); d != "" {
		t.Errorf("specialists with the new lens (-want +got):\n%s", d)
	}
	r.commit("greeting")
	r.write("po/de.po", "msgid \"hello\"\n")
	c, _ = r.detect(Request{Uncommitted: true, Agents: &reg})
	if d := cmp.Diff([]Specialist{{brieftest.Lens, "po/de.po is a .po file"}}, c.Specialists); d != "" {
		t.Errorf("specialists with the new lens (-want +got):\n%s", d)
	}
	c, _ = r.detect(Request{Uncommitted: true})
	if len(c.Specialists) != 0 || len(c.NotCalled) != 0 {
		t.Errorf("the built-in registry called in %v, passed %v", c.Specialists, c.NotCalled)
	}
}
