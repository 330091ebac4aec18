//go:build unix

package control

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
)

// SocketPath is where the control socket of the data folder dataDir is:
// on Unix, dataDir/deskhand.sock.
func SocketPath(dataDir string) string { return filepath.Join(dataDir, socketName) }

// makeSocketFolder makes the folder the socket goes in (the data folder)
// if it is missing. Its mode is not what keeps the socket private (the
// socket's own is): an existing folder is left as it is.
func makeSocketFolder(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create data folder: %w", err)
	}
	return nil
}

// listenPrivate listens on a Unix socket that only this user can open:
// the umask makes it 0600 from the start (a chmod after would race).
func listenPrivate(path string) (net.Listener, error) {
	old := syscall.Umask(0o177)
	defer syscall.Umask(old)
	return net.Listen("unix", path)
}
