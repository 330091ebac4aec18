package control

import (
	"net"
	"path/filepath"

	"github.com/deskhand/deskhand/store/atomicfile"
)

// SocketPath is where the control socket of the data folder dataDir is:
// on Windows, dataDir\control\deskhand.sock, in a folder of its own whose
// access list keeps it the user's (see the package comment).
func SocketPath(dataDir string) string { return filepath.Join(dataDir, "control", socketName) }

// makeSocketFolder creates the socket's folder, or takes it back: every
// time, its access list is set to admit only the current user, inherit
// nothing from the data folder, and pass on to the socket created in it.
// Windows lets anyone traverse a folder, so it is the socket file's own
// list, inherited from here, that refuses other users' connections; the
// folder's keeps them from creating, replacing or removing what is in it.
func makeSocketFolder(dir string) error { return atomicfile.MkdirPrivate(dir) }

// listenPrivate listens on an AF_UNIX socket (Windows 10 1803 and later);
// it inherits the owner-only access list of its folder.
func listenPrivate(path string) (net.Listener, error) {
	return net.Listen("unix", path)
}
