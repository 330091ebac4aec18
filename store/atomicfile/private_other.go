//go:build !windows

package atomicfile

import (
	"errors"
	"io/fs"
	"os"
)

// createTemp creates a new file in dir named prefix+random+suffix with
// mode. os.CreateTemp makes it 0600, so it is never wider than asked for.
func createTemp(dir, prefix, suffix string, mode fs.FileMode) (*os.File, error) {
	f, err := os.CreateTemp(dir, prefix+"*"+suffix)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

func mkdirPrivate(path string) error {
	if err := os.MkdirAll(path, 0o700); err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return errors.New("not a folder")
	}
	if private(fi.Mode().Perm()) {
		return nil
	}
	return os.Chmod(path, 0o700)
}
