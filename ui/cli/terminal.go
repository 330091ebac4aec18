package cli

import (
	"fmt"
	"strings"
	"unicode"
)

// terminalText makes text an agent or a client wrote safe to print on a
// terminal: control characters (escape sequences that would move the
// cursor, retitle the window or hide what follows) and the bidirectional
// overrides that reorder a line are shown as \x.. or \u.... escapes;
// newlines and tabs become spaces, so one row stays one line.
func terminalText(s string) string {
	if !strings.ContainsFunc(s, unsafeRune) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t' || r == '\r':
			b.WriteByte(' ')
		case unsafeRune(r) && r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}
