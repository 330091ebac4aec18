package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver"
	"github.com/deskhand/deskhand/store/storetest"
)

// TestBadResponseSchemaIsRefusedAtSave: with CheckSchema wired, as main
// wires it, an agent whose response schema would not compile as its
// outputSchema is not saved, and the error carries the compiler's message;
// mcp-go would otherwise serve it and skip validating its results.
func TestBadResponseSchemaIsRefusedAtSave(t *testing.T) {
	core, err := agent.New(t.Context(), agent.Config{History: storetest.Open(t), CheckSchema: mcpserver.CheckSchema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(core.Close)
	cases := []struct {
		name, schema string
		want         string // in the error's user message; "" for a good schema
	}{
		{"object", `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`, ""},
		{"array, wrapped as result", `{"type":"array","items":{"type":"string"}}`, ""},
		{"no type", `{"description":"anything"}`, ""},
		{"local ref", `{"type":"object","$defs":{"n":{"type":"number"}},"properties":{"n":{"$ref":"#/$defs/n"}}}`, ""},
		{"unknown type", `{"type":"object","properties":{"n":{"type":"nummber"}}}`, "/properties/n/type"},
		{"unknown type at the root, wrapped", `{"type":"strin"}`, "/properties/result/type"},
		{"negative bound", `{"type":"object","minProperties":-1}`, "/minProperties"},
		{"bad pattern", `{"type":"object","properties":{"a":{"type":"string","pattern":"("}}}`, "not valid regex"},
		{"dangling ref", `{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`, "#/$defs/missing"},
		{"remote ref", `{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}`, "https://example.com/a.json"},
		{"file ref", `{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`, "file:///etc/passwd"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := agent.Agent{Slug: "schema-" + strings.Repeat("x", i+1), Model: "m", ResponseSchema: json.RawMessage(c.schema)}
			_, err := core.Agents().Save(t.Context(), a)
			if c.want == "" {
				if err != nil {
					t.Errorf("SaveAgent refused a good schema: %v", err)
				}
				return
			}
			msg := agent.UserMessage(err)
			if err == nil || !strings.Contains(msg, "response schema") || !strings.Contains(msg, c.want) {
				t.Errorf("SaveAgent = %v (user message %q); want it refused, naming %q", err, msg, c.want)
			}
			if _, ok := core.Agents().BySlug(a.Slug); ok {
				t.Error("the agent was saved")
			}
		})
	}
}
