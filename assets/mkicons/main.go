// Command mkicons draws Deskhand's icons (a white D on a teal disc; grey
// while paused; with an orange dot while a question waits) into the
// current folder: the app's at 256 pixels, the tray's (all three) at 64.
// Run by "go generate" in assets.
package main

import (
	"image"
	"image/color"
	"image/png"
	"log"
	"math"
	"os"

	"golang.org/x/image/draw"
)

// trayPixels is the tray icons' size. A tray shows 16 to 48 pixels; each
// change of the tray's icon sends its pixels whole over D-Bus from fyne's
// goroutine (256 KB at 256 pixels, 16 KB at 64).
const trayPixels = 64

// ringX is inside the D's bowl: between two ellipses.
func ringX(x, y float64) bool { return x*x/(80*80)+y*y/(70*70) < 1 && x*x/(52*52)+y*y/(42*42) > 1 }

// icon draws one variant of the icon at 256 pixels.
func icon(variant string) *image.NRGBA {
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
	return img
}

// scaled is img at n pixels a side.
func scaled(img image.Image, n int) image.Image {
	small := image.NewNRGBA(image.Rect(0, 0, n, n))
	draw.CatmullRom.Scale(small, small.Bounds(), img, img.Bounds(), draw.Src, nil)
	return small
}

func write(file string, img image.Image) {
	f, err := os.Create(file)
	if err != nil {
		log.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}

func main() {
	write("icon.png", icon("serving"))
	for variant, file := range map[string]string{"serving": "tray.png", "paused": "tray-paused.png", "question": "tray-question.png"} {
		write(file, scaled(icon(variant), trayPixels))
	}
}
