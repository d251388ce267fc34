package opencode

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

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
	out := map[string][]byte{}
	err := fs.WalkDir(whetstone.OpenCode, "opencode", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := whetstone.OpenCode.ReadFile(p)
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, "opencode/")
		if rel == "whetstone.ts" {
			const slot = `const INSTALLED_BIN = ""`
			if !bytes.Contains(b, []byte(slot)) {
				return fmt.Errorf("the plugin has no %s line", slot)
			}
			b = bytes.Replace(b, []byte(slot), []byte("const INSTALLED_BIN = "+strconv.Quote(binary)), 1)
			rel = "plugin/whetstone.ts"
		}
		out[rel] = b
		return nil
	})
	return out, err
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

// Uninstall is the package's Uninstall.
func (Client) Uninstall(dir string) (removed, kept []string, err error) { return Uninstall(dir) }
