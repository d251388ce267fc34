package shell

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// These tests hold the commands that reach past what an agent may touch:
// the project itself when it lives under the temporary directory, files
// made by mktemp, and the harmless git reads that must stay allowed.

// TestProjectUnderTemp checks that a project under the temporary directory
// is judged by the project's rules: a read-only agent may not remove, move
// or write into it through the temporary directory. Each refused command is
// run in a fresh copy to show that it does harm the project.
func TestProjectUnderTemp(t *testing.T) {
	p := newProject(t)
	denied := []string{
		`rm -rf @ROOT@`, `rm -rf @ROOT@/`, `mv @ROOT@ @BASE@/moved`, `rm -rf @BASE@`, `cd @BASE@ && rm -rf proj`,
		`cd .. && mv proj gone`, `chmod -R 000 @BASE@`,
		// Inside the project: the fixer may, read-only agents may not.
		`rm -r @ROOT@/internal`, `mktemp -p @ROOT@`, `touch @ROOT@/x`, `echo x > @ROOT@/y`,
		`mkdir @ROOT@/new`, `rmdir @ROOT@/emptydir`, `cp main.go @BASE@/proj/z.go`,
	}
	const fixerMay = 7 // the last rows
	allowed := []string{`echo x > @BASE@/scratch.txt`, `mkdir -p @BASE@/a && touch @BASE@/a/b && rm -rf @BASE@/a`, `mktemp -p @BASE@`, `mktemp`}
	for _, mode := range []Mode{ReadOnly, Fixer} {
		pol := p.policy(mode)
		pol.TempDir = filepath.Dir(p.root)
		for i, cmd := range denied {
			if mode == Fixer && i >= len(denied)-fixerMay {
				continue
			}
			if r := Check(p.underTemp(cmd, p.root), pol); r == "" {
				t.Errorf("mode %d: Check(%q) allowed; want it denied", mode, cmd)
			}
		}
		for _, cmd := range allowed {
			if r := Check(p.underTemp(cmd, p.root), pol); r != "" {
				t.Errorf("mode %d: Check(%q) = %q; want it allowed", mode, cmd, r)
			}
		}
	}
	for _, cmd := range denied {
		base := realDir(t, t.TempDir())
		root := filepath.Join(base, "proj")
		if err := copyTree(p.root, root); err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, root)
		out, _ := p.runIn(root, p.underTemp(cmd, root))
		if _, err := os.Stat(root); err == nil {
			os.Chmod(base, 0o755)
			os.Chmod(root, 0o755)
			if len(changes(before, snapshot(t, root))) == 0 {
				t.Errorf("%q left the project as it was; output:\n%s", cmd, out)
			}
		}
		filepath.WalkDir(base, func(path string, d os.DirEntry, err error) error { // let t.TempDir clean up
			if d != nil && d.IsDir() {
				os.Chmod(path, 0o755)
			}
			return nil
		})
	}
}

// underTemp expands a command for a project at root whose parent is the
// temporary directory.
func (p *project) underTemp(cmd, root string) string {
	return p.expand(strings.NewReplacer("@ROOT@", root, "@BASE@", filepath.Dir(root)).Replace(cmd))
}

// TestMktemp checks that mktemp is judged by the directory it makes its
// file in, -p DIR and --tmpdir=DIR included. Each refused command is run to
// show that it does create a file in the project.
func TestMktemp(t *testing.T) {
	p := newProject(t)
	denied := []string{
		`mktemp -p .git/hooks`, `mktemp -p .`, `mktemp --tmpdir=.git/hooks`, `mktemp --tmpdir=scripts`,
		`mktemp -d -p internal`, `mktemp -p @ROOT@/.git`, `mktemp --tmpdir=. x.XXX`, `mktemp -p . -d`,
		`mktemp -u -p .git/hooks; mktemp -p .git/hooks post-XXX`, `mktemp -p .whetstone`, `mktemp x.XXX`,
	}
	for _, cmd := range denied {
		if r := Check(p.expand(cmd), p.policy(ReadOnly)); r == "" {
			t.Errorf("Check(%q) allowed; want it denied", cmd)
		}
		if strings.Contains(cmd, ".git") || strings.Contains(cmd, ".whetstone") {
			if r := Check(p.expand(cmd), p.policy(Fixer)); r == "" {
				t.Errorf("fixer: Check(%q) allowed; want it denied", cmd)
			}
		}
	}
	for _, cmd := range []string{`mktemp -p "$d"`, `mktemp --tmpdir="$d"`, `mktemp -p ~`, `mktemp -t -p . x.XXX`} {
		if r := Check(p.expand(cmd), p.policy(ReadOnly)); r == "" {
			t.Errorf("Check(%q) allowed; want it denied", cmd)
		}
	}
	for _, cmd := range []string{`mktemp`, `mktemp -d`, `mktemp -p @TMP@`, `mktemp --tmpdir=@TMP@ x.XXXX`, `mktemp -t x.XXX`, `mktemp --tmpdir`, `mktemp -p @TMP@ -t y.XXX`} {
		if r := Check(p.expand(cmd), p.policy(ReadOnly)); r != "" {
			t.Errorf("Check(%q) = %q; want it allowed", cmd, r)
		}
	}
	if err := os.MkdirAll(filepath.Join(p.root, ".whetstone"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := p.copyProject(t)
	for _, cmd := range denied {
		before := snapshot(t, dir)
		out, _ := p.runIn(dir, strings.ReplaceAll(p.expand(cmd), p.root, dir))
		if len(changes(before, snapshot(t, dir))) == 0 {
			t.Errorf("%q created nothing in the project; output:\n%s", cmd, out)
		}
	}
}

// TestHarmlessGit checks the git reads that print and change nothing: a
// bare git checkout (unless a post-checkout hook would run) and diff
// --output to standard output, error or /dev/null.
func TestHarmlessGit(t *testing.T) {
	p := newProject(t)
	allowed := []string{
		`git checkout`, `git diff --output=/dev/stdout HEAD~1`, `git diff --output=/dev/stderr`, `git diff --output=/dev/null`,
		`git log -p -1 --output=/dev/stdout`, `git show --output=/dev/null HEAD`, `cd internal && git checkout`,
	}
	pol := p.policy(ReadOnly)
	for _, cmd := range allowed {
		if r := Check(cmd, pol); r != "" {
			t.Errorf("Check(%q) = %q; want it allowed", cmd, r)
		}
	}
	p.runUnchanged(t, allowed)
	for _, cmd := range []string{
		`git checkout -- .`, `git checkout x`, `git checkout main`, `git checkout .`, `git checkout -b x`, `git checkout -f`,
		`git checkout HEAD -- main.go`, `git checkout "$x"`, `git diff --output=file`, `git diff --output=/dev/stdout.txt`,
		`git diff --output=/dev/stdout/../../tmp/x`, `git diff --output /dev/stdout`, `git diff --output=out --output=/dev/null`,
		`git diff --outp=/tmp/x`,
	} {
		if r := Check(cmd, pol); r == "" {
			t.Errorf("Check(%q) allowed; want it denied", cmd)
		}
	}
	if r := Check(`git checkout`, p.policy(Fixer)); r == "" {
		t.Errorf("fixer: Check(%q) allowed; want it denied: the fixer can write the hook first", `git checkout`)
	}
	// git runs a post-checkout hook even for a bare checkout: refused then.
	hook := filepath.Join(p.root, ".git", "hooks", "post-checkout")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\ntouch hook-ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := Check(`git checkout`, pol); !strings.Contains(r, "post-checkout") {
		t.Errorf("with a hook: Check(git checkout) = %q; want it denied for the hook", r)
	}
	dir := p.copyProject(t)
	p.runIn(dir, "git checkout")
	if _, err := os.Stat(filepath.Join(dir, "hook-ran")); err != nil {
		t.Errorf("git checkout did not run the post-checkout hook here: %v", err)
	}
}

// A keyRow is a command that prints whetstone's key, or the key encoded as
// shows, when run by an agent whose HOME holds it.
type keyRow struct {
	cmd, shows string
}

// keyReads are the ways to read the key through a path computed while the
// command runs, or through a pattern, a link or a copy. Each is run to show
// that it does print the key.
var keyReads = []keyRow{
	{`find ~/.local/state -name key | xargs cat`, ""}, {`cat $(find ~/.local/state -name key)`, ""},
	{`find ~/.local/state -name key -exec cat {} +`, ""}, {`cat ~/.local/st*/whet*/k*`, ""}, {`cat ~/.local/state/*/*`, ""},
	{`cat found/*/key`, ""}, {`cat */whetstone/key`, ""}, {`cat fou?d/whetstone/*`, ""}, {`grep -r . found`, ""},
	{`cp -rL ~/.local/state @TMP@/c1 && cat @TMP@/c1/whetstone/key`, ""}, {`cp -rL found @TMP@/c2 && cat @TMP@/c2/whetstone/key`, ""},
	{`rg -uuu . ~/.local`, ""}, {`grep -r . ~`, ""}, {`base64 ~/.local/state/whetstone/key`, "c2VjcmV0"},
	{`d=~/.local; cat $d/state/whetstone/key`, ""}, {`cd ~/.local/state/whetstone && cat key`, ""}, {`tar c ~/.local/state`, ""},
	{`x=$(find ~/.local/state -type f); cat $x`, ""}, {`for f in $(find ~/.local/state -type f); do cat "$f"; done`, ""},
	{`find ~/.local/state -type f | while read -r f; do cat "$f"; done`, ""}, {`cat < $(find ~/.local/state -type f)`, ""},
	{`find ~/.local/state -type f -print0 | xargs -0 -I{} cat {}`, ""}, {`sort --files0-from=<(find ~/.local/state -type f -print0)`, ""},
	{`find ~/.local/state -type f | awk '{while ((getline l < $0) > 0) print l}'`, ""},
	{`awk 'BEGIN{ARGV[1]=ENVIRON["HOME"] "/.local/state/whetstone/ke" "y"; ARGC=2} 1'`, ""},
	{`git diff --no-index /dev/null "$(find ~/.local/state -type f)"`, ""}, {`jq -R . "$(find ~/.local/state -type f)"`, ""},
	{`grep -r . "$(echo ~)"`, ""}, {`head -c 100 $(ls -d ~/.local/state/*/*)`, ""}, {`d=~/.local/state; f=whetstone/key; cat "$d/$f"`, ""},
	{`echo | awk -v h="$HOME" '{print h "/.local/state/whetstone/key"}' | xargs cat`, ""},
	{`echo key | xargs -I{} cat ~/.local/state/whetstone/{}`, ""}, {`ls -d ~/.local/state/* | xargs -I{} cat {}/key`, ""},
	{`f=$(git ls-files | head -1); f=$(find ~/.local/state -type f); cat $f`, ""}, {`git ls-files -o key | (cd ~/.local/state/*/ && xargs cat)`, ""},
	{`f=$(git ls-files -o key); cd ~/.local/state/*/ && cat $f`, ""},
	{`cd ~/.local/state && cat */key`, ""}, {`sed -n p $(find ~/.local/state -type f)`, ""}, {`wc -c $(find ~/.local/state -type f)`, "6"},
	{`xargs cat < <(find ~/.local/state -type f)`, ""}, {`find ~/.local/state -type f > @TMP@/l; xargs -a @TMP@/l cat`, ""},
	{`find ~/.local/state -type f | sort | xargs cat`, ""}, {`find ~/.local/state -type f | grep key | xargs cat`, ""},
	{`shopt -s globstar; cat ~/.local/**/key`, ""}, {`git config -f "$(find ~/.local/state -type f)" --list`, ""},
	{`rg -L -l secret . | xargs cat`, ""}, {`grep -Rl secret . | xargs cat`, ""}, {`find -L . -name key -type f | xargs cat`, ""},
	{`ls -d found/* | xargs -n1 -I{} cat {}/key`, ""}, {`IFS=@; cat $(git ls-files -o 'a@*')`, ""},
	// Lists of the project's files, through a link or a name with a blank.
	{`ls | xargs grep -r secret`, ""}, {`find . -maxdepth 1 -name 'f*' | xargs grep -r secret`, ""},
	{`git ls-files -o 'b *' | xargs cat`, ""}, {`cat $(git ls-files -o 'b *')`, ""},
	{`git ls-files -o 'b *' | while read -r a f; do cat "$f"; done`, ""},
}

// keyReadsUnrun are refused like keyReads but print no key when run here.
var keyReadsUnrun = []string{
	`whetstone validate "$(find ~/.local/state -type f)"`, `cat "$dir/$file"`, `tree --fromfile "$x"`, `date -f "$x"`,
	`diff --from-file="$x" main.go`, `git status --porcelain | xargs cat`, `find -L . | xargs cat`,
	`cat $(git ls-files --line-prefix=/x)`, `IFS=x; cat $(git ls-files)`, `cat "$(go env GOROOT)/VERSION"`,
	`x=$(git ls-files); cat $x; x=$(find ~ -type f)`, `git ls-files | tee @TMP@/l | xargs cat`,
	`{ git ls-files; find ~ -type f; } | xargs cat`, `cat $(git ls-files; find ~ -type f)`,
}

// TestKeyReadsDenied checks that no agent may read the key through a
// computed path, and runs each command to show that it would.
func TestKeyReadsDenied(t *testing.T) {
	p := newProject(t)
	p.useHome(t)
	if err := os.Symlink(filepath.Dir(filepath.Dir(p.key)), filepath.Join(p.root, "found")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.root, "key"), nil, 0o644); err != nil { // a file of the project named like the key
		t.Fatal(err)
	}
	// Files of the project whose names split, at @ or a blank, into the
	// key's path.
	for _, prefix := range []string{"a@", "b "} {
		split := filepath.Join(p.root, prefix+p.key)
		if err := os.MkdirAll(filepath.Dir(split), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(split, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, mode := range []Mode{ReadOnly, Fixer} {
		pol := p.policy(mode)
		for _, row := range keyReads {
			if r := Check(p.expand(row.cmd), pol); r == "" {
				t.Errorf("mode %d: Check(%q) allowed; want it denied", mode, row.cmd)
			}
		}
	}
	clean := newProject(t) // no link, no name that splits: only the rule refuses these
	for _, cmd := range keyReadsUnrun {
		if r := Check(clean.expand(cmd), clean.policy(ReadOnly)); r == "" {
			t.Errorf("Check(%q) allowed; want it denied", cmd)
		}
	}
	dir := p.copyProject(t)
	for _, row := range keyReads {
		shows := row.shows
		if shows == "" {
			shows = "secret"
		}
		if out := p.runKeyHome(dir, p.expand(row.cmd)); !strings.Contains(out, shows) {
			t.Errorf("%q did not print the key (%s); output:\n%s", row.cmd, shows, out)
		}
	}
}

// runKeyHome runs cmd in dir with HOME holding the key.
func (p *project) runKeyHome(dir, cmd string) string {
	env := append([]string(nil), p.env()...)
	for i, e := range env {
		if strings.HasPrefix(e, "HOME=") {
			env[i] = "HOME=" + p.home
		}
	}
	c := exec.Command("bash", "-c", cmd)
	c.Dir, c.Env, c.Stdin = dir, env, strings.NewReader("")
	out, _ := c.CombinedOutput()
	return string(out)
}

// readsAllowed are reads of computed paths that stay allowed: lists of the
// project's files, globs inside it, and literal paths outside it.
var readsAllowed = []string{
	`git ls-files | xargs cat`, `rg -l func | xargs cat`, `cat $(git ls-files '*.go')`, `git ls-files -z | xargs -0 wc -l`,
	`for f in $(git ls-files); do head -1 "$f"; done`, `files=$(git diff --name-only HEAD~1); cat $files`,
	`find . -name '*.go' | xargs cat`, `grep -rl func . | xargs head -2`, `cat *.go`, `cat internal/*/*.go`,
	`git ls-files | grep '\.go$' | xargs wc -l`, `git grep -l func | xargs grep -n func`, `sort main.go | head -3`,
	`cat < main.go`, `wc -l < main.go`, `git diff --name-only HEAD~1 | xargs -r grep -n main`, `cat $(rg --files internal)`,
	`rg -l main . | sort | xargs grep -c main`, `for f in *.go internal/x/*.go; do wc -l "$f"; done`, `cat /etc/hostname`,
	`head -1 /usr/include/stdio.h`, `grep -rn package internal`, `rg -n func`, `cat "$(git ls-files | head -1)"`,
	`git ls-files | head -2 | xargs -I{} cat {}`, `x=$(git ls-files '*.go'); wc -l $x`, `ls *.go | xargs wc -c`,
	`cat <(git show HEAD:main.go)`, `git ls-tree -r --name-only HEAD | xargs cat`, `git grep -l main -- '*.go' | xargs cat`,
	`find internal scripts -type f | xargs md5sum`, `diff <(sort main.go) main.go || true`, `jq . $(git ls-files '*.json')`,
	`git ls-files | while IFS= read -r f; do wc -l "$f"; done`, `git ls-files | xargs -n1 cat`, `grep -rl main --include='*.go' . | xargs cat`,
}

// TestReadsAllowed checks the reads of computed paths reviewers rely on,
// and runs them to show they work and print no key.
func TestReadsAllowed(t *testing.T) {
	p := newProject(t)
	p.useHome(t)
	for _, mode := range []Mode{ReadOnly, Fixer} {
		pol := p.policy(mode)
		for _, cmd := range readsAllowed {
			if r := Check(p.expand(cmd), pol); r != "" {
				t.Errorf("mode %d: Check(%q) = %q; want it allowed", mode, cmd, r)
			}
		}
	}
	dir := p.copyProject(t)
	for _, cmd := range readsAllowed {
		if _, err := os.Stat(strings.Fields(cmd)[len(strings.Fields(cmd))-1]); strings.HasPrefix(cmd, "head -1 /usr") && err != nil {
			continue
		}
		c := exec.Command("bash", "-o", "pipefail", "-c", p.expand(cmd))
		c.Dir, c.Env = dir, p.env()
		out, err := c.CombinedOutput()
		if err != nil || strings.Contains(string(out), "secret") || len(out) == 0 {
			t.Errorf("%q: %v; output:\n%s", cmd, err, out)
		}
	}
}

// TestListsProven checks that a list of the project's files is read at its
// text only when no name in the project splits and no link in it leads to
// the key.
func TestListsProven(t *testing.T) {
	for _, tt := range []struct {
		name, make, want string
	}{
		{"clean", "", ""},
		{"blank", "b /x", "would split into other paths"},
		{"quote", `q"x`, "would split into other paths"},
		{"link", "link", "the link \"link\", which leads to it"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := newProject(t)
			switch tt.make {
			case "":
			case "link":
				if err := os.Symlink(filepath.Dir(filepath.Dir(p.key)), filepath.Join(p.root, "link")); err != nil {
					t.Fatal(err)
				}
			default:
				f := filepath.Join(p.root, tt.make)
				if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(f, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, cmd := range []string{`git ls-files -o | xargs cat`, `cat $(find . -type f)`, `ls | xargs head`} {
				r := Check(cmd, p.policy(ReadOnly))
				if tt.want == "" && r != "" || tt.want != "" && !strings.Contains(r, tt.want) {
					t.Errorf("Check(%q) = %q; want %q", cmd, r, tt.want)
				}
			}
		})
	}
}
