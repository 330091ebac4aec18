package connect

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deskhand/deskhand/server/agent"
)

// TestPlanImport: a server is imported with its secrets set apart for the
// keychain, unless its name is taken, a secret sits where the keychain
// cannot hold it, or the client fills in its values; each left one says
// what to do.
func TestPlanImport(t *testing.T) {
	plain := FoundServer{Name: "files", Command: "npx", Args: []string{"-y", "fs"},
		Secrets: []Secret{{Kind: EnvVar, Key: "TOKEN", value: "t0k"}, {Kind: Header, Key: "X-Key", value: "k3y"}}}
	rows := planImport([]FoundServer{
		plain,
		{Name: "taken", Command: "x"},
		{Name: "inargs", Command: "x", SecretArgs: []int{1}},
		{Name: "filled", URL: "https://h/mcp", Refs: []Ref{{Kind: Header, Key: "Authorization", Needs: []string{"environment variable GH"}}}},
	}, []string{"taken"})
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4", len(rows))
	}
	want := agent.ToolServer{Name: "files", Command: "npx", Args: []string{"-y", "fs"}, SecretEnv: []string{"TOKEN"}, SecretHeaders: []string{"X-Key"}}
	if diff := cmp.Diff(want, rows[0].Server); diff != "" || rows[0].Left != "" {
		t.Errorf("plain server (-want +got):\n%s left %q", diff, rows[0].Left)
	}
	if rows[0].sec.Env["TOKEN"] != "t0k" || rows[0].sec.Headers["X-Key"] != "k3y" {
		t.Errorf("its secrets: %+v", rows[0].sec)
	}
	for i, want := range []string{"registered already", "keychain cannot hold", "the client fills in environment variable GH"} {
		if got := rows[i+1].Left; !strings.Contains(got, want) {
			t.Errorf("%s: left %q, want it to say %q", rows[i+1].Found.Name, got, want)
		}
	}
}
