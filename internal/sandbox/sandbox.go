// Package sandbox runs a read-only agent's shell command inside bubblewrap
// (bwrap) so that it cannot change anything that outlives it: the project is
// seen through a copy-on-write overlay whose writes vanish, /tmp and /run are
// fresh, everything else is read-only, and there is no network. docs/sandbox.md
// records why it is built this way and what Claude Code does with the result.
package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// systemPath is the PATH of bwrap and the prelude, and the command's when
// the caller has none: the set-up runs every helper by absolute path
// anyway, so this only serves a helper that runs another by name.
const systemPath = "/usr/sbin:/usr/bin:/sbin:/bin"

// prelude runs inside bwrap with every capability of the sandbox's own user
// namespace and the environment env -i gave bwrap (PATH=systemPath and
// nothing else). It mounts the overlays and the hides that must sit on top
// of them, then drops every capability (bounding set included, so that
// uid 0 cannot regain them by exec) and runs the command with bash in an
// environment of Wrap's making. Every program it starts is named by an
// absolute path resolved in toolDirs; its arguments are data, never spliced
// into its text:
//
//	$1 mount  $2 setpriv  $3 mkdir  $4 env  $5 bash  $6 root  $7 cwd
//	$8 Go build cache ("" = none)  $9 command
//	then hides as d:/dir or f:/file, then "--", then the command's
//	environment as NAME=VALUE words
//
// lowerdir is given as "." after cd so that paths containing ',', ':' or '\'
// need no escaping in the overlay options.
const prelude = `set -eu
m=$1 sp=$2 md=$3 e=$4 b=$5 root=$6 cwd=$7 gc=$8 cmd=$9
shift 9
ovl() {
	"$md" -p "` + scratch + `/$2/upper" "` + scratch + `/$2/work"
	cd "$1"
	"$m" -t overlay -o "userxattr,lowerdir=.,upperdir=` + scratch + `/$2/upper,workdir=` + scratch + `/$2/work" whetstone-sandbox "$1"
	cd /
}
ovl "$root" root
gce=
if [ -n "$gc" ]; then
	if [ -d "$gc" ]; then
		ovl "$gc" gocache
		gce=GOCACHE=$gc
	else
		"$md" -p ` + scratch + `/go-build
		gce=GOCACHE=` + scratch + `/go-build
	fi
fi
while [ "$1" != -- ]; do
	case $1 in
	d:*) "$m" -t tmpfs -o ro,mode=0555,size=4k whetstone-hidden "${1#d:}" ;;
	f:*) "$m" --bind /dev/null "${1#f:}" ;;
	esac
	shift
done
shift
cd "$cwd"
exec "$sp" --bounding-set=-all --inh-caps=-all --ambient-caps=-all --no-new-privs -- "$e" -i ${gce:+"$gce"} "$@" "$b" -c "$cmd"
`

// helpers are the programs the set-up runs, each resolved in toolDirs: env
// starts bwrap with an empty environment, sh runs the prelude, mkdir,
// mount and setpriv run in it with capabilities, and env and bash start
// the command after the drop.
var helpers = []string{"env", "sh", "mkdir", "mount", "setpriv", "bash"}

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
// build cache) as overlays whose writes vanish, Hide covered. Nothing of the
// caller's runs before the command: the line starts with an absolute
// env -i, bwrap and every helper of the set-up are absolute paths in system
// directories, and the command gets an environment built from Env: the
// variables of passEnv, PATH (the caller's absolute entries; those under
// /tmp and /run bound back read-only), TMPDIR and GOTMPDIR in /tmp,
// GOPROXY=off and GOCACHE. The command runs as uid 0 of the sandbox's user
// namespace with no capabilities and no_new_privs.
//
// If o.Root is not an absolute directory other than "/", cmd contains a
// NUL byte or a helper is missing, the line only prints an error and exits
// 126: it fails closed.
func Wrap(bwrap, cmd string, o Options) string {
	return wrap(bwrap, cmd, o, lookTool)
}

func wrap(bwrap, cmd string, o Options, look func(string) string) string {
	args, msg := build(bwrap, cmd, o, look)
	if msg != "" {
		return failClosed(msg, cmd)
	}
	return join(args) + "\nexit\n" + cmd
}

// Command returns the argument vector that runs argv in the sandbox o
// describes, with no shell around it (the hook runs the project's checkers
// this way), or why it cannot: what Wrap's line would refuse, or argv[0]
// naming a program the sandbox would not show (Unreachable).
func Command(bwrap string, argv []string, o Options) (wrapped []string, why string) {
	if len(argv) == 0 {
		return nil, "no command"
	}
	if why := Unreachable(argv[0], o); why != "" {
		return nil, why
	}
	words := make([]string, len(argv))
	for i, w := range argv {
		words[i] = Quote(w)
	}
	args, msg := build(bwrap, strings.Join(words, " "), o, lookTool)
	if msg != "" {
		return nil, "whetstone sandbox: " + msg
	}
	return args, ""
}

// build is the argument vector of Wrap's line, or why there is none.
func build(bwrap, cmd string, o Options, look func(string) string) ([]string, string) {
	env := o.Env
	if env == nil {
		env = os.Getenv
	}
	if msg := invalid(bwrap, cmd, o); msg != "" {
		return nil, msg
	}
	tool := map[string]string{}
	for _, n := range helpers {
		if tool[n] = look(n); tool[n] == "" {
			return nil, n + " not found in " + strings.Join(toolDirs, ", ")
		}
	}
	l := newLayout(o, env)

	args := []string{tool["env"], "-i", "PATH=" + systemPath, bwrap,
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
	// The caller's tool directories under /tmp and /run, back over the
	// fresh tmpfs, so that a program found on PATH outside is found inside.
	for _, d := range l.binds {
		args = append(args, "--ro-bind", d, d)
	}
	for _, s := range l.links {
		args = append(args, "--symlink", s[1], s[0])
	}
	var late []string // hides under an overlay: mounted by the prelude, on top of it
	var seal []string // made read-only last, so binds below them still find their mountpoints
	for _, h := range l.hides {
		kind := "f:"
		if h.dir {
			kind = "d:"
		}
		if under(h.path, l.overlays()...) {
			late = append(late, kind+h.path)
			continue
		}
		if under(h.path, "/tmp", "/run") && !under(h.path, l.binds...) {
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
	args = append(args, "--ro-bind", l.root, l.root)
	if l.gocache != "" {
		args = append(args, "--ro-bind-try", l.gocache, l.gocache)
	}
	args = append(args, seal...)
	args = append(args, "--chdir", "/", "--", tool["sh"], "-c", prelude, "whetstone-sandbox",
		tool["mount"], tool["setpriv"], tool["mkdir"], tool["env"], tool["bash"],
		l.root, l.cwd, l.gocache, cmd)
	args = append(args, late...)
	args = append(args, "--")
	return append(args, commandEnv(env, l.gocache)...), ""
}

// passEnv are the caller's variables the command sees, by name (the LC_*
// of lcNames too): where the user's files and toolchains are, as PATH
// says, and how to print. None is a program, library, script or option
// that a shell, the dynamic loader or an interpreter loads or runs on its
// own start, so an environment the repository chose (a direnv .envrc, an
// activated virtualenv's settings) cannot make the command run more than
// it says; PATH is handled apart (commandEnv).
// Left out, among others: LD_*, BASH_ENV, ENV, SHELLOPTS, PYTHON*,
// NODE_OPTIONS, NODE_PATH, PERL5*, RUBY*, GOFLAGS (-toolexec, -exec),
// GOENV, GOWORK, CC, CXX, RUSTC_WRAPPER, RUSTUP_TOOLCHAIN (a path is
// allowed), CARGO_BUILD_*, JAVA_TOOL_OPTIONS, EDITOR, PAGER, GIT_*, and
// every secret (tokens, keys).
var passEnv = []string{
	"HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TERM", "COLORTERM", "NO_COLOR", "TZ", "CI",
	"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
	"GOPATH", "GOMODCACHE", "GOTOOLCHAIN", "CGO_ENABLED",
	"CARGO_HOME", "RUSTUP_HOME", "JAVA_HOME", "GRADLE_USER_HOME", "VIRTUAL_ENV",
}

// lcNames are the locale categories of glibc, passed like LANG.
var lcNames = []string{"LC_ALL", "LC_CTYPE", "LC_NUMERIC", "LC_TIME", "LC_COLLATE", "LC_MONETARY",
	"LC_MESSAGES", "LC_PAPER", "LC_NAME", "LC_ADDRESS", "LC_TELEPHONE", "LC_MEASUREMENT", "LC_IDENTIFICATION"}

// commandEnv is the command's environment but GOCACHE (the prelude adds
// it when the cache is gocache or its scratch stand-in): passEnv from the
// caller, PATH, and what the sandbox sets.
func commandEnv(env func(string) string, gocache string) []string {
	var out []string
	for _, n := range append(append([]string(nil), passEnv...), lcNames...) {
		v := env(n)
		if v == "" {
			continue
		}
		// glibc loads a locale named by a path from that path: the
		// repository's files, were the value to point there.
		if (n == "LANG" || n == "LANGUAGE" || strings.HasPrefix(n, "LC_")) && strings.Contains(v, "/") {
			continue
		}
		out = append(out, n+"="+v)
	}
	path := strings.Join(pathDirs(CallerPathOf(env)), ":")
	if path == "" {
		path = systemPath
	}
	out = append(out, "PATH="+path, "TMPDIR=/tmp", "GOTMPDIR=/tmp", "GOPROXY=off")
	if gocache == "" {
		out = append(out, "GOCACHE=off")
	}
	return out
}

// CallerPath names the variable that keeps the caller's PATH as it was
// before whetstone dropped the project's directories from its own
// (internal/toolpath): whetstone's programs never come from the project,
// but the sandboxed command, which runs contained, keeps them, so that an
// activated virtualenv's python and pytest are found inside as outside.
const CallerPath = "WHETSTONE_CALLER_PATH"

// CallerPathOf is the PATH an agent's command starts from, read through
// env: CallerPath's (the caller's PATH as the CLI kept it), else PATH.
func CallerPathOf(env func(string) string) string {
	if p := env(CallerPath); p != "" {
		return p
	}
	return env("PATH")
}

// pathDirs are the absolute entries of a PATH value, cleaned, each once:
// an empty or relative entry means a directory relative to wherever the
// command is, which no one chose.
func pathDirs(path string) []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range filepath.SplitList(path) {
		if !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// layout is what the sandbox shows where, computed from Options once for
// both the line and Unreachable.
type layout struct {
	root, cwd, gocache string
	hides              []hidden
	binds              []string    // directories under /tmp or /run bound back read-only
	links              [][2]string // {path, target}: PATH entries under /tmp or /run that are symlinks
}

func newLayout(o Options, env func(string) string) layout {
	l := layout{root: filepath.Clean(o.Root), gocache: goCache(env)}
	l.cwd = l.root
	if o.Cwd != "" {
		l.cwd = filepath.Clean(o.Cwd)
	}
	l.hides = hides(o.Hide, env)
	l.binds, l.links = pathBinds(pathDirs(CallerPathOf(env)), l.overlays())
	return l
}

func (l layout) overlays() []string {
	if l.gocache == "" {
		return []string{l.root}
	}
	return []string{l.root, l.gocache}
}

// pathBinds chooses, for the PATH entries under /tmp or /run (per-shell
// tool directories: fnm's /run/user/<uid>/fnm_multishells/…, a virtualenv
// in /tmp), what to bind back over the fresh tmpfs: each entry's real
// directory, and a symlink where the entry is one. /tmp, /run and
// /run/user/<uid> themselves are never bound: they hold the sockets the
// tmpfs is there to hide. Directories inside an overlay need nothing.
func pathBinds(dirs, overlays []string) (binds []string, links [][2]string) {
	excluded := func(d string) bool {
		parent := filepath.Dir(d)
		return d == "/tmp" || d == "/run" || d == "/run/user" || parent == "/run/user"
	}
	var entries [][2]string
	for _, d := range dirs {
		if !under(d, "/tmp", "/run") || excluded(d) {
			continue
		}
		real, err := filepath.EvalSymlinks(d)
		if err != nil || excluded(real) {
			continue
		}
		if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
			continue
		}
		entries = append(entries, [2]string{d, real})
		if under(real, "/tmp", "/run") && !under(real, overlays...) {
			binds = append(binds, real)
		}
	}
	// Outer symlinks before those under them, which they then cover.
	slices.SortFunc(entries, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	// Each once, nested ones dropped: a bind covers what is in it.
	slices.Sort(binds)
	binds = slices.Compact(binds)
	all := slices.Clone(binds)
	binds = slices.DeleteFunc(binds, func(d string) bool {
		return slices.ContainsFunc(all, func(o string) bool { return o != d && under(d, o) })
	})
	for _, e := range entries {
		if e[0] != e[1] && !under(e[0], binds...) && !under(e[0], overlays...) &&
			!slices.ContainsFunc(links, func(l [2]string) bool { return under(e[0], l[0]) }) {
			links = append(links, e)
		}
	}
	return binds, links
}

// Unreachable says why the program at path, as the caller names it, would
// not be there inside the sandbox o describes: hidden, or under /tmp or
// /run (fresh inside) and not bound back, as named or once its symlinks
// are resolved. It returns "" when the program is there, and for a path
// relative to the starting directory (inside the project).
func Unreachable(path string, o Options) string {
	if !filepath.IsAbs(path) {
		return ""
	}
	env := o.Env
	if env == nil {
		env = os.Getenv
	}
	l := newLayout(o, env)
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fmt.Sprintf("%s cannot be resolved (%v)", path, err)
	}
	if why := l.missing(filepath.Clean(path)); why != "" {
		return path + " " + why
	}
	if why := l.missing(real); why != "" {
		return path + " resolves to " + real + ", which " + why
	}
	return ""
}

// missing says why p (absolute, clean) does not exist inside, as a
// predicate ("is hidden…"), or "".
func (l layout) missing(p string) string {
	for _, h := range l.hides {
		if under(p, h.path) {
			return "is hidden in the sandbox"
		}
	}
	if under(p, l.overlays()...) || !under(p, "/tmp", "/run") ||
		under(p, l.binds...) || under(p, "/run/current-system", "/run/wrappers") {
		return ""
	}
	for _, s := range l.links {
		if under(p, s[0]) {
			return ""
		}
	}
	return "is under /" + strings.SplitN(p, "/", 3)[1] + " (empty in the sandbox) and in no PATH directory the sandbox binds back"
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

// toolDirs are the only directories where bwrap and the set-up's helpers
// (helpers) are looked up, in this order. The caller's PATH is never used:
// the helpers run with every capability of the sandbox's user namespace,
// which could undo it, and bwrap starts it, so none may come from a
// directory the project or an agent controls (an activated virtualenv's
// .venv/bin, node_modules/.bin).
var toolDirs = []string{"/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin", "/usr/local/sbin", "/run/current-system/sw/bin"}

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
