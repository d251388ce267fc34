package snapshot

import (
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A snapshot's temporary index is kept for the next snapshot, so that an
// untracked file that did not change is not read and hashed again: git
// trusts an index entry whose stat data (size, mtime, ctime, inode) still
// match the file and whose mtime is older than the index file's own (the
// kept index keeps the date of the user's index, keptWorkTree). The copy lives in the git directory beside the user's
// index, named by the index's own trailing checksum, which Snapshot.Cache
// records; the snapshot sits in the sealed state, so a copy that was
// replaced or changed since (git checks the checksum against the content
// when it reads an index) is never used. A missing or stale copy costs only
// the hashing it would have saved.
const (
	cachePrefix = "whetstone-snapshot-"
	// cacheAge is how old a kept index may grow before a new baseline
	// (Take) removes it: one no owner recorded (Release removes an
	// owner's when its run ends), such as an older whetstone's.
	cacheAge = 24 * time.Hour
)

// cachedIndex returns the path of the kept index whose checksum is sum, or
// "" when there is none that can be trusted.
func cachedIndex(dir, sum string) string {
	if len(sum) != 40 && len(sum) != 64 || strings.Trim(sum, "0123456789abcdef") != "" || strings.Trim(sum, "0") == "" {
		return ""
	}
	p := filepath.Join(dir, cachePrefix+sum)
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	if trailer(p, len(sum)/2) != sum {
		return ""
	}
	return p
}

// trailer is the hex of the last n bytes of the file at p: an index's
// checksum of everything before it.
func trailer(p string, n int) string {
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, n)
	if _, err := f.Seek(-int64(n), io.SeekEnd); err != nil {
		return ""
	}
	if _, err := io.ReadFull(f, buf); err != nil {
		return ""
	}
	return hex.EncodeToString(buf)
}

// keepIndex moves a snapshot's temporary index to the cache and returns
// its checksum ("" when it cannot: the next snapshot starts from the user's
// index, as the first did). sumLen is the checksum's length in bytes (20
// for SHA-1 repositories, 32 for SHA-256).
func keepIndex(tmp string, sumLen int) string {
	sum := trailer(tmp, sumLen)
	if strings.Trim(sum, "0") == "" {
		return "" // none, or index.skipHash: nothing vouches for the content
	}
	if os.Rename(tmp, filepath.Join(filepath.Dir(tmp), cachePrefix+sum)) != nil {
		return ""
	}
	return sum
}

// dropIndex removes a kept index that a newer one replaced.
func dropIndex(dir, sum string) {
	if p := cachedIndex(dir, sum); p != "" {
		os.Remove(p)
	}
}

// pruneIndexes removes from dir the kept indexes older than cacheAge and
// what a whetstone killed mid-hook left there: a temporary index
// (withIndexCopy) or a run's directory being removed (Release). No hook
// lasts a day, so none of them is in use.
func pruneIndexes(dir string, now time.Time) {
	for _, prefix := range []string{cachePrefix, "whetstone-index-", dropPrefix} {
		names, _ := filepath.Glob(filepath.Join(dir, prefix+"*"))
		for _, p := range names {
			if fi, err := os.Lstat(p); err == nil && now.Sub(fi.ModTime()) > cacheAge {
				os.RemoveAll(p)
			}
		}
	}
}
