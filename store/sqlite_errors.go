//go:build cgo

package store

import (
	"errors"

	"github.com/mattn/go-sqlite3"
)

// The driver's error codes exist only where the driver does (with cgo);
// sqlite_errors_nocgo.go lets the package be type-checked for other
// systems without a C compiler for them (make cross).

// constraint is a kind of SQLite constraint violation.
type constraint = sqlite3.ErrNoExtended

var (
	uniqueViolated     = sqlite3.ErrConstraintUnique
	checkViolated      = sqlite3.ErrConstraintCheck
	foreignKeyViolated = sqlite3.ErrConstraintForeignKey
)

// isConstraint reports whether err is that constraint's violation.
func isConstraint(err error, c constraint) bool {
	var serr sqlite3.Error
	return errors.As(err, &serr) && serr.ExtendedCode == c
}

func isBusy(err error) bool {
	var serr sqlite3.Error
	return errors.As(err, &serr) && (serr.Code == sqlite3.ErrBusy || serr.Code == sqlite3.ErrLocked)
}
