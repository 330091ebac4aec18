//go:build !unix && !windows

package control

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// SocketPath is where the control socket of the data folder dataDir is:
// dataDir/deskhand.sock, as on Unix.
func SocketPath(dataDir string) string { return filepath.Join(dataDir, socketName) }

func makeSocketFolder(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create data folder: %w", err)
	}
	return nil
}

// listenPrivate listens on a socket in the data folder. These systems (not
// Unix, not Windows) have no umask: the socket is as private as the folder.
func listenPrivate(path string) (net.Listener, error) {
	return net.Listen("unix", path)
}
