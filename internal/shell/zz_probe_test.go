package shell

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestTmpProbe(t *testing.T) {
	b, _ := os.ReadFile("/tmp/probes.txt")
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		l = strings.ReplaceAll(l, `\n`, "\n")
		r, ok := WriteShaped(l)
		fmt.Printf("%-5v %-60q | %s\n", ok, l, r)
	}
}
