package agent_test

import (
	"slices"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
)

// TestApprovalFormRemember: the approval form's optional "remember" is
// offered with the narrowings the call has, and what it asks for is read
// back exactly; content that does not fit is refused.
func TestApprovalFormRemember(t *testing.T) {
	q := agent.Question{Kind: agent.KindApproval, Tool: "write_file",
		Scope: agent.ApprovalScope{Path: "/home/a/notes/x.txt", Folder: "/home/a/notes"}}
	props := q.Schema()["properties"].(map[string]any)
	remember := props["remember"].(map[string]any)
	if got, want := remember["enum"].([]string), []string{"once", "always", "always_client", "always_folder"}; !slices.Equal(got, want) {
		t.Errorf("remember enum = %v, want %v", got, want)
	}
	if req := q.Schema()["required"].([]string); !slices.Equal(req, []string{"approve"}) {
		t.Errorf("required = %v: remember must stay optional", req)
	}
	for _, tc := range []struct {
		name    string
		content map[string]any
		by      agent.Answerer
		want    *agent.RuleRequest // nil: once
		fails   bool
	}{
		{"approve alone", map[string]any{"approve": true}, agent.ByClient, nil, false},
		{"once", map[string]any{"approve": true, "remember": "once"}, agent.ByClient, nil, false},
		{"always", map[string]any{"approve": true, "remember": "always"}, agent.ByClient, &agent.RuleRequest{}, false},
		{"this client", map[string]any{"approve": true, "remember": "always_client"}, agent.ByClient, &agent.RuleRequest{Client: true}, false},
		{"this folder", map[string]any{"approve": true, "remember": "always_folder"}, agent.ByClient, &agent.RuleRequest{Folder: "/home/a/notes"}, false},
		{"no host to offer", map[string]any{"approve": true, "remember": "always_host"}, agent.ByClient, nil, true},
		{"not a choice", map[string]any{"approve": true, "remember": "forever"}, agent.ByClient, nil, true},
		{"denial not remembered", map[string]any{"approve": false, "remember": "always"}, agent.ByClient, nil, false},
		{"desktop narrows", map[string]any{"approve": true, "remember": "always", "folder": "/srv/../home/b/", "host": "Example.com", "client": true}, agent.ByDesktop,
			&agent.RuleRequest{Client: true, Folder: "/home/b", Host: "example.com"}, false},
		{"client may not narrow by hand", map[string]any{"approve": true, "remember": "always", "folder": "/"}, agent.ByClient, nil, true},
		{"narrowing without always", map[string]any{"approve": true, "folder": "/home/b"}, agent.ByDesktop, nil, true},
		{"relative folder", map[string]any{"approve": true, "remember": "always", "folder": "notes"}, agent.ByDesktop, nil, true},
		{"host with a scheme", map[string]any{"approve": true, "remember": "always", "host": "https://example.com"}, agent.ByDesktop, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := q.ParseAnswer(tc.content, tc.by)
			if (err != nil) != tc.fails {
				t.Fatalf("ParseAnswer = %+v, %v; want fails %v", a, err, tc.fails)
			}
			if err != nil {
				return
			}
			if (a.Remember == nil) != (tc.want == nil) || (a.Remember != nil && *a.Remember != *tc.want) {
				t.Errorf("Remember = %+v, want %+v", a.Remember, tc.want)
			}
		})
	}
}
