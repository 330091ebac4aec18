package main

import (
	"errors"
	"os"
)

// osReason is the OS's own words for a file error ("read-only file
// system"), without the path and operation around them.
func osReason(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
