package platform

import "golang.org/x/sys/windows"

var setWindowPos = windows.NewLazySystemDLL("user32.dll").NewProc("SetWindowPos")

// keepAbove makes the window topmost, which keeps it above every window
// that is not: SetWindowPos(HWND_TOPMOST), neither moved nor resized.
func keepAbove(w Window) error {
	if w.HWND == 0 {
		return nil
	}
	const (
		swpNoSize = 0x0001
		swpNoMove = 0x0002
	)
	hwndTopmost := ^uintptr(0) // (HWND)-1
	if ok, _, err := setWindowPos.Call(w.HWND, hwndTopmost, 0, 0, 0, 0, swpNoMove|swpNoSize); ok == 0 {
		return err
	}
	return nil
}

const x11Built = false
