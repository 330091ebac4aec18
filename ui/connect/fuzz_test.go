package connect

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/pelletier/go-toml/v2"
	"github.com/tailscale/hujson"
)

// FuzzWriters: whatever a client's file holds, an edit either refuses it
// with a ParseError (the file left as it was) or writes a file that a
// standard parser reads, with our entry set and everything else as it
// was; removing the entry again leaves the rest as it was too.
func FuzzWriters(f *testing.F) {
	for _, seed := range []string{cursorFixture, claudeCodeFixture, vscodeFixture, windsurfFixture, codexFixture, desktopFixture,
		codexDotted, codexNoEntryCRLF, vscodeNoEntry, "", "{}", "[]", "#", `{"mcpServers":null}`, "[mcp_servers]\n"} {
		for i := range Clients() {
			f.Add(seed, uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, content string, which uint8) {
		clients := Clients()
		c := clients[int(which)%len(clients)]
		fm, err := formatOf(c)
		if err != nil {
			t.Fatal(err)
		}
		e := entryFor(c)
		e.Name = DefaultName
		out, _, err := fm.set("f", []byte(content), DefaultName, e)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				if _, _, rerr := fm.read("f", []byte(content), DefaultName); rerr == nil {
					t.Fatalf("set refused a file read accepts: %v", err)
				}
			}
			return
		}
		after := decode(t, c, out)
		st, found, err := fm.read("f", out, DefaultName)
		if err != nil || !found || (c.ID != ClaudeDesktop.ID && st.URL != testURL) || (c.ID == ClaudeDesktop.ID && st.Command != testCmd) {
			t.Fatalf("entry read back = %+v, %v, %v\n%s", st, found, err, out)
		}
		if content != "" {
			if before, ok := tryDecode(c, []byte(content)); ok && !reflect.DeepEqual(rest(c, before), rest(c, after)) {
				t.Fatalf("the rest changed:\n%q\n%q", content, out)
			}
		}
		gone, found, err := fm.remove("f", out, DefaultName)
		if err != nil || !found {
			t.Fatalf("remove = %v, %v", found, err)
		}
		if _, found, err := fm.read("f", gone, DefaultName); err != nil || found {
			t.Fatalf("after remove: found %v, %v\n%s", found, err, gone)
		}
		if !reflect.DeepEqual(rest(c, decode(t, c, gone)), rest(c, after)) {
			t.Fatalf("remove changed the rest:\n%q\n%q", out, gone)
		}
	})
}

// tryDecode reads a file as the client's format would, without failing.
func tryDecode(c Client, data []byte) (map[string]any, bool) {
	m := map[string]any{}
	if c.ID == Codex.ID {
		return m, toml.Unmarshal(data, &m) == nil
	}
	std, err := hujson.Standardize(append([]byte(nil), data...))
	if err != nil || json.Unmarshal(std, &m) != nil {
		return nil, false
	}
	return m, true
}
