// Package atomicfile writes files whole and keeps private files private on
// every OS. A crash during Write leaves either the old file or the new one,
// never a part of either. A file written with a mode that grants nothing to
// group or others is the user's alone: on Unix through its mode, on Windows
// (where modes mean nothing) through an access list that names only the
// current user and inherits nothing from the folder. MkdirPrivate does the
// same for a folder.
package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Write writes data to a temporary file in path's folder (".NAME.*.tmp"),
// with mode, syncs it, renames it over path and syncs the folder. It
// refuses a path that is a symbolic link, which the rename would replace
// with a file: write to where the link leads instead.
//
// When mode grants nothing to group or others (0600, 0400), the file is
// private from its creation, before any data is in it: on Windows its
// access list admits only the current user (not the folder's inherited
// entries, which may admit other users or Administrators).
func Write(path string, data []byte, mode fs.FileMode) (err error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link: write the file it leads to", path)
	}
	dir := filepath.Dir(path)
	f, err := createTemp(dir, "."+filepath.Base(path)+".", ".tmp", mode)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
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
func SyncDir(dir string) { syncDir(dir) }

// MkdirPrivate creates the folder at path, and any missing parents, and
// makes it the current user's alone: mode 0700 on Unix; on Windows an
// access list that admits only the current user, is inherited by what is
// created inside, and inherits nothing from the parents. It does so for a
// folder that already exists too (a wider mode is narrowed to 0700, the
// access list is replaced), so use it only on folders that are Deskhand's
// own, such as the control socket's. Parents it creates get the usual 0700 on
// Unix and their parent's access list on Windows.
func MkdirPrivate(path string) error {
	if err := mkdirPrivate(path); err != nil {
		return fmt.Errorf("make folder %s private: %w", path, err)
	}
	return nil
}

// private reports whether mode keeps a file from everyone but its owner.
func private(mode fs.FileMode) bool { return mode&0o077 == 0 }

// ownerOnlySDDL is the Windows security descriptor, in SDDL, that gives
// the user with the given SID full access and no one else any: "P" protects
// the access list from the parent's inheritable entries. A folder's entry
// is inherited by the files ("OI") and folders ("CI") created in it.
func ownerOnlySDDL(sid string, folder bool) string {
	inherit := ""
	if folder {
		inherit = "OICI"
	}
	return "D:P(A;" + inherit + ";FA;;;" + sid + ")"
}
