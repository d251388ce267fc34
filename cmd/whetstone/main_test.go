package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/tidwall/sjson"
	"github.com/whetstone-dev/whetstone"
	"github.com/whetstone-dev/whetstone/internal/cli"
	"github.com/whetstone-dev/whetstone/internal/sandbox"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"whetstone": func() {
			os.Exit(cli.RunWith(context.Background(), cli.Options{Now: testClock()}, os.Args, os.Stdin, os.Stdout, os.Stderr))
		},
	})
}

// testClock is the clock a script pins with WHETSTONE_NOW (RFC 3339), so
// state files compare byte for byte; the binary itself reads no clock from
// its environment.
func testClock() func() time.Time {
	t, err := time.Parse(time.RFC3339, os.Getenv("WHETSTONE_NOW"))
	if err != nil {
		return nil
	}
	return func() time.Time { return t }
}

// TestScripts runs testdata/script/*.txtar: the binary driven by real Claude
// Code payloads (testdata/claude-code/), with exact stdout, stderr, exit
// codes and files. UPDATE_SCRIPTS=1 rewrites the expected output.
func TestScripts(t *testing.T) {
	fixtures, err := filepath.Abs("../../testdata/claude-code")
	if err != nil {
		t.Fatal(err)
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "../../testdata/script",
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") == "1",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("WHETSTONE_NOW", "2026-11-20T10:00:00Z")
			env.Setenv("WHETSTONE_VERSION", whetstone.Version) // reports name it; cmpenv files say $WHETSTONE_VERSION
			// Each script has its own key, outside the project.
			env.Setenv("WHETSTONE_STATE_DIR", filepath.Join(env.WorkDir, "..", "state-"+filepath.Base(env.WorkDir)))
			// A directory of the script's own outside the project: tools
			// on PATH there are not the repository's (internal/toolpath).
			env.Setenv("OUTSIDE", filepath.Join(env.WorkDir, "..", "outside-"+filepath.Base(env.WorkDir)))
			env.Setenv("FIXTURES", fixtures)
			env.Setenv("REPO", repo) // the plugin itself, for doctor
			env.Setenv("VERSION", whetstone.Version)
			if bwrap, ok := sandbox.Find(); ok {
				env.Setenv("BWRAP", bwrap) // doctor names it
			}
			env.Setenv("GIT_AUTHOR_NAME", "t")
			env.Setenv("GIT_AUTHOR_EMAIL", "t@example.org")
			env.Setenv("GIT_COMMITTER_NAME", "t")
			env.Setenv("GIT_COMMITTER_EMAIL", "t@example.org")
			// Fixed dates and branch name make commit ids, and so the
			// context.json files the scripts compare, the same on every run.
			env.Setenv("GIT_AUTHOR_DATE", "2026-11-20T09:00:00Z")
			env.Setenv("GIT_COMMITTER_DATE", "2026-11-20T09:00:00Z")
			env.Setenv("GIT_CONFIG_COUNT", "1")
			env.Setenv("GIT_CONFIG_KEY_0", "init.defaultBranch")
			env.Setenv("GIT_CONFIG_VALUE_0", "main")
			return nil
		},
		// [sandbox]: bubblewrap works here. whetstone looks for bwrap in
		// system directories only, never on PATH (internal/sandbox), so a
		// script cannot hide it with pathonly.
		Condition: func(cond string) (bool, error) {
			if cond == "sandbox" {
				_, ok := sandbox.Find()
				return ok, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"payload":   cmdPayload,
			"exitcode":  cmdExitcode,
			"cmpsealed": cmdCmpSealed,
			"pathonly":  cmdPathOnly,
		},
	})
}

// cmdPayload writes a hook payload: a captured fixture with fields replaced.
//
//	payload OUT FIXTURE [path=value | path=@file | path:=json | path:=@file]...
func cmdPayload(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: payload OUT FIXTURE [path=value|path=@file|path:=json|path:=@file]...")
	}
	data, err := os.ReadFile(filepath.Join(ts.Getenv("FIXTURES"), args[1]))
	ts.Check(err)
	for _, kv := range args[2:] {
		if k, v, ok := strings.Cut(kv, ":="); ok {
			if file, ok := strings.CutPrefix(v, "@"); ok {
				v = strings.TrimSpace(ts.ReadFile(file))
			}
			data, err = sjson.SetRawBytes(data, k, []byte(v))
			ts.Check(err)
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			ts.Fatalf("payload: bad assignment %q", kv)
		}
		if file, ok := strings.CutPrefix(v, "@"); ok {
			v = ts.ReadFile(file)
		}
		data, err = sjson.SetBytes(data, k, v)
		ts.Check(err)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), data, 0o644))
}

// cmdExitcode runs a command and checks its exit status, where `! exec` can
// only say "non-zero".
//
//	exitcode N prog args...
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N prog args...")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	if ee, ok := err.(*exec.ExitError); ok {
		got = ee.ExitCode()
	} else if err != nil {
		ts.Fatalf("exitcode: %v", err)
	}
	if got != want {
		ts.Fatalf("exit code %d, want %d", got, want)
	}
}

// sealRE matches the MAC whetstone adds to a stored report; its value
// depends on the per-script key.
var sealRE = regexp.MustCompile(`,"mac":"[0-9a-f]{64}"\}\n?$`)

// cmdCmpSealed compares a sealed report with its expected content: the
// file must carry a seal, and without it must equal WANT.
//
//	cmpsealed FILE WANT
func cmdCmpSealed(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: cmpsealed FILE WANT")
	}
	got := ts.ReadFile(args[0])
	if !sealRE.MatchString(got) {
		ts.Fatalf("%s carries no seal", args[0])
	}
	got = sealRE.ReplaceAllString(got, "}")
	if want := ts.ReadFile(args[1]); strings.TrimSpace(got) != strings.TrimSpace(want) {
		ts.Fatalf("%s without its seal differs from %s:\n%s\nwant:\n%s", args[0], args[1], got, want)
	}
}

// cmdPathOnly sets PATH to the given directories and the one testscript
// put the whetstone command in, so what a command finds on PATH (doctor's
// claude, git, go, bwrap) does not depend on this machine.
//
//	pathonly DIR...
func cmdPathOnly(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("usage: pathonly DIR...")
	}
	var self string
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(dir, "whetstone")); err == nil {
			self = dir
			break
		}
	}
	if self == "" {
		ts.Fatalf("pathonly: whetstone is not on PATH")
	}
	dirs := make([]string, 0, len(args)+1)
	for _, d := range args {
		dirs = append(dirs, ts.MkAbs(d))
	}
	ts.Setenv("PATH", strings.Join(append(dirs, self), string(filepath.ListSeparator)))
}
