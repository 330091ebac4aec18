//go:build !cgo

package store

// Without cgo go-sqlite3 is a stub whose Open says that it needs cgo, so
// no SQLite error can happen; this file only lets the package be
// type-checked for other systems (make cross).

type constraint int

const (
	uniqueViolated constraint = iota + 1
	checkViolated
	foreignKeyViolated
)

func isConstraint(error, constraint) bool { return false }

func isBusy(error) bool { return false }
