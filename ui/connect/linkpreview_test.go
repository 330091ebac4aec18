package connect

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// recordingTokens is a token store that remembers every token it minted.
type recordingTokens struct {
	Tokens
	mu      sync.Mutex
	rotated []string
}

func (r *recordingTokens) Rotate(ctx context.Context, name string) (string, error) {
	r.mu.Lock()
	r.rotated = append(r.rotated, name)
	r.mu.Unlock()
	return r.Tokens.Rotate(ctx, name)
}

func (r *recordingTokens) minted() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.rotated...)
}

// TestLinkPreviewMintsNothing: the preview of an install link, shown
// before the person agrees, issues no token; only Link, once agreed, does.
func TestLinkPreviewMintsNothing(t *testing.T) {
	r := startDeskhand(t)
	env := testEnv(t)
	writeFile(t, filepath.Join(env.Home, ".cursor", "mcp.json"), []byte(cursorFixture), 0o644)
	m, _ := newManager(t, r, env)
	tokens := &recordingTokens{Tokens: m.Tokens}
	m.Tokens = tokens

	for _, c := range []Client{VSCode, Cursor} {
		config, newToken, err := m.LinkPreview(t.Context(), c)
		if err != nil {
			t.Fatalf("LinkPreview(%s): %v", c.ID, err)
		}
		if !newToken || !strings.Contains(config, "Bearer <a new token for "+c.ID+">") || !strings.Contains(config, m.URL) {
			t.Errorf("LinkPreview(%s) = %s, new token %v", c.ID, config, newToken)
		}
	}
	if got := tokens.minted(); len(got) != 0 || len(r.core.Clients().List()) != 0 {
		t.Fatalf("the preview minted %v; clients %v", got, tokenNames(r.core))
	}
	if _, _, err := m.LinkPreview(t.Context(), Codex); err == nil {
		t.Error("a link preview for Codex")
	}

	// Agreed: Link mints the token the preview announced.
	if _, config, err := m.Link(t.Context(), VSCode); err != nil || strings.Contains(config, "<") {
		t.Fatalf("Link = %s, %v", config, err)
	}
	if got := tokens.minted(); len(got) != 1 || got[0] != "vscode" {
		t.Errorf("Link minted %v", got)
	}

	// A working entry: the link reuses its token, and the preview says so.
	if _, err := m.Connect(t.Context(), Cursor, ConnectOptions{}); err != nil {
		t.Fatal(err)
	}
	before := len(tokens.minted())
	config, newToken, err := m.LinkPreview(t.Context(), Cursor)
	if err != nil || newToken || !strings.Contains(config, "<the token its file holds now>") {
		t.Errorf("LinkPreview of a working entry = %s, new token %v, %v", config, newToken, err)
	}
	if len(tokens.minted()) != before {
		t.Error("the preview of a working entry minted a token")
	}
}
