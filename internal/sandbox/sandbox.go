// Package sandbox runs a read-only agent's shell command inside bubblewrap
// (bwrap) so that it cannot change anything that outlives it: the project is
// seen through a copy-on-write overlay whose writes vanish, /tmp and /run are
// fresh, everything else is read-only, and there is no network. docs/sandbox.md
// records why it is built this way and what Claude Code does with the result.
package sandbox

import (
	"os"
	"path/filepath"
	"strings"
)

// Options describe the sandbox for one command.
type Options struct {
	// Root is the project root: absolute, symlinks resolved. Inside the
	// sandbox it is a copy-on-write overlay of the real directory: the
	// command can write there, and every write vanishes when it ends.
	Root string
	// Cwd is the starting directory, inside Root; "" means Root.
	Cwd string
	// Hide lists absolute paths the command must not read (for example
	// whetstone's MAC key directory): a directory is covered by an empty
	// read-only tmpfs, a file by /dev/null. Paths that do not exist are
	// skipped.
	Hide []string
	// Env looks up the caller's environment (HOME, XDG_CACHE_HOME, GOCACHE,
	// DOCKER_HOST); nil means os.Getenv.
	Env func(string) string
}

// RewriteInMode reports whether whetstone may answer a read-only agent's
// PreToolUse Bash call with a Wrap line whatever the command, given the
// payload's permission_mode. Claude Code checks its permission rules against
// the rewritten line, not the original (docs/sandbox.md): in
// bypassPermissions only deny and ask rules apply, and Wrap's trailing copy
// of the command keeps those matching, so nothing widens. In the other modes
// only the commands that run the project's code are rewritten.
func RewriteInMode(permissionMode string) bool {
	return permissionMode == "bypassPermissions"
}

// Decision is the permission decision whetstone sends with a Wrap line in
// a client that checks its permission rules against it, by permission
// mode (docs/sandbox.md, "Decision"): none in bypassPermissions, where
// Claude Code applies the user's deny and ask rules to the line and
// nothing else; "allow" in every other mode, where the bwrap part would
// otherwise need an approval the user never gave. With "allow", Claude
// Code 2.1.329 still refuses a line that a deny rule matches, and Wrap's
// trailing copy of the command makes every deny rule for the command
// match the line. A client whose plugin applies the rewrite itself sends
// none (internal/client).
func Decision(permissionMode string) string {
	if permissionMode == "bypassPermissions" {
		return ""
	}
	return "allow"
}

// scratch is where the prelude keeps overlay upper and work directories and
// the fallback Go build cache; it lives in the sandbox's fresh /tmp.
const scratch = "/tmp/.whetstone-sandbox"

// prelude runs inside bwrap with every capability of the sandbox's own user
// namespace. It mounts the overlays and the hides that
// must sit on top of them, then drops every capability (bounding set
// included, so that uid 0 cannot regain them by exec) and runs the command
// with bash. Its arguments are data, never spliced into its text:
//
//	$1 mount  $2 setpriv  $3 root  $4 cwd  $5 Go build cache ("" = leave
//	GOCACHE alone)  $6 command  $7… hides as d:/dir or f:/file
//
// lowerdir is given as "." after cd so that paths containing ',', ':' or '\'
// need no escaping in the overlay options.
const prelude = `set -eu
m=$1 sp=$2 root=$3 cwd=$4 gc=$5 cmd=$6
shift 6
ovl() {
	mkdir -p "` + scratch + `/$2/upper" "` + scratch + `/$2/work"
	cd "$1"
	"$m" -t overlay -o "userxattr,lowerdir=.,upperdir=` + scratch + `/$2/upper,workdir=` + scratch + `/$2/work" whetstone-sandbox "$1"
	cd /
}
ovl "$root" root
if [ -n "$gc" ]; then
	if [ -d "$gc" ]; then
		ovl "$gc" gocache
	else
		mkdir -p ` + scratch + `/go-build
		export GOCACHE=` + scratch + `/go-build
	fi
fi
for h do
	case $h in
	d:*) "$m" -t tmpfs -o ro,mode=0555,size=4k whetstone-hidden "${h#d:}" ;;
	f:*) "$m" --bind /dev/null "${h#f:}" ;;
	esac
done
cd "$cwd"
exec "$sp" --bounding-set=-all --inh-caps=-all --ambient-caps=-all --no-new-privs -- bash -c "$cmd"
`

// Wrap returns the command line that Claude Code's Bash tool should run in
// place of cmd: bwrap running cmd with bash -c inside the sandbox, then
// "exit" (so bash stops with the sandboxed command's status), then cmd itself
// on the following lines. That trailing copy never runs; it is there because
// Claude Code checks its permission rules against every subcommand of the
// line it is given, so a deny rule the user wrote for cmd still matches the
// rewritten line (docs/sandbox.md, "Decision").
//
// The sandbox: a new user, mount, pid, ipc, uts and network namespace (only
// loopback), / read-only, fresh /dev, /proc, /tmp and /run, Root (and the Go
// build cache) as overlays whose writes vanish, Hide covered, TMPDIR and
// GOTMPDIR in /tmp, GOPROXY=off. The command runs as uid 0 of the sandbox's
// user namespace with no capabilities and no_new_privs.
//
// If o.Root is not an absolute directory other than "/", or cmd contains a
// NUL byte, the line only prints an error and exits 126: it fails closed.
func Wrap(bwrap, cmd string, o Options) string {
	return wrap(bwrap, cmd, o, lookTool)
}

func wrap(bwrap, cmd string, o Options, look func(string) string) string {
	env := o.Env
	if env == nil {
		env = os.Getenv
	}
	if msg := invalid(bwrap, cmd, o); msg != "" {
		return failClosed(msg, cmd)
	}
	mount, setpriv := look("mount"), look("setpriv")
	if mount == "" || setpriv == "" {
		return failClosed("mount or setpriv (util-linux) not found", cmd)
	}
	root := filepath.Clean(o.Root)
	cwd := root
	if o.Cwd != "" {
		cwd = filepath.Clean(o.Cwd)
	}
	gocache := goCache(env)

	args := []string{bwrap,
		"--unshare-user", "--uid", "0", "--gid", "0",
		// Only the prelude holds these, in the sandbox's own user namespace:
		// overlayfs performs upper-layer work (whiteouts, copy-up, ownership)
		// with the mounter's credentials, which needs more than
		// CAP_SYS_ADMIN (as an unprivileged user it fails without
		// CAP_MKNOD, CAP_CHOWN, CAP_FOWNER, CAP_DAC_OVERRIDE…).
		"--cap-add", "ALL",
		"--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-net",
		"--die-with-parent", "--new-session",
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--tmpfs", "/tmp",
		// /run holds sockets that lead out of any sandbox (docker, podman,
		// dbus, the user's session bus); NixOS keeps its system there.
		"--tmpfs", "/run",
		"--ro-bind-try", "/run/current-system", "/run/current-system",
		"--ro-bind-try", "/run/wrappers", "/run/wrappers",
	}
	overlays := []string{root}
	if gocache != "" {
		overlays = append(overlays, gocache)
	}
	var late []string // hides under an overlay: mounted by the prelude, on top of it
	var seal []string // made read-only last, so binds below them still find their mountpoints
	for _, h := range hides(o.Hide, env) {
		kind := "f:"
		if h.dir {
			kind = "d:"
		}
		if under(h.path, overlays...) {
			late = append(late, kind+h.path)
			continue
		}
		if under(h.path, "/tmp", "/run") {
			continue // already replaced by an empty tmpfs
		}
		if h.dir {
			args = append(args, "--tmpfs", h.path)
			seal = append(seal, "--remount-ro", h.path)
		} else {
			args = append(args, "--ro-bind", "/dev/null", h.path)
		}
	}
	// Root and the build cache may live under /tmp (test projects do), which
	// the tmpfs above hid: bind them back before the prelude lays overlays on
	// them.
	args = append(args, "--ro-bind", root, root)
	if gocache != "" {
		args = append(args, "--ro-bind-try", gocache, gocache)
	}
	args = append(args, seal...)
	args = append(args,
		"--chdir", "/",
		"--setenv", "TMPDIR", "/tmp",
		"--setenv", "GOTMPDIR", "/tmp",
		"--setenv", "GOPROXY", "off",
	)
	if gocache != "" {
		args = append(args, "--setenv", "GOCACHE", gocache)
	}
	args = append(args, "--", "/bin/sh", "-c", prelude, "whetstone-sandbox",
		mount, setpriv, root, cwd, gocache, cmd)
	args = append(args, late...)
	return join(args) + "\nexit\n" + cmd
}

func invalid(bwrap, cmd string, o Options) string {
	switch {
	case !filepath.IsAbs(bwrap):
		return "bwrap path is not absolute"
	case !filepath.IsAbs(o.Root) || filepath.Clean(o.Root) == "/":
		return "project root must be an absolute directory other than /"
	case o.Cwd != "" && !filepath.IsAbs(o.Cwd):
		return "starting directory is not absolute"
	case strings.ContainsRune(cmd, 0):
		return "command contains a NUL byte"
	}
	return ""
}

// failClosed is a line that runs nothing but reports msg; cmd follows the
// exit for the same reason as in Wrap.
func failClosed(msg, cmd string) string {
	return "printf '%s\\n' " + Quote("whetstone sandbox: "+msg) + " >&2\nexit 126\n" + cmd
}

// goCache is the Go build cache directory the caller's go would use, which
// the sandbox overlays so builds stay warm; "" when GOCACHE=off. It does not
// read a go env file (go env -w GOCACHE=…): the sandbox sets GOCACHE
// explicitly, so such a setting only costs a cold cache.
func goCache(env func(string) string) string {
	gc := env("GOCACHE")
	switch {
	case gc == "off":
		return ""
	case filepath.IsAbs(gc):
		return filepath.Clean(gc)
	}
	if x := env("XDG_CACHE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "go-build")
	}
	if h := env("HOME"); filepath.IsAbs(h) && filepath.Clean(h) != "/" {
		return filepath.Join(h, ".cache", "go-build")
	}
	return scratch + "/go-build"
}

type hidden struct {
	path string
	dir  bool
}

// hides resolves the paths to hide, adding the Docker sockets that sit
// outside /run (Docker Desktop keeps its socket in HOME): a daemon socket
// would let the command start an unsandboxed container.
func hides(paths []string, env func(string) string) []hidden {
	all := append([]string(nil), paths...)
	if h := strings.TrimPrefix(env("DOCKER_HOST"), "unix://"); filepath.IsAbs(h) {
		all = append(all, h)
	}
	if home := env("HOME"); filepath.IsAbs(home) {
		all = append(all,
			filepath.Join(home, ".docker", "run", "docker.sock"),
			filepath.Join(home, ".docker", "desktop", "docker.sock"))
	}
	var out []hidden
	seen := map[string]bool{}
	for _, p := range all {
		if !filepath.IsAbs(p) {
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		fi, err := os.Stat(real)
		if err != nil || seen[real] {
			continue
		}
		seen[real] = true
		out = append(out, hidden{path: real, dir: fi.IsDir()})
	}
	return out
}

// under reports whether p is one of dirs or inside one of them.
func under(p string, dirs ...string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

// toolDirs are where the privileged part of the prelude looks for mount and
// setpriv. The caller's PATH is not used: those two run with capabilities
// that could undo the sandbox, so they must not come from a directory the
// project or an agent controls.
var toolDirs = []string{"/usr/bin", "/bin", "/usr/sbin", "/sbin", "/run/current-system/sw/bin"}

func lookTool(name string) string {
	for _, d := range toolDirs {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

func join(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = Quote(a)
	}
	return strings.Join(q, " ")
}

// Quote returns s as one word for a POSIX shell (sh, bash, zsh): unchanged
// when it holds only characters no shell treats specially anywhere in a word
// ('=' and '%' are not among them: zsh expands a leading =), otherwise in
// single quotes, each embedded ' written as '\”. Inside single quotes
// nothing is special, newlines included.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./:@+,", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
