//go:build unix

package tools

import (
	"os"
	"syscall"
)

// linkCount is how many names the open file has.
func linkCount(f *os.File) (uint64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 1, nil
	}
	return uint64(st.Nlink), nil
}
