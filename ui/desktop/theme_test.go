package desktop

import (
	"image/color"
	"math"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// TestSecondaryTextIsReadable: the colour of low-importance labels stands
// out from the background by WCAG AA's 4.5:1 in both variants, and from
// the foreground too, so that disabled still looks disabled (the light
// variant's foreground is a dark grey, not black: 1.5:1 is what room is
// left between it and 4.5:1 from white).
func TestSecondaryTextIsReadable(t *testing.T) {
	th := readableTheme{theme.DefaultTheme()}
	for _, v := range []fyne.ThemeVariant{theme.VariantDark, theme.VariantLight} {
		secondary := th.Color(theme.ColorNameDisabled, v)
		if r := contrast(secondary, th.Color(theme.ColorNameBackground, v)); r < 4.5 {
			t.Errorf("variant %d: secondary text on the background is %.2f:1, under 4.5:1", v, r)
		}
		if r := contrast(secondary, th.Color(theme.ColorNameForeground, v)); r < 1.5 {
			t.Errorf("variant %d: secondary text is %.2f:1 from the foreground: disabled would not show", v, r)
		}
	}
}

// contrast is WCAG 2's contrast ratio of two colours.
func contrast(a, b color.Color) float64 {
	la, lb := luminance(a), luminance(b)
	return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
}

func luminance(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	lin := func(v uint32) float64 {
		s := float64(v) / 0xffff
		if s <= 0.04045 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(r) + 0.7152*lin(g) + 0.0722*lin(b)
}
