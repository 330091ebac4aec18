package agent

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html"
	"image"
	_ "image/jpeg" // DecodeConfig of JPEG icons
	_ "image/png"  // DecodeConfig of PNG icons
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of an agent's icon (Agent.Icon).
const (
	// MaxIconImageBytes bounds an icon image, before base64.
	MaxIconImageBytes = 64 << 10
	// MaxIconTextBytes bounds an icon typed as text: an emoji, even a
	// long sequence (a family, a flag), or a few characters.
	MaxIconTextBytes = 32
)

// The image types an icon may be.
const (
	IconPNG  = "image/png"
	IconJPEG = "image/jpeg"
	IconSVG  = "image/svg+xml"
)

const iconDataPrefix = "data:"

// IconIsImage reports whether the icon is an image (a data: URI) rather
// than text.
func IconIsImage(icon string) bool { return strings.HasPrefix(icon, iconDataPrefix) }

// CheckIcon checks an agent's icon and returns it trimmed: empty (none),
// an emoji or a few characters, or an image as a data: URI (what
// IconFromFile makes).
func CheckIcon(icon string) (string, error) {
	icon = strings.TrimSpace(icon)
	switch {
	case icon == "":
		return "", nil
	case IconIsImage(icon):
		if _, _, err := decodeIconURI(icon); err != nil {
			return "", err
		}
		return icon, nil
	}
	if len(icon) > MaxIconTextBytes {
		return "", Userf(nil, "an icon is an emoji or a few characters (at most %d bytes), or an image: PNG, JPEG or SVG", MaxIconTextBytes)
	}
	for _, r := range icon {
		if r == utf8.RuneError || unicode.IsControl(r) || (unicode.IsSpace(r) && r != ' ') {
			return "", Userf(nil, "an icon holds no control characters or line breaks: type an emoji or a few characters")
		}
	}
	return icon, nil
}

// IconFromFile makes an icon of an image file's content: a data: URI of
// a PNG, JPEG or SVG image of at most MaxIconImageBytes. The type is
// read from the content, not the name, which only names the file in
// errors.
func IconFromFile(name string, data []byte) (string, error) {
	if len(data) > MaxIconImageBytes {
		return "", Userf(nil, "%s is %s: an icon image may be at most %d KiB; pick a smaller one", name, kib(len(data)), MaxIconImageBytes>>10)
	}
	mime, err := sniffIcon(data)
	if err != nil {
		return "", Userf(err, "%s: %s", name, UserMessage(err))
	}
	return iconDataPrefix + mime + ";base64," + base64.StdEncoding.EncodeToString(data), nil
}

// IconImage is an icon as an image: its data: URI, type and sizes (as
// MCP's icons give them: "48x48", or "any" for SVG).
type IconImage struct {
	Src      string
	MIMEType string
	Sizes    []string
}

// IconAsImage is the icon as MCP clients get it: an image stays as it
// is; text (an emoji) becomes an SVG with the text in it. ok is false for
// no icon, or one that does not check.
func IconAsImage(icon string) (IconImage, bool) {
	if icon == "" {
		return IconImage{}, false
	}
	if !IconIsImage(icon) {
		svg := `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64">` +
			`<text x="32" y="32" font-size="48" text-anchor="middle" dominant-baseline="central">` +
			html.EscapeString(icon) + `</text></svg>`
		return IconImage{
			Src:      iconDataPrefix + IconSVG + ";base64," + base64.StdEncoding.EncodeToString([]byte(svg)),
			MIMEType: IconSVG,
			Sizes:    []string{"any"},
		}, true
	}
	mime, data, err := decodeIconURI(icon)
	if err != nil {
		return IconImage{}, false
	}
	img := IconImage{Src: icon, MIMEType: mime, Sizes: []string{"any"}}
	if mime != IconSVG {
		if cfg, _, err := image.DecodeConfig(bytes.NewReader(data)); err == nil {
			img.Sizes = []string{fmt.Sprintf("%dx%d", cfg.Width, cfg.Height)}
		} else {
			img.Sizes = nil
		}
	}
	return img, true
}

// IconSummary describes an icon in a line of text: the emoji itself, or
// the image's type and size.
func IconSummary(icon string) string {
	if !IconIsImage(icon) {
		return icon
	}
	mime, data, err := decodeIconURI(icon)
	if err != nil {
		return "an image that cannot be read"
	}
	kind := map[string]string{IconPNG: "PNG", IconJPEG: "JPEG", IconSVG: "SVG"}[mime]
	return fmt.Sprintf("%s image, %s", kind, kib(len(data)))
}

// decodeIconURI checks an icon's data: URI and returns its type and bytes.
func decodeIconURI(icon string) (string, []byte, error) {
	const bad = "the icon image is not a data: URI of a PNG, JPEG or SVG image (data:image/png;base64,…): pick the image file again"
	head, payload, ok := strings.Cut(strings.TrimPrefix(icon, iconDataPrefix), ",")
	mime, enc, _ := strings.Cut(head, ";")
	if !ok || enc != "base64" {
		return "", nil, Userf(nil, "%s", bad)
	}
	if base64.StdEncoding.DecodedLen(len(payload)) > MaxIconImageBytes+3 {
		return "", nil, Userf(nil, "the icon image is over %d KiB: pick a smaller one", MaxIconImageBytes>>10)
	}
	data, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return "", nil, Userf(err, "%s", bad)
	}
	if len(data) > MaxIconImageBytes {
		return "", nil, Userf(nil, "the icon image is %s: it may be at most %d KiB; pick a smaller one", kib(len(data)), MaxIconImageBytes>>10)
	}
	got, err := sniffIcon(data)
	if err != nil {
		return "", nil, Userf(err, "the icon image: %s", UserMessage(err))
	}
	if got != mime {
		return "", nil, Userf(nil, "the icon image says it is %s but is %s: pick the image file again", mime, got)
	}
	return mime, data, nil
}

// sniffIcon tells an icon image's type from its content.
func sniffIcon(data []byte) (string, error) {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return IconPNG, nil
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		return IconJPEG, nil
	case isSVG(data):
		lower := bytes.ToLower(data)
		if bytes.Contains(lower, []byte("<script")) || bytes.Contains(lower, []byte("javascript:")) {
			return "", Userf(nil, "the SVG image holds a script: pick an image without one")
		}
		return IconSVG, nil
	}
	return "", Userf(nil, "not a PNG, JPEG or SVG image")
}

// isSVG reports whether data is UTF-8 text whose first element is <svg
// (after an XML declaration, comments or a doctype).
func isSVG(data []byte) bool {
	if !utf8.Valid(data) {
		return false
	}
	s := strings.TrimPrefix(string(data), "\uFEFF")
	for {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
		switch {
		case strings.HasPrefix(s, "<svg"):
			return true
		case strings.HasPrefix(s, "<?"), strings.HasPrefix(s, "<!"):
			end := strings.IndexByte(s, '>')
			if end < 0 {
				return false
			}
			s = s[end+1:]
		default:
			return false
		}
	}
}

// kib is n bytes in KiB, rounded up to a tenth (64 KiB and a byte is
// not "64.0 KiB").
func kib(n int) string {
	return fmt.Sprintf("%.1f KiB", math.Ceil(float64(n)/102.4)/10)
}
