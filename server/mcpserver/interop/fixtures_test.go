package interop_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/deskhand/deskhand/server/mcpserver"
)

// The fixtures the conformance suite's 2026-07-28 input-required scenarios
// call. They live here, in test code, and are served by Deskhand's real
// protocol layer (guard, requestState sealing and verification, mcp-go) as
// extra tools: never in the product.

func elicit(message, field, typ string) mcp.InputRequest {
	return mcp.NewElicitationInputRequest(mcp.ElicitationParams{
		Message: message,
		RequestedSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{field: map[string]any{"type": typ}},
			"required":   []string{field},
		},
	})
}

func sample(text string, maxTokens int) mcp.InputRequest {
	return mcp.NewSamplingInputRequest(mcp.CreateMessageParams{
		Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(text)}},
		MaxTokens: maxTokens,
	})
}

// accepted returns the content field of an accepted elicitation answer.
func accepted(req mcp.CallToolRequest, key, field string) (any, bool) {
	r := server.ElicitationResponse(req.Params.InputResponses, key)
	if r == nil || r.Action != mcp.ElicitationResponseActionAccept {
		return nil, false
	}
	content, _ := r.Content.(map[string]any)
	v, ok := content[field]
	return v, ok
}

func sampledText(req mcp.CallToolRequest, key string) (string, bool) {
	r := server.SamplingResponse(req.Params.InputResponses, key)
	if r == nil {
		return "", false
	}
	c, err := mcp.ParseSamplingContent(r.Content)
	if err != nil {
		return "", false
	}
	if tc, ok := c.(mcp.TextContent); ok {
		return tc.Text, true
	}
	return fmt.Sprint(c), true
}

func rootsListed(req mcp.CallToolRequest, key string) ([]string, bool) {
	r := server.RootsResponse(req.Params.InputResponses, key)
	if r == nil {
		return nil, false
	}
	var uris []string
	for _, root := range r.Roots {
		uris = append(uris, root.URI)
	}
	return uris, true
}

func inputRequired(reqs mcp.InputRequests, state string) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Result:               mcp.Result{ResultType: mcp.ResultTypeInputRequired},
		MultiRoundTripResult: mcp.MultiRoundTripResult{InputRequests: reqs, RequestState: state},
	}
}

func fixtureTool(name string, h server.ToolHandlerFunc) server.ServerTool {
	return server.ServerTool{Tool: mcp.NewTool(name, mcp.WithDescription("conformance fixture")), Handler: h}
}

// inputRequiredFixtures are the tools and the prompt of the suite's
// input-required scenarios. srv is set once the server exists.
func inputRequiredFixtures(srv **mcpserver.Server) ([]server.ServerTool, []server.ServerPrompt) {
	seal := func(ctx context.Context, tool string, round int) string { return (*srv).SealState(ctx, tool, round) }
	nameQ := func() mcp.InputRequest { return elicit("What is your name?", "name", "string") }
	tools := []server.ServerTool{
		fixtureTool("test_input_required_result_elicitation", func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if name, ok := accepted(req, "user_name", "name"); ok {
				if s, isText := name.(string); isText {
					return mcp.NewToolResultText("Hello, " + s + "!"), nil
				}
			}
			return inputRequired(mcp.InputRequests{"user_name": nameQ()}, ""), nil
		}),
		fixtureTool("test_input_required_result_sampling", func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if text, ok := sampledText(req, "capital_question"); ok {
				return mcp.NewToolResultText("The model said: " + text), nil
			}
			return inputRequired(mcp.InputRequests{"capital_question": sample("What is the capital of France?", 100)}, ""), nil
		}),
		fixtureTool("test_input_required_result_list_roots", func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if uris, ok := rootsListed(req, "client_roots"); ok {
				return mcp.NewToolResultText("Roots: " + strings.Join(uris, ", ")), nil
			}
			return inputRequired(mcp.InputRequests{"client_roots": mcp.NewRootsInputRequest()}, ""), nil
		}),
		fixtureTool("test_input_required_result_request_state", func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if _, verified := mcpserver.StateVerified(ctx); verified {
				if ok, answered := accepted(req, "confirm", "ok"); answered {
					return mcp.NewToolResultText(fmt.Sprintf("state-ok: confirmed %v", ok)), nil
				}
			}
			return inputRequired(mcp.InputRequests{"confirm": elicit("Please confirm", "ok", "boolean")},
				seal(ctx, "test_input_required_result_request_state", 1)), nil
		}),
		fixtureTool("test_input_required_result_multiple_inputs", func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			name, okName := accepted(req, "user_name", "name")
			greeting, okGreeting := sampledText(req, "greeting")
			roots, okRoots := rootsListed(req, "client_roots")
			if _, verified := mcpserver.StateVerified(ctx); verified && okName && okGreeting && okRoots {
				return mcp.NewToolResultText(fmt.Sprintf("name=%v greeting=%s roots=%s", name, greeting, strings.Join(roots, ","))), nil
			}
			return inputRequired(mcp.InputRequests{
				"user_name":    nameQ(),
				"greeting":     sample("Generate a greeting", 50),
				"client_roots": mcp.NewRootsInputRequest(),
			}, seal(ctx, "test_input_required_result_multiple_inputs", 1)), nil
		}),
		fixtureTool("test_input_required_result_multi_round", func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			round, verified := mcpserver.StateVerified(ctx)
			name, okName := accepted(req, "step1", "name")
			if verified && round == 2 {
				if color, ok := accepted(req, "step2", "color"); ok {
					return mcp.NewToolResultText(fmt.Sprintf("Done: favourite color %v", color)), nil
				}
			}
			if verified && round == 1 && okName {
				return inputRequired(mcp.InputRequests{"step2": elicit(fmt.Sprintf("Step 2: What is your favorite color, %v?", name), "color", "string")},
					seal(ctx, "test_input_required_result_multi_round", 2)), nil
			}
			return inputRequired(mcp.InputRequests{"step1": elicit("Step 1: What is your name?", "name", "string")},
				seal(ctx, "test_input_required_result_multi_round", 1)), nil
		}),
		fixtureTool("test_input_required_result_tampered_state", func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if _, verified := mcpserver.StateVerified(ctx); verified {
				return mcp.NewToolResultText("state intact"), nil
			}
			return inputRequired(mcp.InputRequests{"confirm": elicit("Please confirm", "ok", "boolean")},
				seal(ctx, "test_input_required_result_tampered_state", 1)), nil
		}),
		fixtureTool("test_input_required_result_capabilities", func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if len(req.Params.InputResponses) > 0 {
				return mcp.NewToolResultText("thanks"), nil
			}
			caps := mcp.ClientCapabilities{}
			if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.ClientCapabilities != nil {
				caps = *info.ClientCapabilities
			}
			reqs := mcp.InputRequests{}
			if caps.Elicitation != nil {
				reqs["user_name"] = nameQ()
			}
			if caps.Sampling != nil {
				reqs["greeting"] = sample("Generate a greeting", 50)
			}
			if caps.Roots != nil {
				reqs["client_roots"] = mcp.NewRootsInputRequest()
			}
			if len(reqs) == 0 {
				return mcp.NewToolResultText("nothing to ask this client"), nil
			}
			return inputRequired(reqs, ""), nil
		}),
	}
	prompts := []server.ServerPrompt{{
		Prompt: mcp.NewPrompt("test_input_required_result_prompt", mcp.WithPromptDescription("conformance fixture")),
		Handler: func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			if r := server.ElicitationResponse(req.Params.InputResponses, "user_context"); r != nil && r.Action == mcp.ElicitationResponseActionAccept {
				content, _ := r.Content.(map[string]any)
				return mcp.NewGetPromptResult("with context", []mcp.PromptMessage{
					mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(fmt.Sprintf("Use this context: %v", content["context"]))),
				}), nil
			}
			return server.NewInputRequestBuilder("").Elicit("user_context", mcp.ElicitationParams{
				Message: "What context should the prompt use?",
				RequestedSchema: map[string]any{"type": "object",
					"properties": map[string]any{"context": map[string]any{"type": "string"}}, "required": []string{"context"}},
			}).PromptResult(), nil
		},
	}}
	return tools, prompts
}

// taskFixtures are the tools of the suite's Tasks scenarios.
func taskFixtures() []server.ServerTool {
	sleep := func(ctx context.Context, seconds float64) error {
		select {
		case <-time.After(time.Duration(seconds * float64(time.Second))):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	confirm := func(key, message string) mcp.InputRequest { return elicit(message, "confirm", "boolean") }
	withTask := func(name string, support mcp.TaskSupport, props ...mcp.ToolOption) mcp.Tool {
		opts := append([]mcp.ToolOption{mcp.WithDescription("conformance fixture"), mcp.WithTaskSupport(support)}, props...)
		return mcp.NewTool(name, opts...)
	}
	return []server.ServerTool{
		{Tool: mcp.NewTool("greet", mcp.WithDescription("conformance fixture"), mcp.WithString("name")),
			Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("Hello, " + req.GetString("name", "world") + "!"), nil
			}},
		{Tool: withTask("slow_compute", mcp.TaskSupportOptional, mcp.WithNumber("seconds"), mcp.WithString("label")),
			Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if err := sleep(ctx, req.GetFloat("seconds", 0)); err != nil {
					return mcp.NewToolResultError("cancelled"), nil
				}
				return mcp.NewToolResultText("computed " + req.GetString("label", "")), nil
			}},
		{Tool: withTask("failing_job", mcp.TaskSupportRequired),
			Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				_ = sleep(ctx, 1)
				return mcp.NewToolResultError("the job failed, as it always does"), nil
			}},
		{Tool: withTask("protocol_error_job", mcp.TaskSupportOptional),
			Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				panic("protocol_error_job always panics")
			}},
		{Tool: withTask("confirm_delete", mcp.TaskSupportOptional),
			Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if ok, answered := accepted(req, "confirm", "confirm"); answered {
					return mcp.NewToolResultText(fmt.Sprintf("deleted: %v", ok)), nil
				}
				return inputRequired(mcp.InputRequests{"confirm": confirm("confirm", "Delete the file?")}, ""), nil
			}},
		{Tool: withTask("test_tool_with_task", mcp.TaskSupportRequired),
			Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				name, ok := accepted(req, "user_name", "name")
				if !ok {
					return inputRequired(mcp.InputRequests{"user_name": elicit("What is your name?", "name", "string")}, ""), nil
				}
				if err := sleep(ctx, 0.5); err != nil {
					return mcp.NewToolResultError("cancelled"), nil
				}
				return mcp.NewToolResultText(fmt.Sprintf("Hello, %v, from a task!", name)), nil
			}},
		{Tool: withTask("multi_input", mcp.TaskSupportOptional),
			Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				a, okA := accepted(req, "first", "confirm")
				b, okB := accepted(req, "second", "confirm")
				if okA && okB {
					return mcp.NewToolResultText(fmt.Sprintf("first=%v second=%v", a, b)), nil
				}
				return inputRequired(mcp.InputRequests{"first": confirm("first", "First?"), "second": confirm("second", "Second?")}, ""), nil
			}},
	}
}
