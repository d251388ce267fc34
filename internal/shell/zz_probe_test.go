package shell

import (
	"os"
	"path/filepath"
	"testing"
)

func TestZZProbe(t *testing.T) {
	p := newProject(t)
	os.MkdirAll(filepath.Join(p.root, "docs"), 0o755)
	os.Symlink(filepath.Dir(p.key), filepath.Join(p.root, "docs", "kd"))
	os.MkdirAll(filepath.Join(p.root, ".venv/bin"), 0o755)
	os.WriteFile(filepath.Join(p.root, ".venv/bin/cat"), []byte("#!/bin/sh\necho pwn\n"), 0o755)
	for _, cmd := range []string{
		"grep -R -a . docs", "grep -r -a . docs", "rg -L -a . docs", "rg -a . docs",
		"find -L docs", "find docs -follow", "find docs", "cp -rL docs @TMP@/x", "du -L docs", "ls -R docs", "ls -LR docs", "tree -l docs", "diff -r docs @TMP@",
		"diff -rN docs emptydir", "git grep -a . ", "cat go.mod", "echo hi", "grep -R x internal", "grep -rn x . | head", "env cat go.mod",
	} {
		pol := p.policy(ReadOnly)
		pol.Path = ".venv/bin:/usr/bin"
		v := Judge(p.expand(cmd), pol)
		pol.CheckLinks = true
		w := Judge(p.expand(cmd), pol)
		t.Logf("%-30s -> %+v\n      links: %q", cmd, v, w.Reason)
	}
}
