package claudecode

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/whetstone-dev/whetstone/internal/hook"
)

func parse(t *testing.T, raw string) hook.Payload {
	t.Helper()
	p, err := hook.Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	Client{}.Normalise(&p)
	return p
}

// TestReviewSkill: the model may call the review skill with or without
// the command's slash, with arguments; another skill is not it.
func TestReviewSkill(t *testing.T) {
	for _, tt := range []struct {
		input, args string
		ok          bool
	}{
		{`{"skill":"whetstone:review","args":"--quick"}`, "--quick", true},
		{`{"skill":" /whetstone:review "}`, "", true},
		{`{"skill":"whetstone:guide"}`, "", false},
		{`{"name":"whetstone-review"}`, "", false},
	} {
		p := parse(t, `{"session_id":"s","tool_name":"Skill","tool_input":`+tt.input+`}`)
		if args, ok := (Client{}).ReviewSkill(p); args != tt.args || ok != tt.ok {
			t.Errorf("%s: %q, %v; want %q, %v", tt.input, args, ok, tt.args, tt.ok)
		}
	}
}

// TestEditPaths: an Edit names its file, a NotebookEdit its notebook.
func TestEditPaths(t *testing.T) {
	p := parse(t, `{"session_id":"s","tool_name":"Edit","tool_input":{"file_path":"/p/a.go"}}`)
	q := parse(t, `{"session_id":"s","tool_name":"NotebookEdit","tool_input":{"notebook_path":"/p/n.ipynb"}}`)
	if !slices.Equal(p.Paths, []string{"/p/a.go"}) || !slices.Equal(q.Paths, []string{"/p/n.ipynb"}) || p.CwdFromCall {
		t.Errorf("paths %q and %q", p.Paths, q.Paths)
	}
}

// TestDriverRun: the driver streams hook events in bypassPermissions with
// 60 turns unless told otherwise.
func TestDriverRun(t *testing.T) {
	d := Driver{Bin: "claude", Plugin: "/plugin", Debug: "/d.log"}
	got := strings.Join(d.Run(context.Background(), d.Review()).Args, " ")
	if want := "claude -p /whetstone:review --plugin-dir /plugin --output-format stream-json --verbose --include-hook-events --permission-mode bypassPermissions --debug-file /d.log --max-turns 60"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	d.Plugin, d.Mode = "", "default"
	got = strings.Join(d.Run(context.Background(), "hi", "--max-turns", "3").Args, " ")
	if want := "claude -p hi --output-format stream-json --verbose --include-hook-events --permission-mode default --debug-file /d.log --max-turns 3"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
