package mcpserver

import (
	"encoding/json"
	"testing"
)

// TestPeekReadsMetaByExactKey: the peek leaves _meta encoded and reads the
// capabilities and the conversation handle by their exact keys, as mcp-go
// does: a key in another case, or a value of the wrong type, declares
// nothing.
func TestPeekReadsMetaByExactKey(t *testing.T) {
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
		{"conversation", `{"` + ConversationMetaKey + `":"c-1"}`, false, false, "c-1"},
		{"conversation not a string", `{"` + ConversationMetaKey + `":7}`, false, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`
			if tc.meta != "" {
				body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":` + tc.meta + `}}`
			}
			var msg rpcPeek
			if err := json.Unmarshal([]byte(body), &msg); err != nil {
				t.Fatal(err)
			}
			if got := msg.declaresTasks(); got != tc.tasks {
				t.Errorf("declaresTasks = %v, want %v", got, tc.tasks)
			}
			if got := msg.declaresElicitation(); got != tc.elicitation {
				t.Errorf("declaresElicitation = %v, want %v", got, tc.elicitation)
			}
			var conversation string
			msg.metaField(ConversationMetaKey, &conversation)
			if conversation != tc.conversation {
				t.Errorf("conversation %q, want %q", conversation, tc.conversation)
			}
		})
	}
}
