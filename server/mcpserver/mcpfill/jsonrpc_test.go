package mcpfill

import (
	"encoding/json"
	"testing"
)

// TestPeekReadsMetaByExactKey: the peek leaves _meta encoded and reads the
// capabilities and the conversation handle by their exact keys, as mcp-go
// does: a key in another case, or a value of the wrong type, declares
// nothing.
func TestPeekReadsMetaByExactKey(t *testing.T) {
	const conversationKey = "io.deskhand/conversation"
	for _, tc := range []struct {
		name               string
		meta               string
		tasks, elicitation bool
		conversation       string
	}{
		{"none", ``, false, false, ""},
		{"empty", `{}`, false, false, ""},
		{"both", `{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"` + TasksExtension + `":{}}}}`, true, true, ""},
		{"elicitation null", `{"io.modelcontextprotocol/clientCapabilities":{"elicitation":null}}`, false, true, ""},
		{"key in another case", `{"io.modelcontextprotocol/ClientCapabilities":{"elicitation":{}}}`, false, false, ""},
		{"capability in another case", `{"io.modelcontextprotocol/clientCapabilities":{"Elicitation":{},"Extensions":{"` + TasksExtension + `":{}}}}`, false, false, ""},
		{"extensions not an object", `{"io.modelcontextprotocol/clientCapabilities":{"extensions":["` + TasksExtension + `"]}}`, false, false, ""},
		{"capabilities not an object", `{"io.modelcontextprotocol/clientCapabilities":"elicitation"}`, false, false, ""},
		{"conversation", `{"` + conversationKey + `":"c-1"}`, false, false, "c-1"},
		{"conversation not a string", `{"` + conversationKey + `":7}`, false, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`
			if tc.meta != "" {
				body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":` + tc.meta + `}}`
			}
			var msg Peek
			if err := json.Unmarshal([]byte(body), &msg); err != nil {
				t.Fatal(err)
			}
			if got := msg.DeclaresTasks(); got != tc.tasks {
				t.Errorf("declaresTasks = %v, want %v", got, tc.tasks)
			}
			if got := msg.DeclaresElicitation(); got != tc.elicitation {
				t.Errorf("declaresElicitation = %v, want %v", got, tc.elicitation)
			}
			var conversation string
			msg.MetaField(conversationKey, &conversation)
			if conversation != tc.conversation {
				t.Errorf("conversation %q, want %q", conversation, tc.conversation)
			}
		})
	}
}
