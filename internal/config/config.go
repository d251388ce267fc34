// Package config reads whetstone.json and the /whetstone:review command line
// and resolves them into a run's settings and reviewer roster.
package config

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/whetstone-dev/whetstone/internal/brief"
	"github.com/whetstone-dev/whetstone/internal/gitrun"
	"github.com/whetstone-dev/whetstone/internal/loop"
	"github.com/whetstone-dev/whetstone/internal/review"
	"github.com/whetstone-dev/whetstone/internal/scope"
)

// FileName is the project configuration file, meant to be committed.
const FileName = "whetstone.json"

// Command is the prefix of the prompt that starts or resumes a run.
const Command = "/whetstone:review"

// The reviewer sets come from the agents' frontmatter (brief.Agents, the
// registry; docs/agents.md): each reviewer names the depths it runs at, and
// a specialist the triggers that call it in.

// Reviewers names every reviewer, core and specialist, in order.
func Reviewers() []string { return brief.Agents().Reviewers() }

// Specialists names the reviewers a trigger calls in.
func Specialists() []string { return brief.Agents().Specialists() }

// IsReviewer reports whether name is one of whetstone's reviewers.
func IsReviewer(name string) bool { return slices.Contains(Reviewers(), name) }

// Defaults are the settings when neither whetstone.json nor a flag says otherwise.
var Defaults = loop.Settings{Depth: "standard", MaxIterations: 5,
	ConfidenceThreshold: review.DefaultPolicy.ConfidenceThreshold, FixSeverity: review.DefaultPolicy.FixSeverity, BlockingSeverity: review.DefaultPolicy.BlockingSeverity}

// File is whetstone.json.
type File struct {
	Depth               string          `json:"depth"`
	MaxIterations       *int            `json:"max_iterations"`
	ConfidenceThreshold *int            `json:"confidence_threshold"`
	FixSeverity         string          `json:"fix_severity"`      // the least severity that blocks in iteration 1 (default medium)
	BlockingSeverity    string          `json:"blocking_severity"` // the least severity a new finding needs to block from iteration 2 (default high)
	Reviewers           map[string]bool `json:"reviewers"`         // force a reviewer on (true) or off (false)
	Budget              struct {
		Minutes int `json:"minutes"`
		Tokens  int `json:"tokens"`
	} `json:"budget"`
	Triage struct {
		Skip   []string `json:"skip"`   // globs never reviewed (listed in the report)
		Deep   []string `json:"deep"`   // globs reviewed with extra care
		Normal []string `json:"normal"` // globs that override the built-in skip and deep rules
	} `json:"triage"`
	Specialists       map[string][]string `json:"specialists"`         // path globs that call a specialist in
	MaxFiles          int                 `json:"max_files"`           // size gate on changed files (default 100)
	MaxDiffTokens     int                 `json:"max_diff_tokens"`     // size gate on the diff (default 100000)
	PreExistingBlocks bool                `json:"pre_existing_blocks"` // findings outside the change may block
	Checks            *bool               `json:"checks"`              // run build/vet/format signals before the first round (default true)
	Background        bool                `json:"background"`          // dispatch agents in the background
	VerifyCommands    []string            `json:"verify_commands"`     // commands read-only agents may run to build and test, such as "npm test"
	Sandbox           string              `json:"sandbox"`             // "auto" (default): code runs only in the bubblewrap sandbox, refused without one; "if-available": unsandboxed where there is none; "off": never sandboxed (docs/sandbox.md)
	Restore           bool                `json:"restore"`             // undo writes made during a read-only phase
	MaxUntrackedBytes *int64              `json:"max_untracked_bytes"` // untracked files larger than this are listed and skipped, never hashed (default 4 MiB)
	ChecksNetwork     bool                `json:"checks_network"`      // the Go checks may download modules (default: the local module cache only)
}

// MaxFile caps whetstone.json.
const MaxFile = 1 << 20

// Verify returns the verification commands as words ({"npm", "test"}), nil
// when the file names none (the built-in defaults apply).
func (f File) Verify() [][]string {
	var out [][]string
	for _, c := range f.VerifyCommands {
		out = append(out, strings.Fields(c))
	}
	return out
}

// Source is whetstone.json as a run reads it: from a commit, the base of
// the change, never from the work tree or the commits under review
// (docs/security.md). Data is the file's exact bytes (nil when the commit
// has none): what `whetstone trust` hashes.
type Source struct {
	Rev  string // the commit or tree it was read from
	Data []byte
	File File
}

// Found reports whether the commit has a whetstone.json.
func (s Source) Found() bool { return s.Data != nil }

// LoadAt reads whetstone.json as committed at rev in the git work tree
// root (which may be a subdirectory of it: the file is root's), through
// gitrun (no hooks, no fsmonitor, no filters: a blob is read as stored),
// at most MaxFile bytes of it. A commit without one is the zero File. A
// symlink or a submodule where the file should be is an error: the
// configuration is a regular file.
func LoadAt(ctx context.Context, root, rev string) (Source, error) {
	src := Source{Rev: rev}
	g := gitrun.Git{Dir: root}
	prefix, err := g.Str(ctx, "rev-parse", "--show-prefix")
	if err != nil {
		return src, fmt.Errorf("read %s at %s: %w", FileName, short(rev), err)
	}
	out, err := g.Run(ctx, "ls-tree", "-z", "--full-tree", rev, "--", prefix+FileName)
	if err != nil {
		return src, fmt.Errorf("read %s at %s: %w", FileName, short(rev), err)
	}
	rec, _, _ := strings.Cut(string(out), "\x00")
	if rec == "" {
		return src, nil
	}
	meta, _, _ := strings.Cut(rec, "\t")
	f := strings.Fields(meta) // mode type object
	if len(f) != 3 || f[1] != "blob" || (f[0] != "100644" && f[0] != "100755") {
		return src, fmt.Errorf("%s at %s is not a regular file (mode %s): whetstone reads its configuration only from one", FileName, short(rev), f[0])
	}
	var data []byte
	found := false
	if err := g.Heads(ctx, []string{f[2]}, MaxFile+1, func(_ string, head []byte) { data, found = head, true }); err != nil {
		return src, fmt.Errorf("read %s at %s: %w", FileName, short(rev), err)
	}
	if !found {
		return src, fmt.Errorf("read %s at %s: blob %s is missing", FileName, short(rev), f[2])
	}
	if len(data) > MaxFile {
		return src, fmt.Errorf("%s at %s is larger than %d bytes", FileName, short(rev), MaxFile)
	}
	if data == nil {
		data = []byte{}
	}
	src.Data = data
	src.File, err = Parse(data)
	return src, err
}

func short(rev string) string { return rev[:min(len(rev), 12)] }

// Parse decodes and checks whetstone.json. Unknown keys are an error, so
// a typo does not silently change nothing.
func Parse(data []byte) (File, error) {
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return f, fmt.Errorf("%s: %w", FileName, err)
	}
	for name := range f.Reviewers {
		if !IsReviewer(name) {
			return f, fmt.Errorf("%s: reviewers: unknown reviewer %q (known: %s)", FileName, name, strings.Join(Reviewers(), ", "))
		}
	}
	for name := range f.Specialists {
		if !slices.Contains(Specialists(), name) {
			return f, fmt.Errorf("%s: specialists: unknown specialist %q (known: %s)", FileName, name, strings.Join(Specialists(), ", "))
		}
	}
	for _, c := range f.VerifyCommands {
		if len(strings.Fields(c)) == 0 {
			return f, fmt.Errorf("%s: verify_commands: an entry is empty", FileName)
		}
	}
	if f.Sandbox != "" && f.Sandbox != "auto" && f.Sandbox != "if-available" && f.Sandbox != "off" {
		return f, fmt.Errorf("%s: sandbox must be \"auto\", \"if-available\" or \"off\" (got %q)", FileName, f.Sandbox)
	}
	if f.MaxFiles < 0 || f.MaxDiffTokens < 0 {
		return f, fmt.Errorf("%s: max_files and max_diff_tokens must not be negative", FileName)
	}
	if f.MaxUntrackedBytes != nil && *f.MaxUntrackedBytes < 1 {
		return f, fmt.Errorf("%s: max_untracked_bytes must be a positive number of bytes (got %d)", FileName, *f.MaxUntrackedBytes)
	}
	return f, nil
}

// Weakening names the settings of f that weaken containment, as written
// in whetstone.json: they run a program of the repository's choosing
// outside the sandbox, or let code reach the network, or discard the
// user's files. They apply only from a file the user trusts (internal/trust,
// docs/security.md); nil when f has none.
func (f File) Weakening() []string {
	var out []string
	if f.Sandbox != "" && f.Sandbox != "auto" {
		out = append(out, fmt.Sprintf("\"sandbox\": %q", f.Sandbox))
	}
	if len(f.VerifyCommands) > 0 {
		out = append(out, "\"verify_commands\"")
	}
	if f.Restore {
		out = append(out, "\"restore\": true")
	}
	if f.ChecksNetwork {
		out = append(out, "\"checks_network\": true")
	}
	return out
}

// Contained is f without the settings that weaken containment: what an
// untrusted file applies.
func (f File) Contained() File {
	f.Sandbox, f.VerifyCommands, f.Restore, f.ChecksNetwork = "", nil, false, false
	return f
}

// Args is a parsed /whetstone:review command line.
type Args struct {
	Paths         []string // the scope words: paths or globs
	Since         string   // --since REF
	Staged        bool
	Uncommitted   bool
	LastCommit    bool
	Force         bool // past the size gates
	Depth         string
	MaxIterations int
	Reviewers     []string
	Restart       bool
	Intent        string // --intent FILE: the pull-request description
}

// IsCommand reports whether a prompt invokes /whetstone:review.
func IsCommand(prompt string) bool {
	p := strings.TrimLeft(prompt, " \t\r\n")
	if !strings.HasPrefix(p, Command) {
		return false
	}
	rest := p[len(Command):]
	return rest == "" || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\n' || rest[0] == '\r'
}

// ParseArgs parses the words after /whetstone:review. Words that are not
// flags are the scope's paths or globs; which scope flags may combine is
// internal/scope's to decide.
func ParseArgs(prompt string) (Args, error) {
	var a Args
	words := strings.Fields(strings.TrimPrefix(strings.TrimLeft(prompt, " \t\r\n"), Command))
	noValue := func(name string, hasValue bool, set *bool) error {
		if hasValue {
			return fmt.Errorf("--%s takes no value", name)
		}
		*set = true
		return nil
	}
	for i := 0; i < len(words); i++ {
		w := words[i]
		if !strings.HasPrefix(w, "--") {
			// A glob quoted as in a shell ('src/**/*.go') means the glob.
			if len(w) >= 2 && (w[0] == '\'' || w[0] == '"') && w[len(w)-1] == w[0] {
				w = w[1 : len(w)-1]
			}
			a.Paths = append(a.Paths, w)
			continue
		}
		name, value, hasValue := strings.Cut(w[2:], "=")
		needValue := func() (string, error) {
			if hasValue {
				return value, nil
			}
			if i+1 >= len(words) || strings.HasPrefix(words[i+1], "--") {
				return "", fmt.Errorf("--%s needs a value", name)
			}
			i++
			return words[i], nil
		}
		switch name {
		case "depth":
			v, err := needValue()
			if err != nil {
				return a, err
			}
			if !slices.Contains(brief.Depths, v) {
				return a, fmt.Errorf("--depth must be quick, standard or deep (got %q)", v)
			}
			a.Depth = v
		case "max-iterations":
			v, err := needValue()
			if err != nil {
				return a, err
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 50 {
				return a, fmt.Errorf("--max-iterations must be a whole number from 1 to 50 (got %q)", v)
			}
			a.MaxIterations = n
		case "reviewers":
			v, err := needValue()
			if err != nil {
				return a, err
			}
			for _, r := range strings.Split(v, ",") {
				r = strings.TrimPrefix(strings.TrimSpace(r), "whetstone:")
				if !IsReviewer(r) {
					return a, fmt.Errorf("--reviewers: unknown reviewer %q (known: %s)", r, strings.Join(Reviewers(), ", "))
				}
				if !slices.Contains(a.Reviewers, r) {
					a.Reviewers = append(a.Reviewers, r)
				}
			}
		case "since", "intent":
			v, err := needValue()
			if err != nil {
				return a, err
			}
			if name == "since" {
				a.Since = v
			} else {
				a.Intent = v
			}
		case "restart", "staged", "uncommitted", "last-commit", "force":
			set := map[string]*bool{"restart": &a.Restart, "staged": &a.Staged, "uncommitted": &a.Uncommitted, "last-commit": &a.LastCommit, "force": &a.Force}[name]
			if err := noValue(name, hasValue, set); err != nil {
				return a, err
			}
		default:
			return a, fmt.Errorf("unknown flag --%s (flags: paths or globs, --since REF, --staged, --uncommitted, --last-commit, --force, --depth quick|standard|deep, --max-iterations N, --reviewers a,b, --intent FILE, --restart)", name)
		}
	}
	return a, nil
}

// ScopeRequest is what internal/scope needs to choose the change: the
// command's scope words and flags, and whetstone.json's triage, specialist
// patterns, size gates and checks.
func ScopeRequest(f File, a Args) scope.Request {
	return scope.Request{
		Since: a.Since, Staged: a.Staged, Uncommitted: a.Uncommitted, LastCommit: a.LastCommit,
		Paths: a.Paths, Force: a.Force,
		Skip: f.Triage.Skip, Deep: f.Triage.Deep, Normal: f.Triage.Normal, Specialists: f.Specialists,
		MaxFiles: f.MaxFiles, MaxTokens: f.MaxDiffTokens,
		Checks: f.Checks == nil || *f.Checks, Network: f.ChecksNetwork,
		MaxUntracked: f.untracked(), VerifyCommands: f.VerifyCommands,
	}
}

// untracked is max_untracked_bytes, 0 when unset (the default applies).
func (f File) untracked() int64 {
	if f.MaxUntrackedBytes == nil {
		return 0
	}
	return *f.MaxUntrackedBytes
}

// Resolve combines defaults, whetstone.json and the command's flags, in
// that order of precedence (flags win).
func Resolve(f File, a Args) (loop.Settings, error) {
	s := Defaults
	if f.Depth != "" {
		if !slices.Contains(brief.Depths, f.Depth) {
			return s, fmt.Errorf("%s: depth must be quick, standard or deep (got %q)", FileName, f.Depth)
		}
		s.Depth = f.Depth
	}
	if f.MaxIterations != nil {
		if *f.MaxIterations < 1 || *f.MaxIterations > 50 {
			return s, fmt.Errorf("%s: max_iterations must be from 1 to 50 (got %d)", FileName, *f.MaxIterations)
		}
		s.MaxIterations = *f.MaxIterations
	}
	if f.ConfidenceThreshold != nil {
		if *f.ConfidenceThreshold < 0 || *f.ConfidenceThreshold > 100 {
			return s, fmt.Errorf("%s: confidence_threshold must be from 0 to 100 (got %d)", FileName, *f.ConfidenceThreshold)
		}
		s.ConfidenceThreshold = *f.ConfidenceThreshold
	}
	if err := f.severities(&s); err != nil {
		return s, err
	}
	if f.Budget.Minutes < 0 || f.Budget.Tokens < 0 {
		return s, fmt.Errorf("%s: budget values must not be negative", FileName)
	}
	s.BudgetMinutes, s.BudgetTokens = f.Budget.Minutes, f.Budget.Tokens
	s.PreExistingBlocks, s.Background = f.PreExistingBlocks, f.Background
	s.VerifyCommands, s.Sandbox, s.Restore = f.VerifyCommands, f.Sandbox, f.Restore
	s.Specialists = f.Specialists
	s.MaxUntrackedBytes = f.untracked()
	if a.Depth != "" {
		s.Depth = a.Depth
	}
	if a.MaxIterations != 0 {
		s.MaxIterations = a.MaxIterations
	}
	s.Reviewers = a.Reviewers
	return s, nil
}

// severities sets the two severity bars. fix_severity (iteration 1) may be
// no stricter than blocking_severity (later iterations): otherwise a new
// finding would block in iteration 2 where iteration 1 let it pass. When
// only one of them is set, the other follows it as far as that takes.
func (f File) severities(s *loop.Settings) error {
	if f.FixSeverity != "" {
		if review.SeverityRank(f.FixSeverity) >= review.SeverityRank("info") {
			return fmt.Errorf("%s: fix_severity must be one of critical, high, medium, low (got %q); info never blocks", FileName, f.FixSeverity)
		}
		s.FixSeverity = f.FixSeverity
	}
	if f.BlockingSeverity != "" {
		if review.SeverityRank(f.BlockingSeverity) >= len(review.Severities) {
			return fmt.Errorf("%s: blocking_severity must be one of %s (got %q)", FileName, strings.Join(review.Severities, ", "), f.BlockingSeverity)
		}
		s.BlockingSeverity = f.BlockingSeverity
	}
	if review.SeverityRank(s.BlockingSeverity) <= review.SeverityRank(s.FixSeverity) {
		return nil
	}
	switch {
	case f.FixSeverity != "" && f.BlockingSeverity != "":
		return fmt.Errorf("%s: blocking_severity %q is below fix_severity %q: from iteration 2 a new finding would block where iteration 1 let it pass; set blocking_severity to %s or above, or lower fix_severity", FileName, s.BlockingSeverity, s.FixSeverity, s.FixSeverity)
	case f.FixSeverity != "":
		s.BlockingSeverity = s.FixSeverity
	default:
		s.FixSeverity = s.BlockingSeverity
		if s.FixSeverity == "info" {
			s.FixSeverity = "low" // info never blocks
		}
	}
	return nil
}

// Roster picks the reviewers of a run: --reviewers exactly when given;
// otherwise the depth's core reviewers plus the specialists the change calls
// for, then whetstone.json's reviewers switches.
func Roster(s loop.Settings, f File, specialists []scope.Specialist) []string {
	if len(s.Reviewers) > 0 {
		return slices.Clone(s.Reviewers)
	}
	var signals []string
	for _, sp := range specialists {
		signals = append(signals, sp.Name)
	}
	var out []string
	for _, a := range brief.Agents().All() {
		if a.Role != brief.RoleReviewer {
			continue
		}
		on := a.Runs(s.Depth, slices.Contains(signals, a.Name))
		if v, ok := f.Reviewers[a.Name]; ok {
			on = v
		}
		if on {
			out = append(out, a.Name)
		}
	}
	return out
}
