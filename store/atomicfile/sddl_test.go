package atomicfile

import (
	"io/fs"
	"testing"
)

// TestOwnerOnlySDDL: the access lists Windows gets, as strings, so they are
// checked on every OS.
func TestOwnerOnlySDDL(t *testing.T) {
	const sid = "S-1-5-21-1004336348-1177238915-682003330-1001"
	for _, tc := range []struct {
		folder bool
		want   string
	}{
		{false, "D:P(A;;FA;;;" + sid + ")"},
		{true, "D:P(A;OICI;FA;;;" + sid + ")"},
	} {
		if got := ownerOnlySDDL(sid, tc.folder); got != tc.want {
			t.Errorf("ownerOnlySDDL(folder %v) = %q, want %q", tc.folder, got, tc.want)
		}
	}
}

func TestPrivate(t *testing.T) {
	for mode, want := range map[uint32]bool{0o600: true, 0o400: true, 0o700: true, 0o640: false, 0o644: false, 0o602: false} {
		if got := private(fs.FileMode(mode)); got != want {
			t.Errorf("private(%o) = %v, want %v", mode, got, want)
		}
	}
}
