package agent

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestQuestionSummaryCutsOnARune: a long question is shortened on a rune
// boundary, whatever the width of its characters.
func TestQuestionSummaryCutsOnARune(t *testing.T) {
	cases := []struct {
		name, text, want string
	}{
		{"short", "Which file?", `"Which file?"`},
		{"exactly 80 bytes", strings.Repeat("a", 80), `"` + strings.Repeat("a", 80) + `"`},
		{"ascii", strings.Repeat("a", 100), `"` + strings.Repeat("a", 77) + `..."`},
		{"two-byte runes", strings.Repeat("é", 50), `"` + strings.Repeat("é", 38) + `..."`},
		{"three-byte runes", strings.Repeat("€", 30), `"` + strings.Repeat("€", 25) + `..."`},
		{"four-byte runes", strings.Repeat("🙂", 21), `"` + strings.Repeat("🙂", 19) + `..."`},
		{"rune across the cut", strings.Repeat("a", 76) + "€€€€€", `"` + strings.Repeat("a", 76) + `..."`},
		{"approval", "", "approval to run write_file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := Question{Kind: KindQuestion, Text: c.text}
			if c.name == "approval" {
				q = Question{Kind: KindApproval, Tool: "write_file"}
			}
			got := q.summary()
			if !utf8.ValidString(got) || strings.Contains(got, `\x`) {
				t.Errorf("summary %s is not valid UTF-8", got)
			}
			if got != c.want {
				t.Errorf("summary = %s, want %s", got, c.want)
			}
		})
	}
}
