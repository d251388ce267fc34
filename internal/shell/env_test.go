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
	"strings"
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
echo u > untracked.txt
`

// newProject builds the project and a Policy's directories. HOME points to
// a directory holding the protected key for the duration of the test.
func newProject(t *testing.T) *project {
	t.Helper()
	base := realDir(t, t.TempDir())
	p := &project{
		root:    filepath.Join(base, "proj"),
		tmp:     filepath.Join(base, "tmp"),
		home:    filepath.Join(base, "home"),
		runHome: filepath.Join(base, "runhome"),
	}
	p.key = filepath.Join(p.home, ".local", "state", "whetstone", "key")
	for _, d := range []string{p.root, p.tmp, filepath.Dir(p.key), p.runHome} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(p.key, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", p.home)
	cmd := exec.Command("bash", "-c", setupScript)
	cmd.Dir = p.root
	cmd.Env = p.env()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("set up the project: %v\n%s", err, out)
	}
	return p
}

func realDir(t *testing.T, dir string) string {
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

// copyProject copies the template to a fresh directory for one command.
func (p *project) copyProject(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(realDir(t, t.TempDir()), "proj")
	err := filepath.WalkDir(p.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(p.root, path)
		target := filepath.Join(dst, rel)
		info, err := os.Lstat(path)
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm())
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
	if err != nil {
		t.Fatal(err)
	}
	return dst
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
		desc := fmt.Sprintf("%v %d", info.Mode(), info.ModTime().UnixNano())
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
