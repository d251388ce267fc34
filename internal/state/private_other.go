//go:build !unix

package state

import (
	"io/fs"
	"os"
)

// lockFlags: other systems have no O_NOFOLLOW; the lock is opened as gofrs/flock does.
const lockFlags = os.O_CREATE | os.O_RDONLY

// notPrivate: Windows has no mode bits to check (Go reports 0666 or 0444);
// the key's protection is the ACL of the user's profile directory.
func notPrivate(fs.FileInfo) string { return "" }
