// Package paint colours the command line's text with ANSI codes: the
// verdicts, levels and phases of status, stats and doctor.
package paint

import (
	"github.com/whetstone-dev/whetstone/internal/loop"
	"github.com/whetstone-dev/whetstone/internal/review"
)

// Painter adds ANSI colours when true and returns the text unchanged
// when false.
type Painter bool

func (p Painter) wrap(code, s string) string {
	if !p {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// Bold, Red, Green and Yellow colour s.
func (p Painter) Bold(s string) string   { return p.wrap("1", s) }
func (p Painter) Red(s string) string    { return p.wrap("31", s) }
func (p Painter) Green(s string) string  { return p.wrap("32", s) }
func (p Painter) Yellow(s string) string { return p.wrap("33", s) }

// Verdict colours a verdict by what it means: green approves, yellow asks
// for changes, red blocks; a run without one reads loop.NoVerdict.
func (p Painter) Verdict(v string) string {
	switch v {
	case "":
		return loop.NoVerdict // an aborted or failed run has none
	case review.Approve, review.ApproveWithNotes:
		return p.Green(v)
	case review.RequestChanges:
		return p.Yellow(v)
	}
	return p.Red(v)
}
