package shell

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"mvdan.cc/sh/v3/syntax"
)

// readOnly are commands a reviewer runs to look at a change. @TMP@ stands
// for the Policy's temporary directory.
var readOnly = []string{
	// git, to see the change.
	`git status`, `git status --porcelain`, `git status -sb`, `git log --oneline -20`,
	`git log --oneline main..HEAD`, `git log -p -1 -- main.go`, `git log --stat -5`,
	`git log --format='%H %an %s' -10`, `git log --graph --oneline --all | head -30`,
	`git log -S'func main' --oneline`, `git log --since='2 weeks ago' --author=alice --oneline`,
	`git show HEAD`, `git show --stat HEAD`, `git show HEAD~1:main.go`, `git show HEAD:main.go | head -50`,
	`git diff`, `git diff --stat`, `git diff HEAD~1`, `git diff HEAD~1 -- main.go`, `git diff --name-only HEAD~1`,
	`git diff --cached`, `git diff --word-diff HEAD~1`, `git diff HEAD~1 | grep '^+' | head`,
	`git diff $(git merge-base HEAD feature)..HEAD`, `git diff "$(git merge-base HEAD feature)" --stat`,
	`git log $(git merge-base HEAD feature)..HEAD --oneline`, `git show $(git rev-parse HEAD) --stat`,
	`git rev-parse HEAD`, `git rev-parse --abbrev-ref HEAD`, `git rev-parse --show-toplevel`, `git branch`,
	`git branch -a`, `git branch -vv`, `git branch --list 'feat*'`, `git branch --contains HEAD`,
	`git branch --show-current`, `git tag`, `git tag -l 'v*'`, `git tag --sort=-creatordate | head -5`,
	`git remote -v`, `git config --get user.name`, `git config --list --show-origin | head`, `git config user.name`,
	`git ls-files | head -50`, `git ls-files '*.go' | wc -l`, `git ls-tree -r HEAD --name-only`, `git blame main.go`,
	`git blame -L 1,3 main.go`, `git grep -n main`, `git grep -c func -- '*.go'`, `git shortlog -sn HEAD`,
	`git describe --tags --always`, `git cat-file -p HEAD`, `git cat-file -t HEAD`, `git rev-list --count HEAD`,
	`git merge-base HEAD feature`, `git name-rev HEAD`, `git show-ref`, `git for-each-ref --format='%(refname)' refs/heads`,
	`git stash list`, `git worktree list`, `git reflog -5`, `git diff-tree --no-commit-id --name-only -r HEAD`,
	`git check-ignore -v untracked.txt || true`, `git count-objects -v`, `git format-patch -1 --stdout | head`,
	`git archive HEAD | tar -t | head`, `git log --oneline | wc -l`, `git --no-pager log -3`, `git -C . log -1`,
	`git -P diff --stat`, `git diff --stat | tail -1`, `git log --oneline | head -1 | cut -d' ' -f1`,
	`git grep -l TODO | xargs grep -n TODO`, `git log --format=%s -1 | tr a-z A-Z`, `git diff --no-index main.go main_test.go || true`,

	// Reading files and searching.
	`grep -rn 'func main' .`, `grep -rn TODO --include='*.go' .`, `grep -c package main.go`, `grep -E 'a|b' main.go`,
	`grep -v '^$' main.go | wc -l`, `grep -l main *.go`, `egrep -n 'func|package' main.go`, `fgrep -n main main.go`,
	`grep -rn "$(git rev-parse --short HEAD)" . || true`, `cat main.go`, `cat main.go 2>/dev/null`, `cat -n main.go | head -20`,
	`head -n 20 main.go`, `tail -n 5 main.go`, `wc -l main.go go.mod`, `wc -l *.go`, `ls`, `ls -la`, `ls -R | head`,
	`ls scripts/`, `stat main.go`, `file main.go`, `du -sh .`, `df -h .`, `pwd`, `echo hello`, `printf '%s\n' a b c`,
	`printf -v out '%s' x && echo "$out"`, `true`, `false || true`, `test -f main.go && echo yes`, `[ -d scripts ] && echo dir`,
	`[[ -f main.go ]] && echo ok`, `basename "$PWD"`, `dirname main.go`, `realpath main.go`, `readlink -f main.go`,
	`which go`, `type git`, `command -v git`, `date +%Y-%m-%d`, `date`, `env | grep -c PATH`, `printenv HOME`,
	`id -u`, `whoami`, `uname -a`, `hostname`, `seq 1 5`, `sort main.go`, `sort -u main.go | head`, `sort -k2 -t: go.mod`,
	`sort main.go -o @TMP@/sorted.txt`, `uniq -c main.go`, `cut -d' ' -f1 main.go`, `tr a-z A-Z < main.go`, `nl main.go`,
	`fold -w 40 main.go`, `column -t go.mod`, `paste go.mod go.mod`, `comm -12 <(sort main.go) <(sort main_test.go)`,
	`diff main.go main_test.go || true`, `diff <(git show HEAD~1:main.go) main.go || true`, `cmp main.go main.go`,
	`od -c main.go | head`, `xxd main.go | head`, `hexdump -C main.go | head`, `base64 main.go`, `sha256sum main.go`,
	`md5sum *.go`, `jq . data.json`, `jq -r '.a' data.json`, `jq -n '{a:1}'`, `jq -s . data.json`, `jq --arg x 1 '.a' data.json`,
	`yq '.a' y.yaml`, `find . -name '*.go'`, `find . -type f -name '*.go' -not -path './.git/*' | head`,
	`find . -maxdepth 2 -type d`, `find . -name '*.go' -newer go.mod`, `find . -name '*.go' -print0 | xargs -0 grep -l main`,
	`find . -name '*.go' | xargs wc -l`, `find . -name '*.go' | xargs grep -n func`, `find scripts -type f | sort`,
	`tar -tf files.tar`, `tar -tzf files.tgz`, `tar tvf files.tar`, `unzip -l files.zip`, `zcat g.gz`, `gzip -dc g.gz | head`,
	`gzip -l g.gz`, `ls | head -3`, `ls -1 | wc -l`, `du -a | sort -n | tail`, `printf '%s\n' *.go`, `echo *.go`,
	`stat -c %s main.go`, `test -n "$(git status --porcelain)" || echo clean`,

	// Building and testing.
	`go test ./...`, `go test -run TestX -v ./...`, `go test -count=1 ./...`, `go test -cover ./...`,
	`go test -coverprofile=@TMP@/c.out ./...`, `go vet ./...`, `go build -o /dev/null ./...`, `go list ./...`, `go list -m`,
	`go list -f '{{.Dir}}' ./...`, `go doc fmt.Println`, `go env GOPATH`, `go version`, `go mod graph`,
	`go test -json ./... | head -3`, `gofmt -l .`, `gofmt -d main.go`, `gofmt main.go | head`, `timeout 60 go test ./...`,
	`time go test ./...`, `nice -n 10 go vet ./...`, `go test -run X ./... 2>&1 | tail -20`,

	// sed and awk that only print.
	`sed -n '1,5p' main.go`, `sed -n '/func/p' main.go`, `sed 's/main/MAIN/g' main.go`, `sed -e 's/a/b/' -e 's/c/d/' main.go`,
	`sed -E 's/(f)unc/\1/' main.go | head`, `sed 's/x/y/w /dev/stdout' main.go`, `sed -n '$p' main.go`, `sed '1d;$d' main.go`,
	`sed -n '/^func/,/^}/p' main.go`, `sed 'y/abc/xyz/' main.go`, `sed -n 's/[/]/x/p' main.go`,
	`awk '{print $1}' main.go`, `awk -F: '{print $2}' go.mod`, `awk 'NR>1 && $1 > 0 {print}' main.go`,
	`awk '{ if ($1 > 2) print $0 }' main.go`, `awk 'BEGIN{n=0} /func/{n++} END{print n}' main.go`,
	`awk '{print $1 > "/dev/stderr"}' main.go`, `awk -v OFS=, '{print $1, $2}' main.go`, `awk 'length($0) > 80' main.go`,
	`awk '$1 == "func" || $1 == "package"' main.go`, `awk '{ print ($1 > "m") }' main.go`,

	// Shell structure around them.
	`for f in *.go; do grep -c func "$f"; done`, `for f in $(git ls-files '*.go'); do wc -l "$f"; done`,
	`while read -r line; do echo "$line"; done < main.go`, `git ls-files | while read -r f; do echo "$f"; done`,
	`if git diff --quiet; then echo clean; fi`, `case "$(git rev-parse --abbrev-ref HEAD)" in main) echo main;; esac`,
	`grep -c x <<< "a x b"`, "grep main <<'EOF'\nmain\nEOF", `n=$(git rev-list --count HEAD); echo $((n + 1))`,
	`count=$(grep -c func main.go); echo "$count"`, `for i in 1 2 3; do echo $((i * 2)); done`, `x=5; echo $((x + 1))`,
	`echo $((RANDOM % 10))`, `echo "$(git log -1 --format=%s)"`, `echo "branch: $(git rev-parse --abbrev-ref HEAD)"`,
	`echo $(date)`, `cat <(git show HEAD:main.go) | head`, `diff <(git show HEAD~1:main.go) <(git show HEAD:main.go) || true`,
	`(cd scripts && ls)`, `{ git status; git log -1; } 2>&1 | head`, `git log -1 > @TMP@/log.txt`, `echo done > /dev/null`,
	`ls nonexistent 2>/dev/null || echo missing`, `cat main.go | tee @TMP@/copy.txt > /dev/null`, `cd scripts && ls && cd ..`,
	`cd scripts; ls`, `mktemp`, `mktemp -d`, `d=$(mktemp -d) && echo "$d"`, `env LC_ALL=C sort main.go`,
	`LC_ALL=C grep -n main main.go`, `TZ=UTC date`, `bash -c 'git status && git log -1'`, `sh -c 'ls | wc -l'`,
	`eval 'echo hi'`, `"${CLAUDE_PLUGIN_ROOT}/scripts/whetstone" status --json || true`, `whetstone report 2>/dev/null || true`,
	`xargs -n1 echo <<< 'a b'`, `echo a b | xargs -n1`, `sleep 0`, `wait`, `set -euo pipefail; git status`,
	`shopt -s nullglob; ls *.go`, `IFS= read -r first < main.go; echo "$first"`, `mapfile -t lines < main.go; echo "${#lines[@]}"`,
	`declare -a arr=(a b); echo "${arr[0]}"`, `f() { local x=1; echo "$x"; }; f`, `export FOO=bar; echo "$FOO"`,
	`trap 'echo bye' EXIT`, `echo "${HOME:-none}" >/dev/null`, `(( 1 + 1 ))`, `let i=1+2; echo $i`,
	`for ((i = 0; i < 3; i++)); do echo $i; done`, `x=$(git rev-parse HEAD); git show --stat "$x"`,
	`time -p git log -1`, `command git log -1`, `exec 2>&1; git status`, `echo x >&2`, `git status 2>&1 | cat`,
	`cat main.go > @TMP@/out.txt 2>&1`, `tee @TMP@/t.txt < main.go`, `git diff > "@TMP@/change.patch"`,
	`echo x | sort -o @TMP@/s.txt`, `cd @TMP@ && echo x > rel.txt`, `cp main.go @TMP@/main.go`,
	`mkdir -p @TMP@/a/b && touch @TMP@/a/b/c`, `go test -cpuprofile=@TMP@/cpu.out -o @TMP@/m.test .`,
	`go test -coverprofile=@TMP@/c.out . && go tool cover -func=@TMP@/c.out`, `go build -o @TMP@/app .`,
	`base=$(git merge-base HEAD feature); git diff "$base"..HEAD --stat`, `git diff --stat $(git merge-base HEAD origin/main)`,
	`git log --oneline -5 --format='%h %s' | while read -r h s; do echo "$h"; done`, `git diff HEAD --name-only | xargs -r grep -l TODO`,
}

// TestReadOnlyAllowed checks that reviewers may run the commands they need.
func TestReadOnlyAllowed(t *testing.T) {
	if len(readOnly) < 150 {
		t.Errorf("only %d read-only commands; want at least 150", len(readOnly))
	}
	p := newProject(t)
	pol := p.policy(ReadOnly)
	for _, cmd := range readOnly {
		if r := Check(p.expand(cmd), pol); r != "" {
			t.Errorf("Check(%q) = %q; want it allowed", cmd, r)
		}
	}
}

// TestReadOnlyUnchanged runs the allowed commands in a copy of the project
// and checks that none changed it.
func TestReadOnlyUnchanged(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	for i, part := range halves(readOnly) {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			p.runUnchanged(t, part)
		})
	}
}

// halves splits the rows of a table in two, for two workers.
func halves[T any](rows []T) [2][]T {
	var out [2][]T
	for i, r := range rows {
		out[i%2] = append(out[i%2], r)
	}
	return out
}

func (p *project) runUnchanged(t *testing.T, cmds []string) {
	dir := p.copyProject(t)
	p.runIn(dir, "git status >/dev/null") // refresh the index for the copy
	before := snapshot(t, dir)
	ran := 0
	for _, cmd := range cmds {
		out, done := p.runIn(dir, p.expand(cmd))
		if !done {
			t.Logf("%q did not finish in time", cmd)
			continue
		}
		ran++
		after := snapshot(t, dir)
		after[".git/index"] = before[".git/index"] // git status refreshes its cache of file times
		if changed := changes(before, after); len(changed) > 0 {
			t.Errorf("%q changed %v; output:\n%s", cmd, changed, out)
			dir, before = p.restore(t, dir, before)
		}
	}
	t.Logf("ran %d read-only commands", ran)
}

func TestFixer(t *testing.T) {
	p := newProject(t)
	p.useHome(t)
	outside := filepath.Join(filepath.Dir(p.root), "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(p.root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(p.root, ".git"), filepath.Join(p.root, "gitlink")); err != nil {
		t.Fatal(err)
	}
	pol := p.policy(Fixer)
	allowed := []string{
		`echo x > new.go`, `cat main.go > internal/x/copy.go`, `gofmt -w main.go`, `gofmt -l -w .`, `gofmt -w internal/x`,
		`go test ./...`, `go test -coverprofile=cover.out ./...`, `go build -o bin/app .`, `go build ./...`,
		`go vet ./...`, `go fmt ./...`, `go mod tidy`, `mkdir -p internal/y`, `mkdir -p internal/x/z && touch internal/x/z/a.go`,
		`sed -i 's/main/Main/' main.go`, `sed -i -e 's/a/b/' main.go internal/x/x.go`, `cp main.go main2.go`,
		`mv main2.go main3.go`, `rm main3.go`, `rm -r internal/y`, `rmdir internal/y`, `touch internal/x/new.go`,
		`chmod +x scripts/run.sh`, `ln -s main.go alias.go`, `tee internal/x/t.go < main.go`,
		`cd internal/x && echo package x > y.go`, `cd internal && gofmt -w x`, `echo x > @TMP@/scratch.txt`,
		`cp -r internal/x internal/z`, `git diff`, `git status`, `git log -3`, `git show HEAD:main.go > main.go`,
		`go test -run TestX ./... 2>&1 | tail`, `grep -rn TODO .`, `mktemp -d`, `echo x > ./sub/../ok.go`,
		`echo x > "@ROOT@/abs.go"`, `sed -i.bak 's/a/b/' main.go`, `f() { echo x; }; f > f.go`,
	}
	for _, cmd := range allowed {
		if r := Check(p.expand(cmd), pol); r != "" {
			t.Errorf("fixer: Check(%q) = %q; want it allowed", cmd, r)
		}
	}
	denied := []string{
		`echo x > ../outside.txt`, `echo x > ` + outside + `/x`, `echo x > escape/x`, `cp main.go escape/`,
		`mv main.go ../`, `rm -rf ..`, `rm -rf .`, `rm -r /`, `touch /etc/x`, `echo x > .whetstone/state.json`,
		`echo x > .WHETSTONE/x`, `echo x > whetstone.json`, `echo x > WhetStone.json`, `echo x > .git/hooks/pre-commit`,
		`echo x > .GIT/config`, `echo x > gitlink/config`, `cp main.go .git/hooks/post-checkout`, `sed -i 's/a/b/' .git/config`,
		`mkdir .whetstone/x`, `tee .git/x < main.go`, `ln -s ` + outside + ` out`, `ln -s ../outside out`, `ln .git/config c`,
		`cd .. && echo x > y`, `cd /tmp && rm -rf x`, `cd "$D" && echo x > y`, `cd internal; cd ..; cd ..; touch x`,
		`git commit -am x`, `git stash`, `git reset --hard`, `git checkout -- .`, `git clean -fd`, `git rebase main`,
		`git config user.name x`, `git add .`, `git push`, `git merge feature`, `git worktree add x`,
		`cat @KEY@`, `cat ~/.local/state/whetstone/key`, `python3 -c 'print(1)'`, `make`, `curl -o x http://example.com`,
		`go get example.com/x`, `go install ./...`, `go generate ./...`, `go run .`, `go test -exec sh ./...`,
		`go build -toolexec=x .`, `go test -o ../t.bin .`, `gofmt -w ../other.go`, `sed -i 's/a/b/' ../x`,
		`cp -a /tmp/x internal/`, `cp -l ../x y`, `rm -r internal/*`, `rm $(git ls-files)`, `chmod +x ../x`,
		`echo x > $F`, `dd if=/dev/zero of=x`, `truncate -s 0 main.go`, `patch -p1 < x.diff`, `perl -pi -e 1 main.go`,
		`env PATH=. ls`, `GIT_DIR=x git status`, `find . -delete`, `xargs rm < list`, `f() { echo x > y; }; f`,
		`shopt -s cdable_vars; x=/etc; cd x; touch y`, `set -P; cd escape/..; touch x`, `cd -P escape/.. && touch x`,
		`cd escape && cd .. && touch x`, `for d in a b; do touch x; cd ..; done`, `cd sub; touch x; cd ../..; touch y`,
		`if true; then cd ..; fi; touch x`, `true || cd ..; touch x`, `true | cd ..; touch x`, `cd ..; (touch x)`,
		`f() { echo x; } > out.go; cd ..; f`, `trap 'echo x > y' EXIT; cd ..`, `eval 'cd ..'; touch x`,
	}
	for _, cmd := range denied {
		if r := Check(p.expand(cmd), pol); r == "" {
			t.Errorf("fixer: Check(%q) allowed; want it denied", cmd)
		}
	}
}

func TestProtected(t *testing.T) {
	p := newProject(t)
	p.useHome(t)
	rel, err := filepath.Rel(p.root, p.key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(p.key), filepath.Join(p.root, "keydir")); err != nil {
		t.Fatal(err)
	}
	cmds := []string{
		`cat @KEY@`, `cat ~/.local/state/whetstone/key`, `cat "$HOME/.local/state/whetstone/key"`,
		`cat ${HOME}/.local/state/whetstone/key`, `cat ~/.local/state/whet""stone/key`, `cat ~/.local/state/whetstone/k*`,
		`cat ~/.local/state/*/key`, `cat ~/.local/state/whet?tone/key`, `ls ~/.local/state/whetstone`,
		`cat ` + rel, `cd ~/.local/state && cat whetstone/key`, `cat keydir/key`, `cat keydir/*`,
		`base64 < ~/.local/state/whetstone/key`, `d=~/.local/state/whetstone; cat $d/key`, `grep -r x ~`,
		`grep -r x ~/.local`, `rg x ~/.local/state`, `cat $'\x7e'/.local/state/whetstone/key`,
		`cat ~/.LOCAL/state/Whetstone/KEY`, `bash -c 'cat ~/.local/state/whetstone/key'`, `git diff --no-index /dev/null @KEY@`,
		`f=key; cat ~/.local/state/whetstone/$f`, `cat "$D/whetstone/key"`, `cp ~/.local/state/whetstone/key @TMP@/k`,
		`for f in ~/.local/state/whetstone/*; do cat "$f"; done`, `jq -R . --rawfile k @KEY@ data.json`,
		`diff -r ~/.local/state /dev/null`, `echo x > @KEY@`, `sed -n p @KEY@`, `awk 1 @KEY@`,
		`tar -tf ~/.local/state/whetstone/key`, `find ~/.local/state/whetstone`, `[[ -f ~/.local/state/whetstone/key ]]`,
		`sed -n 'r keydir/key' main.go`, `awk '{getline l < "keydir/key"}' main.go`, `git grep --no-index x ~/.local`,
		`cat /proc/*/root` + filepath.Dir(filepath.Dir(p.key)) + `/whet?tone/key`, `cat /proc/self/cwd/x`,
	}
	for _, mode := range []Mode{ReadOnly, Fixer} {
		pol := p.policy(mode)
		for _, cmd := range cmds {
			r := Check(p.expand(cmd), pol)
			if r == "" {
				t.Errorf("mode %d: Check(%q) allowed; want it denied", mode, cmd)
			}
		}
	}
	// Unrelated words that look like paths are not the key.
	pol := p.policy(ReadOnly)
	for _, cmd := range []string{`cat key`, `grep -r key .`, `ls ~`, `echo $HOME`, `echo "$dir/$file"`} {
		if r := Check(cmd, pol); r != "" {
			t.Errorf("Check(%q) = %q; want it allowed", cmd, r)
		}
	}
}

// TestReadOnlyDenied holds commands that write or run code in ways the
// write-shaped table cannot run here, or that depend on shell state.
func TestReadOnlyDenied(t *testing.T) {
	p := newProject(t)
	pol := p.policy(ReadOnly)
	for _, cmd := range []string{
		`$"ls" x`, `declare -a 'a=($(touch x))'`, `local -a 'a=($(id))'`, `while false; do n=$((n+1)); done`,
		`echo $((n))`, `echo $(($1 + 1))`, `cat < /dev/tcp/example.com/80`, `echo x > /dev/udp/127.0.0.1/9`,
		`RIPGREP_CONFIG_PATH=x rg y`, `TAR_OPTIONS=--checkpoint=1 tar -tf files.tar`, `GZIP=-f gzip -c x`,
		`shopt -s cdable_vars`, `(python3() { :; }); python3 -c 1`, `function /usr/bin/git { :; }; /usr/bin/git commit -m x`,
		`git branch -v newbranch`, `git branch -a newbranch`, `git config user.name x`, `git -c x=y log`,
		`git log --output=x`, `git --exec-path=. status`, `git -p log`, `git notes add -m x`, `git stash drop`,
		`git worktree add x`, `git submodule update`, `git remote add x y`, `git reflog expire --all`,
		`git symbolic-ref HEAD refs/heads/x`, `git tag -a v9 -m x`, `git format-patch -1`, `git archive -o x HEAD`,
		`git cat-file --filters HEAD:main.go`, `git fsck --lost-found`, `git help -w log`, `git hash-object -w main.go`,
		`git grep -Ovi x`, `git log --ext-diff -p`, `git difftool -x true`, `git -C /tmp log`, `cd /tmp && git log`,
		`cd "$X" && git log`, `go test -exec=x ./...`, `go test ./... -update`, `go test -args -update`, `go build -o x .`,
		`go build .`, `go test -c .`, `go test -cpuprofile=@TMP@/c.out .`, `go vet -vettool=x ./...`,
		`go build -ldflags=-extld=sh -o /dev/null .`, `go test -toolexec=x ./...`, `go env -w X=y`, `go doc -http`,
		`go mod tidy`, `go mod download`, `go run .`, `go generate`, `go fmt ./...`, `go install .`, `go get x`,
		`go test -mod=mod ./...`, `go test -fuzz=F .`, `go "$x" ./...`, `go test "$pkg"`, `gofmt -w .`,
		`go tool cover -html=c.out -o c.html`, `go tool cover -html=c.out`, `go tool pprof x`, `go tool compile x.go`,
		`sort -o x main.go`, `sort --compress-program=x main.go`, `sort "$f"`, `uniq a b`, `xxd a b`, `tree -o x`,
		`find . -delete`, `find "$d" -name x`, `find . -newer x -exec ls \;`, `find . -name x -fls y`,
		`tar -cf x.tar .`, `tar -xf files.tar`, `tar -tf files.tar -I x`, `tar --to-command=x -tf files.tar`, `unzip files.zip`,
		`unzip -l files.zip -d x`, `gzip main.go`, `xz -k main.go`, `sed -i s/a/b/ main.go`, `sed -f x main.go`,
		`sed "$s" main.go`, `awk -f x`, `awk "$p"`, `awk -i inplace 1 main.go`,
		`awk '{print > "x"}'`, `awk -o x 1`, `cp main.go @TMP@/x && cp -l main.go @TMP@/y`, `cp -r scripts @TMP@/s`,
		`ln -s main.go @TMP@/l`, `mv main.go @TMP@/`, `rm main.go`, `echo x | tee main.go`, `mktemp -p . x.XXX`,
		`mktemp x.XXX`, `printf -v 'a[$(id)]' x`, `read 'a[$(id)]'`, `mapfile -C x arr`, `unset 'a[$(id)]'`,
		`hash -p /bin/rm ls`, `set -k; ls`, `set -o keyword`, `trap "$x" EXIT`, `eval "$x"`, `bash -c "$x"`,
		`bash script.sh`, `bash`, `sh -s`, `bash -i -c ls`, `bash --rcfile x -c ls`, `xargs rm`,
		`xargs -I{} sh -c 'echo {}'`, `env -S 'ls'`, `env "$x" ls`, `env PATH=. ls`, `nice "$x"`, `timeout 5 "$x"`,
		`command "$x"`, `exec "$x"`, `builtin "$x"`, `date -s 2000-01-01`, `date 0101000020`, `hostname x`,
		`ionice -p 1`, `chrt -p 1`, `taskset -p 1`, `flock x true`, `/usr/bin/time -o x ls`, `time -o x ls`,
		`./ls`, `bin/cat x`, `/tmp/cat x`, `~/bin/ls`, `x=1 "$x"`, `${x}`, `$(echo ls)`, "`echo ls`", `*`,
		`l?`, `@(ls)`, `echo ${!x}`, `echo ${x@P}`, `[[ -v 'a[$(id)]' ]]`, `test -v 'a[$(id)]'`,
		`whetstone abort`, `whetstone install opencode`, `@TMP@/scripts/whetstone status`,
		`"${CLAUDE_PLUGIN_ROOT}/x" status`, `CLAUDE_PLUGIN_ROOT=/tmp; "$CLAUDE_PLUGIN_ROOT/scripts/whetstone" status`,
		`f() { rm x; }`, `f() { f; }; cat() { :; }`, `alias ls=rm`, `source x`, `. x`, `enable -f x y`,
		`kill 1`, `less x`, `vi x`, `curl http://x`, `npm test`, `python3 -V`, `perl -e 1`, `node -e 1`,
		strings.Repeat("$(", maxOpeners) + "true" + strings.Repeat(")", maxOpeners),
		strings.Repeat("eval ", 40) + "true",
	} {
		if r := Check(p.expand(cmd), pol); r == "" {
			t.Errorf("Check(%q) allowed; want it denied", cmd)
		}
	}
}

// TestReasons pins the wording of the reasons agents see.
func TestReasons(t *testing.T) {
	p := newProject(t)
	p.useHome(t)
	ro, fx := p.policy(ReadOnly), p.policy(Fixer)
	tests := []struct {
		cmd  string
		pol  Policy
		want string
	}{
		{`make test`, ro, `"make" runs the project's build rules; to build or test, run one of the project's verification commands as written: go test, go vet, go build -o /dev/null, go list, gofmt -l, gofmt -d; otherwise describe what you would check or change in your report instead`},
		{`tclsh x`, ro, `"tclsh" is not a command read-only agents may run (whetstone allows read-only commands and the project's verification commands: go test, go vet, go build -o /dev/null, go list, gofmt -l, gofmt -d); describe what you would check in your report instead`},
		{`tclsh x`, fx, `"tclsh" is not a command the fixer may run (whetstone allows read-only commands, the project's verification commands: go test, go vet, go build -o /dev/null, go list, gofmt -l, gofmt -d, and cp, mv, rm, mkdir, touch, sed -i or gofmt -w inside the project); make the change with the Edit tool instead`},
		{`echo x > out.txt`, ro, `redirection "> out.txt" writes to out.txt in the project; read-only agents may write only to /dev/null or under ` + p.tmp + `, so describe what you would check or change in your report instead`},
		{`echo x > ../out.txt`, fx, `redirection "> ../out.txt" writes to ` + filepath.Join(filepath.Dir(p.root), "out.txt") + `, outside the project; the fixer may change files only inside the project and under ` + p.tmp},
		{`echo x > .git/config`, fx, `redirection "> .git/config" writes under .git, which belongs to git; no agent may change .git, .whetstone or whetstone.json`},
		{`$X foo`, ro, `cannot tell which program "$X" runs; name the program literally`},
		{`echo 'x`, ro, "cannot parse \"echo 'x\" (1:6: reached EOF without closing quote `'`); write it as plain bash"},
		{`cat ~/.local/state/whetstone/key`, ro, `"~/.local/state/whetstone/key" names whetstone's key file, which may not be read or named by any agent`},
		{`git commit -m x`, ro, `"git commit" is not a git command read-only agents may run: it may change the repository or run programs (status, log, show, diff, grep, blame and other reads are allowed); describe what you would check in your report instead`},
		{`sed -i s/a/b/ main.go`, ro, `"sed -i" writes to main.go in the project; read-only agents may write only to /dev/null or under ` + p.tmp + `, so describe what you would check or change in your report instead`},
		{`find . -exec rm {} +`, ro, `"find -exec" deletes, writes or runs programs; list the files with find and describe what you would check or change in your report instead`},
		{`go build ./...`, ro, `"go build" is not a command read-only agents may run (whetstone allows read-only commands and the project's verification commands: go test, go vet, go build -o /dev/null, go list, gofmt -l, gofmt -d); describe what you would check in your report instead`},
		{`find ~ -name key | xargs cat`, ro, `"cat (the input to xargs)" reads "(the input to xargs)", a path only known when it runs; whetstone cannot tell that it is not its key file, which no agent may read. Name the files literally, or list them with git ls-files, git grep -l or rg -l inside the project`},
		{`rm -rf ..`, ro, `"rm -rf .." writes to ` + filepath.Dir(p.root) + `, which is or holds the project; no agent may move, replace or remove the project`},
		{`x='a[$(id)]'; echo $((x))`, ro, `arithmetic reads "x", whose text bash would evaluate as code; assign it a number in the same command`},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Check(tt.cmd, tt.pol)); diff != "" {
			t.Errorf("Check(%q) (-want +got):\n%s", tt.cmd, diff)
		}
	}
}

// TestVerify checks that the verification commands come from the Policy.
func TestVerify(t *testing.T) {
	p := newProject(t)
	pol := p.policy(ReadOnly)
	pol.Verify = [][]string{{"make", "check"}, {"go", "test", "./internal/..."}}
	for cmd, allowed := range map[string]bool{
		`make check`: true, `make check V=1`: true, `make`: false, `make install`: false, `make check "$X"`: false,
		`go test ./internal/...`: true, `go test ./internal/... -run X`: true, `go test ./...`: false, `go vet ./...`: false,
		`go list ./...`: true, `go doc fmt`: true, `go test ./internal/... -coverprofile=c.out`: false,
	} {
		if got := Check(cmd, pol) == ""; got != allowed {
			t.Errorf("Check(%q) allowed = %v; want %v (%s)", cmd, got, allowed, Check(cmd, pol))
		}
	}
}

// TestCheckWithoutRoot makes sure an empty Policy fails closed for writes.
func TestCheckWithoutRoot(t *testing.T) {
	for _, cmd := range []string{`echo x > y`, `rm x`, `sed -i s/a/b/ f`} {
		if r := Check(cmd, Policy{Mode: Fixer}); r == "" {
			t.Errorf("Check(%q) with an empty Policy allowed; want it denied", cmd)
		}
	}
	if r := Check(`git log | head`, Policy{}); r != "" {
		t.Errorf("Check(git log) with an empty Policy = %q", r)
	}
}

// TestANSIC: $'…' decodes as bash 5.2 does (the wants are bash's bytes,
// `printf %s $'…' | od -tx1`), the value ending at a NUL. The one place it
// differs: an escape naming no Unicode character (\uD800, \U110000) gives
// U+FFFD, where bash writes the invalid bytes; no program is named so.
func TestANSIC(t *testing.T) {
	for in, want := range map[string]string{
		`\x72\x6d`: "rm", `\164ouch`: "touch", `\u0074`: "t", `\U0001F600`: "😀", `a\nb`: "a\nb",
		`\'`: "'", `a\0b`: "a", `\cA`: "\x01", `\q`: `\q`, `\x`: `\x`, `\e`: "\x1b",
		`\x41\x4g\xZ`: "A\x04g\\xZ", `\u00e9\u`: "é\\u", `\0101`: "\x081", `\101\1012`: "AA2", `\777`: "\xff",
		`\cA\ca\c[`: "\x01\x01\x1b", `\c`: `\c`, `a\x00b`: "a", `\e\E\a\b\f\n\r\t\v`: "\x1b\x1b\a\b\f\n\r\t\v",
		`\\\'\"\?`: `\'"?`, `x\`: `x\`, `\cé`: "\x03\xa9", `\\c`: `\c`, `\\\cA`: "\\\x01", `\uD800x`: "\uFFFDx", `\U110000y`: "\uFFFDy",
		`100%`: "100%", `%s%%\%%d`: `%s%%\%%d`, `%\x41%`: "%A%", `\cA%`: "\x01%",
	} {
		if got := ansiC(in); got != want {
			t.Errorf("ansiC(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestSedScript(t *testing.T) {
	for script, writes := range map[string]bool{
		`p`: false, `s/a/b/g`: false, `/x/d`: false, `1,5p`: false, `$!N;P;D`: false, `s/[/]/x/`: false,
		`y/abc/xyz/`: false, `:a;N;ba`: false, "a\\\nfoo": false, `1i foo; w x`: false, `r /etc/hostname`: false,
		`s/a/b/w /dev/stdout`: false, `/x/{p;p}`: false, `s|a|b|2p`: false, `0~3p`: false, `\%x%p`: false,
		`w out`: true, `s/a/b/w out`: true, `1e id`: true, `s/a/id/e`: true, `W out`: true, `/x/{w out` + "\n}": true,
		`s/[/]/x/w out`: true, `y/a/b/;w out`: true, `s/a/b/;w out`: true, `$!{w out` + "\n}": true, `s/a/b/ge`: true,
		`q5;w x`: true, `k`: true, `s/a/b`: true, `s/[a/b/`: true,
	} {
		if what, _ := sedScript(script); (what != "") != writes {
			t.Errorf("sedScript(%q) = %q; want writing %v", script, what, writes)
		}
	}
}

func TestAwkProgram(t *testing.T) {
	for prog, writes := range map[string]bool{
		`{print $1}`: false, `$1 > 5 {print}`: false, `{if ($1 > 2) print $0}`: false, `{print ($1 > 2)}`: false,
		`{a[$1]++} END {for (k in a) print k, a[k]}`: false, `/a|b/ {print}`: false, `{print "a|b > c"}`: false,
		`{print > "/dev/stderr"}`: false, `{x = a || b; print x}`: false, `{getline line < "f"; print line}`: false,
		`# system("x")` + "\n{print}": false, `{print "system(x)"}`: false, `{printf "%d\n", $1 / 2}`: false,
		`{system("id")}`: true, `{print > "f"}`: true, `{print >> "f"}`: true, `{print | "sh"}`: true,
		`{"id" | getline}`: true, `{print |& "cat"}`: true, `@include "x"`: true, `{f = "system"; @f("id")}`: true,
		`{printf("x") > "f"}`: true, `{print $1, $2 > $3}`: true, `{x = 1 / 2; system("id")}`: true,
		`{print "a" > "/dev/stderr" > "f"}`: true, `{print "a"` + "\n" + `system("id")}`: true,
		`{ s = "x" }` + "\n" + `{ print s > "out" }`: true, `{x++ / 2; system("id")}`: true,
	} {
		if what, _ := awkProgram(prog); (what != "") != writes {
			t.Errorf("awkProgram(%q) = %q; want writing %v", prog, what, writes)
		}
	}
}

func TestMatches(t *testing.T) {
	key := "/home/u/.local/state/whetstone/key"
	for _, tt := range []struct {
		segs []seg
		want bool
	}{
		{[]seg{{text: key}}, true},
		{[]seg{{kind: segAny}, {text: "/whetstone/key"}}, true},
		{[]seg{{text: "/home/u/.local/state/"}, {text: "*", kind: segGlob}, {text: "/key"}}, true},
		{[]seg{{text: "/home/u/", kind: segLit}, {text: "*", kind: segGlob}, {text: "/key"}}, false},
		{[]seg{{text: "/home/u/.local/state/whet?tone/k[a-z]y", kind: segGlob}}, true},
		{[]seg{{kind: segAny}, {text: "/x"}}, false},
		{[]seg{{text: "/HOME/U/.LOCAL/state/whetstone/KEY"}}, true},
	} {
		if got := matches(tt.segs, key); got != tt.want {
			t.Errorf("matches(%v) = %v; want %v", tt.segs, got, tt.want)
		}
	}
}

// TestWords checks how words resolve: what is known, and what might be an
// option.
func TestWords(t *testing.T) {
	c := newChecker("", Policy{})
	for src, want := range map[string]string{
		`abc`: "known abc", `'a b'`: "known a b", `"a\"b"`: `known a"b`, `a\ b`: "known a b", `$'\x41'`: "known A",
		`"$x"`: "option ", `$x`: "option split ", `x$y`: "option split x", `"x$y"`: "x", `*.go`: "option glob *.go",
		`src/*.go`: "glob src/*.go", `"$(git rev-parse HEAD)"`: "", `$(git rev-parse HEAD)..x`: "..x",
		`"$(pwd)"/x`: "/x", `-o`: "known option -o", `"$@"`: "option split ", `""`: "known ",
	} {
		f, err := syntaxParse("echo " + src)
		if err != nil {
			t.Fatal(err)
		}
		ws := c.words(f)
		if len(ws) != 2 {
			t.Fatalf("%s: %d words", src, len(ws))
		}
		w := ws[1]
		var got []string
		if w.known {
			got = append(got, "known")
		}
		if w.option() {
			got = append(got, "option")
		}
		if w.split {
			got = append(got, "split")
		}
		if w.glob {
			got = append(got, "glob")
		}
		got = append(got, w.text)
		if s := strings.Join(got, " "); s != want {
			t.Errorf("word %s = %q; want %q", src, s, want)
		}
	}
}

// syntaxParse returns the words of the simple command src.
func syntaxParse(src string) ([]*syntax.Word, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return nil, err
	}
	return f.Stmts[0].Cmd.(*syntax.CallExpr).Args, nil
}
