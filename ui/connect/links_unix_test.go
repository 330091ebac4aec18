//go:build unix

package connect

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestLinksToSpecialFilesRefused: a link to a named pipe (whose reading
// would block) or to a device is refused without opening it.
func TestLinksToSpecialFilesRefused(t *testing.T) {
	tests := []struct {
		name, kind string
		target     func(t *testing.T, dir string) string
	}{
		{"named pipe", "a named pipe", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "pipe")
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Skip(err)
			}
			return p
		}},
		{"device", "a device", func(*testing.T, string) string { return "/dev/null" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := testEnv(t)
			p, _ := Path(Cursor, env)
			symlink(t, tc.target(t, env.Home), p)
			_, err := Connect(Cursor, env, entryFor(Cursor))
			var ue *UnsafePathError
			if !errors.As(err, &ue) || ue.Problem != NotRegular || !strings.Contains(err.Error(), tc.kind) {
				t.Fatalf("error = %v, want %s refused", err, tc.kind)
			}
		})
	}
}
