// Command mkicons draws Deskhand's icons (a white D on a teal disc; grey
// while paused; with an orange dot while a question waits) into the
// current folder. Run by "go generate" in assets.
package main

import (
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
)

// ringX is inside the D's bowl: between two ellipses.
func ringX(x, y float64) bool { return x*x/(80*80)+y*y/(70*70) < 1 && x*x/(52*52)+y*y/(42*42) > 1 }

// draw writes one variant of the icon.
func draw(file, variant string) {
	const n = 256
	img := image.NewNRGBA(image.Rect(0, 0, n, n))
	c := float64(n) / 2
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			dx, dy := float64(x)-c+0.5, float64(y)-c+0.5
			d := math.Hypot(dx, dy)
			switch {
			case d > c-2:
				img.Set(x, y, color.NRGBA{0, 0, 0, 0})
			case dx > -62 && dx < -34 && math.Abs(dy) < 70, // the D's stem
				dx >= -34 && ringX(dx+34, dy):
				img.Set(x, y, color.NRGBA{255, 255, 255, 255})
			default:
				img.Set(x, y, color.NRGBA{0x14, 0x8f, 0x8a, 255})
			}
		}
	}
	switch variant {
	case "paused": // grey: nothing is served
		for y := 0; y < n; y++ {
			for x := 0; x < n; x++ {
				c := img.NRGBAAt(x, y)
				if c.A > 0 && c != (color.NRGBA{255, 255, 255, 255}) {
					img.Set(x, y, color.NRGBA{0x70, 0x70, 0x70, 255})
				}
			}
		}
	case "question": // an orange dot: someone is waiting for you
		for y := 0; y < n; y++ {
			for x := 0; x < n; x++ {
				if math.Hypot(float64(x)-200, float64(y)-56) < 50 {
					img.Set(x, y, color.NRGBA{0xf0, 0x8c, 0x00, 255})
				}
			}
		}
	}
	f, _ := os.Create(file)
	defer f.Close()
	png.Encode(f, img)
}

func main() {
	draw("icon.png", "serving")
	draw("paused.png", "paused")
	draw("question.png", "question")
}
