package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// CheckSchema compiles an agent's response schema as this server serves
// it, the outputSchema (a non-object root wrapped as "result"), with the
// compiler mcp-go validates structured results with. mcp-go skips the
// validation of a schema that does not compile, so such a schema is
// refused here, when the agent is saved: it is agent.Config.CheckSchema.
// The error is the compiler's message.
func CheckSchema(schema json.RawMessage) error {
	out, _ := outputSchema(schema)
	if out == nil {
		return fmt.Errorf("the schema is not JSON")
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	// A virtual URL, as mcp-go uses, and no loader: "$ref" resolves
	// within the schema, never to a file or the network.
	const url = "mem:///deskhand/agent/output-schema.json"
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{})
	if err := c.AddResource(url, doc); err != nil {
		return fmt.Errorf("add the schema: %w", err)
	}
	_, err = c.Compile(url)
	return err // the compiler's message, as is
}
