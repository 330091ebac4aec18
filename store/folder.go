package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/deskhand/deskhand/server/agent"
)

// DefaultDir is the data folder unless the person chose another: the
// user's configuration folder's Deskhand.
func DefaultDir() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return filepath.Join(".", "deskhand-data")
	}
	return filepath.Join(dir, "Deskhand")
}

// OpenIn opens the database of the data folder dir, creating the folder
// (mode 0700) when it is missing; its errors say, for a person, what is
// wrong with the folder or the file and what to do.
func OpenIn(ctx context.Context, dir string) (*DB, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, agent.Userf(err, "cannot create the data folder %s", dir)
	}
	probe, err := os.CreateTemp(dir, ".write-check-*")
	if err != nil {
		return nil, agent.Userf(err, "the data folder %s cannot be written (%s): Deskhand keeps its database there; make it writable or choose another folder with --data", dir, osReason(err))
	}
	probe.Close()
	os.Remove(probe.Name())
	db, err := Open(ctx, filepath.Join(dir, FileName))
	if errors.Is(err, ErrBusy) {
		return nil, agent.Userf(err, "the database in %s is locked by another program (a database browser, or a copy of Deskhand the control channel does not reach): close it and try again", dir)
	}
	if err != nil {
		return nil, agent.Userf(err, "cannot open the database in %s", dir)
	}
	return db, nil
}

// osReason is the OS's own words for a file error ("read-only file
// system"), without the path and operation around them.
func osReason(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
