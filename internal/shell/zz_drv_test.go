package shell

import (
	"bufio"
	"fmt"
	"os"
	"testing"
)

func TestZZDriver(t *testing.T) {
	f, err := os.Open(os.Getenv("DRV"))
	if err != nil {
		t.Skip()
	}
	root := t.TempDir()
	tmp := t.TempDir()
	os.WriteFile(root+"/main.go", []byte("package main\n"), 0o644)
	mode := ReadOnly
	if os.Getenv("FIXER") != "" {
		mode = Fixer
	}
	p := Policy{Mode: mode, Root: root, TempDir: tmp, Protected: []string{"/root/.local/state/whetstone/key", "/root/.local/state/whetstone"}}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		r := Check(line, p)
		mark := "ALLOW"
		if r != "" {
			mark = "DENY "
		}
		fmt.Printf("%s %-50s %s\n", mark, line, r)
	}
}
