package cli

import (
	"io"
	"os"
)

// colour reports whether w may be written with ANSI colours: only a
// terminal (a character device other than the null device), never with
// NO_COLOR set (https://no-color.org) or TERM=dumb.
func colour(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	if err != nil || info.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(info, null)
}
