package loop

import (
	"fmt"
	"strings"

	"github.com/whetstone-dev/whetstone/internal/review"
)

// Intent is what every task says of the author's intent, which
// context.json's "intent" holds in full (scope.Intent): the subjects of the
// first reviewed commits, how many commits there are, and whether a
// pull-request description was given.
type Intent struct {
	Subjects    []string `json:"subjects,omitempty"`
	Commits     int      `json:"commits,omitempty"`
	Description bool     `json:"description,omitempty"`
}

// Intent limits: how many subjects a task quotes, and how much of each.
const (
	intentSubjects = 3
	intentSubject  = 120
)

// NewIntent is the task's view of an intent: at most three subjects, each
// one cleaned line of at most 120 characters.
func NewIntent(subjects []string, commits int, description bool) *Intent {
	if commits == 0 && !description {
		return nil
	}
	in := &Intent{Commits: commits, Description: description}
	for _, s := range subjects[:min(len(subjects), intentSubjects)] {
		in.Subjects = append(in.Subjects, review.ShortLine(s, intentSubject))
	}
	return in
}

// intentLine tells an agent where the author's intent is, quoting the
// first commit subjects; the critic is also told to judge the change
// against it. Nothing when the change has neither commits nor a
// description (uncommitted or staged work reviewed without --intent).
func (r *Run) intentLine(b *strings.Builder, name string) {
	in := r.Intent
	if in == nil {
		return
	}
	var what []string
	if in.Commits > 0 {
		what = append(what, "the messages of the "+review.Plural(in.Commits, "reviewed commit"))
	}
	if in.Description {
		what = append(what, "the pull-request description")
	}
	fmt.Fprintf(b, "The author's intent (%s): \"intent\" in %s/context.json", strings.Join(what, " and "), r.Dir())
	if len(in.Subjects) > 0 {
		quoted := make([]string, len(in.Subjects))
		for i, s := range in.Subjects {
			quoted[i] = fmt.Sprintf("%q", review.CleanLine(s))
		}
		b.WriteString("; " + strings.Join(quoted, "; "))
		if more := in.Commits - len(in.Subjects); more > 0 {
			fmt.Fprintf(b, " and %d more", more)
		}
	}
	b.WriteString(".\n")
	switch name {
	case Regressions:
		b.WriteString("Judge the change against that intent: a behaviour change it states is deliberate and not a finding by itself; one it does not state, or code that does not do what it says, is.\n")
	case "fixer":
		b.WriteString("Keep your fixes within that intent: do not undo a behaviour change it states.\n")
	}
}
