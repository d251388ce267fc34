package scope

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/whetstone-dev/whetstone/internal/gitrun"
)

// goEnvTimeout bounds each `go env` / `go work edit` that prepares the Go
// checks; they read and write a few small files.
const goEnvTimeout = 5 * time.Second

// offline is the one-line status of a Go check that needed a module the
// local module cache does not hold.
const offline = "not run: modules not in the local cache (whetstone does not download them; run `go mod download`, or set \"checks_network\": true in whetstone.json)"

// goSandbox is the environment of whetstone's own Go checks, chosen so that
// they never write into the user's tree and never reach the network unless
// asked to: go.mod and go.sum are read-only (-mod=readonly, or -mod=vendor
// with a vendor directory), a workspace's go.work and go.work.sum are used
// through a copy in a temporary directory (so the go.work.sum that `go
// build` likes to write lands there), the toolchain is the local one and,
// without network, GOPROXY=off makes a missing module fail at once instead
// of a download that outlasts the time budget.
//
// The go command's own work directories go under a temporary GOTMPDIR
// that close removes: a check stopped by its budget or timeout is killed,
// and a killed go command leaves its $WORK (tens of MB of a cold build)
// in the system's temporary directory for ever.
type goSandbox struct {
	env   []string
	tmp   string // the temporary directory; "" when none was needed
	gotmp string // GOTMPDIR, removed by close
}

// newGoSandbox prepares the environment for a Go module at root.
func newGoSandbox(ctx context.Context, root string, network bool) (*goSandbox, error) {
	sb := &goSandbox{env: []string{"GOTOOLCHAIN=local"}}
	gotmp, err := os.MkdirTemp("", "whetstone-gotmp-*")
	if err != nil {
		return nil, fmt.Errorf("go checks: %w", err)
	}
	sb.gotmp = gotmp
	sb.env = append(sb.env, "GOTMPDIR="+gotmp)
	if !network {
		sb.env = append(sb.env, "GOPROXY=off")
	}
	work, err := goEnvValue(ctx, root, "GOWORK")
	if err != nil {
		sb.close()
		return nil, err
	}
	mod := "-mod=readonly"
	if work == "" || work == "off" {
		sb.env = append(sb.env, "GOWORK=off")
		if fi, err := os.Stat(filepath.Join(root, "vendor", "modules.txt")); err == nil && fi.Mode().IsRegular() {
			mod = "-mod=vendor"
		}
	} else {
		copied, err := sb.copyWork(ctx, root, work)
		if err != nil {
			sb.close()
			return nil, err
		}
		sb.env = append(sb.env, "GOWORK="+copied)
	}
	sb.env = append(sb.env, "GOFLAGS="+mod)
	return sb, nil
}

// close removes the temporary directories.
func (sb *goSandbox) close() {
	if sb == nil {
		return
	}
	for _, dir := range []string{sb.tmp, sb.gotmp} {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
}

// copyWork copies the workspace file work (and its go.work.sum) into a
// temporary directory and makes its relative use and replace paths
// absolute, so the copy means what the original means. It returns the
// copy's path.
func (sb *goSandbox) copyWork(ctx context.Context, root, work string) (string, error) {
	if !filepath.IsAbs(work) {
		work = filepath.Join(root, work)
	}
	tmp, err := os.MkdirTemp("", "whetstone-gowork-*")
	if err != nil {
		return "", fmt.Errorf("go checks: %w", err)
	}
	sb.tmp = tmp
	dst := filepath.Join(tmp, "go.work")
	if err := copyFile(work, dst); err != nil {
		return "", err
	}
	if err := copyFile(strings.TrimSuffix(work, ".work")+".work.sum", filepath.Join(tmp, "go.work.sum")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	out, err := goRun(ctx, tmp, nil, "work", "edit", "-json", "--", dst)
	if err != nil {
		return "", err
	}
	var wf struct {
		Use     []struct{ DiskPath string }
		Replace []struct {
			Old, New struct{ Path, Version string }
		}
	}
	if err := json.Unmarshal(out, &wf); err != nil {
		return "", fmt.Errorf("go checks: read %s: %w", work, err)
	}
	dir := filepath.Dir(work)
	var edits []string
	for _, u := range wf.Use {
		if !filepath.IsAbs(u.DiskPath) {
			edits = append(edits, "-dropuse="+u.DiskPath, "-use="+filepath.Join(dir, u.DiskPath))
		}
	}
	for _, r := range wf.Replace {
		if r.New.Version == "" && !filepath.IsAbs(r.New.Path) { // a local directory
			old := r.Old.Path
			if r.Old.Version != "" {
				old += "@" + r.Old.Version
			}
			edits = append(edits, "-replace="+old+"="+filepath.Join(dir, r.New.Path))
		}
	}
	if len(edits) > 0 {
		if _, err := goRun(ctx, tmp, nil, append(append([]string{"work", "edit"}, edits...), "--", dst)...); err != nil {
			return "", err
		}
	}
	return dst, nil
}

// goEnvValue returns `go env NAME` as the go command sees it in dir (the
// user's environment decides, as for their own builds).
func goEnvValue(ctx context.Context, dir, name string) (string, error) {
	out, err := goRun(ctx, dir, []string{"GOTOOLCHAIN=local", "GOFLAGS="}, "env", name)
	return strings.TrimSpace(string(out)), err
}

// goRun runs a short go command in dir.
func goRun(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, goEnvTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append(env, "LC_ALL=C")...)
	cmd.WaitDelay = gitrun.WaitDelay
	out := &gitrun.Capped{Max: 1 << 20}
	stderr := &gitrun.Capped{Max: 8 << 10, Lossy: true}
	cmd.Stdout, cmd.Stderr = out, stderr
	if err := cmd.Run(); err != nil {
		msg, _, _ := strings.Cut(strings.TrimSpace(stderr.Buf.String()), "\n")
		return nil, fmt.Errorf("go checks: go %s: %w: %s", args[0], err, msg)
	}
	return out.Buf.Bytes(), nil
}

// copyFile copies a small regular file (a workspace file) from src to dst,
// refusing anything larger than 1 MiB or not a regular file.
func copyFile(src, dst string) error {
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Size() > 1<<20 {
		return fmt.Errorf("go checks: %s is not a regular file of at most 1 MiB", src)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o600)
}

// offlineFailure reports whether a Go tool's output says it needed a module
// that GOPROXY=off kept it from downloading.
func offlineFailure(out string) bool {
	return strings.Contains(out, "disabled by GOPROXY=off") // "module lookup disabled by GOPROXY=off"
}
