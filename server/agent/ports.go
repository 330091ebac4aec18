package agent

import (
	"context"
	"encoding/json"
)

// Model is a chat model the run loop talks to (models/ollama, models/sampling).
type Model interface {
	// Chat sends the conversation and streams the reply: onDelta receives
	// text as it is produced; the whole reply is returned at the end. An
	// error that a person can act on is a *UserError.
	Chat(ctx context.Context, req ChatRequest, onDelta func(Delta)) (ChatResponse, error)
}

// ModelLister is implemented by models that can list what is installed.
type ModelLister interface {
	ListModels(ctx context.Context) ([]string, error)
}

// ModelDescriber is implemented by models that can say what one of their
// models can do, for the editor and to refuse early what would fail.
type ModelDescriber interface {
	DescribeModel(ctx context.Context, name string) (ModelInfo, error)
}

// ModelInfo is what a model server says of one model.
type ModelInfo struct {
	Name             string
	Tools            Capability // calls tools
	StructuredOutput Capability // answers in a JSON Schema's shape
	// ContextLength is the model's context window in tokens; 0 when the
	// server does not say.
	ContextLength int
}

// Capability is whether a model can do something. Most OpenAI-compatible
// servers cannot say; the first failure then names what was missing.
type Capability string

const (
	CapabilityUnknown Capability = ""
	CapabilityYes     Capability = "yes"
	CapabilityNo      Capability = "no"
)

// ModelPuller is implemented by models that can download a model.
type ModelPuller interface {
	PullModel(ctx context.Context, name string, progress func(PullProgress)) error
}

// PullProgress is how far a download got.
type PullProgress struct {
	Status           string
	Completed, Total int64
}

// ChatRequest is one model call.
type ChatRequest struct {
	Model    string
	Messages []Message
	Tools    []ToolSpec
	// Format is a JSON Schema for structured output, or nil.
	Format json.RawMessage
}

// ToolSpec describes a tool the model may call.
type ToolSpec struct {
	Name        string
	Description string
	Parameters  json.RawMessage // JSON Schema of the arguments object
}

// Delta is a piece of a streamed reply.
type Delta struct {
	Content  string
	Thinking string
}

// ChatResponse is a model's whole reply.
type ChatResponse struct {
	Message      Message // role assistant; may carry ToolCalls
	Model        string  // the model that answered
	PromptTokens int
	OutputTokens int
	DoneReason   string
	// Trimmed counts the oldest messages of the transcript left out so
	// that the rest fits the model's context window (never the system
	// prompt or the tools); 0 when everything was sent.
	Trimmed int
}

// History is where agents, conversations, turns, clients and settings are
// kept (store/). Methods return ErrNotFound for missing rows.
type History interface {
	AgentStore
	ProviderStore
	ConversationStore
	QuestionStore
	ClientStore
	SettingStore
	Searcher
}

// Secrets holds outgoing secrets (model API keys, bridged clients' tokens)
// in the OS keychain (store/keychain). Get returns ErrNotFound when unset.
type Secrets interface {
	Get(key string) (string, error)
	Set(key, value string) error
	Delete(key string) error
}
