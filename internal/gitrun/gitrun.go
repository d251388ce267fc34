// Package gitrun runs git in one work tree the way whetstone must: a fixed,
// non-interactive environment with the fsmonitor and every hook off, output
// bounded, and a deadline from the caller's context capped at gitTimeout,
// so a hook never hangs on git. Content filters the user configured
// (filter.<name>.clean, git-lfs's) still run on a snapshot's `git add`, as
// on the user's own: they come from git config, which no agent may write
// (every gate refuses .git). Which files they apply to is up to the
// .gitattributes in the work tree, which the change may write: where those
// differ from HEAD's, the review's snapshot records the bytes on disk
// instead of the filter's output (internal/snapshot, asOnDisk). The diffs
// reviewers read run through Shown and judge binary files by content
// (internal/scope), never by attributes.
package gitrun

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	// maxOutput bounds what one git command may print; a repository whose
	// diff is larger than this is far past any size gate anyway.
	maxOutput = 64 << 20
	// gitTimeout bounds one git command when the caller's context has a
	// later deadline (or none), so a hook can never hang on git.
	gitTimeout = 60 * time.Second
	// WaitDelay is how long a command's output may still be read after it
	// exited (or its time ran out): long enough for a loaded machine to
	// schedule the copying goroutine (1 s was not, at a load of 60 on two
	// cores: git's output was cut and Wait failed), short enough that a
	// grandchild holding the pipe open cannot hang a hook.
	WaitDelay = 5 * time.Second
)

// ErrTooLarge reports that a command printed more than its output cap.
var ErrTooLarge = errors.New("output too large")

// Git runs git commands in one work tree with a fixed, non-interactive
// environment: no pager, no optional locks (so read-only commands never
// rewrite the user's index), C locale and unquoted non-ASCII path names.
type Git struct {
	Dir string   // the directory git runs in (-C)
	Env []string // extra environment, e.g. GIT_INDEX_FILE
	// shown says git reads no attributes but the repository's (see Shown).
	shown bool
}

// With returns a copy of g that adds env to every command.
func (g Git) With(env ...string) Git {
	return Git{Dir: g.Dir, Env: append(append([]string(nil), g.Env...), env...), shown: g.shown}
}

// Shown returns a copy of g for the diffs whetstone shows reviewers and
// the fixer: git reads no attributes from the system's file or the user's
// (core.attributesFile), so the only ones left are the repository's, which
// the diff's own flags overrule (--text for a file judged text by its
// content, --no-textconv, --no-ext-diff: internal/scope). What remains of
// an attribute there is a diff driver's pattern for the line after "@@",
// which only picks an earlier line of the same file.
func (g Git) Shown() Git {
	g = g.With("GIT_ATTR_NOSYSTEM=1")
	g.shown = true
	return g
}

// Run runs git with args and returns its standard output.
func (g Git) Run(ctx context.Context, args ...string) ([]byte, error) {
	return g.RunInput(ctx, nil, args...)
}

// Str runs git with args and returns its output without the final newline.
func (g Git) Str(ctx context.Context, args ...string) (string, error) {
	out, err := g.Run(ctx, args...)
	return strings.TrimSuffix(string(out), "\n"), err
}

// RunInput runs git with args, stdin and the output cap; a failure carries
// git's first line of standard error.
func (g Git) RunInput(ctx context.Context, stdin io.Reader, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := g.Command(ctx, args...)
	cmd.Stdin = stdin
	out := &Capped{Max: maxOutput}
	stderr := &Capped{Max: 8 << 10, Lossy: true}
	cmd.Stdout, cmd.Stderr = out, stderr
	err := cmd.Run()
	if out.Over {
		return nil, fmt.Errorf("git %s: %w (more than %d bytes)", args[0], ErrTooLarge, maxOutput)
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("git %s: %w", args[0], ctx.Err())
	}
	if err != nil {
		msg, _, _ := strings.Cut(strings.TrimSpace(stderr.Buf.String()), "\n")
		return out.Buf.Bytes(), fmt.Errorf("git %s: %w: %s", args[0], err, msg)
	}
	return out.Buf.Bytes(), nil
}

// Command prepares git with args in g's directory and environment.
func (g Git) Command(ctx context.Context, args ...string) *exec.Cmd {
	// A repository may be hostile: the programs its configuration names for
	// every git call, the fsmonitor and every hook, are off (writing even a
	// temporary index runs post-index-change; content filters still run:
	// see the package comment). Nor may a repository make git trust an
	// index entry whose file changed: every stat field is compared, ctime
	// included (a snapshot starts from an earlier one's index,
	// internal/snapshot).
	full := append([]string{"-C", g.Dir, "--no-pager", "-c", "core.quotepath=off", "-c", "color.ui=false",
		"-c", "core.fsmonitor=false", "-c", "core.hooksPath=" + os.DevNull,
		"-c", "core.trustctime=true", "-c", "core.checkStat=default"}, args...)
	if g.shown {
		full = slices.Insert(full, 3, "-c", "core.attributesFile="+os.DevNull)
	}
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "GIT_EXTERNAL_DIFF=")
	cmd.Env = append(cmd.Env, ObjectsEnv(g.Dir)...)
	cmd.Env = append(cmd.Env, g.Env...) // last: a snapshot's own alternates win
	cmd.WaitDelay = WaitDelay
	return cmd
}

// Heads calls fn with the first n bytes of each blob, read in one
// streaming `git cat-file --batch`, so neither a large blob nor many blobs
// cost memory.
func (g Git) Heads(ctx context.Context, blobs []string, n int, fn func(blob string, head []byte)) error {
	if len(blobs) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := g.Command(ctx, "cat-file", "--batch")
	cmd.Stdin = strings.NewReader(strings.Join(blobs, "\n") + "\n")
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("read blobs: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("read blobs: %w", err)
	}
	r := bufio.NewReader(pipe)
	err = func() error {
		for range blobs {
			hdr, err := r.ReadString('\n')
			if err != nil {
				return err
			}
			f := strings.Fields(hdr)
			if len(f) != 3 {
				continue // "<name> missing": nothing to read
			}
			size, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				return fmt.Errorf("bad header %q", hdr)
			}
			head := make([]byte, min(size, int64(n)))
			if _, err := io.ReadFull(r, head); err != nil {
				return err
			}
			if _, err := io.CopyN(io.Discard, r, size-int64(len(head))+1); err != nil {
				return err
			}
			fn(f[0], head)
		}
		return nil
	}()
	if err != nil {
		_ = cmd.Process.Kill() // git may be blocked writing to the pipe
	}
	if werr := cmd.Wait(); err == nil && werr != nil {
		err = werr
	}
	if err != nil {
		return fmt.Errorf("read blobs: %w", err)
	}
	return nil
}

// Resolve returns the object name of each of names ("<tree-ish>:<path>"
// and the like, one per line, so none may hold a newline), in order, with
// "" for a name that does not exist, in one `git cat-file --batch-check`.
func (g Git) Resolve(ctx context.Context, names []string) ([]string, error) {
	if len(names) == 0 {
		return nil, nil
	}
	out, err := g.RunInput(ctx, strings.NewReader(strings.Join(names, "\n")+"\n"), "cat-file", "--batch-check=%(objectname)")
	if err != nil {
		return nil, fmt.Errorf("resolve objects: %w", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(names) {
		return nil, fmt.Errorf("resolve objects: %d answers to %d names", len(lines), len(names))
	}
	oids := make([]string, len(names))
	for i, l := range lines {
		if !strings.HasSuffix(l, " missing") && !strings.HasSuffix(l, " ambiguous") {
			oids[i] = l
		}
	}
	return oids, nil
}

// Capped is a writer that keeps at most Max bytes. Past that it fails, which
// stops the command, unless Lossy, when it drops the rest; Over says it
// failed.
type Capped struct {
	Buf   bytes.Buffer
	Max   int
	Lossy bool
	Over  bool
}

func (c *Capped) Write(p []byte) (int, error) {
	if room := c.Max - c.Buf.Len(); len(p) > room {
		c.Buf.Write(p[:max(room, 0)])
		c.Over = !c.Lossy
		if c.Lossy {
			return len(p), nil
		}
		return 0, ErrTooLarge // stops the copy, so git gets EPIPE instead of running on
	}
	return c.Buf.Write(p)
}

// ObjectsPrefix names, in a git directory, the object directories of
// whetstone's runs (internal/snapshot): the objects a run's snapshots
// write live there, out of the repository's own store, until the run ends
// and the directory is removed.
const ObjectsPrefix = "whetstone-objects-"

// gitDirs caches GitDir's answers: a directory's git directory does not
// change while whetstone runs.
var gitDirs sync.Map

// GitDir returns the git directory of the work tree holding dir, found
// without starting git: $GIT_DIR, else the nearest .git above dir, a
// directory or a file naming one ("gitdir: …", a linked worktree's or a
// submodule's). "" when there is none.
func GitDir(dir string) string {
	if v, ok := gitDirs.Load(dir); ok {
		return v.(string)
	}
	gd := findGitDir(dir)
	if gd != "" && filepath.IsAbs(dir) { // none yet may be one later (git init); "." moves with the process
		gitDirs.Store(dir, gd)
	}
	return gd
}

func findGitDir(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	if env := os.Getenv("GIT_DIR"); env != "" {
		if !filepath.IsAbs(env) {
			env = filepath.Join(abs, env)
		}
		return env
	}
	for d := abs; ; d = filepath.Dir(d) {
		p := filepath.Join(d, ".git")
		fi, err := os.Lstat(p)
		switch {
		case err == nil && fi.IsDir():
			return p
		case err == nil && fi.Mode().IsRegular():
			data, err := os.ReadFile(p)
			target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
			if err != nil || !ok {
				return ""
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(d, target)
			}
			return target
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// runAlternates is GIT_ALTERNATE_OBJECT_DIRECTORIES for a command in dir:
// the caller's own, then the object directory of every run in dir's git
// directory, so that any command reads the objects of any live run (the
// trees of its snapshots) while the repository's own store never holds
// them. "" when there is no run.
func runAlternates(dir string) string {
	gd := GitDir(dir)
	if gd == "" {
		return ""
	}
	entries, err := os.ReadDir(gd)
	if err != nil {
		return ""
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), ObjectsPrefix) {
			dirs = append(dirs, QuoteAlternate(filepath.Join(gd, e.Name())))
		}
	}
	if len(dirs) == 0 {
		return ""
	}
	if env := os.Getenv("GIT_ALTERNATE_OBJECT_DIRECTORIES"); env != "" {
		dirs = append([]string{env}, dirs...)
	}
	return strings.Join(dirs, string(filepath.ListSeparator))
}

// ObjectsEnv is the environment a git started outside this package (a
// check such as `git diff --check` over a snapshot's tree) needs in dir to
// read the objects of live runs: nil when there is no run.
func ObjectsEnv(dir string) []string {
	if alt := runAlternates(dir); alt != "" {
		return []string{"GIT_ALTERNATE_OBJECT_DIRECTORIES=" + alt}
	}
	return nil
}

// QuoteAlternate quotes a path for GIT_ALTERNATE_OBJECT_DIRECTORIES when
// it holds the list separator or starts with a double quote: git reads
// such an entry as a C-quoted string.
func QuoteAlternate(p string) string {
	if !strings.ContainsRune(p, filepath.ListSeparator) && !strings.HasPrefix(p, `"`) {
		return p
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
