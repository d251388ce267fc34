package scope

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/whetstone-dev/whetstone/internal/gitrun"
	"github.com/whetstone-dev/whetstone/internal/safeio"
)

// Intent is what the author meant the change to do, as context.json's
// "intent": the messages of the reviewed commits (base..head, newest last)
// and the pull-request description given with --intent. Reviewers judge the
// change against it; the critic is told to.
type Intent struct {
	Commits []Commit `json:"commits"`
	// Omitted counts the older commits of base..head past MaxIntentCommits.
	Omitted int `json:"commits_omitted,omitempty"`
	// Description is the pull-request description, at most
	// MaxDescription bytes of it (then a line saying how much was cut).
	Description string `json:"description,omitempty"`
	Source      string `json:"description_file,omitempty"` // the file it was read from, relative to the project
}

// Commit is one reviewed commit's message.
type Commit struct {
	Hash    string `json:"hash"`
	Subject string `json:"subject"`
	Body    string `json:"body,omitempty"`
}

// Bounds of the intent: the newest 20 commits, 4 KiB of each message, a
// description file of at most 256 KiB of which 16 KiB are kept.
const (
	MaxIntentCommits   = 20
	MaxMessage         = 4 << 10
	MaxDescriptionFile = 256 << 10
	MaxDescription     = 16 << 10
)

// Subjects are the commits' subjects, oldest first.
func (in *Intent) Subjects() []string {
	var out []string
	for _, c := range in.Commits {
		out = append(out, c.Subject)
	}
	return out
}

// ReadIntent gathers c's intent: the messages of the commits in
// base..head (none for uncommitted or staged work) and, when description
// names a file, the pull-request description in it (ReadDescription). It
// returns nil when there is neither.
func ReadIntent(ctx context.Context, root string, c Context, description string) (*Intent, error) {
	in := &Intent{Commits: []Commit{}}
	if c.Commits > 0 {
		args := []string{"log", "-z", "--no-color", "--no-notes", "--no-show-signature", "--format=%H%n%B", "--reverse",
			fmt.Sprintf("--max-count=%d", MaxIntentCommits), c.Head}
		if c.Mode == ModeLastCommit {
			args[len(args)-2] = "--max-count=1" // the base may be the empty tree
		} else {
			args = append(args, "--not", c.Base)
		}
		out, err := gitrun.Git{Dir: root}.Run(ctx, append(args, "--")...)
		if err != nil {
			return nil, fmt.Errorf("read the commit messages: %w", err)
		}
		for _, rec := range bytes.Split(out, []byte{0}) {
			hash, msg, ok := bytes.Cut(rec, []byte{'\n'})
			if !ok || len(hash) == 0 {
				continue
			}
			subject, body, _ := strings.Cut(strings.TrimLeft(cleanText(string(msg), MaxMessage), "\n"), "\n")
			in.Commits = append(in.Commits, Commit{Hash: string(hash), Subject: strings.TrimSpace(subject), Body: strings.Trim(body, "\n")})
		}
		in.Omitted = max(c.Commits-len(in.Commits), 0)
	}
	if description != "" {
		text, err := ReadDescription(root, description)
		if err != nil {
			return nil, err
		}
		in.Description, in.Source = text, filepath.ToSlash(description)
	}
	if len(in.Commits) == 0 && in.Description == "" {
		return nil, nil
	}
	return in, nil
}

// ReadDescription reads a pull-request description from a file inside the
// project (a path relative to root, or absolute inside it; a symlink is
// followed only when it leads inside the project), a regular file of at
// most MaxDescriptionFile bytes. The text is cleaned (cleanText) and kept
// to MaxDescription bytes. Errors are *Error, in words the user can act on.
func ReadDescription(root, name string) (string, error) {
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	data, err := safeio.ReadIn(root, p, MaxDescriptionFile)
	switch {
	case errors.Is(err, safeio.ErrTooLarge):
		return "", userError("--intent %s is larger than %d KiB: pass a shorter description", name, MaxDescriptionFile>>10)
	case err != nil:
		return "", userError("--intent %s cannot be read (%v): name a file inside the project", name, err)
	}
	return cleanText(string(data), MaxDescription), nil
}

// cleanText makes text a model reads safe to quote: invalid UTF-8 becomes
// U+FFFD, line ends become \n, control, bidirectional and other invisible
// format characters go (tabs and newlines stay), trailing blanks of each
// line and blank lines at the end go, and text past limit bytes is cut at
// a character boundary with a line that says so.
func cleanText(s string, limit int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\u2028", "\n", "\u2029", "\n").Replace(s)
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, s)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRightFunc(l, unicode.IsSpace)
	}
	s = strings.TrimRight(strings.Join(lines, "\n"), "\n")
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[… %d more bytes cut]", len(s)-cut)
}
