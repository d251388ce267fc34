package snapshot

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// keeper copies the user's files aside before Restore removes or
// overwrites them, so that a restore never loses the user's work: what a
// read-only phase's writes and the user's own edits left in the work tree
// is in dir, at the same relative paths, and `cp -a dir/. root` brings it
// back (docs/design.md, "Restore").
type keeper struct {
	src  *os.Root
	dir  string
	kept []string
}

// keep copies p (a regular file or a symlink, as it is now) into k.dir. A
// path that does not exist, or is a directory (Restore never removes a
// directory that is not empty), needs no copy. Anything else (a FIFO, a
// device) is an error: Restore then leaves it alone.
func (k *keeper) keep(p string) error {
	if err := checkParents(k.src, p); err != nil {
		return err
	}
	name := filepath.FromSlash(p)
	fi, err := k.src.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.IsDir():
		return nil
	}
	dst := filepath.Join(k.dir, name)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("no copy could be kept: %w", err)
	}
	if err := os.Remove(dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no copy could be kept: %w", err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := k.src.Readlink(name)
		if err == nil {
			err = os.Symlink(target, dst)
		}
		if err != nil {
			return fmt.Errorf("no copy could be kept: %w", err)
		}
	case fi.Mode().IsRegular():
		if err := copyFile(k.src, name, dst, fi); err != nil {
			return fmt.Errorf("no copy could be kept: %w", err)
		}
	default:
		return fmt.Errorf("a %s, of which no copy can be kept: not restored", fi.Mode().Type())
	}
	k.kept = append(k.kept, p)
	return nil
}

// copyFile copies the regular file name of src to dst (which does not
// exist), with its mode and modification time.
func copyFile(src *os.Root, name, dst string, fi fs.FileInfo) error {
	in, err := src.Open(name)
	if err != nil {
		return err
	}
	defer in.Close()
	if info, err := in.Stat(); err != nil || !info.Mode().IsRegular() {
		return fmt.Errorf("%s changed while it was copied", name)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Chtimes(dst, fi.ModTime(), fi.ModTime())
}
