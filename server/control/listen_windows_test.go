package control_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/deskhand/deskhand/server/control"
)

// onlyUser fails t unless every entry of path's access list is the current
// user's, and, when protected, unless the list inherits nothing.
func onlyUser(t *testing.T, path string, protected bool) {
	t.Helper()
	user, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		t.Fatal(err)
	}
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		t.Fatal(err)
	}
	sddl := sd.String()
	if !strings.Contains(sddl, user.User.Sid.String()) {
		t.Errorf("%s: %s does not name the user %s", path, sddl, user.User.Sid)
	}
	if protected {
		control, _, err := sd.Control()
		if err != nil {
			t.Fatal(err)
		}
		if control&windows.SE_DACL_PROTECTED == 0 {
			t.Errorf("%s: %s inherits from the data folder", path, sddl)
		}
	}
	dacl, _, err := sd.DACL()
	if err != nil || dacl == nil {
		t.Fatalf("%s: no access list (%v): everyone may open it", path, err)
	}
	for i := range uint32(dacl.AceCount) {
		var ace *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, i, &ace); err != nil {
			t.Fatal(err)
		}
		if sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart)); !sid.Equals(user.User.Sid) {
			t.Errorf("%s: %s admits %s too", path, sddl, sid)
		}
	}
}

// TestSocketIsPrivate: on Windows the socket is in the data folder's
// "control" folder, which admits only the user, even when it was there
// before with a wider list, and the socket inherits that.
func TestSocketIsPrivate(t *testing.T) {
	path := socketPath(t)
	folder := filepath.Dir(path)
	if want := filepath.Join(filepath.Dir(folder), "control", "deskhand.sock"); path != want {
		t.Fatalf("socket path %s, want %s", path, want)
	}
	if err := os.Mkdir(folder, 0o755); err != nil { // inherits the data folder's list
		t.Fatal(err)
	}
	listen(t, path, newCore(t))
	onlyUser(t, folder, true)
	onlyUser(t, path, false)
	if _, err := control.Dial(path); err != nil {
		t.Error(err)
	}
}
