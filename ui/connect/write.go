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

	"github.com/deskhand/deskhand/internal/atomicfile"
)

// backupInfix separates a file's name from the timestamp of its backups.
const backupInfix = ".deskhand-backup-"

// keepBackups is how many backups of each file are kept.
const keepBackups = 5

// load reads the file at p, following a symbolic link so that the link is
// kept and its target edited. target is the path to write to. A file
// larger than f reads is refused before it is read.
func load(p string, f format) (target string, data []byte, existed bool, err error) {
	target = p
	if t, err := filepath.EvalSymlinks(p); err == nil {
		target = t
	}
	fh, err := os.Open(target)
	if errors.Is(err, fs.ErrNotExist) {
		return target, nil, false, nil
	}
	if err != nil {
		return target, nil, false, fmt.Errorf("connect: %w", err)
	}
	defer fh.Close()
	limit := f.sizeLimit()
	if fi, err := fh.Stat(); err == nil && fi.Size() > limit {
		return target, nil, false, &LimitError{Path: p, Size: fi.Size(), Limit: limit}
	}
	// The file may grow while it is read: read one byte past the limit.
	data, err = io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return target, nil, false, fmt.Errorf("connect: read %s: %w", p, err)
	}
	if err := checkSize(p, data, limit); err != nil {
		return target, nil, false, err
	}
	return target, data, true, nil
}

// commit backs up old (when the file existed) and atomically replaces path
// with data. The mode is 0600 when secret is set or the file is new, and
// the existing mode otherwise.
func commit(env Env, path string, old []byte, existed bool, data []byte, secret bool) (backup string, err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("connect: %w", err)
	}
	mode := fs.FileMode(0o600)
	if existed && !secret {
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
	}
	if existed {
		backup = path + backupInfix + env.now().UTC().Format("20060102T150405.000000000Z")
		if err := writeAtomic(backup, old, 0o600); err != nil {
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
