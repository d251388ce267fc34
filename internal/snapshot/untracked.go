package snapshot

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/whetstone-dev/whetstone/internal/gitrun"
)

// ExcludeState keeps whetstone's own runtime directory out of every pathspec,
// a snapshot's and the change's (internal/scope).
const ExcludeState = ":(exclude).whetstone"

// DefaultMaxUntracked is the size above which an untracked file is listed
// but never hashed into the object store (whetstone.json
// max_untracked_bytes): a capture file or a build artefact of hundreds of
// MiB would otherwise cost seconds and as many bytes in .git at every
// snapshot, for a file no reviewer can read anyway.
const DefaultMaxUntracked int64 = 4 << 20

// LargeFile is an untracked, non-ignored regular file above the size cap.
// Its content is never read: a snapshot records its size and modification
// time, which is what a later comparison looks at.
type LargeFile struct {
	Path  string `json:"path"`     // relative to the root, slash-separated
	Size  int64  `json:"size"`     // bytes
	MTime int64  `json:"mtime_ns"` // modification time, nanoseconds since 1970
	Mode  uint32 `json:"mode"`     // permission bits (the executable bit matters to git)
}

// Cap returns max, or DefaultMaxUntracked when max is not positive.
func Cap(max int64) int64 {
	if max <= 0 {
		return DefaultMaxUntracked
	}
	return max
}

// MiB renders a byte count for a message: "4 MiB", "1.5 MiB", "512 KiB".
func MiB(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// largeUntracked lists the untracked, non-ignored regular files under g's
// directory (.whetstone/ excluded) larger than max bytes, in path order.
// It reads only the file names git prints and their stat data. A symlink
// is never large: git records its target, not what it points to.
func largeUntracked(ctx context.Context, g gitrun.Git, max int64) ([]LargeFile, error) {
	out, err := g.Run(ctx, "ls-files", "--others", "--exclude-standard", "-z", "--", ".", ExcludeState)
	if err != nil {
		return nil, fmt.Errorf("list untracked files: %w", err)
	}
	var large []LargeFile
	for _, p := range strings.Split(string(out), "\x00") {
		if p == "" || strings.HasSuffix(p, "/") { // "dir/": an embedded repository
			continue
		}
		fi, err := os.Lstat(filepath.Join(g.Dir, filepath.FromSlash(p)))
		if err != nil || !fi.Mode().IsRegular() || fi.Size() <= max {
			continue // gone since git listed it: git add will not see it either
		}
		large = append(large, LargeFile{Path: p, Size: fi.Size(), MTime: fi.ModTime().UnixNano(), Mode: uint32(fi.Mode().Perm())})
	}
	slices.SortFunc(large, func(a, b LargeFile) int { return strings.Compare(a.Path, b.Path) })
	return large, nil
}

// addAll stages the work tree into tg's (temporary) index like `git add -A
// -- . :(exclude).whetstone`, leaving out the large files. The pathspecs go
// through standard input, so any number of large files fits.
func addAll(ctx context.Context, tg gitrun.Git, large []LargeFile) error {
	var specs bytes.Buffer
	specs.WriteString(".\x00" + ExcludeState + "\x00")
	for _, f := range large {
		specs.WriteString(":(exclude,literal)" + f.Path + "\x00")
	}
	if _, err := tg.RunInput(ctx, &specs, "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"); err != nil && !strings.Contains(err.Error(), ignoredNamed) {
		return fmt.Errorf("snapshot working tree: %w", err)
	}
	return nil
}

// ignoredNamed starts git add's complaint that a pathspec names an ignored
// path: .whetstone's exclusion does when the project ignores .whetstone/
// itself. git has added everything else and written the index by then,
// so the snapshot is whole; the other pathspecs ("." and large untracked
// files, which are not ignored) never draw it.
const ignoredNamed = "The following paths are ignored by one of your .gitignore files"

// WorkTree writes a tree object of the whole working tree (tracked, and
// untracked but not ignored, files) through a temporary copy of the index,
// without the untracked files larger than max bytes, which it returns. It
// is the tree reviewers see, so a file whose conversions the work tree's
// .gitattributes changed is recorded as on disk (asOnDisk).
func WorkTree(ctx context.Context, g gitrun.Git, max int64) (string, []LargeFile, error) {
	tree, large, _, err := keptWorkTree(ctx, g, max, "", false, true)
	return tree, large, err
}

// keptWorkTree is WorkTree starting from the index an earlier snapshot
// kept (seed, its checksum; "" for the user's index), which saves hashing
// the untracked files that did not change since (cache.go). With keep,
// its own index is kept for the next one and its checksum returned. With
// onDisk, files are recorded as on disk where the work tree's
// .gitattributes changed their conversions (asOnDisk); the tamper
// backstop's snapshots go without (a changed .gitattributes is a change
// it reports anyway, and restoring goes through git's conversions), which
// saves a git process on every concluding hook.
func keptWorkTree(ctx context.Context, g gitrun.Git, max int64, seed string, keep, onDisk bool) (tree string, large []LargeFile, sum string, err error) {
	large, err = largeUntracked(ctx, g, Cap(max))
	if err != nil {
		return "", nil, "", err
	}
	index, err := indexPath(ctx, g)
	if err != nil {
		return "", nil, "", err
	}
	src := cachedIndex(filepath.Dir(index), seed)
	fromCache := src != ""
	if !fromCache {
		src = index
	}
	// The kept index carries the date of the user's index that started the
	// chain: git re-reads every file changed since (its racy-clean rule),
	// exactly as it would from the user's index, so reuse trusts no stat
	// data that a snapshot from the user's index would not.
	var since time.Time
	if fi, err := os.Stat(src); err == nil {
		since = fi.ModTime()
	}
	err = owned(ctx, g, func(qg gitrun.Git) error {
		return withIndexCopy(qg, index, src, func(tg gitrun.Git, name string) error {
			if fromCache && len(large) > 0 {
				// A file that was small then and is large now: out of the tree.
				var paths bytes.Buffer
				for _, f := range large {
					paths.WriteString(f.Path + "\x00")
				}
				if _, err := tg.RunInput(ctx, &paths, "update-index", "-z", "--force-remove", "--stdin"); err != nil {
					return fmt.Errorf("snapshot: %w", err)
				}
			}
			if err := addAll(ctx, tg, large); err != nil {
				return err
			}
			if onDisk {
				if err := asOnDisk(ctx, tg); err != nil {
					return err
				}
			}
			var err error
			if tree, err = tg.Str(ctx, "write-tree"); err != nil {
				return fmt.Errorf("snapshot: %w", err)
			}
			if keep && os.Chtimes(name, since, since) == nil {
				if sum = keepIndex(name, len(tree)/2); sum != "" {
					recordIndex(ctx, g.Dir, filepath.Join(filepath.Dir(index), cachePrefix+sum))
				}
			}
			return nil
		})
	})
	return tree, large, sum, err
}

// largeChanges compares the large untracked files of two snapshots by size,
// modification time and permission bits; their content was never read.
// entries are the tree differences between the snapshots: a file that was
// large and is now small (or the other way round) is also an entry there,
// added or deleted, which covered names so that the file is reported once,
// as modified.
func largeChanges(before, after []LargeFile, entries []entry, max int64) (changes []Change, covered map[string]bool) {
	b, a := map[string]LargeFile{}, map[string]LargeFile{}
	for _, f := range before {
		b[f.Path] = f
	}
	for _, f := range after {
		a[f.Path] = f
	}
	inTree := map[string]bool{}
	for _, e := range entries {
		inTree[e.path] = true
	}
	size := MiB(Cap(max))
	covered = map[string]bool{}
	for _, p := range slices.Sorted(maps.Keys(union(b, a))) {
		was, inB := b[p]
		now, inA := a[p]
		c := Change{Path: p, Kind: KindModified}
		switch {
		case inB && inA && was == now:
			continue
		case inB && inA && was.Size == now.Size && was.MTime == now.MTime:
			c.Kind, c.Detail = KindMode, fmt.Sprintf("%o → %o (larger than %s, compared by size and time)", was.Mode, now.Mode, size)
		case inB && inA:
			c.Detail = fmt.Sprintf("larger than %s: size or modification time changed (%d → %d bytes)", size, was.Size, now.Size)
		case inB && inTree[p]:
			c.Detail, covered[p] = fmt.Sprintf("was larger than %s (%d bytes), now below it", size, was.Size), true
		case inB:
			c.Kind, c.Detail = KindDeleted, fmt.Sprintf("larger than %s (%d bytes)", size, was.Size)
		case inTree[p]:
			c.Detail, covered[p] = fmt.Sprintf("now larger than %s (%d bytes)", size, now.Size), true
		default:
			c.Kind, c.Detail = KindAdded, fmt.Sprintf("larger than %s (%d bytes), not read", size, now.Size)
		}
		changes = append(changes, c)
	}
	return changes, covered
}

func union[K comparable, V any](a, b map[K]V) map[K]V {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}
