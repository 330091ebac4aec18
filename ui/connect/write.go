package connect

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/deskhand/deskhand/store/atomicfile"
)

// backupInfix separates a file's name from the timestamp of its backups.
const backupInfix = ".deskhand-backup-"

// keepBackups is how many backups of each file are kept.
const keepBackups = 5

// file is a client's configuration file as read from disk.
type file struct {
	path    string      // the client's configuration file
	real    string      // where path leads, every link followed: what is read and written
	data    []byte      // its content
	existed bool        // false for a file still to be created
	mode    fs.FileMode // the existing file's permissions
}

// through is the real path when path is (or lies under) a link, else "".
func (fl file) through() string {
	if fl.real == fl.path {
		return ""
	}
	return fl.real
}

// open finds client's configuration file p (see resolve) and reads it.
func open(p string, env Env, f format) (file, error) {
	real, err := resolve(p, env)
	if err != nil {
		return file{path: p, real: p}, err
	}
	return load(p, real, f)
}

// load reads the configuration file p from real, where it leads (see
// inspect). A file larger than f reads is refused before it is read.
func load(p, real string, f format) (file, error) {
	fl := file{path: p, real: real}
	fi, err := inspect(p, real)
	if err != nil || fi == nil {
		return fl, err
	}
	limit := f.sizeLimit()
	if fi.Size() > limit {
		return fl, &LimitError{Path: p, Size: fi.Size(), Limit: limit}
	}
	fh, err := os.Open(real)
	if err != nil {
		return fl, fmt.Errorf("connect: %w", err)
	}
	defer fh.Close()
	// The file may grow while it is read: read one byte past the limit.
	data, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return fl, fmt.Errorf("connect: read %s: %w", real, err)
	}
	if err := checkSize(p, data, limit); err != nil {
		return fl, err
	}
	fl.data, fl.existed, fl.mode = data, true, fi.Mode().Perm()
	return fl, nil
}

// inspect returns what is at real, the real path of the configuration
// file p: nil when there is nothing yet. Only a regular file will do, and a
// link to nothing is refused rather than replaced by a file.
func inspect(p, real string) (fs.FileInfo, error) {
	fi, err := os.Lstat(real)
	if errors.Is(err, fs.ErrNotExist) {
		if li, err := os.Lstat(p); err == nil && li.Mode()&fs.ModeSymlink != 0 {
			return nil, &UnsafePathError{Path: p, Real: real, Problem: DanglingLink}
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, &UnsafePathError{Path: p, Real: real, Problem: NotRegular, Kind: kind(fi.Mode())}
	}
	return fi, nil
}

// commit backs up the file (when it existed) and atomically replaces it,
// at its real path, with data. The mode is 0600 when secret is set or the
// file is new, and the existing mode otherwise.
func commit(env Env, fl file, data []byte, secret bool) (backup string, err error) {
	path := fl.real
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("connect: %w", err)
	}
	mode := fs.FileMode(0o600)
	if fl.existed && !secret {
		mode = fl.mode
	}
	if fl.existed {
		backup = path + backupInfix + env.now().UTC().Format("20060102T150405.000000000Z")
		if err := writeAtomic(backup, fl.data, 0o600); err != nil {
			return "", err
		}
		pruneBackups(path)
	}
	if err := writeAtomic(path, data, mode); err != nil {
		return backup, err
	}
	return backup, nil
}

// writeAtomic replaces path with data (see atomicfile).
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	if err := atomicfile.Write(path, data, mode); err != nil {
		return fmt.Errorf("connect: writing %s: %w", path, err)
	}
	return nil
}

// pruneBackups removes all but the newest keepBackups backups of path.
func pruneBackups(path string) {
	list := backups(path)
	for len(list) > keepBackups {
		os.Remove(list[0])
		list = list[1:]
	}
}

// backups lists the backups of path, oldest first.
func backups(path string) []string {
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		return nil
	}
	prefix := filepath.Base(path) + backupInfix
	var out []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasPrefix(e.Name(), prefix) {
			out = append(out, filepath.Join(filepath.Dir(path), e.Name()))
		}
	}
	sort.Strings(out) // fixed-width UTC timestamps sort chronologically
	return out
}
