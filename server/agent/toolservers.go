package agent

import (
	"context"
	"encoding/json"
	"time"
)

// ToolServer is one of the person's MCP servers, registered once and
// attached to agents: a command Deskhand runs (stdio) or a Streamable
// HTTP URL. Env and Headers hold non-secret values only; the values of
// SecretEnv and SecretHeaders are kept by the Secrets port
// (ToolServerEnvKey, ToolServerHeaderKey), never here.
type ToolServer struct {
	Name    string // letters, digits, '_' and '-'; prefixes its tools' names
	Command string
	Args    []string
	Env     map[string]string
	Dir     string
	URL     string
	Headers map[string]string
	// SecretEnv and SecretHeaders name the variables and headers whose
	// values are secrets.
	SecretEnv     []string
	SecretHeaders []string
	// AllowSampling lets the server ask for the agent's model.
	AllowSampling bool
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// IsStdio reports whether Deskhand runs the server as a command.
func (s ToolServer) IsStdio() bool { return s.Command != "" }

// ToolServerEnvKey is the Secrets key of a server's secret variable.
func ToolServerEnvKey(server, name string) string {
	return "toolserver/" + server + "/env/" + name
}

// ToolServerHeaderKey is the Secrets key of a server's secret header.
func ToolServerHeaderKey(server, name string) string {
	return "toolserver/" + server + "/header/" + name
}

// AgentToolServer attaches a tool server to an agent.
type AgentToolServer struct {
	AgentID string
	Server  string
	// AllTools offers every tool the server lists; otherwise only those
	// in Tools.
	AllTools bool
	// Tools are the tools chosen (or, with AllTools, those the person
	// has seen): each with "ask me first" and its pinned definition.
	Tools []AttachedTool
}

// AttachedTool is one tool of an attachment.
type AttachedTool struct {
	Tool string // the server's name for it
	// AskFirst makes every call wait for a person's approval.
	AskFirst bool
	// Hash is the tool's definition hash when the person attached it (or
	// looked again): a tool whose current hash differs is held.
	Hash string
	// Definition is the definition Hash was taken of (JSON text), to show
	// what changed.
	Definition string
}

// ToolServerStore keeps tool servers and agents' attachments (never
// secret values).
type ToolServerStore interface {
	ToolServers(ctx context.Context) ([]ToolServer, error)
	// PutToolServer inserts or updates a server by name (CreatedAt of an
	// existing one stays).
	PutToolServer(ctx context.Context, s ToolServer) error
	// DeleteToolServer removes it and its attachments; ErrNotFound if
	// there is none.
	DeleteToolServer(ctx context.Context, name string) error
	// AgentToolServers lists every attachment.
	AgentToolServers(ctx context.Context) ([]AgentToolServer, error)
	// PutAgentToolServer replaces the attachment of a.Server to a.AgentID;
	// an error wrapping ErrNotFound when the agent or server is missing.
	PutAgentToolServer(ctx context.Context, a AgentToolServer) error
	// DeleteAgentToolServer detaches; ErrNotFound if it was not attached.
	DeleteAgentToolServer(ctx context.Context, agentID, server string) error
}

// ToolServerConfig is a server with its secrets resolved, for the running
// set only: it is never stored, logged nor shown.
type ToolServerConfig struct {
	ToolServer
	// SecretValues are the values of SecretEnv and SecretHeaders.
	SecretEnvValues    map[string]string
	SecretHeaderValues map[string]string
}

// ServerTool is one tool a server lists.
type ServerTool struct {
	Server      string
	Tool        string // the server's name for it
	Title       string
	Description string
	InputSchema json.RawMessage
	// ReadOnly is the server's hint that the tool changes nothing.
	ReadOnly bool
	// Hash identifies the definition (name, description, schema,
	// annotations).
	Hash string
}

// ServerToolRef names a server's tool.
type ServerToolRef struct{ Server, Tool string }

// ToolServerResult is what a tool call returned.
type ToolServerResult struct {
	Text    string
	IsError bool // the server marked it a failure
}

// ToolServerStatus is how a running server is doing.
type ToolServerStatus struct {
	Name      string
	State     string // stopped, starting, running, backing off, failed
	Tools     int
	LastError string
	LogFile   string
	PID       int
}

// ToolServerRunner is the running set of tool servers (server/toolservers
// implements it).
type ToolServerRunner interface {
	// Set makes configs the servers; a configuration it refuses changes
	// nothing and the error says why.
	Set(configs []ToolServerConfig) error
	// Tools lists a server's tools, starting it if need be.
	Tools(ctx context.Context, server string) ([]ServerTool, error)
	// Call runs a tool. An error is for what kept the tool from answering
	// (a *UserError the model may read) or ctx's end.
	Call(ctx context.Context, server, tool string, args json.RawMessage) (ToolServerResult, error)
	// Reset clears a server's failures, so that its next use starts it
	// (the person's "try again").
	Reset(server string) error
	// Status lists the servers' states, by name.
	Status() []ToolServerStatus
	// Names gives each tool of one agent's set its model-facing name
	// (server__tool, at most 64 characters of [a-zA-Z0-9_-], unique in
	// the set).
	Names(refs []ServerToolRef) (map[ServerToolRef]string, error)
}
