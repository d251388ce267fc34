package report

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/whetstone-dev/whetstone/internal/review"
)

// Markdown renders report.md, the comment a developer posts on a pull
// request: the verdict line, the summary, the blocking findings (each with
// its lines, linked when the remote is known, an excerpt of the code, the
// suggestion and the fixer's attempt), the fixed ones with the fixer's
// hunks, and folded in <details> the findings that do not block and how the
// run went. It ends with a comment naming the report's schema and run, by
// which whetstone validate knows the file; report.json holds the data.
//
// Every text whetstone did not write itself (titles, descriptions, notes
// from agents; paths, branch names and code from the repository) goes
// through review.InlineMD, EscapeMD, CodeMD or FenceMD: such text renders as
// itself and never starts a line, so it cannot forge a heading, a verdict
// line, a list item, a link, a <details> or the end of a fence.
func (r *Report) Markdown() string {
	var b strings.Builder
	md := review.InlineMD
	if r.State == InProgress {
		fmt.Fprintf(&b, "**In progress** — iteration %d, %s phase; no verdict yet", r.Iterations, word(r.Phase))
	} else {
		fmt.Fprintf(&b, "**Verdict: %s**", cell(r.Verdict)) // — for an aborted or failed run
	}
	fmt.Fprintf(&b, " · whetstone review %s\n\n", md(r.RunID))
	for _, line := range r.Summary {
		fmt.Fprintf(&b, "- %s\n", review.EscapeMD(line))
	}
	b.WriteString("\n")
	if r.Error != "" {
		fmt.Fprintf(&b, "Error: %s\n\n", review.EscapeMD(r.Error))
	}
	for _, t := range r.Tampered {
		fmt.Fprintf(&b, "- changed during a read-only phase: %s\n", review.EscapeMD(t))
	}
	if len(r.Tampered) > 0 {
		b.WriteString("\n")
	}
	if len(r.Unavailable) > 0 {
		b.WriteString("Not available to this report:\n\n")
		for _, u := range r.Unavailable {
			fmt.Fprintf(&b, "- %s\n", review.EscapeMD(u))
		}
		b.WriteString("\n")
	}
	r.blocking(&b)
	r.fixed(&b)
	r.notBlocking(&b)
	r.timeline(&b)
	b.WriteString(r.marker())
	return b.String()
}

// marker is report.md's last line: an HTML comment (invisible on GitHub
// and GitLab) naming the schema and the run.
func (r *Report) marker() string {
	id := r.RunID
	if word(id) != id {
		id = "-" // not plain: a comment must not hold what could end it
	}
	return fmt.Sprintf("<!-- %s run %s: report.json beside this file holds the data -->\n", Schema, id)
}

func names(list []string) string {
	out := make([]string, len(list))
	for i, n := range list {
		out[i] = review.InlineMD(n)
	}
	return strings.Join(out, ", ")
}

func iterations(f Finding) string {
	if f.LastIteration > f.FirstIteration {
		return fmt.Sprintf("iterations %d–%d", f.FirstIteration, f.LastIteration)
	}
	return fmt.Sprintf("iteration %d", f.FirstIteration)
}

func claim(c *Claim) string {
	s := fmt.Sprintf("%s (iteration %d)", word(c.Status), c.Iteration)
	if c.Note != "" {
		s += " — " + review.EscapeMD(c.Note)
	}
	return s
}

// with lists the report's findings of one disposition, in report order.
func (r *Report) with(disposition string) []Finding {
	var list []Finding
	for _, f := range r.Findings {
		if f.Disposition == disposition {
			list = append(list, f)
		}
	}
	return list
}

var dispositionOrder = []string{Blocking, Fixed, Disputed, Withdrawn, Note, BelowThreshold, PreExisting, Disproved}

// lines is a finding's place, path#L10-L12, linked when the report has the
// web address.
func lines(f Finding) string {
	at := fmt.Sprintf("%s#L%d", f.File, f.Line)
	if f.EndLine > f.Line {
		at += fmt.Sprintf("-L%d", f.EndLine)
	}
	if f.Link == "" || strings.ContainsAny(f.Link, " <>()\\`\n") {
		return review.CodeMD(at)
	}
	return "[" + review.CodeMD(at) + "](" + f.Link + ")"
}

// lang is the info string of an excerpt's fence: the file's extension,
// when it is a plain word.
func lang(file string) string {
	ext := strings.TrimPrefix(path.Ext(file), ".")
	if word(ext) != ext || len(ext) > 12 {
		return ""
	}
	return ext
}

func (r *Report) blocking(b *strings.Builder) {
	list := r.with(Blocking)
	if len(list) == 0 {
		b.WriteString("## Blocking (0)\n\nNothing blocks this change.\n\n")
		return
	}
	fmt.Fprintf(b, "## Blocking (%d)\n\n", len(list))
	slices.SortStableFunc(list, func(a, b Finding) int { return strings.Compare(a.File, b.File) })
	for _, f := range list {
		fmt.Fprintf(b, "### %s · %s · %s\n\n", review.InlineMD(f.ID), review.InlineMD(f.Severity), review.InlineMD(f.Title))
		rule := ""
		if f.Rule != "" {
			rule = " (" + review.CodeMD(f.Rule) + ")"
		}
		fmt.Fprintf(b, "%s · %s%s · confidence %d · raised by %s (%s)\n\n", lines(f), review.InlineMD(f.Category), rule, f.Confidence, names(f.Reviewers), iterations(f))
		if f.Description != "" {
			fmt.Fprintf(b, "> %s\n\n", review.EscapeMD(f.Description))
		}
		if ex := f.Excerpt; ex != nil {
			if ex.File != f.File || ex.Line != f.Line {
				fmt.Fprintf(b, "Now at %s:\n\n", review.CodeMD(fmt.Sprintf("%s#L%d", ex.File, ex.Line)))
			}
			b.WriteString(review.FenceMD(ex.Text, lang(ex.File)) + "\n")
		}
		if f.Suggestion != "" {
			fmt.Fprintf(b, "**Suggestion:** %s\n\n", review.EscapeMD(f.Suggestion))
		}
		var said []string
		if f.Fixer != nil {
			said = append(said, "- Fixer: "+claim(f.Fixer))
		}
		for _, c := range f.FixChecks {
			said = append(said, fmt.Sprintf("- Fix check by %s: %s", review.InlineMD(c.Reviewer), claim(&Claim{Iteration: c.Iteration, Status: c.Status, Note: c.Note})))
		}
		if f.Validation != nil {
			said = append(said, "- Validator: "+claim(f.Validation))
		}
		if len(said) > 0 {
			b.WriteString(strings.Join(said, "\n") + "\n\n")
		}
		if f.FixHunks != "" {
			fmt.Fprintf(b, "The fixer's attempt (iteration %d):\n\n%s\n", f.Fixer.Iteration, review.FenceMD(f.FixHunks, "diff"))
		}
	}
}

func (r *Report) fixed(b *strings.Builder) {
	list := r.with(Fixed)
	if len(list) == 0 {
		return
	}
	fmt.Fprintf(b, "## Fixed (%d)\n\n", len(list))
	for _, f := range list {
		fmt.Fprintf(b, "### %s · %s · %s\n\n", review.InlineMD(f.ID), review.InlineMD(f.Severity), review.InlineMD(f.Title))
		fmt.Fprintf(b, "%s · raised by %s (%s)\n\n", lines(f), names(f.Reviewers), iterations(f))
		if f.Fixer != nil {
			fmt.Fprintf(b, "- Fixer: %s\n", claim(f.Fixer))
		}
		for _, c := range f.FixChecks {
			fmt.Fprintf(b, "- Verified by %s: %s\n", review.InlineMD(c.Reviewer), claim(&Claim{Iteration: c.Iteration, Status: c.Status, Note: c.Note}))
		}
		if len(f.FixChecks) == 0 {
			fmt.Fprintf(b, "- Verified: not raised again after iteration %d (no reviewer fix check recorded)\n", f.LastIteration)
		}
		b.WriteString("\n")
		if f.FixHunks != "" {
			b.WriteString(review.FenceMD(f.FixHunks, "diff") + "\n")
		}
	}
}

// notBlockingSections are the dispositions folded under "Not blocking".
var notBlockingSections = []struct{ key, title, count string }{
	{Disputed, "Disputed", "disputed"}, {Withdrawn, "Withdrawn", "withdrawn"}, {Note, "Notes", "note"},
	{BelowThreshold, "Below the confidence threshold", "below the threshold"}, {PreExisting, "Pre-existing", "pre-existing"},
	{Disproved, "Disproved", "disproved"},
}

func (r *Report) notBlocking(b *strings.Builder) {
	total := 0
	var parts []string
	for _, s := range notBlockingSections {
		if n := r.Counts.Dispositions[s.key]; n > 0 {
			total += n
			label := fmt.Sprintf("%d %s", n, s.count)
			if s.key == Note {
				label = review.Plural(n, s.count)
			}
			parts = append(parts, label)
		}
	}
	if total == 0 && len(r.Skipped) == 0 {
		return
	}
	if total > 0 {
		fmt.Fprintf(b, "<details>\n<summary>Not blocking (%d): %s</summary>\n\n", total, strings.Join(parts, ", "))
		for _, s := range notBlockingSections {
			n := r.Counts.Dispositions[s.key]
			if n == 0 {
				continue
			}
			fmt.Fprintf(b, "#### %s (%d)\n\n", s.title, n)
			for _, f := range r.with(s.key) {
				fmt.Fprintf(b, "- **%s** · %s · confidence %d · %s · %s — raised by %s (%s)\n", review.InlineMD(f.ID), review.InlineMD(f.Severity), f.Confidence,
					lines(f), review.InlineMD(f.Title), names(f.Reviewers), iterations(f))
				fmt.Fprintf(b, "  - Why it does not block: %s\n", review.EscapeMD(f.Reason))
				if f.Description != "" {
					fmt.Fprintf(b, "  - %s\n", review.InlineMD(f.Description))
				}
			}
			b.WriteString("\n")
		}
		b.WriteString("</details>\n\n")
	}
	if len(r.Skipped) > 0 {
		fmt.Fprintf(b, "<details>\n<summary>Skipped files (%d)</summary>\n\n", len(r.Skipped))
		for _, s := range r.Skipped {
			fmt.Fprintf(b, "- %s — %s\n", review.CodeMD(s.Path), review.InlineMD(s.Reason))
		}
		b.WriteString("\n</details>\n\n")
	}
}

func (r *Report) timeline(b *strings.Builder) {
	if len(r.Timeline) == 0 && len(r.History) == 0 {
		return
	}
	fmt.Fprintf(b, "<details>\n<summary>How the run went (%s)</summary>\n\n", review.Plural(len(r.Timeline), "review round"))
	if len(r.Timeline) > 0 {
		b.WriteString("| iteration | reviewers | findings | new | blocking | validation | fix | round verdict | next |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, rd := range r.Timeline {
			failed := 0
			for _, a := range rd.Reviewers {
				if a.Status != "reported" {
					failed++
				}
			}
			who := fmt.Sprintf("%d reported", len(rd.Reviewers)-failed)
			if failed > 0 {
				who += fmt.Sprintf(", %d failed", failed)
			}
			found := fmt.Sprint(rd.Findings)
			if rd.Dropped > 0 {
				found += fmt.Sprintf(" (+%d dropped)", rd.Dropped)
			}
			fmt.Fprintf(b, "| %d | %s | %s | %d | %d | %s | %s | %s | %s |\n", rd.Iteration, who, found, rd.New, rd.Blocking,
				tally(rd.Validation), tally(rd.Fix), cell(rd.Verdict), cell(rd.Decision))
		}
		b.WriteString("\n")
	}
	for _, s := range r.History {
		fmt.Fprintf(b, "- %s · iteration %d · %s: %s\n", s.At.UTC().Format(time.RFC3339), s.Iteration, review.InlineMD(s.Phase), review.EscapeMD(s.Note))
	}
	if len(r.History) > 0 {
		b.WriteString("\n")
	}
	b.WriteString("</details>\n\n")
}

// tally is "2 fixed, 1 disputed", or "—".
func tally(m map[string]int) string {
	if len(m) == 0 {
		return "—"
	}
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", m[k], review.InlineMD(k))
	}
	return strings.Join(parts, ", ")
}

func cell(s string) string {
	if s == "" {
		return "—"
	}
	return word(s)
}

// word renders one of whetstone's own words (a verdict, a status, a rule
// name) as is when it is plain: letters, digits, "-" and "_" inside; anything
// else goes through review.InlineMD. GitHub reads no emphasis in an
// underscore inside a word, so REQUEST_CHANGES stays greppable.
func word(s string) string {
	plain := s != "" && !strings.HasPrefix(s, "_") && !strings.HasSuffix(s, "_") && !strings.HasPrefix(s, "-")
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			plain = false
		}
	}
	if plain {
		return s
	}
	return review.InlineMD(s)
}
