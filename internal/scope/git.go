package scope

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

const (
	// maxOutput bounds what one git command may print; a repository whose
	// diff is larger than this is far past any size gate anyway.
	maxOutput = 64 << 20
	// gitTimeout bounds one git command when the caller's context has a
	// later deadline (or none), so a hook can never hang on git.
	gitTimeout = 60 * time.Second
	// emptyTree is the object name of git's empty tree (SHA-1).
	emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
	// waitDelay is how long a command's output may still be read after it
	// exited (or its time ran out): long enough for a loaded machine to
	// schedule the copying goroutine (1 s was not, at a load of 60 on two
	// cores: git's output was cut and Wait failed), short enough that a
	// grandchild holding the pipe open cannot hang a hook.
	waitDelay = 5 * time.Second
)

// errTooLarge reports that a command printed more than its output cap.
var errTooLarge = errors.New("output too large")

// git runs git commands in one work tree with a fixed, non-interactive
// environment: no pager, no optional locks (so read-only commands never
// rewrite the user's index), C locale and unquoted non-ASCII path names.
type git struct {
	dir string   // the directory git runs in (-C)
	env []string // extra environment, e.g. GIT_INDEX_FILE
}

// with returns a copy of g that adds env to every command.
func (g git) with(env ...string) git {
	return git{dir: g.dir, env: append(append([]string(nil), g.env...), env...)}
}

// run runs git with args and returns its standard output.
func (g git) run(ctx context.Context, args ...string) ([]byte, error) {
	return g.runInput(ctx, nil, args...)
}

// str runs git with args and returns its output without the final newline.
func (g git) str(ctx context.Context, args ...string) (string, error) {
	out, err := g.run(ctx, args...)
	return strings.TrimSuffix(string(out), "\n"), err
}

// runInput runs git with args, stdin and the output cap; a failure carries
// git's first line of standard error.
func (g git) runInput(ctx context.Context, stdin io.Reader, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := g.command(ctx, args...)
	cmd.Stdin = stdin
	out := &capped{max: maxOutput}
	stderr := &capped{max: 8 << 10, lossy: true}
	cmd.Stdout, cmd.Stderr = out, stderr
	err := cmd.Run()
	if out.over {
		return nil, fmt.Errorf("git %s: %w (more than %d bytes)", args[0], errTooLarge, maxOutput)
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("git %s: %w", args[0], ctx.Err())
	}
	if err != nil {
		msg, _, _ := strings.Cut(strings.TrimSpace(stderr.buf.String()), "\n")
		return out.buf.Bytes(), fmt.Errorf("git %s: %w: %s", args[0], err, msg)
	}
	return out.buf.Bytes(), nil
}

// command prepares git with args in g's directory and environment.
func (g git) command(ctx context.Context, args ...string) *exec.Cmd {
	// A repository may be hostile: its configuration must not make whetstone
	// run a program, so the fsmonitor and every hook are off (writing even
	// a temporary index runs post-index-change). Nor may it make git trust
	// an index entry whose file changed: every stat field is compared,
	// ctime included (a snapshot starts from an earlier one's index,
	// snapcache.go).
	full := append([]string{"-C", g.dir, "--no-pager", "-c", "core.quotepath=off", "-c", "color.ui=false",
		"-c", "core.fsmonitor=false", "-c", "core.hooksPath=" + os.DevNull,
		"-c", "core.trustctime=true", "-c", "core.checkStat=default"}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "GIT_EXTERNAL_DIFF=")
	cmd.Env = append(cmd.Env, g.env...)
	cmd.WaitDelay = waitDelay
	return cmd
}

// heads calls fn with the first n bytes of each blob, read in one
// streaming `git cat-file --batch`, so neither a large blob nor many blobs
// cost memory.
func (g git) heads(ctx context.Context, blobs []string, n int, fn func(blob string, head []byte)) error {
	if len(blobs) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := g.command(ctx, "cat-file", "--batch")
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

// capped is a writer that keeps at most max bytes. Past that it fails, which
// stops the command, unless lossy, when it drops the rest.
type capped struct {
	buf   bytes.Buffer
	max   int
	lossy bool
	over  bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); len(p) > room {
		c.buf.Write(p[:max(room, 0)])
		c.over = !c.lossy
		if c.lossy {
			return len(p), nil
		}
		return 0, errTooLarge // stops the copy, so git gets EPIPE instead of running on
	}
	return c.buf.Write(p)
}
