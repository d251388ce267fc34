package shell

import (
	"fmt"
	"testing"
)

// A writeRow is a command that changes the project when run: a read-only
// agent must be refused it.
type writeRow struct {
	cmd   string
	needs []string // programs it runs besides bash and coreutils, to run it here
}

func w(cmd string, needs ...string) writeRow { return writeRow{cmd, needs} }

// writeShaped are commands that change files or the git repository, one or
// more for every technique the parser must see through. Each is run to
// prove that it does change something.
var writeShaped = []writeRow{
	// Redirections in every form.
	w(`echo x > out.txt`), w(`echo x >> main.go`), w(`echo x >| out.txt`), w(`echo x &> out.txt`),
	w(`echo x &>> out.txt`), w(`echo x 2> err.txt`), w(`echo x 1>out.txt`), w(`echo x >&out.txt`),
	w(`exec 3<> rw.txt`), w(`: > main.go`), w(`> new.txt`), w(`echo x >'q.txt'`), w(`echo x > "d q.txt"`),
	w(`echo x > $'\x6fut.txt'`), w(`echo{,} > br.txt`), w(`{ echo a; echo b; } > block.txt`),
	w(`(echo a) > sub.txt`), w(`if true; then echo a; fi > if.txt`), w(`for i in 1; do echo $i; done > for.txt`),
	w(`while false; do :; done > while.txt`), w(`case x in x) echo a;; esac > case.txt`),
	w(`f() { echo a; }; f > func.txt`), w(`f() { echo a > fn.txt; }; f`), w("cat <<EOF > heredoc.txt\nx\nEOF"),
	w(`cat <<< x > hs.txt`), w(`echo x > scripts/../out.txt`), w(`echo x > "$PWD/abs.txt"`),
	w(`f=out.txt; echo x > $f`), w(`echo x > $(echo out.txt)`), w("echo x > `echo bq.txt`"),
	w(`echo x >> .git/config`), w(`echo x > .git/hooks/pre-commit`), w(`echo x > whetstone.json`),
	w(`printf x > p.txt`), w(`true > t.txt`), w(`echo x 3> three.txt`), w(`exec > exec.txt; echo x`),
	w(`echo x > /dev/null > out.txt`), w(`echo x 2>&1 > out.txt`), w(`echo x > >(cat > ps.txt); sleep 0.3`),
	w(`echo x > ${PWD}/pwd.txt`), w(`echo x > ~+/tilde.txt`), w(`f=o; echo x > ${f}ut3.txt`),
	w(`echo x > $((1+1)).txt`), w(`echo x > go.mo?`), w(`echo x > ./main.go`), w(`> out\ file.txt`),
	w(`exec 3>ex3.txt`), w(`echo x >> "$(pwd)/pwd2.txt"`), w(`echo x 1>>out.txt 2>&1`),
	w(`ls >/dev/null 2>err2.txt`), w(`cat main.go 1<>rw2.txt`),

	// Substitutions, wherever they hide.
	w(`cat <(touch ps2.txt)`), w(`echo $(touch cs.txt)`), w("echo `touch bq2.txt`"),
	w(`echo "$(touch dq.txt)"`), w(`echo ${x:-$(touch pe.txt)}`), w(`echo $((1 + $(touch ar.txt; echo 1)))`),
	w(`x=$(touch as.txt)`), w(`[[ -n $(touch tc.txt) ]]`), w(`case $(touch cw.txt) in *) ;; esac`),
	w(`for f in $(touch fl.txt); do :; done`), w(`declare x=$(touch dc.txt)`),
	w(`f() { local x=$(touch lc.txt); }; f`), w(`export X=$(touch ex.txt)`), w(`readonly R=$(touch ro.txt)`),
	w(`let "x=$(touch let.txt; echo 1)"`), w(`(( $(touch ac.txt; echo 1) ))`), w(`echo ${y[$(touch ix.txt)]}`),
	w(`x=(1); echo ${#x[$(touch len.txt)]}`), w(`x=a; echo ${x/$(touch repl.txt)/y}`), w(`x=a; echo ${x:$(touch sl.txt; echo 0)}`),
	w(`cat <<EOF` + "\n$(touch hdoc.txt)\nEOF"), w(`grep x <<< "$(touch hstr.txt)"`),
	w(`echo $(echo $(echo $(touch deep.txt)))`), w(`ls | tee >(touch tee-ps.txt) > /dev/null; sleep 0.3`),
	w(`: $(touch colon.txt)`), w(`test -n "$(touch test.txt)"`), w(`[ -n "$(touch br2.txt)" ]`),
	w(`arr=($(touch arr.txt))`), w(`declare -a arr=($(touch arr2.txt))`),

	// Arithmetic and expansions that evaluate text as code.
	w(`x='a[$(touch ai.txt)]'; echo $((x))`), w(`x='a[$(touch ai2.txt)]'; [[ $x -eq 1 ]]`),
	w(`x='a[$(touch ai3.txt)]'; echo ${!x}`), w(`x='a[$(touch ai4.txt)]'; printf -v "$x" y`),
	w(`x='a[$(touch ai5.txt)]'; test -v "$x"`), w(`declare -i n; n='a[$(touch ai6.txt)]'`),
	w(`x='$(touch pp.txt)'; echo "${x@P}"`), w(`x='a[$(touch ai7.txt)]'; (( x ))`),
	w(`x='a[$(touch ai8.txt)]'; let y=x`), w(`x='a[$(touch ai9.txt)]'; a=(1); echo ${a[x]}`),
	w(`x='a[$(touch ai10.txt)]'; declare -n r="$x"; echo $r`), w(`read -r x <<< 'a[$(touch ai11.txt)]'; echo $((x))`),
	w(`x=$(cat scripts/ai.txt 2>/dev/null || echo 'a[$(touch ai12.txt)]'); echo $((x+1))`),
	w(`x='a[$(touch ai13.txt)]'; [[ -v $x ]]`), w(`for x in 'a[$(touch ai14.txt)]'; do echo $((x)); done`),

	// Program names that are not what they seem.
	w(`c=touch; $c var.txt`), w(`"$(echo touch)" cs2.txt`), w(`${CMD:-touch} def.txt`),
	w(`$'\x74ouch' ansi.txt`), w(`$'\164ouch' oct.txt`), w(`$'\u0074ouch' uni.txt`), w(`t\ouch esc.txt`),
	w(`'tou'ch q2.txt`), w(`"touch" dq2.txt`), w(`{touch,br3.txt}`), w(`{touch,br4.txt,br5.txt}`),
	w(`to{uch,}`), w(`\rm main.go`), w(`command rm main.go`), w(`builtin eval 'touch bi.txt'`),
	w(`exec touch exec2.txt`), w(`/usr/bin/touch abs2.txt`), w(`./scripts/run.sh`), w(`scripts/run.sh`),
	w(`to$'\x75'ch uch.txt`), w(`{rm,-f,main.go}`), w(`r{m,} -f main.go`),
	w("shopt -s expand_aliases\nalias t=touch\nt al.txt"), w(`hash -p /usr/bin/touch ls; ls hp.txt`),
	w(`f() { touch fd.txt; }; f`), w(`ls() { touch shadow.txt; }; ls`),

	// Wrappers that run the command after them.
	w(`env touch env.txt`), w(`env -i touch env2.txt`), w(`env X=1 touch env3.txt`), w(`env -- touch env4.txt`),
	w(`env -C scripts touch env5.txt`), w(`env -S 'touch env6.txt'`), w(`nice touch nice.txt`),
	w(`nice -n 5 touch nice2.txt`), w(`nohup touch nohup.txt`), w(`timeout 5 touch to.txt`),
	w(`timeout -s KILL 5 touch to2.txt`), w(`stdbuf -o0 touch sb.txt`), w(`setsid -w touch ss.txt`),
	w(`ionice -c 3 touch io.txt`, "ionice"), w(`chrt -o 0 touch chrt.txt`, "chrt"), w(`taskset -c 0 touch ts.txt`, "taskset"),
	w(`flock lock.txt true`, "flock"), w(`flock lock2.txt -c 'touch fl3.txt'`, "flock"), w(`time touch time.txt`),
	w(`time -p touch time2.txt`), w(`/usr/bin/time -o time3.txt true`, "/usr/bin/time"),
	w(`command time -o time4.txt true`, "/usr/bin/time"), w(`xargs touch <<< xa.txt`), w(`echo xa2.txt | xargs touch`),
	w(`echo xa3.txt | xargs -I{} touch {}`), w(`echo x | xargs sh -c 'touch xa4.txt'`),
	w(`echo x | xargs -n1 bash -c 'touch xa5.txt'`), w(`printf 'xa7.txt\0' | xargs -0 touch`),
	w(`xargs -a files.lst touch`), w(`xargs -I% sh -c 'touch %' <<< xi.txt`), w(`echo main.go | xargs rm`),
	w(`sudo touch sudo.txt`, "sudo"), w(`unshare -r touch un.txt`, "unshare"), w(`strace -o st.txt true`, "strace"),
	w(`chroot / touch "$PWD/chroot.txt"`), w(`runuser -u root -- touch ru.txt`, "runuser"),
	w(`gdb -batch -ex 'shell touch gdb.txt'`, "gdb"), w(`script -qc true typescript.txt`, "script"),
	w(`parallel touch ::: par.txt`, "parallel"), w(`watch -n 1 touch w.txt`, "a-terminal"),
	w(`nice nice touch nice3.txt`), w(`timeout 5 env nice touch deepwrap.txt`),

	// Inline shells and scripts whetstone cannot read.
	w(`sh -c 'touch sh.txt'`), w(`bash -c 'touch bash.txt'`), w(`dash -c 'touch dash.txt'`, "dash"),
	w(`bash -ec 'touch bash2.txt'`), w(`bash -c -- 'touch bash3.txt'`), w(`sh -c "touch sh2.txt"`),
	w(`bash -c 'bash -c "touch nest.txt"'`), w(`sh -s <<< 'touch sin.txt'`), w(`bash <<< 'touch hs2.txt'`),
	w("bash <<'EOF'\ntouch hd.txt\nEOF"), w(`echo 'touch pipe.txt' | bash`), w(`echo 'touch pipe2.txt' | sh`),
	w(`bash /dev/stdin <<< 'touch stdin.txt'`), w(`sh /dev/stdin <<< 'touch stdin2.txt'`),
	w(`bash <(echo 'touch procsub.txt')`), w(`source <(echo 'touch src.txt')`), w(`. <(echo 'touch dot.txt')`),
	w(`bash scripts/run.sh`), w(`sh scripts/run.sh`), w(`source scripts/run.sh`), w(`. scripts/run.sh`),
	w(`bash --login -c 'touch login.txt'`), w(`bash -k -c 'touch kw.txt'`), w(`eval 'touch ev.txt'`),
	w(`eval "touch ev2.txt"`), w(`eval "eval 'touch ee.txt'"`), w(`bash -c "eval 'touch be.txt'"`),
	w(`sh -c 'sh -c "sh -c \"touch deep2.txt\""'`), w(`trap 'touch trap.txt' EXIT`),
	w(`bash -c 'cat > bc.txt' <<< x`), w(`x='touch evx.txt'; eval "$x"`), w(`bash -c "$(echo touch bcs.txt)"`),
	w(`BASH_ENV=scripts/run.sh bash -c true`), w(`env BASH_ENV=scripts/run.sh bash -c true`),
	w(`PS4='$(touch ps4.txt)'; set -x; true`), w(`zsh -c 'touch z.txt'`, "zsh"), w(`ksh -c 'touch k.txt'`, "ksh"),

	// Interpreters running code.
	w(`python3 -c 'open("py.txt","w")'`, "python3"), w(`python3 scripts/x.py`, "python3"),
	w(`python3 - <<< 'open("py2.txt","w")'`, "python3"), w(`python3 -m zipfile -c z.zip main.go`, "python3"),
	w(`node -e 'require("fs").writeFileSync("node.txt","")'`, "node"), w(`perl -e 'open(F,">perl.txt")'`, "perl"),
	w(`perl -i -pe 's/main/x/' main.go`, "perl"), w(`ruby -e 'File.write("rb.txt","")'`, "ruby"),
	w(`tclsh <<< 'close [open tcl.txt w]'`, "tclsh"), w(`sqlite3 db.sqlite 'create table t(x)'`, "sqlite3"),
	w(`make`, "make"), w(`make -f Makefile all`, "make"),

	// awk programs.
	w(`awk 'BEGIN{system("touch awk.txt")}'`), w(`awk 'BEGIN{print "x" > "awk2.txt"}'`),
	w(`awk 'BEGIN{print "x" >> "awk3.txt"}'`), w(`awk 'BEGIN{printf "x" > "awk4.txt"}'`),
	w(`awk 'BEGIN{print "touch awk5.txt" | "sh"}'`), w(`awk 'BEGIN{"touch awk6.txt" | getline}'`),
	w(`awk -f scripts/prog.awk`), w(`awk 'BEGIN{f="awk7.txt"; print "x" > f}'`),
	w(`awk '{print > "awk8.txt"}' main.go`), w(`awk 'BEGIN { cmd = "touch awk9.txt"; system(cmd) }'`),
	w(`mawk 'BEGIN{system("touch mawk.txt")}'`, "mawk"),
	w(`awk 'BEGIN { printf("x") > "awk11.txt" }'`), w(`awk -v x=1 'BEGIN{print x > "awk12.txt"}'`),
	w(`awk 'BEGIN{print 1, 2 > "awk13.txt"}'`), w(`awk '{print $1 > $1".out"}' main.go`),
	w(`awk "$(echo 'BEGIN{system("touch awk14.txt")}')"`), w(`awk -e 'BEGIN{system("touch awk15.txt")}'`, "gawk"),

	// sed scripts.
	w(`sed -i 's/main/x/' main.go`), w(`sed -i.bak 's/main/x/' main.go`), w(`sed --in-place 's/main/x/' main.go`),
	w(`sed -ni 'p' main.go`), w(`sed -n 'w sedw.txt' main.go`), w(`sed 's/main/x/w sedw2.txt' main.go`),
	w(`sed -n '/main/w sedw3.txt' main.go`), w(`sed '1e touch sede.txt' main.go`),
	w(`sed 's/.*/touch sede2.txt/e' main.go`), w(`sed -f scripts/w.sed main.go`),
	w(`sed -e 'p' -e 'w sedw4.txt' main.go`), w(`sed 'W sedW.txt' main.go`), w("sed -n '1{w sedw5.txt\n}' main.go"),
	w(`sed 's/[/]/x/w sedw6.txt' main.go`), w(`sed -E 's/(a)/\1/w sedw7.txt' main.go`),
	w(`sed --expression='w sedw8.txt' main.go`), w(`sed 'y/a/b/;w sedw9.txt' main.go`),
	w(`sed -s -n 'w sedw10.txt' main.go`), w(`sed -n -e '$!{w sedw11.txt' -e '}' main.go`),
	w(`sed 's|a|b|gw sedw12.txt' main.go`), w(`sed "$(echo w sedw13.txt)" main.go`), w(`sed --in-pl 's/a/b/' main.go`),

	// find actions.
	w(`find . -name main.go -delete`), w(`find . -maxdepth 1 -name main.go -exec rm {} \;`),
	w(`find . -maxdepth 1 -name main.go -exec rm {} +`), w(`find . -maxdepth 1 -name main.go -execdir rm {} \;`),
	w(`find . -maxdepth 1 -fprint find.txt`), w(`find . -maxdepth 1 -fprint0 find2.txt`),
	w(`find . -maxdepth 1 -fprintf find3.txt '%p'`), w(`find . -maxdepth 1 -fls find4.txt`),
	w(`yes | find . -maxdepth 1 -name main.go -ok rm {} \;`), w(`yes | find . -maxdepth 1 -name main.go -okdir rm {} \;`),
	w(`find . -maxdepth 0 -exec touch fe.txt \;`), w(`find $(echo .) -maxdepth 1 -name main.go -delete`),

	// Readers with an option that writes.
	w(`sort -o sorted.txt main.go`), w(`sort main.go -o sorted2.txt`), w(`sort --output=sorted3.txt main.go`),
	w(`sort -uo sorted4.txt main.go`), w(`sort --out=sorted5.txt main.go`), w(`uniq main.go uniq.txt`),
	w(`xxd main.go xxd.txt`), w(`xxd -r -p main.go xxd2.txt`), w(`shuf -o shuf.txt main.go`),
	w(`iconv -f utf-8 -t utf-8 -o iconv.txt main.go`), w(`tree -o tree.txt`, "tree"), w(`yq -i -y '.a = 1' y.yaml`, "yq"),
	w(`file -C -m /dev/null`),

	// Archives and compressors.
	w(`tar -cf a.tar main.go`), w(`tar czf a.tgz main.go`), w(`tar -xf files.tar`), w(`tar xzf files.tgz`),
	w(`tar --to-command='touch tarcmd.txt' -xf files.tar`), w(`tar -tf files.tar --checkpoint=1 --checkpoint-action=exec='touch tarck.txt'`),
	w(`unzip -q files.zip`, "unzip"), w(`unzip -q -o files.zip -d out`, "unzip"), w(`gzip main.go`),
	w(`gzip -k main.go`), w(`gunzip g.gz`), w(`bzip2 main.go`, "bzip2"), w(`xz main.go`, "xz"),
	w(`zip -q z.zip main.go`, "zip"), w(`ar rc lib.a main.go`, "ar"),

	// Programs that change files.
	w(`cp main.go copy.go`), w(`cp -r scripts scripts2`), w(`mv main.go moved.go`), w(`mv -t scripts main.go`),
	w(`rm main.go`), w(`rm -f main.go`), w(`rm -rf scripts`), w(`rmdir emptydir`), w(`mkdir newdir`),
	w(`mkdir -p a/b/c`), w(`touch new.txt`), w(`touch -d 2000-01-01 main.go`), w(`ln -s main.go link.go`),
	w(`ln main.go hard.go`), w(`ln -sf /etc/passwd pw`), w(`chmod +x main.go`), w(`chmod 600 main.go`),
	w(`chmod -R go-r scripts`), w(`dd if=main.go of=dd.txt status=none`), w(`dd of=dd2.txt status=none <<< x`),
	w(`truncate -s 0 main.go`), w(`truncate -s 10 tr.txt`), w(`install main.go inst.go`), w(`install -d instdir`),
	w(`patch -s -p1 < scripts/p.diff`, "patch"), w(`rsync main.go rs.go`, "rsync"), w(`shred -u main.go`),
	w(`split -l 1 main.go part-`), w(`csplit -s main.go 2`), w(`mkfifo fifo`), w(`mknod p2 p`),
	w(`unlink main.go`), w(`chown 1:1 main.go`), w(`chgrp 1 main.go`), w(`mktemp -p . x.XXXX`),
	w(`mktemp tmp.XXXXXX`), w(`mktemp -d dtmp.XXXX`), w(`cp -l main.go hl.go`), w(`cp -s main.go sl.go`),
	w(`install -m 644 main.go i2.go`), w(`touch -- -rf`), w(`tee tee.txt < main.go`), w(`echo x | tee tee2.txt`),
	w(`echo x | tee -a main.go`), w(`echo x | tee /dev/null tee3.txt`), w(`cat main.go | tee -a go.mod > /dev/null`),
	w(`ed -s main.go <<< $'1d\nw\nq'`, "ed"), w(`curl -s file:///etc/hostname -o curl.txt`, "curl"),
	w(`cd scripts && touch cd.txt`), w(`pushd scripts >/dev/null && touch pd.txt`), w(`cd scripts; rm run.sh`),
	w(`true && touch and.txt`), w(`false || touch or.txt`), w(`! touch not.txt`), w(`touch bg.txt & wait`),
	w(`coproc touch co.txt; wait`), w(`true | touch p.txt`), w(`touch pa.txt |& cat`),
	w(`select x in a; do touch sel.txt; break; done <<< 1`), w(`until touch until.txt; do :; done`),
	w(`while touch while2.txt; do break; done`), w(`if touch if2.txt; then :; fi`),
	w(`mapfile -C 'touch mf.txt' -c 1 arr < main.go`), w(`read -r x < <(touch rd.txt)`),
	w(`PATH=/usr/bin:/bin touch path.txt`), w(`HOME=. git config --global a.b c`),
	w(`cp main.go "$(pwd)/dyn.go"`), w(`f=main.go; rm "$f"`), w(`rm ./*.go`), w(`rm -- main.go`),

	// git commands that change the repository or run programs.
	w(`git add untracked.txt`), w(`git stage untracked.txt`), w(`git add -A`), w(`git commit --allow-empty -m x`),
	w(`git commit --amend -m x`), w(`git stash -u`), w(`git stash push -u -m x`), w(`git reset --hard HEAD~1`),
	w(`git reset --mixed HEAD~1`), w(`git restore --source=HEAD~1 main.go`), w(`git checkout HEAD~1 -- main.go`),
	w(`git checkout -b newbranch`), w(`git checkout feature`), w(`git switch feature`), w(`git switch -c nb`),
	w(`git clean -f`), w(`git merge --no-edit feature`), w(`git cherry-pick feature`), w(`git revert --no-edit HEAD`),
	w(`git rebase feature`), w(`git apply scripts/p.diff`), w(`git apply --cached scripts/p.diff`),
	w(`git push origin HEAD:refs/heads/pushed`), w(`git fetch origin main:refs/heads/fetched`),
	w(`git pull --no-edit origin feature`), w(`git config user.name x`), w(`git config --add a.b c`),
	w(`git config --unset user.email`), w(`git config core.hooksPath hooks`),
	w(`git branch nb`), w(`git branch -D feature`), w(`git branch -m main renamed`), w(`git branch -c feature copied`),
	w(`git branch --set-upstream-to=origin/main feature`), w(`git branch -v nb2`), w(`git tag v2`), w(`git tag -d v1`),
	w(`git tag -a v3 -m x`), w(`git tag -f v1 HEAD`), w(`git remote add up ./.git/remote.git`), w(`git remote remove origin`),
	w(`git remote set-url origin x`), w(`git update-ref refs/heads/ur HEAD`),
	w(`git update-index --assume-unchanged main.go`), w(`git symbolic-ref HEAD refs/heads/feature`),
	w(`git notes add -m x HEAD`), w(`git worktree add -q wt`), w(`git gc -q`), w(`git repack -a -d -q`),
	w(`git reflog expire --expire=now --all`), w(`git mv main.go m2.go`), w(`git rm -q main.go`),
	w(`git rm -q --cached main.go`), w(`git init -q sub`), w(`git clone -q . clone`), w(`git archive -o arch.tar HEAD`),
	w(`git archive --output=arch2.tar HEAD`), w(`git format-patch -q -1`), w(`git format-patch -q -o patches -1`),
	w(`git diff --output=diff.txt HEAD~1`), w(`git log --output=log.txt -1`), w(`git show --output=show.txt`),
	w(`git -c diff.external='touch ext.txt' diff HEAD~1`),
	w(`GIT_EXTERNAL_DIFF='touch ed.txt' git diff --ext-diff HEAD~1`),
	w(`git -c core.fsmonitor='touch fsm.txt' status`), w(`git -c alias.x='!touch alias.txt' x`),
	w(`git -c core.hooksPath=scripts -c user.name=x commit --allow-empty -qm x`),
	w(`git difftool -y -x 'touch dt.txt' HEAD~1`), w(`git difftool -y --extcmd='touch dt2.txt' HEAD~1`),
	w(`git bisect start`), w(`git hash-object -w untracked.txt`), w(`git grep -O'touch grepo.txt' package`),
	w(`git --git-dir=.git --work-tree=. add untracked.txt`), w(`git -C . add untracked.txt`),
	w(`git checkout-index -a -f --prefix=ci/`), w(`git read-tree HEAD~1`), w(`git sparse-checkout set scripts`),
	w(`GIT_DIR=.git git add untracked.txt`),
	w(`GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch gcc.txt' git status`),
	w(`git $(echo add) untracked.txt`), w(`git "$@" add untracked.txt`), w(`git commit -qm x --allow-empty --no-verify`),
	w(`git stash -u && git stash pop`), w(`git rm -rq --cached .`), w(`git maintenance run --task=gc`),

	// go commands with outputs, and the module rewriters.
	w(`go test -coverprofile=c.out .`, "go"), w(`go test -c .`, "go"), w(`go test -c -o t.bin .`, "go"),
	w(`go test -cpuprofile=cpu.out .`, "go"), w(`go test -run X -trace=tr.out .`, "go"), w(`go build .`, "go"),
	w(`go build -o bin/app .`, "go"), w(`go build -toolexec='touch te.txt' .`, "go"), w(`go generate ./...`, "go"),
	w(`go mod tidy`, "go"), w(`go fmt ./...`, "go"), w(`gofmt -w main.go`, "gofmt"), w(`gofmt -l -w .`, "gofmt"),
	w(`go work init`, "go"), w(`go mod edit -module=y`, "go"), w(`go test . -args -test.cpuprofile=cpu2.out`, "go"),
	w(`GOFLAGS=-o=gf.bin go build .`, "go"),
	w(`go test -outputdir=. -cpuprofile=c3.out .`, "go"), w(`go build -o=bin/app2 .`, "go"),
}

// TestWriteShapedDenied checks that a read-only agent is refused every
// write-shaped command.
func TestWriteShapedDenied(t *testing.T) {
	if len(writeShaped) < 300 {
		t.Errorf("only %d write-shaped commands; want at least 300", len(writeShaped))
	}
	p := newProject(t)
	pol := p.policy(ReadOnly)
	seen := map[string]bool{}
	for _, row := range writeShaped {
		if seen[row.cmd] {
			t.Errorf("duplicate row %q", row.cmd)
		}
		seen[row.cmd] = true
		if r := Check(row.cmd, pol); r == "" {
			t.Errorf("Check(%q) allowed a command that writes", row.cmd)
		}
	}
}

// TestWriteShapedChanges runs every write-shaped command in a copy of the
// project and checks that it did change something, so that the table holds
// only commands that do write. Commands needing a program not installed here
// are skipped.
func TestWriteShapedChanges(t *testing.T) {
	t.Parallel()
	p := newProject(t)
	var counts [2]struct {
		verified int
		skipped  map[string]int
	}
	t.Run("run", func(t *testing.T) {
		for i, part := range halves(writeShaped) {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				counts[i].verified, counts[i].skipped = p.runChanges(t, part)
			})
		}
	})
	skipped := map[string]int{}
	for _, c := range counts {
		for k, n := range c.skipped {
			skipped[k] += n
		}
	}
	t.Logf("verified %d of %d write-shaped commands by running them; not run: %v", counts[0].verified+counts[1].verified, len(writeShaped), skipped)
}

// runChanges runs commands in a copy of the project, each after the other,
// and checks that each changed something. It returns how many it ran and
// why it did not run the others.
func (p *project) runChanges(t *testing.T, rows []writeRow) (verified int, skipped map[string]int) {
	skipped = map[string]int{}
	dir := p.copyProject(t)
	before := snapshot(t, dir)
	for _, row := range rows {
		if prog := missing(row.needs); prog != "" {
			skipped[prog]++
			continue
		}
		out, done := p.runIn(dir, row.cmd)
		switch {
		case !done:
			skipped["timeout"]++
			t.Logf("%q did not finish in time", row.cmd)
		case len(changes(before, snapshot(t, dir))) == 0:
			t.Errorf("%q changed nothing; output:\n%s", row.cmd, out)
		default:
			verified++
		}
		dir, before = p.restore(t, dir, before)
	}
	return verified, skipped
}
