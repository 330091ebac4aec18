package agent

import (
	"context"
	"encoding/json"
)

// Tool is something an agent can do besides talking: the model calls it by
// name with JSON arguments and reads its text result.
type Tool interface {
	Spec() ToolSpec
	// Call runs the tool. An error is shown to the model, which may recover.
	Call(ctx context.Context, args json.RawMessage) (string, error)
}
