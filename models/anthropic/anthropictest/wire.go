package anthropictest

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// Request is a POST /v1/messages body as the fake reads it: its own
// reading of the wire, apart from the SDK's types, so that a test sees
// what was sent rather than what the SDK meant to send.
type Request struct {
	Model     string `json:"model"`
	MaxTokens *int   `json:"max_tokens"`
	// System is the "system" parameter (a string is read as one text block).
	System       Blocks          `json:"system"`
	Messages     []Message       `json:"messages"`
	Tools        []Tool          `json:"tools"`
	ToolChoice   json.RawMessage `json:"tool_choice"`
	OutputConfig *OutputConfig   `json:"output_config"`
	Thinking     json.RawMessage `json:"thinking"`
	Stream       bool            `json:"stream"`
}

// Message is one entry of "messages".
type Message struct {
	Role    string `json:"role"`
	Content Blocks `json:"content"`
}

// Blocks are content blocks; a string on the wire is read as one text
// block, as the API reads it.
type Blocks []Block

// UnmarshalJSON reads a string or an array of blocks.
func (b *Blocks) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*b = Blocks{{Type: "text", Text: s}}
		return nil
	}
	var list []Block
	if err := json.Unmarshal(data, &list); err != nil {
		return err
	}
	*b = list
	return nil
}

// Text is the text of the text blocks, joined.
func (b Blocks) Text() string {
	var sb strings.Builder
	for _, blk := range b {
		if blk.Type == "text" {
			sb.WriteString(blk.Text)
		}
	}
	return sb.String()
}

// Block is one content block, of any type the fake knows.
type Block struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_result
	ToolUseID string `json:"tool_use_id,omitempty"`
	Content   Blocks `json:"content,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
	// thinking
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
}

// Tool is one entry of "tools".
type Tool struct {
	Type        string          `json:"type,omitempty"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// OutputConfig is "output_config".
type OutputConfig struct {
	Effort string        `json:"effort,omitempty"`
	Format *OutputFormat `json:"format,omitempty"`
}

// OutputFormat is "output_config.format".
type OutputFormat struct {
	Type   string          `json:"type"`
	Schema json.RawMessage `json:"schema"`
}

// errorBody is Anthropic's error shape
// (https://platform.claude.com/docs/en/api/errors):
//
//	{"type":"error","error":{"type":"not_found_error","message":"…"},"request_id":"req_…"}
type errorBody struct {
	Type      string      `json:"type"`
	Error     errorDetail `json:"error"`
	RequestID string      `json:"request_id,omitempty"`
}

type errorDetail struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// usage is the "usage" object of a message and of message_delta.
type usage struct {
	InputTokens              int            `json:"input_tokens"`
	CacheCreationInputTokens int            `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int            `json:"cache_read_input_tokens"`
	CacheCreation            *cacheCreation `json:"cache_creation,omitempty"`
	OutputTokens             int            `json:"output_tokens"`
	ServiceTier              string         `json:"service_tier,omitempty"`
	InferenceGeo             string         `json:"inference_geo,omitempty"`
}

type cacheCreation struct {
	Ephemeral5m int `json:"ephemeral_5m_input_tokens"`
	Ephemeral1h int `json:"ephemeral_1h_input_tokens"`
}

// message is a whole reply (the non-streamed body, and message_start's
// "message" with no content yet).
type message struct {
	Model        string  `json:"model"`
	ID           string  `json:"id"`
	Type         string  `json:"type"`
	Role         string  `json:"role"`
	Content      []any   `json:"content"`
	StopReason   *string `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
	StopDetails  any     `json:"stop_details"`
	Usage        usage   `json:"usage"`
}

// The events of a stream and the blocks in them, with their fields in
// the API's order ("type" first).
type (
	typeOnly struct {
		Type string `json:"type"`
	}
	messageStart struct {
		Type    string  `json:"type"`
		Message message `json:"message"`
	}
	blockStart struct {
		Type         string `json:"type"`
		Index        int    `json:"index"`
		ContentBlock any    `json:"content_block"`
	}
	blockDelta struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
		Delta any    `json:"delta"`
	}
	blockStop struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
	}
	messageDelta struct {
		Type  string `json:"type"`
		Delta struct {
			StopReason   string  `json:"stop_reason"`
			StopSequence *string `json:"stop_sequence"`
			StopDetails  any     `json:"stop_details"`
		} `json:"delta"`
		Usage usage `json:"usage"`
	}
	textBlock struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	thinkingBlock struct {
		Type      string `json:"type"`
		Thinking  string `json:"thinking"`
		Signature string `json:"signature"`
	}
	toolUseBlock struct {
		Type  string          `json:"type"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	}
	textDelta struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	thinkingDelta struct {
		Type     string `json:"type"`
		Thinking string `json:"thinking"`
	}
	signatureDelta struct {
		Type      string `json:"type"`
		Signature string `json:"signature"`
	}
	inputJSONDelta struct {
		Type        string `json:"type"`
		PartialJSON string `json:"partial_json"`
	}
)

// modelJSON is one model of GET /v1/models, shaped as the SDK's
// anthropic.ModelInfo (model.go of anthropic-sdk-go v2.15.0) reads it.
type modelJSON struct {
	ID             string       `json:"id"`
	Type           string       `json:"type"`
	DisplayName    string       `json:"display_name"`
	CreatedAt      string       `json:"created_at"`
	Capabilities   capabilities `json:"capabilities"`
	DeprecatedAt   *string      `json:"deprecated_at"`
	Lifecycle      string       `json:"lifecycle"`
	Line           *string      `json:"line"`
	MaxInputTokens int          `json:"max_input_tokens"`
	MaxTokens      int          `json:"max_tokens"`
	RetiresAt      *string      `json:"retires_at"`
}

type support struct {
	Supported bool `json:"supported"`
}

// capabilities holds every capability the SDK's ModelCapabilities knows
// ("keys are always present for all known capabilities").
type capabilities struct {
	Batch             support `json:"batch"`
	Citations         support `json:"citations"`
	CodeExecution     support `json:"code_execution"`
	ContextManagement struct {
		ClearThinking20251015 support `json:"clear_thinking_20251015"`
		ClearToolUses20250919 support `json:"clear_tool_uses_20250919"`
		Compact20260112       support `json:"compact_20260112"`
		Supported             bool    `json:"supported"`
	} `json:"context_management"`
	Effort struct {
		High      support `json:"high"`
		Low       support `json:"low"`
		Max       support `json:"max"`
		Medium    support `json:"medium"`
		Supported bool    `json:"supported"`
		Xhigh     support `json:"xhigh"`
	} `json:"effort"`
	ImageInput  support `json:"image_input"`
	PDFInput    support `json:"pdf_input"`
	ServerTools struct {
		CodeExecution support `json:"code_execution"`
		Supported     bool    `json:"supported"`
		WebSearch     support `json:"web_search"`
	} `json:"server_tools"`
	StructuredOutputs support `json:"structured_outputs"`
	Thinking          struct {
		Supported bool `json:"supported"`
		Types     struct {
			Adaptive     support `json:"adaptive"`
			BetweenTools support `json:"between_tools"`
			Disabled     support `json:"disabled"`
			Enabled      support `json:"enabled"`
		} `json:"types"`
	} `json:"thinking"`
}

// page is a page of a list (the SDK's pagination.Page).
type page struct {
	Data    []modelJSON `json:"data"`
	HasMore bool        `json:"has_more"`
	FirstID *string     `json:"first_id"`
	LastID  *string     `json:"last_id"`
}

// validate refuses what the API refuses and the adapter could get wrong,
// with the API's messages where they are known; it returns "" when the
// request is well formed.
func (r *Request) validate() string {
	switch {
	case r.Model == "":
		return "model: Field required"
	case r.MaxTokens == nil:
		return "max_tokens: Field required"
	case *r.MaxTokens < 0:
		return "max_tokens: Input should be greater than or equal to 0"
	case len(r.Messages) == 0:
		return "messages: Field required"
	}
	for i, t := range r.Tools {
		if msg := validateTool(i, t); msg != "" {
			return msg
		}
	}
	for _, b := range r.System {
		if b.Type == "text" && strings.TrimSpace(b.Text) == "" {
			return "system: text content blocks must be non-empty"
		}
	}
	for i, m := range r.Messages {
		if m.Role != "user" && m.Role != "assistant" && m.Role != "system" {
			return "messages." + itoa(i) + ".role: Input should be 'user', 'assistant' or 'system'"
		}
		if len(m.Content) == 0 {
			return "messages." + itoa(i) + ": all messages must have non-empty content except for the optional final assistant message"
		}
		textSeen := false
		for j, b := range m.Content {
			at := "messages." + itoa(i) + ".content." + itoa(j)
			switch b.Type {
			case "text":
				if strings.TrimSpace(b.Text) == "" {
					return "messages: text content blocks must be non-empty"
				}
				textSeen = true
			case "tool_use":
				if m.Role != "assistant" {
					return at + ": tool_use blocks may only appear in assistant messages"
				}
				if !validID(b.ID) {
					return at + ".tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"
				}
				if len(bytes.TrimSpace(b.Input)) == 0 || bytes.TrimSpace(b.Input)[0] != '{' {
					return at + ".tool_use.input: Input should be a valid dictionary"
				}
			case "tool_result":
				if m.Role != "user" {
					return at + ": tool_result blocks may only appear in user messages"
				}
				if textSeen {
					return "messages." + itoa(i) + ": tool_result blocks must come before any other content in a user message"
				}
				for _, c := range b.Content {
					if c.Type == "text" && strings.TrimSpace(c.Text) == "" {
						return "messages: text content blocks must be non-empty"
					}
				}
			}
		}
		if msg := checkToolPairs(r.Messages, i); msg != "" {
			return msg
		}
	}
	return ""
}

// checkToolPairs checks that every tool_use of message i is answered by a
// tool_result in message i+1, and that every tool_result of message i
// answers a tool_use of message i-1, with the API's messages.
func checkToolPairs(msgs []Message, i int) string {
	uses := func(m Message) []string {
		var ids []string
		for _, b := range m.Content {
			if b.Type == "tool_use" {
				ids = append(ids, b.ID)
			}
		}
		return ids
	}
	results := func(m Message) map[string]bool {
		ids := map[string]bool{}
		for _, b := range m.Content {
			if b.Type == "tool_result" {
				ids[b.ToolUseID] = true
			}
		}
		return ids
	}
	m := msgs[i]
	if ids := uses(m); len(ids) > 0 {
		var answered map[string]bool
		if i+1 < len(msgs) && msgs[i+1].Role == "user" {
			answered = results(msgs[i+1])
		}
		var missing []string
		for _, id := range ids {
			if !answered[id] {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 && i+1 < len(msgs) { // a final assistant message may call tools: its results come next turn
			return "messages." + itoa(i+1) + ": `tool_use` ids were found without `tool_result` blocks immediately after: " +
				strings.Join(missing, ", ") + ". Each `tool_use` block must have a corresponding `tool_result` block in the next message."
		}
	}
	if m.Role == "user" {
		var prev []string
		if i > 0 && msgs[i-1].Role == "assistant" {
			prev = uses(msgs[i-1])
		}
		for j, b := range m.Content {
			if b.Type != "tool_result" {
				continue
			}
			found := false
			for _, id := range prev {
				found = found || id == b.ToolUseID
			}
			if !found {
				return "messages." + itoa(i) + ".content." + itoa(j) + ": unexpected `tool_use_id` found in `tool_result` blocks: " + b.ToolUseID +
					". Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
			}
		}
	}
	return ""
}

func validateTool(i int, t Tool) string {
	at := "tools." + itoa(i)
	if t.Type != "" && t.Type != "custom" {
		return "" // a server tool: not the fake's business
	}
	if !validID(t.Name) || len(t.Name) > 128 {
		return at + ".custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"
	}
	var schema struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(t.InputSchema, &schema); err != nil || len(t.InputSchema) == 0 {
		return at + ".custom.input_schema: Field required"
	}
	if schema.Type == nil || *schema.Type != "object" {
		return at + ".custom.input_schema.type: Input should be 'object'"
	}
	return ""
}

// unsupportedSchemaKeys are keywords the API refuses in a structured-output
// schema (https://platform.claude.com/docs/en/build-with-claude/structured-outputs,
// "JSON Schema limitations").
var unsupportedSchemaKeys = []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
	"minLength", "maxLength", "maxItems", "uniqueItems", "minProperties", "maxProperties", "patternProperties"}

// validateSchema checks a structured-output schema as the API does: every
// object needs "additionalProperties": false, and numeric, length and
// other unsupported constraints are refused. The wording is the fake's.
func validateSchema(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "output_config.format.schema: Input should be a valid dictionary"
	}
	// walk checks the schema v; a map of schemas (properties, $defs) is
	// walked by its values, whose keys are names, not keywords.
	var walk func(v any, at string) string
	walk = func(v any, at string) string {
		s, ok := v.(map[string]any)
		if !ok {
			return "" // true or false
		}
		for _, k := range unsupportedSchemaKeys {
			if _, ok := s[k]; ok {
				return "output_config.format.schema: " + at + ": property '" + k + "' is not supported"
			}
		}
		if _, hasProps := s["properties"]; s["type"] == "object" && hasProps && s["additionalProperties"] != false {
			return "output_config.format.schema: " + at + ": For 'object' type, 'additionalProperties' must be explicitly set to false"
		}
		for _, k := range []string{"properties", "$defs", "definitions"} {
			named, _ := s[k].(map[string]any)
			for name, sub := range named {
				if msg := walk(sub, at+"."+k+"."+name); msg != "" {
					return msg
				}
			}
		}
		for _, k := range []string{"anyOf", "allOf", "oneOf", "items", "additionalProperties"} {
			switch sub := s[k].(type) {
			case []any:
				for i, item := range sub {
					if msg := walk(item, at+"."+k+"."+itoa(i)); msg != "" {
						return msg
					}
				}
			default:
				if msg := walk(sub, at+"."+k); msg != "" {
					return msg
				}
			}
		}
		return ""
	}
	return walk(v, "schema")
}

func validID(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

func itoa(i int) string { return strconv.Itoa(i) }
