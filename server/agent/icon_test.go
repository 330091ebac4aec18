package agent_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
)

func pngBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const svgIcon = `<?xml version="1.0"?>
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 8 8"><circle cx="4" cy="4" r="3"/></svg>`

func TestIconFromFile(t *testing.T) {
	pic := pngBytes(t, 48, 48)
	big := append(pngBytes(t, 1, 1), make([]byte, agent.MaxIconImageBytes)...)
	tests := []struct {
		name    string
		data    []byte
		want    string // the URI's start
		wantErr string
	}{
		{"fox.png", pic, "data:image/png;base64,iVBORw0KGgo", ""},
		{"fox.jpg", []byte("\xff\xd8\xff\xe0rest"), "data:image/jpeg;base64,", ""},
		{"fox.svg", []byte(svgIcon), "data:image/svg+xml;base64,", ""},
		{"named.png", []byte(svgIcon), "data:image/svg+xml;base64,", ""}, // the content decides
		{"huge.png", big, "", "huge.png is 64.1 KiB: an icon image may be at most 64 KiB"},
		{"notes.txt", []byte("hello"), "", "notes.txt: not a PNG, JPEG or SVG image"},
		{"evil.svg", []byte(`<svg><script>alert(1)</script></svg>`), "", "holds a script"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := agent.IconFromFile(tt.name, tt.data)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(agent.UserMessage(err), tt.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !strings.HasPrefix(got, tt.want) {
				t.Fatalf("IconFromFile = %.60q, %v; want %q…", got, err, tt.want)
			}
			if checked, err := agent.CheckIcon(got); err != nil || checked != got {
				t.Errorf("CheckIcon of what IconFromFile made = %v", err)
			}
		})
	}
}

func TestCheckIcon(t *testing.T) {
	pic := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngBytes(t, 2, 2))
	tests := []struct {
		icon, want, wantErr string
	}{
		{"", "", ""},
		{"  🦊 ", "🦊", ""},
		{"👨‍👩‍👧‍👦", "👨‍👩‍👧‍👦", ""},
		{"🇫🇷", "🇫🇷", ""},
		{"AB", "AB", ""},
		{pic, pic, ""},
		{strings.Repeat("🦊", 9), "", "at most 32 bytes"},
		{"a\nb", "", "no control characters"},
		{"data:image/png;base64,!!!", "", "not a data: URI"},
		{"data:image/png,plain", "", "not a data: URI"},
		{"data:image/gif;base64," + base64.StdEncoding.EncodeToString([]byte("GIF89a")), "", "not a PNG, JPEG or SVG"},
		{"data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(pngBytes(t, 1, 1)), "", "says it is image/jpeg but is image/png"},
		{"data:image/png;base64," + base64.StdEncoding.EncodeToString(make([]byte, agent.MaxIconImageBytes+1)), "", "64.1 KiB: it may be at most 64 KiB"},
	}
	for _, tt := range tests {
		got, err := agent.CheckIcon(tt.icon)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(agent.UserMessage(err), tt.wantErr) {
				t.Errorf("CheckIcon(%.40q) err = %v, want one saying %q", tt.icon, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("CheckIcon(%.40q) = %q, %v; want %q", tt.icon, got, err, tt.want)
		}
	}
}

func TestIconAsImage(t *testing.T) {
	if _, ok := agent.IconAsImage(""); ok {
		t.Error("no icon became an image")
	}
	img, ok := agent.IconAsImage("🦊")
	if !ok || img.MIMEType != "image/svg+xml" || len(img.Sizes) != 1 || img.Sizes[0] != "any" {
		t.Fatalf("emoji icon = %+v, %v", img, ok)
	}
	svg, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(img.Src, "data:image/svg+xml;base64,"))
	if err != nil || !strings.Contains(string(svg), "<text") || !strings.Contains(string(svg), ">🦊</text>") {
		t.Errorf("emoji SVG = %s, %v", svg, err)
	}
	// Text is escaped in the SVG.
	img, _ = agent.IconAsImage("<&>")
	svg, _ = base64.StdEncoding.DecodeString(strings.TrimPrefix(img.Src, "data:image/svg+xml;base64,"))
	if !strings.Contains(string(svg), ">&lt;&amp;&gt;</text>") {
		t.Errorf("text not escaped: %s", svg)
	}
	pic := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngBytes(t, 48, 32))
	img, ok = agent.IconAsImage(pic)
	if !ok || img.Src != pic || img.MIMEType != "image/png" || len(img.Sizes) != 1 || img.Sizes[0] != "48x32" {
		t.Errorf("PNG icon = %+v, %v", img, ok)
	}
	if got := agent.IconSummary(pic); !strings.HasPrefix(got, "PNG image, ") {
		t.Errorf("IconSummary = %q", got)
	}
}

// TestSaveAgentChecksIcon: a bad icon is refused with the reason and the
// agent is not saved; a good one is kept trimmed.
func TestSaveAgentChecksIcon(t *testing.T) {
	f := newFixture(t, agent.Config{}, agent.Agent{})
	a := f.agent
	a.Icon = "data:image/png;base64,nope"
	if _, err := f.core.Agents().Save(t.Context(), a); err == nil || !strings.Contains(agent.UserMessage(err), "icon image") {
		t.Fatalf("bad icon saved: %v", err)
	}
	if got, _ := f.core.Agents().BySlug(a.Slug); got.Icon != "" {
		t.Errorf("refused icon kept: %q", got.Icon)
	}
	a.Icon = " 🦊"
	saved, err := f.core.Agents().Save(t.Context(), a)
	if err != nil || saved.Icon != "🦊" {
		t.Fatalf("SaveAgent = %q, %v", saved.Icon, err)
	}
}
