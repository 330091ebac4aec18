package connect

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tailscale/hujson"
)

// TestDisabledByTheClient: an entry the client turned off, by its own
// switch or by the client's list of excluded or allowed servers, is
// "disabled by the client" with the reason, not verified; turned back on,
// it verifies again.
func TestDisabledByTheClient(t *testing.T) {
	r := startDeskhand(t)
	env := testEnv(t)
	realFiles(t, env)
	m, _ := newManager(t, r, env)
	// jsonEdit sets a value in a JSON (with comments) file.
	jsonEdit := func(set func(doc map[string]any)) func([]byte) []byte {
		return func(data []byte) []byte {
			std, err := hujson.Standardize(bytes.Clone(data))
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := json.Unmarshal(std, &doc); err != nil {
				t.Fatal(err)
			}
			set(doc)
			out, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
	}
	entry := func(doc map[string]any, keys ...string) map[string]any {
		return field(doc, keys...).(map[string]any)
	}
	for _, tc := range []struct {
		client  Client
		disable func([]byte) []byte
		reason  string
	}{
		{OpenCode, jsonEdit(func(doc map[string]any) { entry(doc, "mcp", "deskhand")["enabled"] = false }), `"enabled": false`},
		{Zed, jsonEdit(func(doc map[string]any) { entry(doc, "context_servers", "deskhand")["enabled"] = false }), `"enabled": false`},
		{Gemini, jsonEdit(func(doc map[string]any) { doc["mcp"] = map[string]any{"excluded": []any{"desk*"}} }), "exclude it (mcp.excluded)"},
		{Qwen, jsonEdit(func(doc map[string]any) { doc["allowMCPServers"] = []any{"github"} }), "allow only other servers (allowMCPServers)"},
		{Codex, func(data []byte) []byte {
			return bytes.Replace(data, []byte("[mcp_servers.deskhand]"), []byte("[mcp_servers.deskhand]\nenabled = false"), 1)
		}, "enabled = false"},
		{Goose, func(data []byte) []byte {
			i := bytes.Index(data, []byte("  deskhand:"))
			j := bytes.Index(data[i:], []byte("enabled: true"))
			return append(append(bytes.Clone(data[:i+j]), "enabled: false"...), data[i+j+len("enabled: true"):]...)
		}, "enabled: false"},
	} {
		t.Run(tc.client.ID, func(t *testing.T) {
			ctx := t.Context()
			if rep, err := m.Connect(ctx, tc.client, ConnectOptions{}); err != nil || rep.Check.Health != Verified {
				t.Fatalf("Connect = %+v, %v", rep.Check, err)
			}
			p, _ := Path(tc.client, env)
			on := readFile(t, p)
			writeFile(t, p, tc.disable(on), 0o600)
			rep, err := m.Status(ctx, tc.client)
			if err != nil || rep.Check.Health != Disabled || !strings.Contains(rep.Check.Detail, tc.reason) {
				t.Errorf("Status of the turned-off entry = %v (%s), %v; want disabled by the client, saying %q", rep.Check.Health, rep.Check.Detail, err, tc.reason)
			}
			writeFile(t, p, on, 0o600)
			if rep, err := m.Status(ctx, tc.client); err != nil || rep.Check.Health != Verified {
				t.Errorf("Status once on again = %+v, %v", rep.Check, err)
			}
		})
	}
}
