// Package assets holds Deskhand's images, embedded in the binary.
package assets

import (
	_ "embed"

	"fyne.io/fyne/v2"
)

//go:generate go run ./mkicons

var (
	//go:embed icon.png
	iconPNG []byte
	//go:embed tray.png
	trayPNG []byte
	//go:embed tray-paused.png
	trayPausedPNG []byte
	//go:embed tray-question.png
	trayQuestionPNG []byte
)

// Icon is the app's icon, at 256 pixels.
var Icon = fyne.NewStaticResource("icon.png", iconPNG)

// The tray's icons while serving, paused, or with a question waiting for
// the person, at 64 pixels: each change of the tray's icon sends its
// pixels whole (over D-Bus on Linux) from fyne's goroutine.
var (
	TrayIcon         = fyne.NewStaticResource("tray.png", trayPNG)
	TrayPausedIcon   = fyne.NewStaticResource("tray-paused.png", trayPausedPNG)
	TrayQuestionIcon = fyne.NewStaticResource("tray-question.png", trayQuestionPNG)
)
