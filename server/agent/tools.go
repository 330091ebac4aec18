package agent

import (
	"context"
	"encoding/json"
)

// Tool is something an agent can do besides talking: the model calls it by
// name with JSON arguments and reads its text result.
type Tool interface {
	Spec() ToolSpec
	// Call runs the tool for the agent. An error is shown to the model,
	// which may recover; a *UserError's message is what it sees.
	Call(ctx context.Context, agent Agent, args json.RawMessage) (string, error)
}

// ApprovalDefaulter is implemented by tools that need approval unless the
// user says otherwise (write_file, fetch_url).
type ApprovalDefaulter interface {
	NeedsApprovalByDefault() bool
}
