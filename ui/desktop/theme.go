package desktop

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// readableTheme is fyne's theme with secondary text people can read.
// Low-importance labels (a row's second line, hints, summaries) take
// fyne's "disabled" colour, which is nearly the background's (1.6:1 on
// the dark variant); here it meets WCAG AA's 4.5:1, and disabled buttons
// still read as disabled beside the foreground's white or black.
type readableTheme struct{ fyne.Theme }

func (t readableTheme) Color(name fyne.ThemeColorName, variant fyne.ThemeVariant) color.Color {
	if name == theme.ColorNameDisabled {
		if variant == theme.VariantLight {
			return color.NRGBA{R: 0x75, G: 0x75, B: 0x75, A: 0xff}
		}
		return color.NRGBA{R: 0x8c, G: 0x8c, B: 0x8c, A: 0xff}
	}
	return t.Theme.Color(name, variant)
}
