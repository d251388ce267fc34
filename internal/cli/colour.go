package cli

import (
	"io"
	"os"

	"golang.org/x/term"
)

// colour reports whether w may be written with ANSI colours: only a
// terminal, never with NO_COLOR set (https://no-color.org) or TERM=dumb.
func colour(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
