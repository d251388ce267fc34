package scope

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// pedantLines is how many lines a fix adds before its code is new enough
// for the pedant's look, without a finding of its own to check.
const pedantLines = 30

// contentRule selects a lens by a line a fix adds; inTests when such a
// line in a test still gives the lens something to review.
type contentRule struct {
	name    string
	re      *regexp.Regexp
	inTests bool
}

// coreRules select a core lens by a line a fix adds (never in
// documentation; silent failures not in tests either).
var coreRules = sync.OnceValue(func() []contentRule {
	return []contentRule{
		{"security-reviewer", regexp.MustCompile(`(?i)exec\.Command|os/exec|subprocess|\beval\(|child_process|\bsql\b|\.Query(Row)?(Context)?\(|\.Exec(Context)?\(|crypto|password|passwd|secret|\btoken\b|\bauth(\b|[nz]\b|entic|ori[sz])|permission|chmod|html/template|text/template|innerHTML|dangerouslySetInnerHTML|pickle|yaml\.load|\bunsafe\b|filepath\.Join|os\.(Open|Create|ReadFile|WriteFile|Remove)|http\.|url\.Parse|Unmarshal|deserializ`), true},
		{"silent-failure-hunter", regexp.MustCompile(`\berr\b|\berror\b|\bcatch\b|\bexcept\b|\brescue\b|recover\(|\bpanic\(|\.unwrap\(|\btry\b|\bfinally\b|\b_ = |\?\?|\bfallback\b|\bdefault:`), false},
	}
})

// FixLenses names the reviewers whose lens has something in a fix.patch,
// each with the first reason found, for a focused review round
// (loop.Run.FocusOn; docs/design.md, "Focused re-reviews"). The
// specialists' path and content triggers apply to the fix's files and
// added lines as they do at the start; for the core lenses: the witness
// whenever the fix changes code that is not documentation and the
// project has verify commands (what it verified must be verified again;
// without a command it has nothing to run), the security reviewer for a file
// triaged deep or a security-shaped added line, the silent-failure hunter
// for an added line that handles or drops an error outside a test, the
// pedant when the fix adds a file or 30 lines or more. The user's globs
// (whetstone.json "specialists", globs) count as at the start. Files c
// triages skip select nothing. The critic is not named: it reviews every
// fix.
func FixLenses(fix []byte, c Context, globs map[string][]string) ([]Specialist, error) {
	parsed, _, err := gitdiff.Parse(bytes.NewReader(fix))
	if err != nil {
		return nil, fmt.Errorf("read fix.patch: %w", err)
	}
	known := map[string]File{}
	for _, f := range c.Files {
		known[f.Path] = f
	}
	var changes []change
	added := 0
	var out []Specialist
	add := func(name, reason string) {
		for _, s := range out {
			if s.Name == name {
				return
			}
		}
		out = append(out, Specialist{Name: name, Reason: reason})
	}
	for _, f := range parsed {
		ch := change{File: File{Path: f.NewName, Status: "modified"}}
		switch {
		case f.IsDelete:
			ch.Path, ch.Status = f.OldName, "deleted"
		case f.IsNew:
			ch.Status = "added"
		}
		if k, ok := known[ch.Path]; ok {
			ch.Triage, ch.TriageReason = k.Triage, k.TriageReason
		}
		if ch.Triage == "skip" {
			continue
		}
		fillLines(&ch, f)
		changes = append(changes, ch)
		why := ch.nothingFor()
		if ch.code && why != whyDocs && why != whyLicense && len(c.Verify) > 0 {
			add("witness", ch.Path+" changes code")
		}
		if ch.Triage == "deep" {
			add("security-reviewer", ch.Path+" is triaged deep ("+ch.TriageReason+")")
		}
		if ch.Status == "added" {
			add("pedant", ch.Path+" is a new file")
		}
		added += ch.Added
		for _, r := range coreRules() {
			if why == whyDocs || why == whyLicense || (why == whyTest && !r.inTests) {
				continue
			}
			for _, l := range ch.added {
				if m := r.re.FindString(l.text); m != "" && !isComment(l.text) {
					add(r.name, fmt.Sprintf("%s:%d adds %q", ch.Path, l.n, strings.TrimSpace(m)))
					break
				}
			}
		}
	}
	if added >= pedantLines {
		add("pedant", fmt.Sprintf("the fix adds %d lines", added))
	}
	called, _ := specialists(changes, Request{Specialists: globs})
	for _, s := range called {
		add(s.Name, s.Reason)
	}
	return out, nil
}
