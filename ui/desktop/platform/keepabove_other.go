//go:build !windows && (darwin || !unix || !cgo)

package platform

// keepAbove does nothing here: macOS windows come as no X11 ID or HWND
// (fyne gives no level to set), and without cgo there is no Xlib to ask.
func keepAbove(Window) error { return nil }

const x11Built = false
