// Package whetstone holds what the whole module shares: the release version.
package whetstone

import (
	_ "embed"
	"strings"
)

//go:embed VERSION
var version string

// Version is the release version, read from the VERSION file that the launcher
// (scripts/whetstone) also keys its binary cache on.
var Version = strings.TrimSpace(version)
