package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"
)

// Config wires a Core to its ports.
type Config struct {
	History History
	// Models are fixed models: under BackendClient the calling client's
	// (sampling); under a provider's name, the model that provider uses
	// instead of one from Connector (tests, and wirings with one server).
	Models map[Backend]Model
	// Connector makes the models of the other providers; Secrets holds
	// their API keys. Without them only the fixed models exist.
	Connector ModelConnector
	Secrets   Secrets
	// LocalServers are where Agents.EnsureDefault looks for a model on
	// first start, in order (Ollama, LM Studio, llama.cpp, vLLM on
	// loopback); those not among the providers yet are not saved until
	// chosen.
	LocalServers []Provider
	// Tools are the tools agents may switch on, by name.
	Tools  []Tool
	Logger *slog.Logger
	Now    func() time.Time
	// ConversationCap and ConversationTTL bound the conversations held in
	// memory (defaults 1024 and 1 hour); history stays in the store.
	ConversationCap int
	ConversationTTL time.Duration
	// CheckSchema, when set, checks an agent's response schema as the MCP
	// surface will use it (server/mcpserver.CheckSchema): an agent whose
	// schema it refuses is not saved, and the error says why. Unset, a
	// schema need only be a JSON object.
	CheckSchema func(schema json.RawMessage) error
	// Desktop says a person at this computer can answer questions: the
	// app's popups, or the command line of "deskhand serve".
	Desktop bool
	// NoActivityLog records nothing in the activity log (the setting
	// log.enabled = false; benchmarks compare with and without).
	NoActivityLog bool
	// ToolServerStore keeps the person's tool servers and agents'
	// attachments; ToolServers runs them. Without both, agents have no
	// tool servers.
	ToolServerStore ToolServerStore
	ToolServers     ToolServerRunner
	// Redactor takes secrets out of what the core records or tells
	// clients (turn errors, the activity log); the core teaches it every
	// secret that passes through Secrets and every token it mints. The
	// wiring hands the same one to its log writers. Nil: one of its own.
	Redactor *Redactor
}

// Core is Deskhand's core: it composes one type per feature and hands
// them out; the run loop reaches them through its own fields. Its
// methods, and theirs, are safe for concurrent use.
type Core struct {
	history History
	redact  *Redactor
	models  map[Backend]Model
	tools   map[string]Tool
	log     *slog.Logger
	now     func() time.Time
	desktop bool // a person at this computer can answer questions
	// schemaCheck is Config.CheckSchema.
	schemaCheck func(json.RawMessage) error
	secrets     Secrets

	agents        Agents
	providers     Providers
	clients       Clients
	toolServers   ToolServers
	conversations Conversations
	questions     Questions
	activity      Activity
	events        Events
	settings      Settings
	approvals     *Approvals

	// base ends every running turn when the core closes.
	base context.Context
	stop context.CancelCauseFunc
}

// New loads agents and clients from history and marks turns left running
// by a previous process as interrupted.
func New(ctx context.Context, cfg Config) (*Core, error) {
	if cfg.History == nil {
		return nil, errors.New("agent: Config.History is required")
	}
	redactor := cmp.Or(cfg.Redactor, NewRedactor())
	c := &Core{
		history: cfg.History,
		models:  cfg.Models,
		tools:   make(map[string]Tool),
		log:     slog.New(redactor.Handler(cmp.Or(cfg.Logger, slog.New(slog.NewTextHandler(io.Discard, nil))).Handler())),
		now:     cfg.Now,
		desktop: cfg.Desktop,
		redact:  redactor,

		schemaCheck: cfg.CheckSchema,
	}
	h := cfg.History
	c.agents = Agents{c: c, store: h, byID: make(map[string]Agent)}
	c.providers = Providers{c: c, store: h, connector: cfg.Connector, local: cfg.LocalServers,
		byName: make(map[string]Provider), connected: make(map[string]connectedModel)}
	c.clients = Clients{c: c, store: h, unflushed: make(map[string]time.Time)}
	c.toolServers.c = c
	c.conversations = Conversations{c: c, store: h, search: h, turns: turns{live: make(map[string]*liveTurn)}}
	c.questions = Questions{c: c, store: h, broker: broker{pending: make(map[string]*waiting)}}
	c.activity.c = c
	c.settings = Settings{store: h, pauseChanged: func() {
		c.agents.rev.Add(1)
		c.publish(Event{Kind: EventAgentsChanged})
	}}
	c.secrets = c.redact.Secrets(cfg.Secrets)
	if c.now == nil {
		c.now = time.Now
	}
	// The store keeps milliseconds; so does the core, so that what it holds
	// equals what a restart reads back.
	clock := c.now
	c.now = func() time.Time { return clock().UTC().Truncate(time.Millisecond) }
	c.conversations.held = newRegistry(cmp.Or(cfg.ConversationCap, 1024), cmp.Or(cfg.ConversationTTL, time.Hour), c.now)
	for _, t := range cfg.Tools {
		c.tools[t.Spec().Name] = t
	}
	n, err := c.conversations.store.InterruptRunningTurns(ctx, c.now())
	if err != nil {
		return nil, fmt.Errorf("mark interrupted turns: %w", err)
	}
	if n > 0 {
		c.log.Info("turns interrupted by the previous stop", "count", n)
	}
	if n, err = c.questions.store.ExpirePendingQuestions(ctx, c.now()); err != nil {
		return nil, fmt.Errorf("expire unanswered questions: %w", err)
	}
	if n > 0 {
		c.log.Info("questions left unanswered by the previous stop", "count", n)
	}
	providers, err := c.providers.store.Providers(ctx)
	if err != nil {
		return nil, fmt.Errorf("load providers: %w", err)
	}
	for _, p := range providers {
		c.providers.byName[p.Name] = p
	}
	agents, err := c.agents.store.Agents(ctx)
	if err != nil {
		return nil, fmt.Errorf("load agents: %w", err)
	}
	for _, a := range agents {
		c.agents.byID[a.ID] = a
	}
	c.agentsChangedLocked()
	if c.clients.list, err = c.clients.store.Clients(ctx); err != nil {
		return nil, fmt.Errorf("load clients: %w", err)
	}
	store, _ := c.history.(ApprovalRuleStore)
	if c.approvals, err = NewApprovals(ctx, store, c.agentExists, c.publish, c.now); err != nil {
		return nil, err
	}
	if err := c.loadToolServers(ctx, cfg.ToolServerStore, cfg.ToolServers); err != nil {
		return nil, err
	}
	c.base, c.stop = context.WithCancelCause(context.Background())
	if !cfg.NoActivityLog {
		c.startActivity()
	}
	return c, nil
}

// Close refuses new turns, then ends the running ones (recorded
// interrupted) and waits for them, and last writes the clients' last uses
// kept in memory: the store must stay open until it returns. It may be
// called more than once.
func (c *Core) Close() {
	c.conversations.turns.close()
	c.stop(ErrShutdown)
	c.conversations.turns.wait()
	c.stopFlusher()
	c.stopActivity()
}

// The features, handed out.

func (c *Core) Agents() *Agents               { return &c.agents }
func (c *Core) Providers() *Providers         { return &c.providers }
func (c *Core) Clients() *Clients             { return &c.clients }
func (c *Core) ToolServers() *ToolServers     { return &c.toolServers }
func (c *Core) Conversations() *Conversations { return &c.conversations }
func (c *Core) Questions() *Questions         { return &c.questions }
func (c *Core) Activity() *Activity           { return &c.activity }
func (c *Core) Events() *Events               { return &c.events }
func (c *Core) Settings() *Settings           { return &c.settings }

// Limits reports the in-memory bounds, for describing handles.
func (cv *Conversations) Limits() (capacity int, idle time.Duration) {
	c := cv.c
	return c.conversations.held.cap, c.conversations.held.ttl
}
