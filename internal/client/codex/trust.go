package codex

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// hookEntry is one hook of `codex app-server`'s hooks/list answer
// (testdata/codex/app-server-hooks-list.json).
type hookEntry struct {
	Key         string `json:"key"`
	SourcePath  string `json:"sourcePath"`
	Enabled     bool   `json:"enabled"`
	TrustStatus string `json:"trustStatus"`
	CurrentHash string `json:"currentHash"`
}

// listHooks asks the Codex CLI bin, through `codex app-server`'s JSON-RPC on
// stdio (initialize, initialized, hooks/list), which hooks it would run in
// cwd with CODEX_HOME home, and how far it trusts each.
func listHooks(ctx context.Context, bin, home, cwd string) ([]hookEntry, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "app-server")
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home)
	cmd.Stderr = io.Discard
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() { in.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	cwds, _ := json.Marshal([]string{cwd})
	fmt.Fprintf(in, "%s\n%s\n%s\n",
		`{"id":1,"method":"initialize","params":{"clientInfo":{"name":"whetstone-doctor","version":"1"}}}`,
		`{"method":"initialized"}`,
		`{"id":2,"method":"hooks/list","params":{"cwds":`+string(cwds)+`}}`)
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	for sc.Scan() {
		var msg struct {
			ID     int `json:"id"`
			Result struct {
				Data []struct {
					Hooks []hookEntry `json:"hooks"`
				} `json:"data"`
			} `json:"result"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.ID != 2 {
			continue
		}
		if msg.Error != nil {
			return nil, fmt.Errorf("codex app-server: hooks/list: %s", msg.Error.Message)
		}
		var hooks []hookEntry
		for _, d := range msg.Result.Data {
			hooks = append(hooks, d.Hooks...)
		}
		return hooks, nil
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("codex app-server ended without answering hooks/list (%v)", ctx.Err())
}

// Trust reports, for `whetstone doctor`, whether Codex runs the hooks
// whetstone installed in dir for the project: Codex skips an untrusted hook
// without a word (docs/codex.md §3). ok is false when it could not be told
// (no codex on PATH); problem is "" when every hook is trusted.
func (c Client) Trust(ctx context.Context, dir, project string, getenv func(string) string) (problem, fix string, ok bool) {
	bin, err := exec.LookPath("codex")
	if err != nil {
		return "", "", false
	}
	home, err := c.ConfigDir(project, true, getenv)
	if err != nil {
		return "", "", false
	}
	hooks, err := listHooks(ctx, bin, home, project)
	if err != nil {
		return fmt.Sprintf("cannot ask Codex whether it trusts whetstone's hooks: %v", err), "", true
	}
	file := resolved(filepath.Join(dir, "hooks.json"))
	listed, untrusted := 0, 0
	for _, h := range hooks {
		if resolved(h.SourcePath) != file {
			continue
		}
		listed++
		if h.TrustStatus != "trusted" || !h.Enabled {
			untrusted++
		}
	}
	fix = "start `codex`, type /hooks and trust whetstone's hooks (or pass --dangerously-bypass-hook-trust to `codex exec`)"
	switch {
	case listed == 0:
		return fmt.Sprintf("Codex does not load %s here (a project's .codex/ loads once the project is trusted)", file), "trust the project in `codex` (or `codex exec --trust`), then " + fix, true
	case untrusted > 0:
		return fmt.Sprintf("Codex skips %d of whetstone's %d hooks, not trusted (nothing is enforced until they are)", untrusted, listed), fix, true
	}
	return "", "", true
}

// resolved is p with its symlinks resolved when it can be (a symlinked
// CODEX_HOME, macOS's /var), else p: Codex and doctor may name one file
// two ways.
func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
