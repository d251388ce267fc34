//go:build race

package loop

// Under the race detector, go list builds the export data the way the
// test binary was built, so TestOnlyTheTableMovesARun reuses its cache.
func init() { listFlags = append(listFlags, "-race") }
