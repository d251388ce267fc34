package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/whetstone-dev/whetstone/internal/safeio"
)

// probeTimeout bounds the one probe run; bwrap usually starts in ~10 ms.
const probeTimeout = 10 * time.Second

// cacheName is the probe cache file inside the cache directory.
const cacheName = "sandbox-probe"

// Find returns the bwrap executable to use and true when sandboxing works on
// this machine: Linux, bwrap in a system directory (toolDirs; never the
// caller's PATH, since bwrap starts the sandbox), and a probe — a real
// wrapped command in a throwaway project — behaves as Wrap promises.
//
// Hooks call Find on every Bash call, so the probe's verdict is cached in
// os.UserCacheDir()/whetstone/sandbox-probe under a key made of the probe
// recipe, the bwrap executable and the set-up's helpers (path, size, mtime)
// and the kernel's boot id. Only the first call after one of those changes
// runs the probe; every other call costs a few stats and two small reads.
// Without a usable cache directory every call probes.
func Find() (bwrap string, ok bool) { return FindContext(context.Background()) }

// FindContext is Find within ctx: a hook passes its deadline, and the probe
// (bounded by probeTimeout) ends with it. A probe cut short by ctx says
// nothing about the sandbox, so its failure is not cached.
func FindContext(ctx context.Context) (bwrap string, ok bool) {
	dir := ""
	if d, err := os.UserCacheDir(); err == nil {
		dir = filepath.Join(d, "whetstone")
	}
	return finder{cacheDir: dir}.find(ctx)
}

// finder is Find with its collaborators replaceable by tests.
type finder struct {
	goos     string                       // runtime.GOOS when ""
	lookPath func(string) (string, error) // lookBwrap when nil
	cacheDir string                       // "" = no cache
	probe    func(bwrap string) error     // probe when nil
	tool     func(name string) string     // lookTool when nil
	bootID   func() string                // bootID when nil
}

func (f finder) find(ctx context.Context) (string, bool) {
	goos := f.goos
	if goos == "" {
		goos = runtime.GOOS
	}
	if goos != "linux" {
		return "", false
	}
	look := f.lookPath
	if look == nil {
		look = lookBwrap
	}
	bwrap, err := look("bwrap")
	if err != nil || !filepath.IsAbs(bwrap) {
		return "", false
	}
	key, err := f.key(bwrap)
	if err != nil {
		return "", false
	}
	cache := ""
	if f.cacheDir != "" {
		cache = filepath.Join(f.cacheDir, cacheName)
		if verdict, ok := readVerdict(cache, key); ok {
			return bwrap, verdict
		}
	}
	probe := f.probe
	if probe == nil {
		probe = func(bwrap string) error { return f.run(ctx, bwrap) }
	}
	perr := probe(bwrap)
	if perr != nil && ctx.Err() != nil {
		return bwrap, false // cut short: not a verdict on the sandbox
	}
	if cache != "" {
		writeVerdict(cache, key, perr)
	}
	return bwrap, perr == nil
}

// key identifies what the cached verdict was measured on.
func (f finder) key(bwrap string) (string, error) {
	tool := f.tool
	if tool == nil {
		tool = lookTool
	}
	boot := f.bootID
	if boot == nil {
		boot = bootID
	}
	var b strings.Builder
	fmt.Fprintf(&b, "recipe %s\n", recipe())
	paths := []string{bwrap}
	for _, n := range helpers {
		paths = append(paths, tool(n))
	}
	for _, p := range paths {
		if p == "" {
			fmt.Fprintf(&b, "missing\n")
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s %d %d\n", p, fi.Size(), fi.ModTime().UnixNano())
	}
	fmt.Fprintf(&b, "boot %s\n", boot())
	return b.String(), nil
}

// recipe fingerprints the sandbox construction, so that a whetstone whose
// Wrap differs does not trust a verdict measured on another recipe.
func recipe() string {
	sum := sha256.Sum256([]byte(wrap("/bwrap", "cmd", Options{Root: "/root-dir", Env: func(string) string { return "" }},
		func(n string) string { return "/" + n })))
	return hex.EncodeToString(sum[:8])
}

// Installed reports whether bwrap is in a system directory, the only place
// Find takes it from.
func Installed() bool { return lookTool("bwrap") != "" }

// lookBwrap finds bwrap in toolDirs.
func lookBwrap(string) (string, error) {
	if p := lookTool("bwrap"); p != "" {
		return p, nil
	}
	return "", exec.ErrNotFound
}

func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// readVerdict returns the cached verdict when the file holds one for key.
func readVerdict(path, key string) (verdict, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return false, false
	}
	rest, found := bytes.CutPrefix(b, []byte(key))
	if !found {
		return false, false
	}
	switch {
	case bytes.HasPrefix(rest, []byte("ok\n")):
		return true, true
	case bytes.HasPrefix(rest, []byte("fail")):
		return false, true
	}
	return false, false
}

// writeVerdict stores the verdict atomically (temp file and rename), so
// concurrent hooks read either the old file or the new one. A failure to
// write is ignored: the next call probes again.
func writeVerdict(path, key string, perr error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return
	}
	body := key + "ok\n"
	if perr != nil {
		body = key + "fail " + strings.ReplaceAll(perr.Error(), "\n", " ") + "\n"
	}
	_ = safeio.WriteAtomic(path, []byte(body), safeio.WriteOptions{Perm: 0o600})
}

// probeScript is what the probe runs inside the sandbox: it must be able to
// write the project (the overlay), must hold no capability at all, and must
// see no network interface but loopback.
const probeScript = `set -e
echo probe > probe-file
test "$(cat probe-file)" = probe
grep -Eq '^CapPrm:[[:space:]]*0+$' /proc/self/status
grep -Eq '^CapEff:[[:space:]]*0+$' /proc/self/status
grep -Eq '^CapBnd:[[:space:]]*0+$' /proc/self/status
grep -Eq '^CapAmb:[[:space:]]*0+$' /proc/self/status
grep -Eq '^NoNewPrivs:[[:space:]]*1$' /proc/self/status
test "$(sed 1,2d /proc/net/dev | cut -d: -f1 | tr -d ' ')" = lo
echo sandbox-ok`

// run is the real probe: wrap probeScript for a throwaway project, run it
// with bash, and check that it said so and that nothing reached the project.
func (f finder) run(ctx context.Context, bwrap string) error {
	root, err := os.MkdirTemp("", "whetstone-sandbox-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return err
	}
	tool := f.tool
	if tool == nil {
		tool = lookTool
	}
	// Nothing of the caller's environment: the verdict is cached under a
	// key that does not hold it (a PATH without grep, as a test's may be,
	// must not make every later call fail), and the probe needs only the
	// system's tools.
	none := func(string) string { return "" }
	line := wrap(bwrap, probeScript, Options{Root: root, Env: none}, tool)
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	// The line starts with an absolute env -i, as in the Bash tool; the
	// shell that reads it is a system one, with nothing of the caller's.
	bash := tool("bash")
	if bash == "" {
		return fmt.Errorf("probe: bash not found in %s", strings.Join(toolDirs, ", "))
	}
	cmd := exec.CommandContext(ctx, bash, "-c", line)
	cmd.Env = []string{"PATH=" + systemPath}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("probe: %w: %s", err, bytes.TrimSpace(out))
	}
	if !bytes.Contains(out, []byte("sandbox-ok")) {
		return fmt.Errorf("probe: unexpected output %q", out)
	}
	if _, err := os.Lstat(filepath.Join(root, "probe-file")); err == nil {
		return fmt.Errorf("probe: a write inside the sandbox reached the project")
	}
	return nil
}
