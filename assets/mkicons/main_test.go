package main

import (
	"bytes"
	"image"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// TestIconsAreWhatItDraws: the icons in assets are what mkicons draws now
// (after changing it, run go generate in assets), and the tray's are
// small.
func TestIconsAreWhatItDraws(t *testing.T) {
	committed, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	main()
	for file, side := range map[string]int{"icon.png": 256, "tray.png": trayPixels, "tray-paused.png": trayPixels, "tray-question.png": trayPixels} {
		drawn, kept := pixels(t, file), pixels(t, filepath.Join(committed, file))
		if got := kept.Bounds().Dx(); got != side || kept.Bounds().Dy() != side {
			t.Errorf("%s is %v, want %d pixels a side", file, kept.Bounds().Size(), side)
		}
		if !bytes.Equal(drawn.Pix, kept.Pix) || drawn.Bounds() != kept.Bounds() {
			t.Errorf("%s in assets is not what mkicons draws: run go generate in assets", file)
		}
	}
}

func pixels(t *testing.T, file string) *image.NRGBA {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	n := image.NewNRGBA(img.Bounds())
	draw.Draw(n, n.Bounds(), img, img.Bounds().Min, draw.Src)
	return n
}
