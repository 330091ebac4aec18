//go:build unix

package control

import (
	"net"
	"syscall"
)

// listenPrivate listens on a Unix socket that only this user can open:
// the umask makes it 0600 from the start (a chmod after would race).
func listenPrivate(path string) (net.Listener, error) {
	old := syscall.Umask(0o177)
	defer syscall.Umask(old)
	return net.Listen("unix", path)
}
