package platform

import (
	"runtime"
	"testing"
)

// A window the desktop could not name (not shown yet, or a system with
// no such request) is left alone.
func TestKeepAboveWithoutAWindowDoesNothing(t *testing.T) {
	if err := KeepAbove(Window{}); err != nil {
		t.Errorf("KeepAbove(no window) = %v", err)
	}
}

// Under X11 without a display to talk to, KeepAbove says so instead of
// crashing; elsewhere an X11 ID means nothing and is ignored.
func TestKeepAboveWithoutAnXDisplay(t *testing.T) {
	t.Setenv("DISPLAY", "")
	err := KeepAbove(Window{X11: 0x400001})
	if x11Built && err == nil {
		t.Error("KeepAbove without an X display reported no error")
	}
	if !x11Built && err != nil {
		t.Errorf("KeepAbove on %s = %v, want nothing done", runtime.GOOS, err)
	}
}
