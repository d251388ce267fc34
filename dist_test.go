package whetstone

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// platforms are the released GOOS/GOARCH pairs (scripts/dist).
var platforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}

// dist runs scripts/dist from the source tree src into out.
func dist(t *testing.T, src, out string, platforms ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(src, "scripts", "dist"), platforms...)
	cmd.Env = append(os.Environ(), "DIST="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/dist %v: %v\n%s", platforms, err, b)
	}
}

// copySources copies what a build needs into a fresh directory, so a second
// build runs from another path (what -trimpath must hide).
func copySources(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"cmd", "internal", "scripts", "opencode", "codex", "go.mod", "go.sum", "version.go", "opencode.go", "codex.go", "VERSION"} {
		if b, err := exec.Command("cp", "-R", name, filepath.Join(dir, name)).CombinedOutput(); err != nil {
			t.Fatalf("cp %s: %v %s", name, err, b)
		}
	}
	return dir
}

// TestDistReproducible: the linux/amd64 release binary built from this tree
// and from a copy of it elsewhere has the same bytes, and it runs and
// reports VERSION.
func TestDistReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the release binary twice")
	}
	wd, _ := os.Getwd()
	a, b := t.TempDir(), t.TempDir()
	dist(t, wd, a, "linux/amd64")
	dist(t, copySources(t), b, "linux/amd64")
	binA, _ := os.ReadFile(filepath.Join(a, "bin", "linux-amd64", "whetstone"))
	binB, _ := os.ReadFile(filepath.Join(b, "bin", "linux-amd64", "whetstone"))
	if len(binA) == 0 || !bytes.Equal(binA, binB) {
		t.Fatalf("two builds differ (%d and %d bytes): the release build is not reproducible", len(binA), len(binB))
	}
	sums, _ := os.ReadFile(filepath.Join(a, "SHA256SUMS"))
	if want := fmt.Sprintf("%x  bin/linux-amd64/whetstone\n", sha256.Sum256(binA)); string(sums) != want {
		t.Errorf("SHA256SUMS = %q, want %q", sums, want)
	}
	if runtime.GOOS+"/"+runtime.GOARCH == "linux/amd64" {
		out, err := exec.Command(filepath.Join(a, "bin", "linux-amd64", "whetstone"), "version").Output()
		if err != nil || string(out) != "whetstone "+Version+"\n" {
			t.Errorf("whetstone version: %q, %v; want %q", out, err, "whetstone "+Version)
		}
	}
}

// TestDistAllPlatforms checks what `make dist` left in WHETSTONE_DIST: one
// executable per platform, of that platform's format and architecture, each
// listed in SHA256SUMS with its real digest.
func TestDistAllPlatforms(t *testing.T) {
	dir := os.Getenv("WHETSTONE_DIST")
	if dir == "" {
		t.Skip("WHETSTONE_DIST is not set; `make e2e` sets it to the `make dist` output")
	}
	sums, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, p := range platforms {
		goos, goarch, _ := strings.Cut(p, "/")
		rel := "bin/" + goos + "-" + goarch + "/whetstone"
		if goos == "windows" {
			rel += ".exe"
		}
		path := filepath.Join(dir, rel)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if fi, _ := os.Stat(path); fi.Mode().Perm()&0o111 != 0o111 {
			t.Errorf("%s is mode %v, want executable by all", rel, fi.Mode())
		}
		if got := format(path); got != p {
			t.Errorf("%s is a %s executable, want %s", rel, got, p)
		}
		sum := sha256.Sum256(data)
		want = append(want, hex.EncodeToString(sum[:])+"  "+rel+"\n")
	}
	slices.SortFunc(want, func(a, b string) int { return strings.Compare(a[64:], b[64:]) })
	if string(sums) != strings.Join(want, "") {
		t.Errorf("SHA256SUMS:\n%s\nwant (sorted by path):\n%s", sums, strings.Join(want, ""))
	}
}

// format reads an executable's header: "goos/goarch", or what went wrong.
func format(path string) string {
	if f, err := elf.Open(path); err == nil {
		defer f.Close()
		return "linux/" + map[elf.Machine]string{elf.EM_X86_64: "amd64", elf.EM_AARCH64: "arm64"}[f.Machine]
	}
	if f, err := macho.Open(path); err == nil {
		defer f.Close()
		return "darwin/" + map[macho.Cpu]string{macho.CpuAmd64: "amd64", macho.CpuArm64: "arm64"}[f.Cpu]
	}
	if f, err := pe.Open(path); err == nil {
		defer f.Close()
		return "windows/" + map[uint16]string{pe.IMAGE_FILE_MACHINE_AMD64: "amd64", pe.IMAGE_FILE_MACHINE_ARM64: "arm64"}[f.Machine]
	}
	return "unknown"
}
