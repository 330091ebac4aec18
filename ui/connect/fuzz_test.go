package connect

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
	"github.com/tailscale/hujson"
	"gopkg.in/yaml.v3"
)

// FuzzWriters: whatever a client's file holds, an edit either refuses it
// with a ParseError or a LimitError (the file left as it was) or writes a file that a
// standard parser reads, with our entry set and everything else as it
// was; removing the entry again leaves the rest as it was too. The YAML
// writer may also refuse a file it cannot edit line by line (errUnsafeEdit).
func FuzzWriters(f *testing.F) {
	seeds := []string{cursorFixture, claudeCodeFixture, vscodeFixture, windsurfFixture, codexFixture, desktopFixture,
		codexDotted, codexNoEntryCRLF, vscodeNoEntry, geminiFixture, qwenFixture, openCodeFixture, zedFixture, lmStudioFixture, gooseFixture, gooseCRLF, gooseEmpty,
		"", "{}", "[]", "#", `{"mcpServers":null}`, "[mcp_servers]\n", `{"mcp":{"deskhand":{"oauth":{}}}}`, `{"context_servers":[]}`, "extensions:\n", "extensions: {a: 1}\n", "a: &x {b: 1}\nextensions:\n  c: *x\n"}
	// Nesting past the limit, which is refused before parsing (and, as
	// megabytes of it, used to overflow the parsers' stacks).
	over := maxDepth + 1
	seeds = append(seeds,
		strings.Repeat("[", over), strings.Repeat(`{"a":`, over), nested(`{"mcpServers":{},"x":`, "[", "", "]", over)+"}",
		"// x\n"+nested(`{"servers":{"a":`, "[", "", "]", over)+"},}",
		"a = "+strings.Repeat("[", over), "a = "+strings.Repeat("{b=", over), nested("a = ", "[", "", "]", over),
		"a"+strings.Repeat(".a", over)+" = 1\n", "[a"+strings.Repeat(".a", over)+"]\n", "x = {a"+strings.Repeat(".a", over)+" = 1}\n",
		"[mcp_servers.x]\n"+nested("y = ", "[", "", "]", over-3)+"\n")
	// The import fixtures: files with many servers of every kind.
	for _, c := range Clients() {
		seeds = append(seeds, string(readFixture(f, importFixtures[c.ID])))
	}
	for _, seed := range seeds {
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
			var le *LimitError
			if !errors.As(err, &pe) && !errors.As(err, &le) && !errors.Is(err, errUnsafeEdit) {
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
	if c.ID == Goose.ID {
		return m, yaml.Unmarshal(data, &m) == nil
	}
	std, err := hujson.Standardize(append([]byte(nil), data...))
	if err != nil || json.Unmarshal(std, &m) != nil {
		return nil, false
	}
	return m, true
}

// FuzzDepthChecks: whatever passes the nesting checks with a limit parses
// into values nested no deeper than that limit, so the checks never let
// through what would make a parser recurse past it.
func FuzzDepthChecks(f *testing.F) {
	for _, seed := range []string{cursorFixture, vscodeFixture, codexFixture, codexDotted, "[[1]]", `{"a":[{"b":"[["}]}`,
		"// [\n/* [ */ [[1]]", "a = [[1]]", "a.b.c = 1", "[a.b]\nc = {d = [1]}",
		"s = \"\"\"[\"\"\"\"\nt = '''['''''", "x = [\"]\", '[', # [\n]"} {
		f.Add(seed, uint8(3))
	}
	f.Fuzz(func(t *testing.T, content string, limit uint8) {
		data := []byte(content)
		if checkJSONDepth("f", data, int(limit)) == nil {
			if v, err := hujson.Parse(data); err == nil && hujsonDepth(v.Value) > int(limit) {
				t.Fatalf("JSON nested %d deep passed a limit of %d: %q", hujsonDepth(v.Value), limit, content)
			}
		}
		if checkTOMLDepth("f", data, int(limit)) == nil {
			m := map[string]any{}
			// The document's own table is not a level of nesting.
			if toml.Unmarshal(data, &m) == nil && valueDepth(m)-1 > int(limit) {
				t.Fatalf("TOML nested %d deep passed a limit of %d: %q", valueDepth(m)-1, limit, content)
			}
		}
	})
}

// hujsonDepth is how deeply objects and arrays nest in v.
func hujsonDepth(v hujson.ValueTrimmed) int {
	deepest := 0
	switch v := v.(type) {
	case *hujson.Object:
		for _, m := range v.Members {
			deepest = max(deepest, hujsonDepth(m.Value.Value))
		}
	case *hujson.Array:
		for _, e := range v.Elements {
			deepest = max(deepest, hujsonDepth(e.Value))
		}
	default:
		return 0
	}
	return 1 + deepest
}

// valueDepth is how deeply decoded tables and arrays nest in v.
func valueDepth(v any) int {
	deepest := 0
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			deepest = max(deepest, valueDepth(e))
		}
	case []any:
		for _, e := range v {
			deepest = max(deepest, valueDepth(e))
		}
	default:
		return 0
	}
	return 1 + deepest
}
