package toolservers

import (
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/server/agent"
)

func TestSamplingText(t *testing.T) {
	for _, tc := range []struct {
		content any
		want    string
		ok      bool
	}{
		{mcp.NewTextContent("hi"), "hi", true},
		{map[string]any{"type": "text", "text": "hi"}, "hi", true},
		{map[string]any{"type": "image", "data": "AAAA"}, "", false},
		{[]any{map[string]any{"type": "text", "text": "hi"}}, "", false},
	} {
		if got, ok := samplingText(tc.content); got != tc.want || ok != tc.ok {
			t.Errorf("samplingText(%v) = %q, %v", tc.content, got, ok)
		}
	}
}

// TestPortNames: the port names tools as NewNameTable does: server__tool,
// at most 64 characters, unique in the set.
func TestPortNames(t *testing.T) {
	m, port, _ := ForCore(Options{})
	defer m.Close()
	long := strings.Repeat("x", 80)
	refs := []agent.ServerToolRef{{Server: "fs", Tool: "read_text_file"}, {Server: "fs", Tool: long + "a"}, {Server: "fs", Tool: long + "b"}, {Server: "fs", Tool: "a.b"}}
	names, err := port.Names(refs)
	if err != nil {
		t.Fatal(err)
	}
	if names[refs[0]] != "fs__read_text_file" {
		t.Errorf("plain name: %q", names[refs[0]])
	}
	seen := map[string]bool{}
	for _, r := range refs {
		n := names[r]
		if len(n) > 64 || !strings.HasPrefix(n, "fs__") || strings.ContainsFunc(n, func(c rune) bool {
			return !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9')
		}) || seen[n] {
			t.Errorf("%+v named %q", r, n)
		}
		seen[n] = true
	}
}
