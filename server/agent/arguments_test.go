package agent_test

import (
	"strings"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
)

func TestCheckArgumentKeys(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70)
	for _, tc := range []struct {
		name, raw string
		names     []string
		want      string // "" when accepted
	}{
		{"exact names", `{"path":"a","content":"b"}`, []string{"path", "content"}, ""},
		{"any names", `{"x":1,"y":[1,{"z":2}]}`, nil, ""},
		{"case variant", `{"Path":"a"}`, []string{"path"}, `unknown argument "Path" (names are case-sensitive); it accepts "path"`},
		{"no arguments taken", `{"a":1}`, []string{}, "it takes no arguments"},
		{"top-level twice", `{"path":"a","path":"b"}`, []string{"path"}, `argument "path" is given twice`},
		{"nested twice", `{"opts":{"k":1,"k":2}}`, nil, `argument "k" is given twice`},
		{"twice in an array", `{"list":[{"k":1},{"k":1,"k":2}]}`, nil, `argument "k" is given twice`},
		{"same key in sibling objects", `{"a":{"k":1},"b":{"k":2}}`, nil, ""},
		{"too deep", deep, nil, "nested more than 64 levels deep"},
		{"not an object", `["a"]`, nil, "must be a JSON object, not array"},
		{"null", `null`, nil, "must be a JSON object, not null"},
		{"cut short", `{"path":`, nil, "not valid JSON"},
		{"trailing data", `{"a":1} {"a":2}`, nil, "unexpected data after the arguments object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := agent.CheckArgumentKeys("tool", []byte(tc.raw), tc.names)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && err == nil:
				t.Errorf("accepted, want %q", tc.want)
			case tc.want != "" && !strings.Contains(agent.UserMessage(err), tc.want):
				t.Errorf("message %q does not contain %q", agent.UserMessage(err), tc.want)
			}
		})
	}
}
