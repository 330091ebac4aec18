// Package atomicfile replaces a file whole: a crash leaves either the old
// file or the new one, never a part of either.
package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// Write writes data to a temporary file in path's folder (".NAME.*.tmp"),
// with mode, syncs it, renames it over path and syncs the folder. It
// refuses a path that is a symbolic link, which the rename would replace
// with a file: write to where the link leads instead.
func Write(path string, data []byte, mode fs.FileMode) (err error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link: write the file it leads to", path)
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	// Windows has no such modes; its ACLs already keep the file the user's.
	if err = f.Chmod(mode); err != nil && runtime.GOOS != "windows" {
		return err
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	SyncDir(dir)
	return nil
}

// SyncDir makes a rename or a removal in dir durable. Best effort: Windows
// cannot sync a folder.
func SyncDir(dir string) {
	if runtime.GOOS == "windows" {
		return
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
