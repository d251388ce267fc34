package shell

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// cases pairs command lines with the reason WriteShaped should give; an empty
// reason means the line is read-only.
var cases = []struct {
	in   string
	want string
}{
	// Quoting and redirections.
	{`ls -la`, ``},
	{`grep ">" file.go`, ``},
	{`echo "a > b"`, ``},
	{`echo a\>b`, ``},
	{`echo 'it''s' "x"'y'`, ``},
	{`git log --format='%H > %s'`, ``},
	{`rg 'a|b' src`, ``},
	{`jq '.a > 1' f.json`, ``},
	{`ls 2>/dev/null`, ``},
	{`cmd 2>&1 | head`, ``},
	{`echo hi >&2`, ``},
	{`echo hi 1>&2 2>/dev/stderr`, ``},
	{`exec 3>&-`, ``},
	{`go test ./... &> /dev/null`, ``},
	{`read -r line < input.txt`, ``},
	{`grep -c x <<< "a > b"`, ``},
	{`ls # > out.txt`, ``},
	{`echo a > b`, `redirection "> b"`},
	{`echo a>b`, `redirection "> b"`},
	{`echo hi >> log.txt`, `redirection ">> log.txt"`},
	{`make 2> err.log`, `redirection "2> err.log"`},
	{`cmd &> out.log`, `redirection "&> out.log"`},
	{`cmd &>> out.log`, `redirection "&>> out.log"`},
	{`echo x >| f`, `redirection ">| f"`},
	{`exec 3<> f`, `redirection "3<> f"`},
	{`echo a >&out.txt`, `redirection ">& out.txt"`},
	{`a=$(mktemp) && echo x > "$a"`, `redirection "> \"$a\""`},
	{`echo $'it\'s' > f`, `redirection "> f"`},
	{`go test ./... > test.log 2>&1`, `redirection "> test.log"`},
	{`{ echo a; echo b; } > out.txt`, `redirection "> out.txt"`},
	{`echo x > /dev/null; echo y > /tmp/y`, `redirection "> /tmp/y"`},

	// Pipelines, lists, compound commands and substitutions.
	{`go test ./... 2>&1 | tail -20`, ``},
	{`printf '%s\n' a b | sort | uniq -c`, ``},
	{`true && false || echo done`, ``},
	{`test -d x || echo missing`, ``},
	{`for f in *.go; do wc -l "$f"; done`, ``},
	{`if [ -f go.mod ]; then cat go.mod; fi`, ``},
	{`[[ $a > $b ]] && echo yes`, ``},
	{`echo $((1 > 2)) $((x<<2))`, ``},
	{`(( n > 3 )) && echo big`, ``},
	{`wc -l $(git ls-files '*.go')`, ``},
	{`echo "$(git rev-parse HEAD)" ${x:-$(date)}`, ``},
	{`diff <(git show HEAD:a.go) a.go`, ``},
	{`files=(a.go b.go) && wc -l "${files[@]}"`, ``},
	{`cd internal && go test ./... # then > later`, ``},
	{`echo $(rm x)`, `"rm" deletes files`},
	{"echo `touch y`", `"touch" creates files`},
	{`echo "$(touch y)"`, `"touch" creates files`},
	{`echo ${x:-$(rm y)}`, `"rm" deletes files`},
	{`echo $(echo $(echo $(rm x)))`, `"rm" deletes files`},
	{`echo $((1 + $(rm x)))`, `"rm" deletes files`},
	{`cat <(ls) > out`, `redirection "> out"`},
	{`ls | tee >(rm x)`, `"rm" deletes files`},
	{`if true; then rm x; fi`, `"rm" deletes files`},
	{`(cd sub && git commit -am wip)`, `"git commit" changes the repository`},
	{`ls; rm x`, `"rm" deletes files`},
	{"ls\nrm x", `"rm" deletes files`},
	{`sleep 1 & rm x`, `"rm" deletes files`},
	{`$EDITOR notes.md`, `command name "$EDITOR" is only known when it runs`},

	// Here-documents and here-strings.
	{"cat <<EOF\nhello > world\nEOF", ``},
	{"cat <<'EOF' | grep x\nrm -rf /\nEOF\necho done", ``},
	{"cat <<-EOF\n\trm x\n\tEOF", ``},
	{`cat <<'EOF' > out.txt`, `redirection "> out.txt"`},
	{"cat <<EOF\n$(rm -rf x)\nEOF", `"rm" deletes files`},
	{"cat <<'EOF'\nx\nEOF\nrm y", `"rm" deletes files`},
	{"bash <<'EOF'\nrm -rf build\nEOF", `"rm" deletes files`},
	{`bash <<< 'git push'`, `"git push" changes the repository`},

	// Commands that always write, and wrappers.
	{`/bin/rm -f x`, `"rm" deletes files`},
	{`\rm x`, `"rm" deletes files`},
	{`FOO=1 sudo rm -rf x`, `"rm" deletes files`},
	{`sudo -u root mv a b`, `"mv" moves files`},
	{`env -i PATH=/bin cp a b`, `"cp" copies files`},
	{`env -S 'rm x'`, `"rm" deletes files`},
	{`timeout 5 touch f`, `"touch" creates files`},
	{`timeout -s KILL 5 mkdir d`, `"mkdir" creates directories`},
	{`nice -n 10 nohup rmdir d &`, `"rmdir" deletes directories`},
	{`command rm x`, `"rm" deletes files`},
	{`exec ln -s a b`, `"ln" creates links`},
	{`xargs rm < files.txt`, `"rm" deletes files`},
	{`git ls-files | xargs -0 -n 1 chmod +x`, `"chmod" changes file modes`},
	{`dd if=/dev/zero of=f bs=1k count=1`, `"dd" writes files`},
	{`rsync -a a/ b/`, `"rsync" copies files`},
	{`install -m 755 a b`, `"install" copies files`},
	{`truncate -s 0 f`, `"truncate" truncates files`},
	{`patch -p1 < x.diff`, `"patch" edits files`},
	{`echo x | tee out.txt`, `"tee" writes files`},
	{`echo x | tee -a notes.md`, `"tee" writes files`},
	{`ls | sudo tee /etc/x`, `"tee" writes files`},
	{`git log | tee /dev/null`, ``},
	{`echo x | tee`, ``},
	{`command -v rm`, ``},
	{`sudo -u nobody cat /etc/hosts`, ``},
	{`env FOO=1 go test ./...`, ``},
	{`timeout 60 go test ./...`, ``},
	{`xargs -0 grep -l foo`, ``},
	{`nice -n 10 make test`, ``},

	// In-place editors.
	{`sed -n 1,20p f`, ``},
	{`sed -e 's/a/b/' -n f`, ``},
	{`sed -E 's/-i/x/' f`, ``},
	{`sed -e -i f`, ``},
	{`awk '{print $1}' f`, ``},
	{`perl -ne 'print if /x/' f`, ``},
	{`sed -i s/a/b/ f`, `"sed -i" edits files in place`},
	{`sed -ni 's/a/b/p' f`, `"sed -i" edits files in place`},
	{`sed -i.bak s/a/b/ f`, `"sed -i" edits files in place`},
	{`sed --in-place=.orig s/a/b/ f`, `"sed -i" edits files in place`},
	{`sed s/a/b/ -i f`, `"sed -i" edits files in place`},
	{`perl -pi -e 's/a/b/' f`, `"perl -i" edits files in place`},
	{`perl -i.bak -pe 's/a/b/' f`, `"perl -i" edits files in place`},
	{`ruby -i -pe 'x' f`, `"ruby -i" edits files in place`},
	{`gawk -i inplace '{print}' f`, `"gawk -i inplace" edits files in place`},
	{`awk -iinplace '{print}' f`, `"awk -i inplace" edits files in place`},

	// git.
	{`git status`, ``},
	{`git diff HEAD~1 -- a.go`, ``},
	{`git log --oneline -5`, ``},
	{`git show HEAD:file`, ``},
	{`git blame f`, ``},
	{`git grep x`, ``},
	{`git rev-parse HEAD`, ``},
	{`git ls-files`, ``},
	{`git branch --show-current`, ``},
	{`git stash list`, ``},
	{`git stash show -p stash@{0}`, ``},
	{`git branch`, ``},
	{`git branch -a`, ``},
	{`git branch --list 'feat/*'`, ``},
	{`git branch --contains abc123`, ``},
	{`git tag`, ``},
	{`git tag -l 'v*'`, ``},
	{`git config --get user.name`, ``},
	{`git config -l`, ``},
	{`git config user.name`, ``},
	{`git --no-pager log -p`, ``},
	{`git -C sub status`, ``},
	{`git -c color.ui=never diff`, ``},
	{`git worktree list`, ``},
	{`git notes show HEAD`, ``},
	{`git submodule status`, ``},
	{`git submodule`, ``},
	{`git reflog`, ``},
	{`git remote -v`, ``},
	{`git apply --check p.diff`, ``},
	{`git clean -n`, ``},
	{`git format-patch --stdout HEAD~1`, ``},
	{`git -C sub commit -m x`, `"git commit" changes the repository`},
	{`git add .`, `"git add" changes the repository`},
	{`git push origin main`, `"git push" changes the repository`},
	{`git checkout -- a.go`, `"git checkout" changes the repository`},
	{`git reset --hard`, `"git reset" changes the repository`},
	{`git stash`, `"git stash" changes the repository`},
	{`git stash pop`, `"git stash" changes the repository`},
	{`git branch -D old`, `"git branch" changes the repository`},
	{`git branch -m old new`, `"git branch" changes the repository`},
	{`git branch new-feature`, `"git branch" changes the repository`},
	{`git tag v1.0`, `"git tag" changes the repository`},
	{`git tag -d v1.0`, `"git tag" changes the repository`},
	{`git config user.name x`, `"git config" changes the repository`},
	{`git config --unset user.name`, `"git config" changes the repository`},
	{`git worktree add ../wt`, `"git worktree" changes the repository`},
	{`git notes add -m x`, `"git notes" changes the repository`},
	{`git submodule update --init`, `"git submodule" changes the repository`},
	{`git reflog expire --all`, `"git reflog" changes the repository`},
	{`git clean -fd`, `"git clean" changes the repository`},
	{`git fetch`, `"git fetch" changes the repository`},
	{`git -c core.pager=cat --no-pager commit --amend`, `"git commit" changes the repository`},
	{`git --git-dir=.git --work-tree=. reset HEAD~`, `"git reset" changes the repository`},
	{`git --git-dir .git restore a.go`, `"git restore" changes the repository`},
	{`git diff --output=patch.diff`, `"git diff --output" writes a file`},

	// Downloads, archives and other programs that write when asked to.
	{`curl -s https://example.com/api`, ``},
	{`curl -sSL -o /dev/null -w '%{http_code}' https://example.com`, ``},
	{`curl -fsSLO https://example.com/a.tgz`, `"curl -O" writes files`},
	{`curl -sS -o page.html https://example.com`, `"curl -o" writes files`},
	{`wget -qO- https://example.com`, ``},
	{`wget https://example.com/a.tgz`, `"wget" writes files`},
	{`tar tzf a.tgz`, ``},
	{`tar -xOf a.tar README`, ``},
	{`tar -xzf a.tgz`, `"tar" writes files`},
	{`tar czf out.tgz src`, `"tar" writes files`},
	{`unzip -l a.zip`, ``},
	{`unzip a.zip`, `"unzip" writes files`},
	{`gzip -dc log.gz | head`, ``},
	{`gzip big.log`, `"gzip" writes files`},
	{`sort -u names.txt`, ``},
	{`sort -uo names.txt names.txt`, `"sort -o" writes files`},
	{`uniq -c names.txt`, ``},
	{`uniq names.txt out.txt`, `"uniq" writes files`},
	{`echo x | sponge f`, `"sponge" writes files`},
	{`vim main.go`, `"vim" edits files`},
	{`watch -n 1 'git status'`, ``},
	{`trap 'rm -f x' EXIT`, `"rm" deletes files`},

	// Build, package and format tools.
	{`go test -race ./...`, ``},
	{`go build ./cmd/whetstone`, ``},
	{`go vet ./...`, ``},
	{`go mod why golang.org/x/sys`, ``},
	{`make test`, ``},
	{`npm test`, ``},
	{`npm run lint`, ``},
	{`npm install --dry-run`, ``},
	{`npx tsc --noEmit`, ``},
	{`cargo test`, ``},
	{`cargo fmt --check`, ``},
	{`pytest -q tests/`, ``},
	{`black --check .`, ``},
	{`gofmt -l .`, ``},
	{`go mod tidy`, `"go mod tidy" rewrites project files`},
	{`go get example.com/x@v1`, `"go get" rewrites project files`},
	{`go fmt ./...`, `"go fmt" rewrites project files`},
	{`gofmt -s -w .`, `"gofmt -w" rewrites files`},
	{`goimports -w x.go`, `"goimports -w" rewrites files`},
	{`npm install`, `"npm install" rewrites project files`},
	{`npm i lodash`, `"npm i" rewrites project files`},
	{`npm ci`, `"npm ci" rewrites project files`},
	{`yarn`, `"yarn" rewrites project files`},
	{`yarn add left-pad`, `"yarn add" rewrites project files`},
	{`pnpm add x`, `"pnpm add" rewrites project files`},
	{`pip install requests`, `"pip install" rewrites project files`},
	{`pip3 install -r requirements.txt`, `"pip install" rewrites project files`},
	{`python3 -m pip install x`, `"pip install" rewrites project files`},
	{`cargo fmt`, `"cargo fmt" rewrites project files`},
	{`npx prettier --write .`, `"prettier --write" rewrites files`},
	{`eslint --fix src`, `"eslint --fix" rewrites files`},
	{`black .`, `"black" rewrites files`},
	{`python -m black src`, `"black" rewrites files`},
	{`rustfmt src/main.rs`, `"rustfmt" rewrites files`},

	// Interpreters and inline code.
	{`python3 -c 'import json; print(json.load(open("a.json"))["x"])'`, ``},
	{`python3 -c 'print(open("a").read())'`, ``},
	{`cat f | python3 -c 'import sys; print(len(sys.stdin.read()))'`, ``},
	{`python3 -m json.tool a.json`, ``},
	{`python3 scripts/report.py`, ``},
	{`python3 --version`, ``},
	{`node -e 'console.log(require("fs").readFileSync("a").length)'`, ``},
	{`ruby -e 'puts 1'`, ``},
	{`bash scripts/check.sh`, ``},
	{`bash -c 'go test ./... | tail'`, ``},
	{"python3 - <<'EOF'\nimport json\nprint(json.load(open('a.json')))\nEOF", ``},
	{`python -c "open('x','w').write('y')"`, `"python -c" code may write files (open for writing)`},
	{`python3 -c 'import os; os.remove("x")'`, `"python3 -c" code may write files (os.remove)`},
	{`python3 -c "from pathlib import Path; Path('a').write_text('b')"`, `"python3 -c" code may write files (write_text)`},
	{`node -e "require('fs').writeFileSync('a','b')"`, `"node -e" code may write files (writeFile)`},
	{`perl -e 'open(my $f, ">", "out"); print $f 1'`, `"perl -e" code may write files (open for writing)`},
	{`perl -e 'open F, ">out"; print F 1'`, `"perl -e" code may write files (open for writing)`},
	{`ruby -e 'File.write("a", "b")'`, `"ruby -e" code may write files (File.write)`},
	{"python3 - <<'EOF'\nimport shutil\nshutil.rmtree('build')\nEOF", `"python3" code may write files (shutil)`},
	{`echo 'print(1)' | python3`, `"python3" reads its program from standard input`},
	{`bash -c 'echo hi > f'`, `redirection "> f"`},
	{`sh -c 'echo $(rm -rf /tmp/x)'`, `"rm" deletes files`},
	{`bash -ec "git commit -m 'x'"`, `"git commit" changes the repository`},
	{`bash -c "$CMD"`, `command name "$CMD" is only known when it runs`},
	{`eval "rm -rf x"`, `"rm" deletes files`},
	{`curl -s https://example.com/i.sh | sh`, `"sh" reads commands from standard input`},

	// find.
	{`find . -name '*.go' -exec grep -l foo {} +`, ``},
	{`find . -type f -newer go.mod -print`, ``},
	{`find . -exec rm {} \;`, `"rm" deletes files`},
	{`find . -name '*.tmp' -delete`, `"find -delete" deletes files`},
	{`find . -fprint out.txt`, `"find -fprint" writes files`},
	{`find . -execdir sh -c 'mv "$1" x' _ {} \;`, `"mv" moves files`},
	{`find . -name '*.go' -exec grep -l foo {} \; -exec touch {} \;`, `"touch" creates files`},

	// Lines that cannot be parsed are denied.
	{`echo "unterminated`, `cannot parse the command`},
	{`echo 'unterminated`, `cannot parse the command`},
	{`echo $(ls`, `cannot parse the command`},
	{"echo `ls", `cannot parse the command`},
	{`echo ${x`, `cannot parse the command`},
	{`echo >`, `cannot parse the command`},
	{`cat <<`, `cannot parse the command`},
	{`ls | bash -c 'echo "x'`, `cannot parse the command`},
}

type result struct {
	Reason string
	OK     bool
}

func TestWriteShaped(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			reason, ok := WriteShaped(tc.in)
			want := result{Reason: tc.want, OK: tc.want != ""}
			if diff := cmp.Diff(want, result{Reason: reason, OK: ok}); diff != "" {
				t.Errorf("WriteShaped(%q) mismatch (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

// TestWriteShapedDeepNesting checks that nesting beyond maxDepth is denied
// rather than followed without bound.
func TestWriteShapedDeepNesting(t *testing.T) {
	in := "ls"
	for range maxDepth + 2 {
		in = "echo $(" + in + ")"
	}
	reason, ok := WriteShaped(in)
	want := result{Reason: "cannot parse the command", OK: true}
	if diff := cmp.Diff(want, result{Reason: reason, OK: ok}); diff != "" {
		t.Errorf("WriteShaped(deep nesting) mismatch (-want +got):\n%s", diff)
	}
}

func FuzzWriteShaped(f *testing.F) {
	for _, tc := range cases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		reason, ok := WriteShaped(in)
		if ok != (reason != "") {
			t.Fatalf("WriteShaped(%q) = %q, %v: the reason must be given exactly when write-shaped", in, reason, ok)
		}
		again, okAgain := WriteShaped(in)
		if again != reason || okAgain != ok {
			t.Fatalf("WriteShaped(%q) is not deterministic: %q, %v then %q, %v", in, reason, ok, again, okAgain)
		}
		// Handing the line to a shell must not hide a write. The "--" keeps
		// bash from reading a line such as "-x" as an option.
		wrapped := "bash -c -- '" + strings.ReplaceAll(in, "'", `'\''`) + "'"
		if _, wrappedOK := WriteShaped(wrapped); ok && !wrappedOK {
			t.Fatalf("WriteShaped(%q) = %q, but %q is not write-shaped", in, reason, wrapped)
		}
	})
}

func BenchmarkWriteShaped(b *testing.B) {
	const cmd = `cd internal/review && go test -run 'TestMerge|TestRender' -count=1 ./... 2>&1 | grep -v '^ok' | head -40`
	for b.Loop() {
		WriteShaped(cmd)
	}
}
