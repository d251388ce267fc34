package shell

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// project is a small Go project in a git repository, with the files the
// test commands need: archives, scripts that write, a remote to push to.
type project struct {
	root    string // the template; commands run in copies of it
	tmp     string // the Policy's temporary directory
	home    string // HOME while the tests run, holding the key
	key     string // the protected key file
	runHome string // HOME for the commands the tests run
	environ []string
	envOnce sync.Once // env may be asked for by parallel subtests
}

// setupScript builds the project; it runs in the project directory.
const setupScript = `set -e
mkdir -p scripts emptydir internal/x
printf 'package main\n\nfunc main()  {}\n' > main.go
printf 'package main\n\nimport "testing"\n\nfunc TestX(t *testing.T) {}\n' > main_test.go
printf 'module example.com/m\n' > go.mod
printf 'package x\n' > internal/x/x.go
printf '{"a": 1, "b": [1, 2]}\n' > data.json
printf 'a: 0\n' > y.yaml
printf 'xl.txt\n' > files.lst
printf 'all:\n\ttouch made.txt\n' > Makefile
printf 'touch ran-script.txt\n' > scripts/run.sh
chmod +x scripts/run.sh
printf 'BEGIN { system("touch ran-awk.txt") }\n' > scripts/prog.awk
printf 'w ran-sed.txt\n' > scripts/w.sed
printf 'open("ran-py.txt", "w")\n' > scripts/x.py
src="$TMPDIR/src" && mkdir -p "$src" && echo e > "$src/extracted.txt"
tar -cf files.tar -C "$src" extracted.txt
tar -czf files.tgz -C "$src" extracted.txt
(cd "$src" && zip -q "$OLDPWD/files.zip" extracted.txt)
rm -rf "$src"
echo hi | gzip > g.gz
git init -q -b main
git config user.name tester
git config user.email tester@example.com
git add -A
git commit -qm one
git branch feature
git checkout -q feature
echo f > feature.txt
git add feature.txt
git commit -qm feature
git checkout -q main
printf 'package main\n\n//go:generate touch generated.txt\n\nfunc main()  {}\n' > main.go
git commit -qam two
git tag v1
echo '// patched' >> main.go
git diff > scripts/p.diff
git checkout -q main.go
git add scripts/p.diff
git commit -qm three
git init -q --bare .git/remote.git
git remote add origin ./.git/remote.git
git push -q origin main feature
git fetch -q origin
git update-ref -d refs/remotes/origin/feature
git branch -q --set-upstream-to=origin/main main
rm -f .git/hooks/*.sample .git/remote.git/hooks/*.sample
git gc -q && git -C .git/remote.git gc -q
echo u > untracked.txt
`

// newProject copies the project into a test's own directory and makes a
// Policy's directories next to it.
func newProject(t testing.TB) *project {
	t.Helper()
	base := realDir(t, t.TempDir())
	p := &project{
		root:    filepath.Join(base, "proj"),
		tmp:     filepath.Join(base, "tmp"),
		home:    filepath.Join(base, "home"),
		runHome: filepath.Join(base, "runhome"),
	}
	p.key = filepath.Join(p.home, ".local", "state", "whetstone", "key")
	for _, d := range []string{p.tmp, filepath.Dir(p.key), p.runHome} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(p.key, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	template.once.Do(func() { template.dir, template.err = buildTemplate(p.env()) })
	if template.err != nil {
		t.Fatal(template.err)
	}
	if err := copyTree(template.dir, p.root); err != nil {
		t.Fatal(err)
	}
	return p
}

// template is the project, built once for all tests and then copied.
var template struct {
	once sync.Once
	dir  string
	err  error
}

// buildTemplate runs setupScript in a new directory. The directory outlives
// the test that builds it; TestMain removes it.
func buildTemplate(env []string) (string, error) {
	dir, err := os.MkdirTemp("", "shell-test-")
	if err != nil {
		return "", err
	}
	templateDirs = append(templateDirs, dir)
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return "", err
	}
	root := filepath.Join(dir, "proj")
	if err := os.Mkdir(root, 0o755); err != nil {
		return "", err
	}
	cmd := exec.Command("bash", "-c", setupScript)
	cmd.Dir = root
	cmd.Env = append(env, "TMPDIR="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("set up the project: %v\n%s", err, out)
	}
	return root, nil
}

var templateDirs []string

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range templateDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// useHome points HOME at the directory holding the protected key, so that
// ~ names it, for the rest of the test.
func (p *project) useHome(t *testing.T) {
	t.Setenv("HOME", p.home)
}

func realDir(t testing.TB, dir string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// policy returns the Policy the tests judge commands by.
func (p *project) policy(mode Mode) Policy {
	return Policy{Mode: mode, Root: p.root, Cwd: p.root, TempDir: p.tmp, Protected: []string{p.key, filepath.Dir(p.key)}}
}

// expand replaces @TMP@ and @KEY@ in a test command.
func (p *project) expand(cmd string) string {
	return strings.NewReplacer("@TMP@", p.tmp, "@KEY@", p.key, "@ROOT@", p.root).Replace(cmd)
}

// env is the environment the test commands run with: no user
// configuration, no network, and caches outside the project.
func (p *project) env() []string {
	p.envOnce.Do(func() { p.environ = p.makeEnv() })
	return p.environ
}

func (p *project) makeEnv() []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + p.runHome,
		"XDG_CONFIG_HOME=" + filepath.Join(p.runHome, ".config"),
		"TMPDIR=" + p.tmp,
		"LANG=C",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_EDITOR=true",
		"EDITOR=true",
		"PAGER=cat",
		"GIT_AUTHOR_NAME=tester", "GIT_AUTHOR_EMAIL=tester@example.com",
		"GIT_COMMITTER_NAME=tester", "GIT_COMMITTER_EMAIL=tester@example.com",
		"GOPROXY=off", "GOTOOLCHAIN=local", "GOFLAGS=", "GONOSUMDB=*",
	}
	for _, name := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOROOT"} {
		if out, err := exec.Command("go", "env", name).Output(); err == nil {
			env = append(env, name+"="+strings.TrimSpace(string(out)))
		}
	}
	return env
}

// copyProject copies the template to a fresh directory for commands to run
// in.
func (p *project) copyProject(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(realDir(t, t.TempDir()), "proj")
	if err := copyTree(p.root, dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

// copyTree copies the file, link or directory src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		info, err := os.Lstat(path)
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
			return os.Chmod(target, info.Mode().Perm())
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
}

// restore puts a copy of the template back the way it was, given its
// snapshot before a command ran; a copy changed in many places is made
// afresh. It returns the directory to use next and its snapshot.
func (p *project) restore(t *testing.T, dir string, before map[string]string) (string, map[string]string) {
	t.Helper()
	changed := changes(before, snapshot(t, dir))
	if len(changed) > 40 {
		dir = p.copyProject(t)
		return dir, snapshot(t, dir)
	}
	sort.Strings(changed)
	for _, rel := range changed {
		target := filepath.Join(dir, rel)
		if info, err := os.Lstat(target); err == nil && info.IsDir() {
			_ = os.Chmod(target, 0o755) // so that it can be emptied; never through a link
		}
		if err := os.RemoveAll(target); err != nil {
			t.Fatal(err)
		}
		if _, ok := before[rel]; !ok {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := copyTree(filepath.Join(p.root, rel), target); err != nil {
			t.Fatal(err)
		}
	}
	return dir, snapshot(t, dir)
}

// snapshot describes every file under dir: path, type, mode, owner, size,
// modification time and content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := os.Lstat(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		desc := info.Mode().String()
		if !info.IsDir() { // a directory changes with its entries, which are compared themselves
			desc += fmt.Sprintf(" %d", info.ModTime().UnixNano())
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			desc += fmt.Sprintf(" %d:%d", st.Uid, st.Gid)
		}
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			desc += fmt.Sprintf(" %x", sha256.Sum256(data))
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			link, _ := os.Readlink(path)
			desc += " -> " + link
		}
		out[rel] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// changes lists the paths whose description differs between two snapshots.
func changes(before, after map[string]string) []string {
	var out []string
	for path, desc := range before {
		if after[path] != desc {
			out = append(out, path)
		}
	}
	for path := range after {
		if _, ok := before[path]; !ok {
			out = append(out, path)
		}
	}
	return out
}

// runIn runs cmd with bash in dir, with a five-second limit, and returns
// its output and whether it ran to the end in time.
func (p *project) runIn(dir, cmd string) (string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, "bash", "-c", cmd)
	c.Dir = dir
	c.Env = p.env()
	c.Stdin = strings.NewReader("")
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = time.Second
	_ = c.Run()
	return out.String(), ctx.Err() == nil
}

// missing returns the first of programs not installed here.
func missing(programs []string) string {
	for _, prog := range programs {
		if _, err := exec.LookPath(prog); err != nil {
			return prog
		}
	}
	return ""
}
