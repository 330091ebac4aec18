package connect

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// besides lists the files beside p other than its lock file.
func besides(t *testing.T, p string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(p))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if n := e.Name(); n != filepath.Base(p) && n != filepath.Base(p)+lockSuffix {
			out = append(out, n)
		}
	}
	return out
}

// nested returns open repeated n times, then close repeated n times.
func nested(prefix, open, body, close string, n int) string {
	return prefix + strings.Repeat(open, n) + body + strings.Repeat(close, n)
}

// TestHostileFilesRefusedBeforeParsing: a file of megabytes of nested
// brackets (which overflowed the parsers' stacks and killed the process),
// nested past the limit, or larger than the limit, is refused by Connect,
// Disconnect and Status with an error that names the file, the limit and
// what to do, and is left as it was.
func TestHostileFilesRefusedBeforeParsing(t *testing.T) {
	const twoMB = 2 << 20
	jsonClients := []Client{Cursor, ClaudeCode, VSCode, Windsurf, ClaudeDesktop}
	tests := []struct {
		name    string
		clients []Client
		body    string
		deep    bool // refused for its nesting (else for its size)
	}{
		{"2 MB of [", Clients(), strings.Repeat("[", twoMB), true},
		{"2 MB of {", jsonClients, strings.Repeat(`{"a":`, twoMB/5), true},
		{"2 MB of [ in a value", []Client{Codex}, "a = " + strings.Repeat("[", twoMB), true},
		{"2 MB of { in a value", []Client{Codex}, "a = " + strings.Repeat("{b=", twoMB/3), true},
		{"2 MB dotted key", []Client{Codex}, "a" + strings.Repeat(".a", twoMB/2) + " = 1\n", true},
		{"2 MB dotted table", []Client{Codex}, "[a" + strings.Repeat(".a", twoMB/2) + "]\nx = 1\n", true},
		{"2 MB dotted key in an inline table", []Client{Codex}, "x = {a" + strings.Repeat(".a", twoMB/2) + " = 1}\n", true},
		{"one level too deep", jsonClients, nested(`{"mcpServers": {}, "x": `, "[", "", "]", maxDepth) + "}", true},
		{"one level too deep after a comment", []Client{VSCode}, "// [[[\n/* ]]] */" + nested(`{"x": `, "[", "", "]", maxDepth) + "}", true},
		{"one level too deep", []Client{Codex}, nested("x = ", "[", "", "]", maxDepth), true},
		{"one level too deep", []Client{Goose}, nested("x: ", "[", "", "]", maxDepth), true},
		{"one block level too deep", []Client{Goose}, blockNested(maxDepth + 1), true},
		{"a compact sequence too deep", []Client{Goose}, "x:\n" + strings.Repeat("- ", maxDepth) + "y\n", true},
		{"2 MB of - ", []Client{Goose}, strings.Repeat("- ", twoMB/2), true},
		{"one level too deep in a table", []Client{Codex}, "[a.b]\n" + nested("c = ", "[", "", "]", maxDepth-2), true},
		{"too large", []Client{Cursor, VSCode, Windsurf, Codex, ClaudeDesktop, Goose}, "#" + strings.Repeat(" ", maxSize), false},
	}
	for _, tc := range tests {
		for _, c := range tc.clients {
			t.Run(tc.name+"/"+c.ID, func(t *testing.T) {
				env := testEnv(t)
				p, _ := Path(c, env)
				writeFile(t, p, []byte(tc.body), 0o644)
				_, errConnect := Connect(c, env, entryFor(c))
				_, errDisconnect := Disconnect(c, env, "")
				_, errStatus := Status(c, env, "")
				for _, err := range []error{errConnect, errDisconnect, errStatus} {
					var le *LimitError
					if !errors.As(err, &le) || le.TooDeep() != tc.deep {
						t.Fatalf("error = %v, want a LimitError (too deep: %v)", err, tc.deep)
					}
					msg := err.Error()
					for _, want := range []string{p, "fix or move the file and run again"} {
						if !strings.Contains(msg, want) {
							t.Errorf("message %q does not say %q", msg, want)
						}
					}
				}
				if got := readFile(t, p); string(got) != tc.body {
					t.Error("file changed")
				}
				if entries := besides(t, p); len(entries) != 0 {
					t.Errorf("files written beside it: %v", entries)
				}
			})
		}
	}
}

// blockNested is YAML mappings nested n levels deep by indentation.
func blockNested(n int) string {
	var b strings.Builder
	for i := range n - 1 {
		b.WriteString(strings.Repeat(" ", i) + "a:\n")
	}
	b.WriteString(strings.Repeat(" ", n-1) + "a: 1\n")
	return b.String()
}

// TestNestingWithinTheLimitAccepted: files nested exactly to the limit,
// and brackets inside strings and comments, are read and edited.
func TestNestingWithinTheLimitAccepted(t *testing.T) {
	brackets := strings.Repeat("[", 2*maxDepth)
	tests := []struct {
		client Client
		body   string
	}{
		{Cursor, nested(`{"x": `, "[", "", "]", maxDepth-1) + "}"},
		{ClaudeCode, `{"s": "` + brackets + `", "t": "\"[[[\\"}`},
		{VSCode, "// " + brackets + "\n/* " + brackets + " */\n{\"s\": \"" + brackets + "\",}"},
		{Goose, nested("x: ", "[", "", "]", maxDepth-1) + "\n"},
		{Goose, blockNested(maxDepth)},
		{Goose, "# " + brackets + "\ns: \"" + brackets + "\\\"\"\nl: '" + brackets + "'''\nextensions:\n  a: {b: '[[['}\n"},
		{Codex, nested("x = ", "[", "", "]", maxDepth-1) + "\n"},
		{Codex, "[a.b]\n" + nested("c = ", "{d=", "1", "}", maxDepth/2-2) + "\n"},
		{Codex, "# " + brackets + "\ns = \"" + brackets + "\\\"\"\nl = '" + brackets + "'\n" +
			"m = \"\"\"\n" + brackets + "\"\"\"\"\nn = '''" + brackets + "'''''\n"},
	}
	for _, tc := range tests {
		t.Run(tc.client.ID, func(t *testing.T) {
			env := testEnv(t)
			p, _ := Path(tc.client, env)
			writeFile(t, p, []byte(tc.body), 0o644)
			if _, err := Connect(tc.client, env, entryFor(tc.client)); err != nil {
				t.Fatal(err)
			}
			if st, err := Status(tc.client, env, ""); err != nil || st.Condition != Connected {
				t.Errorf("Status = %+v, %v", st, err)
			}
		})
	}
}

// TestClaudeCodeReadsLargerFiles: ~/.claude.json keeps Claude Code's
// history and grows past what other clients' files may be.
func TestClaudeCodeReadsLargerFiles(t *testing.T) {
	env := testEnv(t)
	p, _ := Path(ClaudeCode, env)
	writeFile(t, p, []byte(`{"history": "`+strings.Repeat("x", maxSize)+`"}`), 0o600)
	if _, err := Connect(ClaudeCode, env, entryFor(ClaudeCode)); err != nil {
		t.Fatal(err)
	}
}
