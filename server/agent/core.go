package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
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
	// LocalServers are where EnsureDefaultAgent looks for a model on
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
	ToolServers     ToolServers
	// Redactor takes secrets out of what the core records or tells
	// clients (turn errors, the activity log); the core teaches it every
	// secret that passes through Secrets and every token it mints. The
	// wiring hands the same one to its log writers. Nil: one of its own.
	Redactor *Redactor
}

// Core is Deskhand's core. Its methods are safe for concurrent use.
type Core struct {
	history History
	redact  *Redactor
	models  map[Backend]Model
	tools   map[string]Tool
	log     *slog.Logger
	now     func() time.Time
	convs   *registry
	events  hub
	// questions waiting for a person; desktop says whether one is here.
	questions broker
	desktop   bool
	// schemaCheck is Config.CheckSchema.
	schemaCheck  func(json.RawMessage) error
	connector    ModelConnector
	secrets      Secrets
	localServers []Provider

	// providerWrites makes changes of providers go one at a time across
	// their store and keychain writes; no request takes it.
	providerWrites sync.Mutex
	// providersMu guards providers and connected; never held across I/O.
	providersMu sync.Mutex
	providers   map[string]Provider
	// connected caches each provider's model, made by the connector for
	// the provider as it was at UpdatedAt.
	connected map[string]connectedModel

	// agentWrites makes changes of agents (SaveAgent, DeleteAgent) go one
	// at a time across their store writes; no request takes it.
	agentWrites sync.Mutex
	// mu guards agents and bySlug in memory; it is never held across I/O.
	mu     sync.Mutex
	agents map[string]Agent // by ID
	// bySlug is agents in slug order, rebuilt at each change, so that
	// lookups on the call path neither scan nor sort.
	bySlug []Agent

	// clientWrites makes changes of clients (create, rotate, revoke) go
	// one at a time across their store writes; no request takes it.
	clientWrites sync.Mutex
	// clientsMu guards the fields below; it is never held across I/O.
	clientsMu sync.Mutex
	clients   []Client
	// unflushed are last uses not yet written, by client ID.
	unflushed map[string]time.Time
	// flushTimer runs the next background flush of them, if one is
	// scheduled; flushes counts the scheduled or running ones, for Close;
	// flushStopped once Close stopped them.
	flushTimer   *time.Timer
	flushes      sync.WaitGroup
	flushStopped bool
	// flushing makes flushes of last uses go one at a time.
	flushing sync.Mutex
	// agentsRev counts agent changes, so adapters can tell a stale copy.
	agentsRev atomic.Uint64
	// paused serves no agent at all until resumed.
	paused atomic.Bool
	// turns are the turns admitted and not yet ended (see turns.go).
	turns turns

	// base ends every running turn when the core closes.
	base context.Context
	stop context.CancelCauseFunc

	// visibility is which agents each client sees, kept for the request
	// path (visibility.go).
	visibility visibilityCache
	approvals  *Approvals
	// activity is the activity log's recorder and sweeper (activity.go).
	activity activity
	// toolServers are the person's MCP servers and agents' attachments
	// (toolservers_core.go).
	toolServers toolServerState
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
		agents:  make(map[string]Agent),
		desktop: cfg.Desktop,

		redact: redactor,

		schemaCheck:  cfg.CheckSchema,
		connector:    cfg.Connector,
		localServers: cfg.LocalServers,
		providers:    make(map[string]Provider),
		connected:    make(map[string]connectedModel),
	}
	c.secrets = c.redact.Secrets(cfg.Secrets)
	c.questions.pending = make(map[string]*waiting)
	c.turns.live = make(map[string]*liveTurn)
	c.unflushed = make(map[string]time.Time)
	if c.now == nil {
		c.now = time.Now
	}
	// The store keeps milliseconds; so does the core, so that what it holds
	// equals what a restart reads back.
	clock := c.now
	c.now = func() time.Time { return clock().UTC().Truncate(time.Millisecond) }
	c.convs = newRegistry(cmp.Or(cfg.ConversationCap, 1024), cmp.Or(cfg.ConversationTTL, time.Hour), c.now)
	for _, t := range cfg.Tools {
		c.tools[t.Spec().Name] = t
	}
	n, err := c.history.InterruptRunningTurns(ctx, c.now())
	if err != nil {
		return nil, fmt.Errorf("mark interrupted turns: %w", err)
	}
	if n > 0 {
		c.log.Info("turns interrupted by the previous stop", "count", n)
	}
	if n, err = c.history.ExpirePendingQuestions(ctx, c.now()); err != nil {
		return nil, fmt.Errorf("expire unanswered questions: %w", err)
	}
	if n > 0 {
		c.log.Info("questions left unanswered by the previous stop", "count", n)
	}
	providers, err := c.history.Providers(ctx)
	if err != nil {
		return nil, fmt.Errorf("load providers: %w", err)
	}
	for _, p := range providers {
		c.providers[p.Name] = p
	}
	agents, err := c.history.Agents(ctx)
	if err != nil {
		return nil, fmt.Errorf("load agents: %w", err)
	}
	for _, a := range agents {
		c.agents[a.ID] = a
	}
	c.agentsChangedLocked()
	if c.clients, err = c.history.Clients(ctx); err != nil {
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
	c.turns.close()
	c.stop(ErrShutdown)
	c.turns.wait()
	c.stopFlusher()
	c.stopActivity()
}

// ConversationLimits reports the in-memory bounds, for describing handles.
func (c *Core) ConversationLimits() (capacity int, idle time.Duration) {
	return c.convs.cap, c.convs.ttl
}
