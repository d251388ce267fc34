package client

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// pending are files outside internal/client that still name a client, by
// slash path from the module root, each with why. Empty it, do not grow
// it.
var pending = map[string]string{
	// The demo's launch facts are the clients' drivers
	// (claudecode.Driver, opencode.Driver), shared with the e2e harness;
	// its -opencode flag (the Makefile's CLIENT=opencode) and the
	// progress it prints from Claude Code's stream are still its own.
	"cmd/demo/main.go":     "the -opencode and -codex flags pick the demo's driver",
	"cmd/demo/opencode.go": "the demo in OpenCode",
	"cmd/demo/codex.go":    "the demo in Codex",
}

// mentions lists where the Go source src (file name, for messages) names
// a client: an identifier holding a client's name in any case
// (OpenCode, openCodeText, isClaudeCode), or a string literal holding a
// client's Name as a word ("opencode", ".opencode/agent"), which is how
// a branch on the client or one of its paths is spelt. Comments and
// prose naming a client by its Title ("install OpenCode: …") are not
// branches and are allowed.
func mentions(name string, src []byte) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var idents []string
	var words []*regexp.Regexp
	for _, c := range All() {
		idents = append(idents, strings.ToLower(strings.NewReplacer("-", "", " ", "", "_", "").Replace(c.Name())))
		words = append(words, regexp.MustCompile(`(^|[^A-Za-z0-9])`+regexp.QuoteMeta(c.Name())+`($|[^A-Za-z0-9])`))
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			for _, id := range idents {
				if strings.Contains(strings.ToLower(n.Name), id) {
					out = append(out, fmt.Sprintf("%s: identifier %s", fset.Position(n.Pos()), n.Name))
				}
			}
		case *ast.BasicLit:
			if n.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(n.Value)
			if err != nil {
				s = n.Value
			}
			for _, w := range words {
				if w.MatchString(s) {
					out = append(out, fmt.Sprintf("%s: string %.60s", fset.Position(n.Pos()), n.Value))
				}
			}
		}
		return true
	})
	return out, nil
}

// TestNoClientNamedOutside: no Go source of internal/ or cmd/ outside
// internal/client names a client (mentions): whatever differs between
// clients is asked of the client (Of), so a new client is one package
// here. Tests may name clients: they feed each client's payloads.
func TestNoClientNamedOutside(t *testing.T) {
	const root = "../.."
	for _, top := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				if rel == "internal/client" || d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
				return nil
			}
			src, err := readSource(p)
			if err != nil {
				return err
			}
			found, err := mentions(rel, src)
			if err != nil {
				return err
			}
			if _, ok := pending[rel]; ok {
				if len(found) == 0 {
					t.Errorf("%s no longer names a client: remove it from pending", rel)
				}
				return nil
			}
			for _, m := range found {
				t.Errorf("%s names a client outside internal/client; ask the payload's client (client.Of) instead", m)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestMentionsFindsABranch: the check above sees the branches it exists
// to keep out.
func TestMentionsFindsABranch(t *testing.T) {
	for _, src := range []string{
		`package x; func f(p P) bool { return p.Client == "opencode" }`,
		`package x; func f(p P) bool { return p.Client == hook.OpenCode }`,
		`package x; const claudeCode = "claude-code"`,
		`package x; var dir = filepath.Join(root, ".opencode")`,
		`package x; func openCodeText(s string) string { return s }`,
	} {
		found, err := mentions("x.go", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if len(found) == 0 {
			t.Errorf("no client named in %s", src)
		}
	}
	for _, src := range []string{
		`package x // OpenCode and Claude Code are both fine in a comment.`,
		`package x; const fix = "install OpenCode: npm install -g opencode-ai"`,
		`package x; const usage = "a review loop for Claude Code"`,
	} {
		found, err := mentions("x.go", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(src, "opencode-ai") != (len(found) > 0) {
			t.Errorf("%s: found %q", src, found)
		}
	}
}

func readSource(p string) ([]byte, error) { return os.ReadFile(p) }
