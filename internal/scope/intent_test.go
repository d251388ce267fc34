package scope

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadIntent: the reviewed commits' messages, newest 20 in order and
// cleaned, 4 KiB of each; none for uncommitted work; the root commit alone
// for --last-commit on it; a description cut at 16 KiB.
func TestReadIntent(t *testing.T) {
	r := newRepo(t)
	r.write("a.txt", "0\n")
	r.commit("root: the first\n\nbody of the root")
	ctx := context.Background()

	c, _ := r.detect(Request{LastCommit: true})
	in, err := ReadIntent(ctx, r.dir, c, "")
	if err != nil || in == nil || len(in.Commits) != 1 || in.Commits[0].Subject != "root: the first" || in.Commits[0].Body != "body of the root" {
		t.Fatalf("root commit intent: %+v, %v", in, err)
	}

	base := r.git("rev-parse", "HEAD")
	for i := 1; i <= 25; i++ {
		r.write("a.txt", fmt.Sprintf("%d\n", i))
		msg := fmt.Sprintf("commit %d\r\n\r\nbody %d\u202e\x07 end   ", i, i)
		if i == 25 {
			msg = "commit 25\n\n" + strings.Repeat("é", MaxMessage)
		}
		r.commit(msg)
	}
	c, _ = r.detect(Request{Since: base})
	in, err = ReadIntent(ctx, r.dir, c, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Commits) != MaxIntentCommits || in.Omitted != 5 {
		t.Fatalf("%d commits, %d omitted; want 20 and 5", len(in.Commits), in.Omitted)
	}
	if got := in.Commits[0]; got.Subject != "commit 6" || got.Body != "body 6 end" {
		t.Errorf("first kept commit = %+v, want commit 6, cleaned", got)
	}
	last := in.Commits[19]
	if last.Subject != "commit 25" || len(last.Subject)+len(last.Body) > MaxMessage+64 || !strings.Contains(last.Body, "more bytes cut]") {
		t.Errorf("the long message was not cut at 4 KiB: %d bytes, ends %q", len(last.Body), last.Body[max(0, len(last.Body)-40):])
	}

	r.write("b.txt", "uncommitted\n")
	c, _ = r.detect(Request{Uncommitted: true})
	if in, err := ReadIntent(ctx, r.dir, c, ""); in != nil || err != nil {
		t.Errorf("uncommitted work has an intent: %+v, %v", in, err)
	}
	if err := os.WriteFile(filepath.Join(r.dir, "pr.md"), []byte(strings.Repeat("x", MaxDescription+10)), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err = ReadIntent(ctx, r.dir, c, "pr.md")
	if err != nil || in == nil || len(in.Commits) != 0 || !strings.HasSuffix(in.Description, "\n[… 10 more bytes cut]") || in.Source != "pr.md" {
		t.Errorf("description: %+.200v, %v", in, err)
	}
}
