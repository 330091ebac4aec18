package desktop

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/deskhand/deskhand/server/agent"
)

func iconPNG(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 3, 3))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestIconLogic(t *testing.T) {
	pic := iconPNG(t)
	uri := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pic)
	for _, tt := range []struct{ text, want string }{
		{"", ""}, {"🦊", ""}, {strings.Repeat("🦊", 9), "at most 32 bytes"}, {"a\tb", "no control characters"},
	} {
		if got := iconProblem(tt.text); (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("iconProblem(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
	if text, img := splitIcon("🦊"); text != "🦊" || img != "" {
		t.Errorf("splitIcon(emoji) = %q, %q", text, img)
	}
	if text, img := splitIcon(uri); text != "" || img != uri {
		t.Errorf("splitIcon(image) = %q, %.30q", text, img)
	}
	if iconOf("🦊", "") != "🦊" || iconOf("", uri) != uri {
		t.Error("iconOf does not prefer the image, or loses the text")
	}

	if got, err := iconFromPicked("fox.png", bytes.NewReader(pic)); err != nil || got != uri {
		t.Errorf("iconFromPicked = %.40q, %v", got, err)
	}
	big := append(append([]byte{}, pic...), make([]byte, agent.MaxIconImageBytes)...)
	if _, err := iconFromPicked("big.png", bytes.NewReader(big)); err == nil || !strings.Contains(agent.UserMessage(err), "big.png is over 64 KiB") {
		t.Errorf("a big image: %v", err)
	}
	if _, err := iconFromPicked("notes.png", strings.NewReader("text")); err == nil || !strings.Contains(agent.UserMessage(err), "not a PNG, JPEG or SVG") {
		t.Errorf("not an image: %v", err)
	}

	shown := fieldsOf(agent.Agent{Slug: "a", Icon: "🦊"})
	if fieldsChanged(shown, shown) {
		t.Error("the same icon counts as a change")
	}
	now := shown
	now.Icon = uri
	if !fieldsChanged(shown, now) {
		t.Error("a new icon does not count as a change")
	}
	if a, err := now.apply(agent.Agent{}); err != nil || a.Icon != uri {
		t.Errorf("apply: icon %.30q, %v", a.Icon, err)
	}
}

// TestEditorIconField: the Icon field shows an agent's emoji or image,
// says what is wrong under it, and Save sends what it holds; an emoji
// typed replaces a picked image.
func TestEditorIconField(t *testing.T) {
	uri := "data:image/png;base64," + base64.StdEncoding.EncodeToString(iconPNG(t))
	core := &fakeAgents{agents: []agent.Agent{
		{ID: "1", Slug: "fox", Name: "Fox", Model: "m", Backend: agent.BackendProvider, Provider: "ollama", Enabled: true, Icon: "🦊"},
		{ID: "2", Slug: "pic", Name: "Pic", Model: "m", Backend: agent.BackendProvider, Provider: "ollama", Enabled: true, Icon: uri},
	}}
	v, ui := agentsScreen(t, core)
	v.refresh()
	ui.settle()
	if v.icon.entry.Text != "🦊" || v.icon.imageLabel.Visible() || !v.save.Disabled() {
		t.Fatalf("fox: entry %q, image shown %v, Save enabled %v", v.icon.entry.Text, v.icon.imageLabel.Visible(), !v.save.Disabled())
	}
	v.icon.entry.SetText(strings.Repeat("🦊", 9))
	if !v.icon.hint.Visible() || !strings.Contains(v.icon.hint.Text, "at most 32 bytes") {
		t.Errorf("a long icon: hint %q, shown %v", v.icon.hint.Text, v.icon.hint.Visible())
	}
	v.icon.entry.SetText("")
	test.Type(v.icon.entry, "🐙")
	if v.icon.hint.Visible() || v.save.Disabled() {
		t.Errorf("a good emoji: hint %q, Save enabled %v", v.icon.hint.Text, !v.save.Disabled())
	}
	test.Tap(v.save)
	ui.settle()
	if len(core.saved) != 1 || core.saved[0].Icon != "🐙" {
		t.Fatalf("saved %+v", core.saved)
	}

	// A picked image (what pickImage applies once it has read the file)
	// replaces the emoji; Remove image clears it.
	v.icon.setImage(uri)
	v.changed()
	if v.icon.entry.Text != "" || !v.icon.imageLabel.Visible() || !strings.HasPrefix(v.icon.imageLabel.Text, "Image: PNG image") || v.fields().Icon != uri {
		t.Errorf("picked: entry %q, label %q, icon %.30q", v.icon.entry.Text, v.icon.imageLabel.Text, v.fields().Icon)
	}
	test.Type(v.icon.entry, "🦉")
	if v.icon.imageLabel.Visible() || v.fields().Icon != "🦉" {
		t.Errorf("typed over an image: label shown %v, icon %.30q", v.icon.imageLabel.Visible(), v.fields().Icon)
	}
	v.icon.setImage(uri)
	test.Tap(v.icon.clear)
	if v.icon.imageLabel.Visible() || v.fields().Icon != "" {
		t.Errorf("removed: label shown %v, icon %.30q", v.icon.imageLabel.Visible(), v.fields().Icon)
	}

	// An agent with an image shows it described, the entry empty.
	v.edit(core.List()[1])
	if v.icon.entry.Text != "" || !v.icon.imageLabel.Visible() || v.fields().Icon != uri || v.hasChanges() {
		t.Errorf("pic: entry %q, label shown %v, changes %v", v.icon.entry.Text, v.icon.imageLabel.Visible(), v.hasChanges())
	}
}
