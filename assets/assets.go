// Package assets holds Deskhand's images, embedded in the binary.
package assets

import (
	_ "embed"

	"fyne.io/fyne/v2"
)

//go:embed icon.png
var iconPNG []byte

// Icon is the app's icon, also used in the tray.
var Icon = fyne.NewStaticResource("icon.png", iconPNG)
