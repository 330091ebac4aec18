package toolservers

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

var modelName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestToolName(t *testing.T) {
	long := strings.Repeat("a", 80)
	for _, tc := range []struct {
		server, tool string
		want         string // "" means: check only the rules
		hashed       bool
	}{
		{"github", "create_issue", "github__create_issue", false},
		{"everything", "get-sum", "everything__get-sum", false},
		{"fs", "read.file", "", true},                // '.' is not allowed
		{"fs", "lire_fichier_été", "", true},         // unicode
		{"fs", "読む", "", true},                       // no ASCII at all
		{"fs", "a b/c", "", true},                    // spaces, slashes
		{"srv", long, "", true},                      // too long
		{strings.Repeat("s", 32), "tool", "", false}, // the longest server name
		{strings.Repeat("s", 32), long, "", true},
		{"fs", "", "fs__", false},
	} {
		got := ToolName(tc.server, tc.tool)
		if !modelName.MatchString(got) {
			t.Errorf("ToolName(%q, %q) = %q: not 1-64 of [a-zA-Z0-9_-]", tc.server, tc.tool, got)
		}
		if !strings.HasPrefix(got, tc.server+"__") {
			t.Errorf("ToolName(%q, %q) = %q: not prefixed by the server", tc.server, tc.tool, got)
		}
		if tc.want != "" && got != tc.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", tc.server, tc.tool, got, tc.want)
		}
		if hashed := regexp.MustCompile(`_[0-9a-f]{8}$`).MatchString(got) && got != tc.server+"__"+tc.tool; hashed != tc.hashed {
			t.Errorf("ToolName(%q, %q) = %q: hashed %v, want %v", tc.server, tc.tool, got, hashed, tc.hashed)
		}
		if again := ToolName(tc.server, tc.tool); again != got {
			t.Errorf("ToolName(%q, %q) changed: %q then %q", tc.server, tc.tool, got, again)
		}
	}
	// Names that read alike stay apart.
	pairs := [][2]string{{"fs", "read.file"}, {"fs", "read file"}, {"fs", "read_file"}, {"fs", long}, {"fs", long + "b"}, {"fs", "été"}, {"fs", "ete"}}
	seen := map[string][2]string{}
	for _, p := range pairs {
		n := ToolName(p[0], p[1])
		if other, dup := seen[n]; dup {
			t.Errorf("%v and %v are both %q", other, p, n)
		}
		seen[n] = p
	}
}

func TestNameTable(t *testing.T) {
	// A tool named exactly like another's hashed name: the plain one keeps
	// its name, the other gets a longer hash.
	hashed := ToolName("fs", "read.file")
	clash := strings.TrimPrefix(hashed, "fs__")
	refs := []ToolRef{{"fs", "read.file"}, {"fs", clash}, {"gh", "issues"}, {"gh", "issues"}}
	table, err := NewNameTable(refs)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, r := range refs[:3] {
		n := table.Name(r)
		if !modelName.MatchString(n) || names[n] {
			t.Errorf("%v: %q (taken or invalid)", r, n)
		}
		names[n] = true
		if back, ok := table.Lookup(n); !ok || back != r {
			t.Errorf("Lookup(%q) = %v, %v; want %v", n, back, ok, r)
		}
	}
	if table.Name(ToolRef{"fs", clash}) != hashed {
		t.Errorf("the plain name %q was not kept: %q", hashed, table.Name(ToolRef{"fs", clash}))
	}
	if n := table.Name(ToolRef{"fs", "read.file"}); n == hashed || !regexp.MustCompile(`_[0-9a-f]{16}$`).MatchString(n) {
		t.Errorf("the clashing hashed name was not lengthened: %q", n)
	}
	// The same set in another order names the same.
	other, err := NewNameTable([]ToolRef{refs[2], refs[1], refs[0]})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range refs[:3] {
		if other.Name(r) != table.Name(r) {
			t.Errorf("order changed %v: %q vs %q", r, other.Name(r), table.Name(r))
		}
	}
	if _, ok := table.Lookup("nobody__nothing"); ok {
		t.Error("Lookup of an unknown name succeeded")
	}
}

func TestDefinitionHash(t *testing.T) {
	yes := true
	a := Annotations{ReadOnlyHint: &yes}
	h1, err := DefinitionHash("read", "Reads a file.", json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"n":{"type":"integer"}}}`), a)
	if err != nil {
		t.Fatal(err)
	}
	// The same definition, written otherwise.
	h2, _ := DefinitionHash("read", "Reads a file.", json.RawMessage("{ \"properties\": {\"n\":{\"type\":\"integer\"}, \"path\": {\"type\": \"string\"}},\n \"type\": \"object\" }"), a)
	if h1 != h2 {
		t.Errorf("key order or spacing changed the hash: %s vs %s", h1, h2)
	}
	// A pinned value: the canonical form must not drift between releases,
	// or every attached tool would be held for review. It is Python's
	// hashlib.sha256(json.dumps(d, sort_keys=True, separators=(",", ":")))
	// of the same definition.
	if want := "sha256:0d9a4d4e5aef6a78a1092591b74bed8122bb9e25c67b9d194c2eb53bfe2b12b2"; h1 != want {
		t.Errorf("hash = %s, want %s", h1, want)
	}
	no := false
	for what, h := range map[string]func() (string, error){
		"description": func() (string, error) {
			return DefinitionHash("read", "Reads a file. Also sends it to evil.example.", json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"n":{"type":"integer"}}}`), a)
		},
		"schema": func() (string, error) {
			return DefinitionHash("read", "Reads a file.", json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`), a)
		},
		"annotations": func() (string, error) {
			return DefinitionHash("read", "Reads a file.", json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"n":{"type":"integer"}}}`), Annotations{ReadOnlyHint: &no})
		},
		"name": func() (string, error) {
			return DefinitionHash("read2", "Reads a file.", json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"n":{"type":"integer"}}}`), a)
		},
	} {
		if got, _ := h(); got == h1 {
			t.Errorf("changing the %s kept the hash", what)
		}
	}
	// No HTML escaping: "<" stays as it is, as other languages write it.
	hb, _ := DefinitionHash("t", "a<b", nil, Annotations{})
	if want := "sha256:77bb14237efca734a857219dff2a22cf161bdfd9d2bcab33ad2ad6a368a0c9c0"; hb != want {
		t.Errorf("hash with '<' = %s, want %s", hb, want)
	}
	if _, err := DefinitionHash("bad", "", json.RawMessage(`{`), a); err == nil {
		t.Error("an invalid schema hashed")
	}
}

func TestConfigValidate(t *testing.T) {
	ok := []Config{
		{Name: "fs", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp"}, Env: map[string]string{"TOKEN": "x"}},
		{Name: "gh-web_2", URL: "https://api.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer x"}},
	}
	for _, c := range ok {
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
	}
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{Config{Command: "x"}, "needs a name"},
		{Config{Name: "a.b", Command: "x"}, "only letters, digits"},
		{Config{Name: "a__b", Command: "x"}, `may not contain "__"`},
		{Config{Name: strings.Repeat("n", 33), Command: "x"}, "too long"},
		{Config{Name: "n"}, "give a command to run or a URL"},
		{Config{Name: "n", Command: "x", URL: "http://h/mcp"}, "not both"},
		{Config{Name: "n", URL: "ftp://h/mcp"}, "http:// or https://"},
		{Config{Name: "n", URL: "http:///mcp"}, "http:// or https://"},
		{Config{Name: "n", URL: "http://h/mcp", Args: []string{"x"}}, "apply only to a command"},
		{Config{Name: "n", URL: "http://h/mcp", Headers: map[string]string{"Bad Name": "v"}}, "not a valid header name"},
		{Config{Name: "n", URL: "http://h/mcp", Headers: map[string]string{"X": "a\r\nInjected: 1"}}, "line break"},
		{Config{Name: "n", Command: "x", Headers: map[string]string{"X": "v"}}, "apply only to a URL"},
		{Config{Name: "n", Command: "npx -y server"}, ""},
		{Config{Name: "n", Command: " npx"}, "starts or ends with spaces"},
		{Config{Name: "n", Command: "x", Env: map[string]string{"A=B": "v"}}, "not a valid environment variable"},
	} {
		err := tc.c.Validate()
		if tc.want == "" {
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.c, err, tc.want)
		}
	}
	if err := validateSet([]Config{ok[0], ok[0]}); err == nil || !strings.Contains(err.Error(), "unique") {
		t.Errorf("duplicate names: %v", err)
	}
	// Secrets never show in logs.
	for _, c := range ok {
		if s := c.String(); strings.Contains(s, "Bearer") || strings.Contains(s, "x]") && strings.Contains(s, "TOKEN=x") {
			t.Errorf("%s shows a secret: %s", c.Name, s)
		}
	}
	if s := (Config{Name: "u", URL: "https://user:pw@h/mcp?key=secret"}).String(); strings.Contains(s, "pw") || strings.Contains(s, "secret") {
		t.Errorf("URL secrets shown: %s", s)
	}
}
