package mcpfill

import (
	"strings"
	"testing"
)

// TestOversizedProgressTokenSpellings: every key encoding/json would take
// for "progressToken" is found, whatever its case or escapes, while a
// request that names no progress token is passed without being decoded.
func TestOversizedProgressTokenSpellings(t *testing.T) {
	big := `"` + strings.Repeat("x", MaxProgressTokenBytes) + `"`
	call := func(meta string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a","_meta":{` + meta + `}}}`)
	}
	for _, tc := range []struct {
		name      string
		body      []byte
		may, over bool
	}{
		{"exact", call(`"progressToken":` + big), true, true},
		{"upper case", call(`"PROGRESSTOKEN":` + big), true, true},
		{"mixed case", call(`"pRoGrEsStOkEn":` + big), true, true},
		{"escaped letter", call(`"progress\u0054oken":` + big), true, true},
		{"escaped p", call(`"\u0070rogressToken":` + big), true, true},
		{"small token", call(`"progressToken":"t"`), true, false},
		{"no token", call(`"other":` + big), false, false},
		{"the word in a value only", call(`"other":"progressToken is not here"`), true, false},
		{"no _meta", []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mayNameProgressToken(tc.body); got != tc.may {
				t.Errorf("mayNameProgressToken = %v, want %v", got, tc.may)
			}
			id, _, over := oversizedProgressToken(tc.body)
			if over != tc.over {
				t.Fatalf("oversized = %v, want %v", over, tc.over)
			}
			if over && string(id) != "7" {
				t.Errorf("id %s, want 7", id)
			}
		})
	}
}
