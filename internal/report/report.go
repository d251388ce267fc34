// Package report turns a run into the documents developers read and tools
// consume: report.json (the model, whetstone.report/v1, documented by
// docs/report-schema.json), report.md (the comment to paste on a pull
// request), report.sarif (SARIF 2.1.0 for code scanning) and rdjson
// (reviewdog). Every format is a pure function of the Report value, so
// report.md can be checked against the report.json beside it.
package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/whetstone-dev/whetstone/internal/review"
)

// Schema names report.json's format. A change that removes or renames a
// field, or changes a field's meaning, gets a new version.
const Schema = "whetstone.report/v1"

// States of a run as a report tells them.
const (
	InProgress = "in_progress"
	Done       = "done"
	Stopped    = "stopped"
)

// Dispositions: where a finding stands at the end (or now), one per finding.
const (
	Blocking       = "blocking"        // open, blocks the change
	Fixed          = "fixed"           // open earlier, its fix verified (or, not blocking, not raised again)
	Disproved      = "disproved"       // the validator showed it is not a problem
	PreExisting    = "pre_existing"    // its lines touch no changed hunk
	Disputed       = "disputed"        // open, not blocking, the fixer disputed or deferred it
	Withdrawn      = "withdrawn"       // its reviewers accepted the fixer's dispute (fix_checks)
	BelowThreshold = "below_threshold" // open, confidence below the threshold
	Note           = "note"            // open, not blocking for another reason
)

// Report is report.json.
type Report struct {
	Schema      string    `json:"schema"`
	Generator   string    `json:"generator"` // "whetstone <version>"
	RunID       string    `json:"run_id"`
	State       string    `json:"state"`
	Phase       string    `json:"phase"`
	Verdict     string    `json:"verdict,omitempty"` // absent while the run is in progress
	StopReason  string    `json:"stop_reason,omitempty"`
	Error       string    `json:"error,omitempty"`
	Depth       string    `json:"depth"`
	Iterations  int       `json:"iterations"`
	Settings    Settings  `json:"settings"`
	Started     time.Time `json:"started"`
	Finished    time.Time `json:"finished,omitzero"`
	Duration    int       `json:"duration_seconds"` // until Finished, or until the report was made
	Tokens      *int      `json:"tokens"`           // null: not counted (no token budget set)
	Scope       Scope     `json:"scope"`
	Reviewers   []string  `json:"reviewers"`
	Counts      Counts    `json:"counts"`
	Summary     []string  `json:"summary"`
	Findings    []Finding `json:"findings"`
	Skipped     []Skipped `json:"skipped_files"`
	Timeline    []Round   `json:"timeline"`
	History     []Step    `json:"history"`
	Tampered    []string  `json:"tampered,omitempty"`
	Unavailable []string  `json:"unavailable,omitempty"` // run files the report could not use, and why
}

// Settings are the run's knobs that decide what blocks.
type Settings struct {
	MaxIterations       int    `json:"max_iterations"`
	ConfidenceThreshold int    `json:"confidence_threshold"`
	FixSeverity         string `json:"fix_severity,omitempty"` // absent for a run started before the setting existed (low)
	BlockingSeverity    string `json:"blocking_severity"`
	PreExistingBlocks   bool   `json:"pre_existing_blocks"`
}

// Scope is what was reviewed.
type Scope struct {
	Description string `json:"description"`
	Mode        string `json:"mode,omitempty"`
	Base        string `json:"base,omitempty"`
	BaseRef     string `json:"base_ref,omitempty"`
	Branch      string `json:"branch,omitempty"`
	Head        string `json:"head,omitempty"`
	Files       int    `json:"files"`
}

// Counts summarise the findings.
type Counts struct {
	Open         map[string]int `json:"open"` // open findings by severity
	All          map[string]int `json:"all"`  // every finding by severity
	Dispositions map[string]int `json:"dispositions"`
}

// Finding is one finding of the run, as it stands.
type Finding struct {
	ID             string     `json:"id"`
	Disposition    string     `json:"disposition"`
	Reason         string     `json:"reason,omitempty"` // why it does not block, in words
	Status         string     `json:"status"`           // the ledger's: open, reopened, resolved, disproved, withdrawn
	Blocking       bool       `json:"blocking"`
	PreExisting    bool       `json:"pre_existing"`
	Severity       string     `json:"severity"`
	Confidence     int        `json:"confidence"`
	Category       string     `json:"category"`
	Rule           string     `json:"rule,omitempty"`
	File           string     `json:"file"`
	Line           int        `json:"line"`
	EndLine        int        `json:"end_line"`
	Title          string     `json:"title"`
	Description    string     `json:"description"`
	Evidence       string     `json:"evidence,omitempty"`
	Suggestion     string     `json:"suggestion,omitempty"`
	Reviewers      []string   `json:"reviewers"`
	FirstIteration int        `json:"first_iteration"`
	LastIteration  int        `json:"last_iteration"`
	Fixer          *Claim     `json:"fixer,omitempty"`
	FixChecks      []FixCheck `json:"fix_checks,omitempty"`
	Validation     *Claim     `json:"validation,omitempty"`
	// What report.md shows of the code: the web address of the lines at
	// the reviewed head commit (a GitHub or GitLab remote), the lines of
	// the last reviewed tree (blocking findings) and the fixer's hunks
	// touching them (fixed findings, and blocking ones it tried to fix).
	Link     string   `json:"link,omitempty"`
	Excerpt  *Excerpt `json:"excerpt,omitempty"`
	FixHunks string   `json:"fix_hunks,omitempty"`
}

// Excerpt is a few lines of the last reviewed tree: lines Line..EndLine of
// File, at most eight of them shown in Text.
type Excerpt struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	EndLine int    `json:"end_line"`
	Text    string `json:"text"`
}

// Claim is the fixer's or the validator's latest word on a finding.
type Claim struct {
	Iteration int    `json:"iteration"`
	Status    string `json:"status"`
	Note      string `json:"note,omitempty"`
}

// FixCheck is a reviewer's check of a claimed fix, in a later review.
type FixCheck struct {
	Iteration int    `json:"iteration"`
	Reviewer  string `json:"reviewer"`
	Status    string `json:"status"`
	Note      string `json:"note,omitempty"`
}

// Skipped is a changed file triage left out of the review.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Round is one iteration of the loop.
type Round struct {
	Iteration  int            `json:"iteration"`
	Reviewers  []AgentStatus  `json:"reviewers"`
	Findings   int            `json:"findings"`
	New        int            `json:"new"`
	Blocking   int            `json:"blocking"`
	Dropped    int            `json:"dropped,omitempty"`
	Verdict    string         `json:"verdict,omitempty"`  // of the round's findings
	Decision   string         `json:"decision,omitempty"` // the transition rule that fired
	Validation map[string]int `json:"validation,omitempty"`
	Fix        map[string]int `json:"fix,omitempty"`
	Tampered   int            `json:"tampered,omitempty"`
}

// AgentStatus is a reviewer's outcome in one round: reported or failed.
type AgentStatus struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// Step is one line of the run's history.
type Step struct {
	At        time.Time `json:"at"`
	Iteration int       `json:"iteration"`
	Phase     string    `json:"phase"`
	Note      string    `json:"note"`
}

// Blocks reports whether a verdict fails a CI job (whetstone report
// --exit-code): REQUEST_CHANGES and BLOCK do, and so does a run with no
// verdict: one in progress, aborted or ended by an error (nothing approved
// the change).
func (r *Report) Blocks() bool {
	return r.Verdict != review.Approve && r.Verdict != review.ApproveWithNotes
}

// JSON renders report.json (encode).
func (r *Report) JSON() []byte {
	data, err := encode(r)
	if err != nil {
		panic(fmt.Sprintf("encode report: %v", err)) // plain data only
	}
	return data
}

// encode is the one JSON encoding of every JSON format (report.json, SARIF,
// rdjson): indented, ending in a newline, HTML left as is, and every
// character that could hide or reorder text escaped as \uXXXX, so the file
// (and the copy at the end of report.md) shows what it holds.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(v)
	return escapeInvisible(b.Bytes()), err
}

// escapeInvisible rewrites, inside JSON text, every control, format,
// separator or private character as a \u escape; JSON's own syntax is ASCII,
// so such a character can only be inside a string, where the escape means
// the same.
func escapeInvisible(data []byte) []byte {
	if !strings.ContainsFunc(string(data), invisible) {
		return data
	}
	var b bytes.Buffer
	for _, c := range string(data) {
		if !invisible(c) {
			b.WriteRune(c)
			continue
		}
		for _, u := range utf16Units(c) {
			fmt.Fprintf(&b, `\u%04x`, u)
		}
	}
	return b.Bytes()
}

func invisible(c rune) bool {
	if c == '\n' || c == ' ' {
		return false
	}
	return c == utf8.RuneError || unicode.IsControl(c) || unicode.Is(unicode.Cf, c) || unicode.Is(unicode.Zl, c) ||
		unicode.Is(unicode.Zp, c) || unicode.Is(unicode.Co, c) || (c >= 0xe0100 && c <= 0xe01ef) || (unicode.IsSpace(c) && c > 0x7f)
}

func utf16Units(c rune) []rune {
	if c < 0x10000 {
		return []rune{c}
	}
	c -= 0x10000
	return []rune{0xd800 + (c>>10)&0x3ff, 0xdc00 + c&0x3ff}
}

// Decode parses report.json after checking it against the schema.
func Decode(data []byte) (*Report, error) {
	if err := ValidateJSON(data); err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
