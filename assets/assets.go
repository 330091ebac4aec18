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
	//go:embed paused.png
	pausedPNG []byte
	//go:embed question.png
	questionPNG []byte
)

// The app's icon, and the tray's while serving, paused, or with a question
// waiting for the person.
var (
	Icon         = fyne.NewStaticResource("icon.png", iconPNG)
	PausedIcon   = fyne.NewStaticResource("paused.png", pausedPNG)
	QuestionIcon = fyne.NewStaticResource("question.png", questionPNG)
)
