package agent

import (
	"context"
	"encoding/json"
	"time"
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

// QuestionStore keeps every question asked and how it was answered.
type QuestionStore interface {
	// PutQuestion inserts a question or updates its status and answer.
	PutQuestion(ctx context.Context, q Question) error
	// Questions lists a conversation's questions in the order asked.
	Questions(ctx context.Context, conversationID string) ([]Question, error)
	// ExpirePendingQuestions marks questions still pending as expired;
	// called once at start, after a crash.
	ExpirePendingQuestions(ctx context.Context, at time.Time) (int, error)
}

// ProviderStore keeps providers (never their secrets).
type ProviderStore interface {
	Providers(ctx context.Context) ([]Provider, error)
	// PutProvider inserts or updates a provider by name.
	PutProvider(ctx context.Context, p Provider) error
	// DeleteProvider removes it; ErrNotFound if there is none.
	DeleteProvider(ctx context.Context, name string) error
}

// ModelConnector makes the Model that talks to a provider's server with
// its secret ("" when it has none). It does not reach the server: a Model
// says what is wrong when it is used.
type ModelConnector interface {
	Connect(p Provider, secret string) (Model, error)
}

// AgentStore keeps agent definitions.
type AgentStore interface {
	Agents(ctx context.Context) ([]Agent, error)
	// PutAgent inserts or updates by ID; ErrSlugTaken if another agent has the slug.
	PutAgent(ctx context.Context, a Agent) error
	// DeleteAgent removes the agent and its conversations; ErrNotFound if
	// there is none.
	DeleteAgent(ctx context.Context, id string) error
}

// TurnStart is what BeginTurn records.
type TurnStart struct {
	Turn Turn
	User Message
	// NewConversation is created with the turn when the turn starts it;
	// nil when the turn continues a conversation.
	NewConversation *Conversation
}

// ConversationStore keeps conversations, their messages and turns. Its
// lists (conversations, messages, turns) see every write made before
// them, a turn's start still being written included.
type ConversationStore interface {
	Conversation(ctx context.Context, id string) (Conversation, error)
	Messages(ctx context.Context, conversationID string) ([]Message, error)
	// BeginTurn records a running turn and its user message atomically,
	// with the conversation the turn starts, if any. Nothing of the turn
	// has been acknowledged yet, so it may return before the write is
	// committed: the write goes before any later one (the turn's EndTurn
	// first), and committed waits for its commit and reports its outcome.
	BeginTurn(ctx context.Context, start TurnStart) (committed func() error)
	// EndTurn records the turn's outcome and the messages it produced atomically.
	EndTurn(ctx context.Context, t Turn, produced []Message) error
	Turns(ctx context.Context, conversationID string) ([]Turn, error)
	// RecentConversations lists conversations, last active first.
	RecentConversations(ctx context.Context, limit int) ([]ConversationSummary, error)
	// ConversationsOf lists a principal's conversations, last active
	// first, from after the mark (the zero mark: from the start).
	ConversationsOf(ctx context.Context, principal string, after PageMark, limit int) ([]ConversationSummary, error)
	// InterruptRunningTurns marks every turn still running as interrupted;
	// called once at start, after a crash.
	InterruptRunningTurns(ctx context.Context, at time.Time) (int, error)
}

// ClientStore keeps principals (hashed tokens only).
type ClientStore interface {
	Clients(ctx context.Context) ([]Client, error)
	PutClient(ctx context.Context, c Client) error
	TouchClient(ctx context.Context, id string, at time.Time) error
}

// SettingStore keeps key/value settings.
type SettingStore interface {
	Setting(ctx context.Context, key string) (string, error) // ErrNotFound if unset
	SetSetting(ctx context.Context, key, value string) error
}

// Secrets holds outgoing secrets (model API keys, bridged clients' tokens)
// in the OS keychain (store/keychain). Get returns ErrNotFound when unset.
type Secrets interface {
	Get(key string) (string, error)
	Set(key, value string) error
	Delete(key string) error
}
