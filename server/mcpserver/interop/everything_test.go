package interop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/deskhand/deskhand/server/mcpserver"
)

// everythingScenarios are all the server scenarios of
// @modelcontextprotocol/conformance 0.1.16.
var everythingScenarios = []string{
	"server-initialize",
	"logging-set-level",
	"ping",
	"completion-complete",
	"tools-list",
	"tools-call-simple-text",
	"tools-call-image",
	"tools-call-audio",
	"tools-call-embedded-resource",
	"tools-call-mixed-content",
	"tools-call-with-logging",
	"tools-call-error",
	"tools-call-with-progress",
	"tools-call-sampling",
	"tools-call-elicitation",
	"json-schema-2020-12",
	"elicitation-sep1034-defaults",
	"server-sse-polling",
	"server-sse-multiple-streams",
	"elicitation-sep1330-enums",
	"resources-list",
	"resources-read-text",
	"resources-read-binary",
	"resources-templates-read",
	"resources-subscribe",
	"resources-unsubscribe",
	"prompts-list",
	"prompts-get-simple",
	"prompts-get-with-args",
	"prompts-get-embedded-resource",
	"prompts-get-with-image",
	"dns-rebinding-protection",
}

// repeatedScenarios send notifications while a call runs, the last of them
// just before the answer: they are run DESKHAND_CONFORMANCE_REPEAT times
// more (default 3), so a notification lost now and then shows.
var repeatedScenarios = []string{"tools-call-with-progress", "tools-call-with-logging"}

// TestConformanceEverything runs every server scenario of conformance
// 0.1.16 against the suite's fixtures served by Deskhand's real protocol
// layer, then the repeated scenarios again and again.
func TestConformanceEverything(t *testing.T) {
	node := setupNode(t)
	node.require22(t)
	repeat := conformanceRepeat(t)
	cli := conformanceCLI(t, node.dir, "@modelcontextprotocol/conformance")
	url := startEverythingServer(t)
	runConformance(t, node, cli, url, everythingScenarios)
	t.Run("repeat", func(t *testing.T) {
		for _, scenario := range repeatedScenarios {
			t.Run(scenario, func(t *testing.T) {
				passed := 0
				for i := range repeat {
					if t.Run(fmt.Sprintf("run-%02d", i+1), func(t *testing.T) {
						runConformance(t, node, cli, url, []string{scenario})
					}) {
						passed++
					}
				}
				t.Logf("%s passed %d/%d runs", scenario, passed, repeat)
			})
		}
	})
}

// conformanceRepeat is DESKHAND_CONFORMANCE_REPEAT, 3 when unset.
func conformanceRepeat(t *testing.T) int {
	t.Helper()
	v := os.Getenv("DESKHAND_CONFORMANCE_REPEAT")
	if v == "" {
		return 3
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("DESKHAND_CONFORMANCE_REPEAT=%q: want a count of runs", v)
	}
	return n
}

// startEverythingServer serves the fixtures of the suite's server
// scenarios.
func startEverythingServer(t *testing.T) string {
	return serveFixtures(t, func(srv **mcpserver.Server) mcpserver.Options {
		return mcpserver.Options{
			ExtraTools:             everythingTools(srv),
			ExtraPrompts:           everythingPrompts(),
			ExtraResources:         everythingResources(),
			ExtraResourceTemplates: everythingTemplates(),
			ExtraServerOptions: []server.ServerOption{
				server.WithLogging(),
				server.WithCompletions(),
				server.WithPromptCompletionProvider(everythingCompletions{}),
				server.WithResourceCapabilities(true, true),
			},
		}
	})
}

// The suite's fixtures, as its scenarios describe them: test code only,
// served beside the (absent) agents as extra tools, prompts and resources.

const (
	// redPixelPNG is a 1x1 red PNG.
	redPixelPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAAEElEQVR4nGL6z8AACAAA//8DCQECWLbVUAAAAABJRU5ErkJggg=="
	// silentWAV is 1 ms of 8 kHz, 8-bit mono silence.
	silentWAV = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA=="
)

func suiteTool(name string, h server.ToolHandlerFunc, opts ...mcp.ToolOption) server.ServerTool {
	opts = append([]mcp.ToolOption{mcp.WithDescription("conformance fixture: " + name)}, opts...)
	return server.ServerTool{Tool: mcp.NewTool(name, opts...), Handler: h}
}

func toolResult(content ...mcp.Content) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: content}
}

// waitFor waits d, or less if the call ends.
func waitFor(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}

// clientCapabilities are what the legacy session's client declared.
func clientCapabilities(ctx context.Context) mcp.ClientCapabilities {
	if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		return s.GetClientCapabilities()
	}
	return mcp.ClientCapabilities{}
}

// elicitForm asks the client to fill in schema (elicitation/create, on the
// call's stream) and describes the answer.
func elicitForm(ctx context.Context, srv *mcpserver.Server, prefix, message string, schema map[string]any) *mcp.CallToolResult {
	if clientCapabilities(ctx).Elicitation == nil {
		return mcp.NewToolResultError("the client does not support elicitation")
	}
	res, err := srv.MCP().RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{Message: message, RequestedSchema: schema}})
	if err != nil {
		return mcp.NewToolResultError("elicitation failed: " + err.Error())
	}
	content, _ := json.Marshal(res.Content)
	return mcp.NewToolResultText(fmt.Sprintf("%saction=%s, content=%s", prefix, res.Action, content))
}

func formSchema(properties map[string]any, required ...string) map[string]any {
	schema := map[string]any{"type": "object", "properties": properties}
	if len(required) > 0 {
		schema["required"] = required
	}
	return schema
}

func titledChoices(values ...string) []map[string]any {
	out := make([]map[string]any, 0, len(values)/2)
	for i := 0; i+1 < len(values); i += 2 {
		out = append(out, map[string]any{"const": values[i], "title": values[i+1]})
	}
	return out
}

// jsonSchema2020 is the input schema json-schema-2020-12 wants kept as it is.
const jsonSchema2020 = `{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"$defs": {
		"address": {
			"type": "object",
			"properties": {"street": {"type": "string"}, "city": {"type": "string"}}
		}
	},
	"properties": {
		"name": {"type": "string"},
		"address": {"$ref": "#/$defs/address"}
	},
	"additionalProperties": false
}`

// everythingTools are the tools of the tools-* scenarios, and of
// json-schema-2020-12, elicitation-sep1034-defaults, elicitation-sep1330-enums
// and server-sse-polling. srv is set once the server exists.
func everythingTools(srv **mcpserver.Server) []server.ServerTool {
	return []server.ServerTool{
		// tools-call-simple-text, tools-call-image, tools-call-audio,
		// tools-call-embedded-resource, tools-call-mixed-content,
		// tools-call-error: fixed results.
		suiteTool("test_simple_text", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("This is a simple text response for testing."), nil
		}),
		suiteTool("test_image_content", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return toolResult(mcp.NewImageContent(redPixelPNG, "image/png")), nil
		}),
		suiteTool("test_audio_content", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return toolResult(mcp.NewAudioContent(silentWAV, "audio/wav")), nil
		}),
		suiteTool("test_embedded_resource", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return toolResult(mcp.NewEmbeddedResource(mcp.TextResourceContents{
				URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content.",
			})), nil
		}),
		suiteTool("test_multiple_content_types", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return toolResult(
				mcp.NewTextContent("Multiple content types test:"),
				mcp.NewImageContent(redPixelPNG, "image/png"),
				mcp.NewEmbeddedResource(mcp.TextResourceContents{
					URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`,
				}),
			), nil
		}),
		suiteTool("test_error_handling", func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError("This tool intentionally returns an error for testing"), nil
		}),

		// tools-call-with-logging: three info messages, 50 ms apart, the
		// last just before the answer.
		suiteTool("test_tool_with_logging", func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
				if i > 0 {
					waitFor(ctx, 50*time.Millisecond)
				}
				if err := (*srv).Log(ctx, mcp.LoggingLevelInfo, "test_tool_with_logging", msg); err != nil {
					return nil, err
				}
			}
			return mcp.NewToolResultText("Tool with logging executed successfully"), nil
		}),

		// tools-call-with-progress: 0, 50 and 100 of 100, 50 ms apart,
		// when the call asked for progress.
		suiteTool("test_tool_with_progress", func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var token mcp.ProgressToken
			if req.Params.Meta != nil {
				token = req.Params.Meta.ProgressToken
			}
			for i, progress := range []int{0, 50, 100} {
				if i > 0 {
					waitFor(ctx, 50*time.Millisecond)
				}
				if token == nil {
					continue
				}
				if err := (*srv).Notify(ctx, string(mcp.MethodNotificationProgress), map[string]any{
					"progressToken": token, "progress": progress, "total": 100,
				}); err != nil {
					return nil, err
				}
			}
			return mcp.NewToolResultText("Tool with progress executed successfully"), nil
		}),

		// tools-call-sampling: sampling/createMessage with the prompt.
		suiteTool("test_sampling", func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if clientCapabilities(ctx).Sampling == nil {
				return mcp.NewToolResultError("the client does not support sampling"), nil
			}
			//lint:ignore SA1019 the suite's tools-call-sampling scenario tests legacy-era sampling/createMessage
			res, err := (*srv).MCP().RequestSampling(ctx, mcp.CreateMessageRequest{CreateMessageParams: mcp.CreateMessageParams{
				Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(req.GetString("prompt", ""))}},
				MaxTokens: 100,
			}})
			if err != nil {
				return mcp.NewToolResultError("sampling failed: " + err.Error()), nil
			}
			content, err := mcp.ParseSamplingContent(res.Content)
			if err != nil {
				return mcp.NewToolResultError("sampling answered no content: " + err.Error()), nil
			}
			text := fmt.Sprint(content)
			if tc, ok := content.(mcp.TextContent); ok {
				text = tc.Text
			}
			return mcp.NewToolResultText("LLM response: " + text), nil
		}, mcp.WithString("prompt", mcp.Required(), mcp.Description("The prompt to send to the LLM"))),

		// tools-call-elicitation: elicitation/create with the message.
		suiteTool("test_elicitation", func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return elicitForm(ctx, *srv, "User response: ", req.GetString("message", ""), formSchema(map[string]any{
				"username": map[string]any{"type": "string", "description": "User's response"},
				"email":    map[string]any{"type": "string", "description": "User's email address"},
			}, "username", "email")), nil
		}, mcp.WithString("message", mcp.Required(), mcp.Description("The message to show the user"))),

		// elicitation-sep1034-defaults: a default for each primitive type.
		suiteTool("test_elicitation_sep1034_defaults", func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return elicitForm(ctx, *srv, "Elicitation completed: ", "Please review your information", formSchema(map[string]any{
				"name":     map[string]any{"type": "string", "default": "John Doe"},
				"age":      map[string]any{"type": "integer", "default": 30},
				"score":    map[string]any{"type": "number", "default": 95.5},
				"status":   map[string]any{"type": "string", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
				"verified": map[string]any{"type": "boolean", "default": true},
			})), nil
		}),

		// elicitation-sep1330-enums: the five kinds of enum.
		suiteTool("test_elicitation_sep1330_enums", func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return elicitForm(ctx, *srv, "Elicitation completed: ", "Please make your choices", formSchema(map[string]any{
				"untitledSingle": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}},
				"titledSingle": map[string]any{"type": "string",
					"oneOf": titledChoices("value1", "First Option", "value2", "Second Option", "value3", "Third Option")},
				"legacyEnum": map[string]any{"type": "string", "enum": []string{"opt1", "opt2", "opt3"},
					"enumNames": []string{"Option One", "Option Two", "Option Three"}},
				"untitledMulti": map[string]any{"type": "array",
					"items": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}}},
				"titledMulti": map[string]any{"type": "array",
					"items": map[string]any{"anyOf": titledChoices("value1", "First Choice", "value2", "Second Choice", "value3", "Third Choice")}},
			})), nil
		}),

		// json-schema-2020-12: an input schema listed as written.
		{Tool: mcp.NewToolWithRawSchema("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features", json.RawMessage(jsonSchema2020)),
			Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("Hello, " + req.GetString("name", "world") + "!"), nil
			}},

		// server-sse-polling (SEP-1699): the call closes its event stream
		// before it answers; the client resumes with Last-Event-ID.
		suiteTool("test_reconnection", func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if !(*srv).CloseCallStream(ctx) {
				return mcp.NewToolResultError("this call's stream cannot be resumed (2025-11-25 sessions only)"), nil
			}
			waitFor(ctx, 100*time.Millisecond)
			return mcp.NewToolResultText("Reconnection test completed"), nil
		}),
	}
}

// everythingResources serve resources-list, resources-read-text,
// resources-read-binary, resources-subscribe and resources-unsubscribe.
func everythingResources() []server.ServerResource {
	static := func(uri, name, mime string, contents mcp.ResourceContents) server.ServerResource {
		return server.ServerResource{
			Resource: mcp.NewResource(uri, name, mcp.WithResourceDescription("conformance fixture: "+name), mcp.WithMIMEType(mime)),
			Handler: func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				return []mcp.ResourceContents{contents}, nil
			},
		}
	}
	return []server.ServerResource{
		static("test://static-text", "static-text", "text/plain",
			mcp.TextResourceContents{URI: "test://static-text", MIMEType: "text/plain", Text: "This is the content of the static text resource."}),
		static("test://static-binary", "static-binary", "image/png",
			mcp.BlobResourceContents{URI: "test://static-binary", MIMEType: "image/png", Blob: redPixelPNG}),
		static("test://watched-resource", "watched-resource", "text/plain",
			mcp.TextResourceContents{URI: "test://watched-resource", MIMEType: "text/plain", Text: "A resource to subscribe to."}),
	}
}

// everythingTemplates serve resources-templates-read.
func everythingTemplates() []server.ServerResourceTemplate {
	return []server.ServerResourceTemplate{{
		Template: mcp.NewResourceTemplate("test://template/{id}/data", "template-data",
			mcp.WithTemplateDescription("conformance fixture: data by id"), mcp.WithTemplateMIMEType("application/json")),
		Handler: func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			ids, _ := req.Params.Arguments["id"].([]string)
			if len(ids) != 1 {
				return nil, fmt.Errorf("%s: %w", req.Params.URI, server.ErrResourceNotFound)
			}
			data, err := json.Marshal(map[string]any{"id": ids[0], "templateTest": true, "data": "Data for ID: " + ids[0]})
			if err != nil {
				return nil, err
			}
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json", Text: string(data)}}, nil
		},
	}}
}

// everythingPrompts serve the prompts-* scenarios (and the prompt
// completion-complete completes).
func everythingPrompts() []server.ServerPrompt {
	prompt := func(name string, h server.PromptHandlerFunc, opts ...mcp.PromptOption) server.ServerPrompt {
		opts = append([]mcp.PromptOption{mcp.WithPromptDescription("conformance fixture: " + name)}, opts...)
		return server.ServerPrompt{Prompt: mcp.NewPrompt(name, opts...), Handler: h}
	}
	user := func(content mcp.Content) mcp.PromptMessage { return mcp.NewPromptMessage(mcp.RoleUser, content) }
	required := func(name, description string) mcp.PromptOption {
		return mcp.WithArgument(name, mcp.ArgumentDescription(description), mcp.RequiredArgument())
	}
	return []server.ServerPrompt{
		prompt("test_simple_prompt", func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("A simple prompt", []mcp.PromptMessage{
				user(mcp.NewTextContent("This is a simple prompt for testing.")),
			}), nil
		}),
		prompt("test_prompt_with_arguments", func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			args := req.Params.Arguments
			return mcp.NewGetPromptResult("A prompt with arguments", []mcp.PromptMessage{
				user(mcp.NewTextContent(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", args["arg1"], args["arg2"]))),
			}), nil
		}, required("arg1", "First test argument"), required("arg2", "Second test argument")),
		prompt("test_prompt_with_embedded_resource", func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("A prompt with an embedded resource", []mcp.PromptMessage{
				user(mcp.NewEmbeddedResource(mcp.TextResourceContents{
					URI: req.Params.Arguments["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing.",
				})),
				user(mcp.NewTextContent("Please process the embedded resource above.")),
			}), nil
		}, required("resourceUri", "URI of the resource to embed")),
		prompt("test_prompt_with_image", func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("A prompt with an image", []mcp.PromptMessage{
				user(mcp.NewImageContent(redPixelPNG, "image/png")),
				user(mcp.NewTextContent("Please analyze the image above.")),
			}), nil
		}),
	}
}

// everythingCompletions serve completion-complete: the values of
// test_prompt_with_arguments' arguments that start with what was typed.
type everythingCompletions struct{}

func (everythingCompletions) CompletePromptArgument(_ context.Context, prompt string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	values := []string{}
	if prompt == "test_prompt_with_arguments" {
		for _, v := range []string{"paris", "park", "party", "testValue1", "testValue2"} {
			if strings.HasPrefix(v, arg.Value) {
				values = append(values, v)
			}
		}
	}
	return &mcp.Completion{Values: values, Total: len(values)}, nil
}
