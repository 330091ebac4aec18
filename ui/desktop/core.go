// Package desktop is Deskhand's desktop, the only package besides main
// and assets that uses fyne: the tray and the main window, whose tabs
// (Agents, Questions, Conversations, Connect, Settings, Log) each have a
// file of their own, and the question popups.
//
// Each screen declares the small interface of the core it uses beside
// itself; Core is their union, and New takes one value for all. Calls
// that may do I/O run off fyne's goroutine with a context the App owns
// and cancels when it closes (Close, or fyne stopping); their results,
// and the core's events (read by Follow's goroutine, and the activity
// log's rows by the Log tab's), reach widgets only through fyne.Do.
// Logic that decides what to show lives in plain functions, tested
// without a display.
package desktop

import (
	"context"
	"time"

	"github.com/deskhand/deskhand/server/agent"
)

// Core is what the desktop calls of the core, feature by feature: main
// hands it the core's features (CoreOf), tests their fakes.
type Core struct {
	Agents        Agents
	Providers     Providers
	Clients       Clients
	ToolServers   ToolServers
	Conversations Conversations
	Questions     Questions
	Activity      ActivityLog
	Events        Events
	Settings      Settings
	Approvals     *agent.Approvals
}

// CoreOf is the desktop's view of a core.
func CoreOf(c *agent.Core) Core {
	return Core{Agents: c.Agents(), Providers: c.Providers(), Clients: c.Clients(), ToolServers: c.ToolServers(),
		Conversations: c.Conversations(), Questions: c.Questions(), Activity: c.Activity(), Events: c.Events(),
		Settings: c.Settings(), Approvals: c.Approvals()}
}

// Agents are the person's agents (the Agents tab, the tray).
type Agents interface {
	List() []agent.Agent
	AvailableTools() []agent.ToolInfo
	Save(ctx context.Context, a agent.Agent) (agent.Agent, error)
	SetEnabled(ctx context.Context, slug string, enabled bool) error
	Delete(ctx context.Context, slug string) error
}

// Providers are the model servers (Settings → Models, the editor's model
// list, the status bar).
type Providers interface {
	List() []agent.ProviderStatus
	Save(ctx context.Context, p agent.Provider, key agent.KeyChange) (agent.Provider, error)
	Delete(ctx context.Context, name string) error
	Models(ctx context.Context, name string) ([]string, error)
	Find(ctx context.Context, address string) (agent.Provider, []string, error)
	DescribeModel(ctx context.Context, provider, model string) (agent.ModelInfo, error)
	PullModel(ctx context.Context, name string, progress func(agent.PullProgress)) error
}

// Clients are the MCP clients with a token (Settings → General).
type Clients interface {
	List() []agent.Client
	Create(ctx context.Context, name string) (agent.Client, string, error)
	Revoke(ctx context.Context, name string) error
	Rotate(ctx context.Context, name string) (agent.Client, string, error)
	// Calls counts each client's calls since a time, for the list.
	Calls(ctx context.Context, since time.Time) (map[string]int, error)
	// Which agents each client sees (clientagents.go).
	Visibility(name string) (agent.Visibility, error)
	SetAgents(ctx context.Context, clientName string, all bool, slugs []string) error
}

// ToolServers are the person's MCP servers (Settings → Tool servers, the
// editor's attachments).
type ToolServers interface {
	List() []agent.ToolServer
	Statuses() []agent.ToolServerStatus
	Add(ctx context.Context, s agent.ToolServer, sec agent.ToolServerSecrets) error
	Remove(ctx context.Context, name string) error
	Check(ctx context.Context, name string) (agent.ToolServerCheck, error)
	Held() []agent.HeldTool
	Repin(ctx context.Context, slug, server, tool string) error
	Attached(slug string) ([]agent.AgentToolServer, error)
	Attach(ctx context.Context, slug string, req agent.ToolServerAttachment) (agent.AgentToolServer, error)
	Detach(ctx context.Context, slug, server string) error
}

// Conversations are the turns run and their transcripts (the
// Conversations tab, the editor's try-it box).
type Conversations interface {
	Run(ctx context.Context, req agent.RunRequest) (*agent.RunResult, error)
	Recent(ctx context.Context, limit int) ([]agent.ConversationSummary, error)
	Get(ctx context.Context, id string) (agent.Conversation, error)
	Transcript(ctx context.Context, conversationID string) ([]agent.Message, []agent.Turn, error)
	Questions(ctx context.Context, conversationID string) ([]agent.Question, error)
	Subs(ctx context.Context, turnID string) ([]agent.Conversation, error)
	LiveTurn(conversationID string) (agent.LiveTurn, bool)
	CancelTurn(conversationID string) bool
	Search(ctx context.Context, q agent.SearchQuery) ([]agent.SearchHit, error)
}

// Questions wait for the person (the Questions tab, the popups).
type Questions interface {
	Pending() []agent.Question
	Answer(id string, content map[string]any, declined bool) error
}

// ActivityLog is the Log tab's source.
type ActivityLog interface {
	List(ctx context.Context, f agent.ActivityFilter) ([]agent.ActivityRow, error)
	Enabled() bool
}

// Events tell the desktop what changed in the core.
type Events interface {
	Subscribe(ctx context.Context, kinds ...agent.EventKind) <-chan agent.Event
	// SubscribeWhere is Subscribe for the events keep accepts; keep is
	// called on the publisher's goroutine.
	SubscribeWhere(ctx context.Context, keep func(agent.Event) bool, kinds ...agent.EventKind) <-chan agent.Event
}

// Settings are the stored settings and the pause switch.
type Settings interface {
	Get(ctx context.Context, key, def string) (string, error)
	Set(ctx context.Context, key, value string) error
	Paused() bool
	SetPaused(paused bool)
}
