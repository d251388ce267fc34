package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/whetstone-dev/whetstone/internal/review"
)

// Markdown renders report.md: YAML frontmatter, the summary, the blocking
// findings grouped by file, the fixed ones with how each fix was checked,
// the rest with why they do not block, the skipped files, the timeline and,
// last, report.json in one fenced block.
//
// Every text whetstone did not write itself (titles, descriptions, notes
// from agents; paths, branch names from the repository) goes through
// review.InlineMD, EscapeMD, CodeMD or FenceMD, and every frontmatter value
// is a JSON scalar or object: such text renders as itself and never starts
// a line, so it cannot forge a heading, a frontmatter key, a verdict line,
// a list item or the end of a fence.
func (r *Report) Markdown() string {
	var b strings.Builder
	md := review.InlineMD
	r.frontmatter(&b)
	fmt.Fprintf(&b, "# whetstone review %s\n\n", md(r.RunID))
	if r.State == InProgress {
		fmt.Fprintf(&b, "**In progress** — iteration %d, %s phase; no verdict yet.\n\n", r.Iterations, word(r.Phase))
	} else {
		fmt.Fprintf(&b, "**Verdict: %s**\n\n", cell(r.Verdict)) // — for an aborted or failed run
	}
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
	r.blocking(&b)
	r.fixed(&b)
	r.notBlocking(&b)
	if len(r.Skipped) > 0 {
		fmt.Fprintf(&b, "## Skipped files (%d)\n\n", len(r.Skipped))
		for _, s := range r.Skipped {
			fmt.Fprintf(&b, "- %s — %s\n", review.CodeMD(s.Path), md(s.Reason))
		}
		b.WriteString("\n")
	}
	r.timeline(&b)
	if len(r.Unavailable) > 0 {
		b.WriteString("## Not available\n\n")
		for _, u := range r.Unavailable {
			fmt.Fprintf(&b, "- %s\n", review.EscapeMD(u))
		}
		b.WriteString("\n")
	}
	b.WriteString("## Report data\n\nThe same report as `report.json` (schema `" + Schema + "`):\n\n")
	b.WriteString(review.FenceMD(string(r.JSON()), "json"))
	return b.String()
}

// frontmatterKeys are report.md's frontmatter keys, in order.
var frontmatterKeys = []string{"schema", "run_id", "state", "verdict", "stop_reason", "depth", "iterations",
	"open_by_severity", "findings", "duration_seconds", "tokens", "scope", "base"}

// frontmatterValues are report.md's frontmatter values, each as JSON (YAML reads
// JSON scalars and objects as themselves).
func (r *Report) frontmatterValues() map[string]any {
	orNull := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	base := r.Scope.BaseRef
	if r.Scope.Base != "" {
		base = strings.TrimSpace(r.Scope.BaseRef + " " + r.Scope.Base)
	}
	return map[string]any{
		"schema": r.Schema, "run_id": r.RunID, "state": r.State, "verdict": orNull(r.Verdict), "stop_reason": orNull(r.StopReason),
		"depth": r.Depth, "iterations": r.Iterations, "open_by_severity": r.Counts.Open, "findings": r.Counts.Dispositions,
		"duration_seconds": r.Duration, "tokens": r.Tokens, "scope": r.Scope.Description, "base": orNull(base),
	}
}

func (r *Report) frontmatter(b *strings.Builder) {
	b.WriteString("---\n")
	fm := r.frontmatterValues()
	for _, k := range frontmatterKeys {
		fmt.Fprintf(b, "%s: %s\n", k, yamlValue(fm[k]))
	}
	b.WriteString("---\n\n")
}

// yamlValue is v as one line of JSON, which YAML reads as the same value.
// Maps come out with sorted keys; severities are put in their own order.
func yamlValue(v any) string {
	if m, ok := v.(map[string]int); ok {
		keys := slices.Collect(maps.Keys(m))
		slices.SortFunc(keys, func(a, b string) int { return order(a) - order(b) })
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%q: %d", k, m[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	data, _ := json.Marshal(v)
	return string(escapeInvisible(data))
}

// order sorts severities and dispositions as the report lists them.
func order(key string) int {
	if i := review.SeverityRank(key); i < len(review.Severities) {
		return i
	}
	return 10 + slices.Index(dispositionOrder, key)
}

var dispositionOrder = []string{Blocking, Fixed, Disputed, Withdrawn, Note, BelowThreshold, PreExisting, Disproved}

func location(f Finding) string {
	if f.EndLine > f.Line {
		return fmt.Sprintf("%s:%d-%d", f.File, f.Line, f.EndLine)
	}
	return fmt.Sprintf("%s:%d", f.File, f.Line)
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

func (r *Report) blocking(b *strings.Builder) {
	list := r.with(Blocking)
	if len(list) == 0 {
		b.WriteString("## Blocking findings (0)\n\nNothing blocks this change.\n\n")
		return
	}
	fmt.Fprintf(b, "## Blocking findings (%d)\n\n", len(list))
	slices.SortStableFunc(list, func(a, b Finding) int { return strings.Compare(a.File, b.File) })
	file := "\x00"
	for _, f := range list {
		if f.File != file {
			file = f.File
			fmt.Fprintf(b, "### %s\n\n", review.CodeMD(f.File))
		}
		fmt.Fprintf(b, "#### %s · %s · %s\n\n", review.InlineMD(f.ID), review.InlineMD(f.Severity), review.InlineMD(f.Title))
		fmt.Fprintf(b, "- Location: %s\n", review.CodeMD(location(f)))
		rule := ""
		if f.Rule != "" {
			rule = ", rule " + review.CodeMD(f.Rule)
		}
		fmt.Fprintf(b, "- Severity %s, confidence %d, category %s%s\n", review.InlineMD(f.Severity), f.Confidence, review.InlineMD(f.Category), rule)
		fmt.Fprintf(b, "- Raised by %s (%s)\n", names(f.Reviewers), iterations(f))
		if f.Fixer != nil {
			fmt.Fprintf(b, "- Fixer: %s\n", claim(f.Fixer))
		}
		for _, c := range f.FixChecks {
			fmt.Fprintf(b, "- Fix check by %s: %s\n", review.InlineMD(c.Reviewer), claim(&Claim{Iteration: c.Iteration, Status: c.Status, Note: c.Note}))
		}
		if f.Validation != nil {
			fmt.Fprintf(b, "- Validator: %s\n", claim(f.Validation))
		}
		b.WriteString("\n")
		for _, part := range []struct{ name, text string }{{"Description", f.Description}, {"Evidence", f.Evidence}, {"Suggestion", f.Suggestion}} {
			if part.text != "" {
				fmt.Fprintf(b, "%s:\n\n%s\n", part.name, review.FenceMD(part.text, "text"))
			}
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
		fmt.Fprintf(b, "- **%s** · %s · %s · %s — raised by %s (%s)\n", review.InlineMD(f.ID), review.InlineMD(f.Severity),
			review.CodeMD(location(f)), review.InlineMD(f.Title), names(f.Reviewers), iterations(f))
		if f.Fixer != nil {
			fmt.Fprintf(b, "  - Fixer: %s\n", claim(f.Fixer))
		}
		for _, c := range f.FixChecks {
			fmt.Fprintf(b, "  - Verified by %s: %s\n", review.InlineMD(c.Reviewer), claim(&Claim{Iteration: c.Iteration, Status: c.Status, Note: c.Note}))
		}
		if len(f.FixChecks) == 0 {
			fmt.Fprintf(b, "  - Verified: not raised again after iteration %d (no reviewer fix check recorded)\n", f.LastIteration)
		}
	}
	b.WriteString("\n")
}

func (r *Report) notBlocking(b *strings.Builder) {
	sections := []struct{ key, title string }{
		{Disputed, "Disputed"}, {Withdrawn, "Withdrawn"}, {Note, "Notes"}, {BelowThreshold, "Below the confidence threshold"},
		{PreExisting, "Pre-existing"}, {Disproved, "Disproved"},
	}
	total := 0
	for _, s := range sections {
		total += r.Counts.Dispositions[s.key]
	}
	if total == 0 {
		return
	}
	fmt.Fprintf(b, "## Not blocking (%d)\n\n", total)
	for _, s := range sections {
		n := r.Counts.Dispositions[s.key]
		if n == 0 {
			continue
		}
		fmt.Fprintf(b, "### %s (%d)\n\n", s.title, n)
		for _, f := range r.with(s.key) {
			fmt.Fprintf(b, "- **%s** · %s · confidence %d · %s · %s — raised by %s (%s)\n", review.InlineMD(f.ID), review.InlineMD(f.Severity), f.Confidence,
				review.CodeMD(location(f)), review.InlineMD(f.Title), names(f.Reviewers), iterations(f))
			fmt.Fprintf(b, "  - Why it does not block: %s\n", review.EscapeMD(f.Reason))
			if f.Description != "" {
				fmt.Fprintf(b, "  - %s\n", review.InlineMD(f.Description))
			}
		}
		b.WriteString("\n")
	}
}

func (r *Report) timeline(b *strings.Builder) {
	b.WriteString("## Timeline\n\n")
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
	b.WriteString("\n")
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
