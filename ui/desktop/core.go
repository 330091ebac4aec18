// Package desktop is Deskhand's desktop, the only package besides main
// and assets that uses fyne: the tray, the main window (agents and
// the questions waiting for you) and a popup for each question. It calls
// the core through the small Core interface and learns what changed from
// the core's events; one goroutine turns events into fyne.Do calls, so
// only fyne's own goroutine touches widgets. Logic that decides what to
// show lives in plain functions, tested without a display.
package desktop

import (
	"context"

	"github.com/deskhand/deskhand/server/agent"
)

// Core is what the desktop needs of the core.
type Core interface {
	Agents() []agent.Agent
	SaveAgent(ctx context.Context, a agent.Agent) (agent.Agent, error)
	SetAgentEnabled(ctx context.Context, slug string, enabled bool) error
	DeleteAgent(ctx context.Context, slug string) error
	Pending() []agent.Question
	AnswerQuestion(id string, content map[string]any, declined bool) error
	Subscribe(ctx context.Context, kinds ...agent.EventKind) <-chan agent.Event
	SetPaused(paused bool)
	Paused() bool
	AvailableTools() []agent.ToolInfo
	Clients() []agent.Client
	CreateClient(ctx context.Context, name string) (agent.Client, string, error)
	RevokeClient(ctx context.Context, name string) error
	RotateClient(ctx context.Context, name string) (agent.Client, string, error)
	Setting(ctx context.Context, key, def string) (string, error)
	SetSetting(ctx context.Context, key, value string) error
	RecentConversations(ctx context.Context, limit int) ([]agent.ConversationSummary, error)
	Transcript(ctx context.Context, conversationID string) ([]agent.Message, []agent.Turn, error)
	CancelTurn(conversationID string) bool
	Run(ctx context.Context, req agent.RunRequest) (*agent.RunResult, error)
	InstalledModels(ctx context.Context) ([]string, error)
	PullModel(ctx context.Context, name string, progress func(agent.PullProgress)) error
}
