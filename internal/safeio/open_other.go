//go:build !unix

package safeio

import (
	"os"
)

// openFlags: other systems have no O_NOFOLLOW or O_NONBLOCK; Open still
// refuses what is not a regular file once it is open.
func openFlags(bool) int { return os.O_RDONLY }

func isLoop(error) bool { return false }
