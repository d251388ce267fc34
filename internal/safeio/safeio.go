// Package safeio reads and writes whetstone's files defensively: a file must
// be a regular file (a FIFO or a device is refused without blocking), every
// read has a size cap, and whetstone's own files are opened without following
// symlinks, so nothing under .whetstone/ can be redirected out of the project.
package safeio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrTooLarge is returned when a file is larger than the cap of its read.
var ErrTooLarge = errors.New("file too large")

// ErrNotRegular is returned for a directory, FIFO, socket or device where a
// regular file was expected.
var ErrNotRegular = errors.New("not a regular file")

// ErrSymlink is returned when a path that must not be a symlink is one.
var ErrSymlink = errors.New("is a symlink")

// Open opens path for reading. It never blocks on a FIFO (the open is
// non-blocking and the result must be a regular file), and when nofollow is
// set a symlink as the last element is refused.
func Open(path string, nofollow bool) (*os.File, error) {
	return openRegular(path, openFlags(nofollow), nofollow)
}

// openRegular opens path with flags and keeps it only if it is a regular
// file; nofollow says whether a final symlink was refused by the flags.
func openRegular(path string, flags int, nofollow bool) (*os.File, error) {
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		if nofollow && isLoop(err) {
			return nil, fmt.Errorf("%s: %w", path, ErrSymlink)
		}
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, kind(info.Mode()))
	}
	return f, nil
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return m.Type().String()
}

// ReadFile reads a regular file of at most limit bytes. With nofollow, a
// symlink as its last element is refused.
func ReadFile(path string, limit int64, nofollow bool) ([]byte, error) {
	f, err := Open(path, nofollow)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := int64(0)
	if info, err := f.Stat(); err == nil {
		size = info.Size()
	}
	return readAll(f, path, limit, size)
}

// readAll reads r to its end, at most limit bytes, into a buffer sized for
// size bytes (the file's size when it was opened), so a large file is not
// copied as the buffer grows.
func readAll(r io.Reader, path string, limit, size int64) ([]byte, error) {
	data := make([]byte, 0, min(max(size, 512), limit)+1)
	for {
		n, err := r.Read(data[len(data):min(int64(cap(data)), limit+1)])
		data = data[:len(data)+n]
		if int64(len(data)) > limit || err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // grew since it was opened
		}
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: %w (over %d bytes)", path, ErrTooLarge, limit)
	}
	return data, nil
}

// ReadOwn reads one of whetstone's own files under root (a path below
// root/.whetstone): no element between root and the file may be a symlink,
// and the file must be regular and at most limit bytes.
func ReadOwn(root, path string, limit int64) ([]byte, error) {
	if err := NoSymlinks(root, filepath.Dir(path)); err != nil {
		return nil, err
	}
	return ReadFile(path, limit, true)
}

// ReadIn reads a project file (such as whetstone.json): symlinks are
// followed, but the file they lead to must be inside root.
func ReadIn(root, path string, limit int64) ([]byte, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	if !Within(realRoot, real) {
		return nil, fmt.Errorf("%s leads to %s, outside the project", path, real)
	}
	return ReadFile(real, limit, true)
}

// Within reports whether path is root or below it (both cleaned, absolute).
func Within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// NoSymlinks checks that no existing element of dir below root is a symlink
// (root itself may be one: it is where the user put the project). Missing
// elements are fine: they will be created as directories.
func NoSymlinks(root, dir string) error {
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%s is outside %s", dir, root)
	}
	if rel == "." {
		return nil
	}
	cur := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		info, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s: %w; whetstone does not follow symlinks in its own directory", cur, ErrSymlink)
		}
		if !info.IsDir() {
			return fmt.Errorf("%s is not a directory", cur)
		}
	}
	return nil
}
