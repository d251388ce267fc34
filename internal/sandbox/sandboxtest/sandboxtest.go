// Package sandboxtest holds what tests of the sandbox in several packages
// share.
package sandboxtest

import (
	"os"
	"testing"
)

// OutsideTmp is a fresh directory outside /tmp (which the sandbox replaces
// with a tmpfs), so that a write or a key there is really reachable from
// the host, and a test proves something about it. It is removed when the
// test ends; the test is skipped without a user cache directory.
func OutsideTmp(t testing.TB, prefix string) string {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no user cache directory for a scratch dir outside /tmp: %v", err)
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(base, prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
