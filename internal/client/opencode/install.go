package opencode

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/whetstone-dev/whetstone"
	"github.com/whetstone-dev/whetstone/internal/install"
)

// layout is where whetstone's files live in OpenCode's config directory.
var layout = install.Layout{Owned: []string{"plugin", "agent", "command", "skill"}, Deep: []string{"skill"}}

// ConfigDir is OpenCode's config directory whetstone installs into: the
// project's .opencode, or with global the user's (XDG_CONFIG_HOME/opencode,
// else ~/.config/opencode, as OpenCode reads it).
func (Client) ConfigDir(project string, global bool, getenv func(string) string) (string, error) {
	if !global {
		return filepath.Join(project, ".opencode"), nil
	}
	if x := getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "opencode"), nil
	}
	home := getenv("HOME")
	if home == "" || !filepath.IsAbs(home) {
		return "", errors.New("cannot find OpenCode's global config directory: HOME is not set")
	}
	return filepath.Join(home, ".config", "opencode"), nil
}

// GlobalDir names the global config directory in the --global flag's help.
func (Client) GlobalDir() string { return "~/.config/opencode" }

// Files are the files to write, by slash path relative to the config dir:
// plugin/whetstone.ts with the binary's path filled in, agent/*.md,
// command/*.md and skill/whetstone-review/SKILL.md.
func Files(binary string) (map[string][]byte, error) {
	out, err := install.Embedded(whetstone.OpenCode, "opencode")
	if err != nil {
		return nil, err
	}
	const slot = `const INSTALLED_BIN = ""`
	ts := out["whetstone.ts"]
	if !bytes.Contains(ts, []byte(slot)) {
		return nil, fmt.Errorf("the plugin has no %s line", slot)
	}
	delete(out, "whetstone.ts")
	out["plugin/whetstone.ts"] = bytes.Replace(ts, []byte(slot), []byte("const INSTALLED_BIN = "+strconv.Quote(binary)), 1)
	return out, nil
}

// Install writes OpenCode's files into dir, the plugin running binary
// (install.Install's rules).
func Install(dir, binary string) ([]string, error) {
	files, err := Files(binary)
	if err != nil {
		return nil, err
	}
	return install.Install(dir, layout, files, binary)
}

// Uninstall removes exactly what Install wrote into dir.
func Uninstall(dir string) (removed, kept []string, err error) {
	return install.Uninstall(dir, layout)
}

// Install is the package's Install.
func (Client) Install(dir, binary string) ([]string, error) { return Install(dir, binary) }

// Inspect reads and checks an install in dir.
func (Client) Inspect(dir string) (install.Status, error) { return install.Inspect(dir, layout) }

// Written is what Install writes for binary, for recognising it in a
// project's change (install.Own).
func (Client) Written(binary string) (install.Set, error) {
	files, err := Files(binary)
	return install.Set{Layout: layout, Files: files, Binary: binary}, err
}

// Uninstall is the package's Uninstall.
func (Client) Uninstall(dir string) (removed, kept []string, err error) { return Uninstall(dir) }
