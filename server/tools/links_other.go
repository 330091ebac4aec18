//go:build !unix && !windows

package tools

import "os"

// linkCount is how many names the open file has; this system does not
// say, so one.
func linkCount(*os.File) (uint64, error) { return 1, nil }
