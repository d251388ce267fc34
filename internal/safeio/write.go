package safeio

import (
	"cmp"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteOptions say how WriteAtomic writes a file.
type WriteOptions struct {
	// Perm is the file's mode; 0 means 0o644.
	Perm fs.FileMode
	// Durable fsyncs the file before the rename and its directory after.
	Durable bool
	// Temp creates the temp file in dir; nil means a fresh os.CreateTemp
	// (O_EXCL, so never an existing file or a symlink's target).
	Temp func(dir string) (*os.File, error)
}

// WriteAtomic replaces path with data: the data goes to a temp file in the
// same directory, which is renamed over path, so a reader sees the old file
// or the new one, never a part. On any error the old file is untouched and
// the temp removed. A symlink at path is replaced, not followed. The
// directory must exist.
func WriteAtomic(path string, data []byte, o WriteOptions) (err error) {
	dir := filepath.Dir(path)
	create := o.Temp
	if create == nil {
		create = func(dir string) (*os.File, error) { return os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*") }
	}
	f, err := create(dir)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if o.Durable {
		if err = f.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", path, err)
		}
	}
	if err = f.Chmod(cmp.Or(o.Perm, 0o644)); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("rename into %s: %w", path, err)
	}
	if o.Durable {
		SyncDir(dir)
	}
	return nil
}

// SyncDir makes a rename or link in dir durable; where directories cannot
// be opened or synced (Windows), the rename is as durable as it gets.
func SyncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}
