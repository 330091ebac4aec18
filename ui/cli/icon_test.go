package cli

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/store/storetest"
)

// TestAgentIconFlag: 'agent add/edit --icon' takes an emoji or an image
// file, through the core and through the running app's control channel;
// a file too big or not an image is refused with the reason, and the
// agent keeps its icon.
func TestAgentIconFlag(t *testing.T) {
	dir := t.TempDir()
	var pic bytes.Buffer
	if err := png.Encode(&pic, image.NewGray(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	picPath := write("fox.png", pic.Bytes())
	bigPath := write("big.png", append(pic.Bytes(), make([]byte, agent.MaxIconImageBytes)...))
	textPath := write("notes.png", []byte("not an image"))

	for _, running := range []bool{false, true} {
		name := map[bool]string{false: "core", true: "control channel"}[running]
		t.Run(name, func(t *testing.T) {
			core, err := agent.New(t.Context(), agent.Config{History: storetest.Open(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(core.Close)
			env := coreEnv(t, core, running)
			icon := func() string {
				a, _ := core.Agents().BySlug("fox")
				return a.Icon
			}
			tests := []struct {
				args    []string
				status  int
				say     string // in what is printed
				icon    string // the icon after; "png" for the picture's data: URI
				comment string
			}{
				{[]string{"agent", "add", "fox", "--icon", "🦊"}, 0, "Saved fox", "🦊", "an emoji"},
				{[]string{"agent", "edit", "fox", "--icon", picPath}, 0, "Saved fox", "png", "an image file"},
				{[]string{"agent", "edit", "fox", "--icon", bigPath}, 1, "at most 64 KiB", "png", "too big: refused, icon kept"},
				{[]string{"agent", "edit", "fox", "--icon", textPath}, 1, "not a PNG, JPEG or SVG image", "png", "not an image"},
				{[]string{"agent", "edit", "fox", "--icon", filepath.Join(dir, "gone.svg")}, 1, "no such file", "png", "a missing file is not an emoji"},
				{[]string{"agent", "edit", "fox", "--icon", strings.Repeat("🦊", 9)}, 1, "at most 32 bytes", "png", "too long for an emoji"},
				{[]string{"agent", "edit", "fox", "--icon", ""}, 0, "Saved fox", "", "cleared"},
				{[]string{"agent", "list", "--icon", "🦊"}, 2, "--icon is for 'agent add' and 'agent edit'", "", "not for list"},
			}
			for _, tt := range tests {
				status, stdout, stderr := runLine(t, env, tt.args...)
				if status != tt.status || !strings.Contains(stdout+stderr, tt.say) {
					t.Errorf("%s: %q: status %d, want %d saying %q\n%s%s", tt.comment, tt.args, status, tt.status, tt.say, stdout, stderr)
				}
				got := icon()
				if tt.icon == "png" {
					if !strings.HasPrefix(got, "data:image/png;base64,") {
						t.Errorf("%s: icon = %.40q, want the PNG", tt.comment, got)
					}
				} else if got != tt.icon {
					t.Errorf("%s: icon = %.40q, want %q", tt.comment, got, tt.icon)
				}
			}
		})
	}
}
