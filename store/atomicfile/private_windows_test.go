package atomicfile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/deskhand/deskhand/store/atomicfile"
)

// ownerOnly fails t unless path's access list is protected from
// inheritance and admits only the current user.
func ownerOnly(t *testing.T, path string) {
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
	control, _, err := sd.Control()
	if err != nil {
		t.Fatal(err)
	}
	if control&windows.SE_DACL_PROTECTED == 0 {
		t.Errorf("%s: %s inherits from its folder", path, sddl)
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

func TestWriteIsOwnerOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secrets.json")
	for range 2 { // created, then replaced
		if err := atomicfile.Write(path, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
		ownerOnly(t, path)
	}
}

func TestMkdirPrivateIsOwnerOnly(t *testing.T) {
	root := t.TempDir()
	fresh, existing := filepath.Join(root, "a", "fresh"), filepath.Join(root, "existing")
	if err := os.Mkdir(existing, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{fresh, existing, fresh} {
		if err := atomicfile.MkdirPrivate(dir); err != nil {
			t.Fatal(err)
		}
		ownerOnly(t, dir)
	}
	// What is created inside inherits the owner's entry alone.
	inside := filepath.Join(existing, "shared.json")
	if err := atomicfile.Write(inside, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	sd, err := windows.GetNamedSecurityInfo(inside, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(sd.String(), "("); n != 1 {
		t.Errorf("%s: %s has %d entries, want the owner's one", inside, sd, n)
	}
}
