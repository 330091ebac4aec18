//go:build !unix

package control

import "net"

// listenPrivate listens on an AF_UNIX socket in the data folder. Where
// there is no umask (Windows), the socket is as private as that folder,
// which lives in the user's profile; an explicit owner-only ACL is still
// to come (issue 14).
func listenPrivate(path string) (net.Listener, error) {
	return net.Listen("unix", path)
}
