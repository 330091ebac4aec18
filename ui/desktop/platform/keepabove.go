package platform

// Window is a window as the OS's window system names it; the desktop fills
// in the field of the system it runs on (fyne's RunNative tells which).
type Window struct {
	X11  uintptr // an X11 window ID (Linux and the BSDs under X11)
	HWND uintptr // a Windows window handle
}

// KeepAbove asks the window system to keep w above other windows, so that
// a question's popup is not lost behind the main window. Where there is no
// such request (macOS, Wayland, or a window not yet shown) it does nothing.
func KeepAbove(w Window) error {
	return keepAbove(w)
}
