package agent

import (
	"encoding/json"
	"time"
)

// Backend names where an agent's model runs.
type Backend string

const (
	// BackendProvider runs the agent on a model of its provider
	// (Agent.Provider, Agent.Model).
	BackendProvider Backend = "provider"
	// BackendClient runs the agent on the calling MCP client's model
	// (sampling), and on its provider's model when the client lends none.
	BackendClient Backend = "client"
	// BackendOllama is how agents were saved before providers: Agents.Save
	// moves such an agent to BackendProvider on the provider OllamaProvider.
	BackendOllama Backend = "ollama"
)

// ProviderKind is the kind of model server a provider connects to.
type ProviderKind string

const (
	ProviderOllama           ProviderKind = "ollama"
	ProviderOpenAICompatible ProviderKind = "openai-compatible" // LM Studio, llama.cpp, vLLM, LiteLLM…
	ProviderOpenAI           ProviderKind = "openai"
	ProviderAnthropic        ProviderKind = "anthropic"
)

// ProviderKinds are the kinds a provider may have, in the order offered.
var ProviderKinds = []ProviderKind{ProviderOllama, ProviderOpenAICompatible, ProviderOpenAI, ProviderAnthropic}

// OllamaProvider names the provider every store starts with: Ollama at
// the address of the Ollama setting (the one agents ran on before
// providers).
const OllamaProvider = "ollama"

// Provider is a named connection to a model server. Its secret (an API
// key), when it has one, is kept by the Secrets port under
// ProviderSecretKey, never here.
type Provider struct {
	Name string // 1-40 lower-case letters, digits, '-' or '_'
	Kind ProviderKind
	// BaseURL is the server's address; empty means the kind's default
	// (for Ollama: the Ollama setting, OLLAMA_HOST or 127.0.0.1:11434).
	BaseURL   string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ProviderSecretKey is the Secrets key of a provider's API key.
func ProviderSecretKey(name string) string { return "provider/" + name }

// Agent is a user-defined agent, served as one MCP tool named by its Slug.
type Agent struct {
	ID          string
	Slug        string // tool name: lower-case letters, digits, '-' and '_'
	Name        string
	Description string
	Prompt      string // system prompt
	Backend     Backend
	// Provider names the provider whose Model the agent runs on (with
	// BackendClient: when the client lends no model).
	Provider string
	Model    string
	// ResponseSchema, when set, is a JSON Schema the final answer must
	// satisfy; the model is asked for structured output.
	ResponseSchema json.RawMessage
	// Conversations off makes every call a one-off: no handle is minted
	// and none is accepted.
	Conversations bool
	Enabled       bool
	// Tools are the tools (of Config.Tools) the agent may call.
	Tools []AgentTool
	// Folders are the only places its file tools may read (and write).
	Folders   []string
	MaxRounds int // model calls per turn; 0 means DefaultMaxRounds
	// Routing says who is asked when the agent needs a person (default RouteClient).
	Routing Routing
	// ClientMayApprove lets the calling client approve the agent's tool
	// calls; without it approvals go to the person at the desktop whatever
	// the Routing, since a client driven by injected text could approve
	// its own tool calls.
	ClientMayApprove bool
	// ReachableHosts are the hosts on the person's network (exact
	// "host:port") that its network tools may reach besides public
	// addresses.
	ReachableHosts []string
	// QuestionTimeout bounds each wait for an answer (0: DefaultQuestionTimeout).
	QuestionTimeout time.Duration
	// StarterPrompts are messages to start a conversation with, offered to
	// MCP clients as prompts.
	StarterPrompts []string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// Icon is how clients show the agent's tool: an emoji (or a few
	// characters) as typed, or an image as a data: URI (IconFromFile);
	// empty for none. CheckIcon says what is allowed.
	Icon string
	// LogArguments keeps the arguments of calls to the agent and the
	// answers to its questions in the activity log (off: only that they
	// happened).
	LogArguments bool
	// Team are the agents (by ID, in order) it may hand work to, each
	// offered to its model as a tool (team.go).
	Team []string
}

// AgentTool switches a tool on for an agent.
type AgentTool struct {
	Name string
	// NeedsApproval makes every call wait for a person's approval.
	NeedsApproval bool
}

// DefaultMaxRounds bounds the model → tools → model loop of one turn.
const DefaultMaxRounds = 8

// Role is who wrote a message.
type Role string

const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of a conversation's transcript.
type Message struct {
	Role       Role
	Content    string
	ToolCalls  []ToolCall // assistant messages that call tools
	ToolCallID string     // tool messages: the call answered
	ToolName   string     // tool messages: the tool that answered
	TurnID     string
	CreatedAt  time.Time
}

// ToolCall is a model's request to run a tool.
type ToolCall struct {
	ID        string
	Name      string
	Arguments json.RawMessage // a JSON object
}

// Conversation is a thread of turns between one principal and one agent.
// Its ID is the handle clients present to continue it.
type Conversation struct {
	ID        string
	AgentID   string
	Principal string
	Title     string
	CreatedAt time.Time
	UpdatedAt time.Time
	// ParentConversation and ParentTurn link a team member's conversation
	// to the turn that called it; empty for every other conversation.
	ParentConversation string
	ParentTurn         string
}

// ConversationSummary is a conversation as lists show it.
type ConversationSummary struct {
	Conversation
	LastStatus TurnStatus // of its latest turn; "" when it has none
}

// PageMark is where a listing of conversations resumes: after the one
// last listed, which ordering (last active first) puts at UpdatedAt.
type PageMark struct {
	UpdatedAt time.Time
	ID        string
}

// TurnStatus is the state of a turn.
type TurnStatus string

const (
	TurnRunning     TurnStatus = "running"
	TurnCompleted   TurnStatus = "completed"
	TurnFailed      TurnStatus = "failed"
	TurnCancelled   TurnStatus = "cancelled"
	TurnInterrupted TurnStatus = "interrupted" // the process stopped during the turn
)

// Turn is one call of an agent: a user message and everything the agent did
// to answer it.
type Turn struct {
	ID             string
	ConversationID string
	AgentID        string
	Principal      string
	Status         TurnStatus
	Model          string
	StartedAt      time.Time
	EndedAt        time.Time
	PromptTokens   int
	OutputTokens   int
	ToolCalls      int
	// Trimmed counts the oldest messages left out of the model's context
	// (the most of any round): the model did not see all of the
	// conversation.
	Trimmed int
	Error   string // user-facing reason when not completed
}

// Duration is how long the turn ran (zero while running).
func (t Turn) Duration() time.Duration {
	if t.EndedAt.IsZero() {
		return 0
	}
	return t.EndedAt.Sub(t.StartedAt)
}

// Client is a principal: an MCP client the user connected, known by the
// SHA-256 of its bearer token. The token itself is never stored.
type Client struct {
	ID         string
	Name       string
	TokenHash  []byte
	CreatedAt  time.Time
	LastUsedAt time.Time // zero if never used
	RevokedAt  time.Time // zero while active
	// Agents is which agents the client may see (zero: all).
	Agents AgentScope
}

// Active reports whether the client's token is still accepted.
func (c Client) Active() bool { return c.RevokedAt.IsZero() }

// LocalPrincipal owns conversations started in-process over stdio.
const LocalPrincipal = "local"
