package agent

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// Config wires a Core to its ports.
type Config struct {
	History History
	// Models maps each backend to the model that serves it; a backend
	// without one fails its turns with a message saying so.
	Models map[Backend]Model
	// Tools are the tools agents may switch on, by name.
	Tools  []Tool
	Logger *slog.Logger
	Now    func() time.Time
	// ConversationCap and ConversationTTL bound the conversations held in
	// memory (defaults 1024 and 1 hour); history stays in the store.
	ConversationCap int
	ConversationTTL time.Duration
	// Desktop says a person at this computer can answer questions: the
	// app's popups, or the command line of "deskhand serve".
	Desktop bool
}

// Core is Deskhand's core. Its methods are safe for concurrent use.
type Core struct {
	history History
	models  map[Backend]Model
	tools   map[string]Tool
	log     *slog.Logger
	now     func() time.Time
	convs   *registry
	events  hub
	// questions waiting for a person; desktop says whether one is here.
	questions broker
	desktop   bool

	mu     sync.Mutex
	agents map[string]Agent // by ID
	// bySlug is agents in slug order, rebuilt at each change, so that
	// lookups on the call path neither scan nor sort.
	bySlug  []Agent
	clients []Client
	// agentsRev counts agent changes, so adapters can tell a stale copy.
	agentsRev atomic.Uint64
	// paused serves no agent at all until resumed.
	paused atomic.Bool
	// cancels holds each running turn's cancel, by conversation ID.
	cancels sync.Map

	// base ends every running turn when the core closes.
	base    context.Context
	stop    context.CancelCauseFunc
	running sync.WaitGroup
}

// New loads agents and clients from history and marks turns left running
// by a previous process as interrupted.
func New(ctx context.Context, cfg Config) (*Core, error) {
	if cfg.History == nil {
		return nil, errors.New("agent: Config.History is required")
	}
	c := &Core{
		history: cfg.History,
		models:  cfg.Models,
		tools:   make(map[string]Tool),
		log:     cmp.Or(cfg.Logger, slog.New(slog.NewTextHandler(io.Discard, nil))),
		now:     cfg.Now,
		agents:  make(map[string]Agent),
		desktop: cfg.Desktop,
	}
	c.questions.pending = make(map[string]*waiting)
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
	c.base, c.stop = context.WithCancelCause(context.Background())
	return c, nil
}

// Close ends running turns (recorded interrupted) and waits for them.
func (c *Core) Close() {
	c.stop(ErrShutdown)
	c.running.Wait()
}

// ConversationLimits reports the in-memory bounds, for describing handles.
func (c *Core) ConversationLimits() (capacity int, idle time.Duration) {
	return c.convs.cap, c.convs.ttl
}

// ---- agents ----

var slugPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// Agents lists all agents in slug order.
func (c *Core) Agents() []Agent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.bySlug)
}

// agentsChangedLocked rebuilds the slug index after a change of agents.
func (c *Core) agentsChangedLocked() {
	c.bySlug = slices.Collect(maps.Values(c.agents))
	slices.SortFunc(c.bySlug, func(a, b Agent) int { return strings.Compare(a.Slug, b.Slug) })
}

// AgentsRevision changes whenever an agent is created or changed.
func (c *Core) AgentsRevision() uint64 { return c.agentsRev.Load() }

// EnabledAgents lists the agents served as tools, in slug order: none
// while serving is paused.
func (c *Core) EnabledAgents() []Agent {
	if c.paused.Load() {
		return nil
	}
	return slices.DeleteFunc(c.Agents(), func(a Agent) bool { return !a.Enabled })
}

// SetPaused pauses serving (every agent leaves the tool list; turns already
// running finish) or resumes it.
func (c *Core) SetPaused(paused bool) {
	if c.paused.Swap(paused) != paused {
		c.agentsRev.Add(1)
		c.publish(Event{Kind: EventAgentsChanged})
	}
}

// Paused reports whether serving is paused.
func (c *Core) Paused() bool { return c.paused.Load() }

// AgentBySlug finds an agent; ok is false when none has the slug.
func (c *Core) AgentBySlug(slug string) (Agent, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if i, ok := slices.BinarySearchFunc(c.bySlug, slug, func(a Agent, slug string) int { return strings.Compare(a.Slug, slug) }); ok {
		return c.bySlug[i], true
	}
	return Agent{}, false
}

// ServedAgent finds an agent served as a tool: enabled, while serving is
// not paused.
func (c *Core) ServedAgent(slug string) (Agent, bool) {
	a, ok := c.AgentBySlug(slug)
	return a, ok && a.Enabled && !c.paused.Load()
}

// SaveAgent creates (empty ID) or updates an agent after validating it.
func (c *Core) SaveAgent(ctx context.Context, a Agent) (Agent, error) {
	if err := validateAgent(&a); err != nil {
		return Agent{}, err
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if a.ID == "" {
		a.ID = uuid.NewString()
		a.CreatedAt = now
	} else if old, ok := c.agents[a.ID]; ok {
		a.CreatedAt = old.CreatedAt
	} else {
		return Agent{}, Userf(ErrNotFound, "no agent with id %q", a.ID)
	}
	for _, other := range c.agents {
		if other.Slug == a.Slug && other.ID != a.ID {
			return Agent{}, ErrSlugTaken
		}
	}
	a.UpdatedAt = now
	if err := c.history.PutAgent(ctx, a); err != nil {
		return Agent{}, fmt.Errorf("save agent %s: %w", a.Slug, err)
	}
	c.agents[a.ID] = a
	c.agentsChangedLocked()
	c.agentsRev.Add(1)
	c.publish(Event{Kind: EventAgentsChanged, Agent: a.Slug})
	return a, nil
}

// DeleteAgent removes an agent with its conversations. Its turns still
// running are stopped and recorded first (for up to agentStopWait), and
// no new one can start meanwhile.
func (c *Core) DeleteAgent(ctx context.Context, slug string) error {
	c.mu.Lock()
	var gone Agent
	for id, a := range c.agents {
		if a.Slug == slug {
			gone = a
			delete(c.agents, id)
		}
	}
	c.agentsChangedLocked()
	c.mu.Unlock()
	if gone.ID == "" {
		return Userf(ErrNotFound, "no agent named %q", slug)
	}
	c.agentsRev.Add(1)
	c.publish(Event{Kind: EventAgentsChanged, Agent: slug})

	for _, id := range c.convs.busyOf(gone.ID) {
		c.cancelTurn(id, errAgentDeleted)
	}
	for deadline := time.Now().Add(agentStopWait); len(c.convs.busyOf(gone.ID)) > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if err := c.history.DeleteAgent(ctx, gone.ID); err != nil {
		c.mu.Lock()
		c.agents[gone.ID] = gone // still there: put it back
		c.agentsChangedLocked()
		c.mu.Unlock()
		c.agentsRev.Add(1)
		c.publish(Event{Kind: EventAgentsChanged, Agent: slug})
		return fmt.Errorf("delete agent %s: %w", slug, err)
	}
	return nil
}

// agentStopWait bounds how long DeleteAgent waits for the agent's turns.
const agentStopWait = 5 * time.Second

// errAgentDeleted is why a turn stopped when its agent was deleted.
var errAgentDeleted = &UserError{Msg: "the agent was deleted while it worked; the turn was stopped"}

// SetAgentEnabled is the kill switch: a disabled agent leaves the tool list.
func (c *Core) SetAgentEnabled(ctx context.Context, slug string, enabled bool) error {
	a, ok := c.AgentBySlug(slug)
	if !ok {
		return Userf(ErrNotFound, "no agent named %q", slug)
	}
	a.Enabled = enabled
	_, err := c.SaveAgent(ctx, a)
	return err
}

// CheckSlug says whether slug can name an agent's tool.
func CheckSlug(slug string) error {
	if !slugPattern.MatchString(slug) {
		return Userf(nil, "slug %q is not valid: use 1-64 lower-case letters, digits, '-' or '_', starting with a letter or digit", slug)
	}
	return nil
}

func validateAgent(a *Agent) error {
	a.Slug = strings.TrimSpace(a.Slug)
	if err := CheckSlug(a.Slug); err != nil {
		return err
	}
	a.Name = cmp.Or(strings.TrimSpace(a.Name), a.Slug)
	a.Backend = cmp.Or(a.Backend, BackendOllama)
	if a.Backend != BackendOllama && a.Backend != BackendClient {
		return Userf(nil, "model backend %q is not known: use %q or %q", a.Backend, BackendOllama, BackendClient)
	}
	if a.MaxRounds < 0 || a.MaxRounds > 100 {
		return Userf(nil, "max rounds must be between 0 (default %d) and 100", DefaultMaxRounds)
	}
	starters := a.StarterPrompts[:0:0]
	for _, p := range a.StarterPrompts {
		if p = strings.TrimSpace(p); p != "" {
			starters = append(starters, p)
		}
	}
	a.StarterPrompts = starters
	if len(starters) > MaxStarterPrompts {
		return Userf(nil, "an agent may have at most %d starter prompts", MaxStarterPrompts)
	}
	for _, p := range starters {
		if len(p) > 4000 {
			return Userf(nil, "a starter prompt may be at most 4000 characters long")
		}
	}
	hosts, err := checkReachableHosts(a.ReachableHosts)
	if err != nil {
		return err
	}
	a.ReachableHosts = hosts
	if len(a.ResponseSchema) > 0 {
		var schema map[string]any
		if err := json.Unmarshal(a.ResponseSchema, &schema); err != nil {
			return Userf(err, "the response schema is not a JSON object")
		}
	}
	return nil
}

// MaxReachableHosts bounds an agent's hosts on the person's network.
const MaxReachableHosts = 64

// checkReachableHosts returns the hosts as "host:port" with the host in
// lower case, duplicates dropped, or says which entry is not one.
func checkReachableHosts(entries []string) ([]string, error) {
	var out []string
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		host, port, err := net.SplitHostPort(e)
		n, perr := strconv.Atoi(port)
		if err != nil || host == "" || perr != nil || n < 1 || n > 65535 || strings.ContainsAny(host, "/@ ") {
			return nil, Userf(err, "%q is not a host and port: write each host the agent may reach on your network as host:port, such as nas.local:8080, 192.168.1.20:11434 or [fd00::5]:80", e)
		}
		hp := net.JoinHostPort(strings.ToLower(host), strconv.Itoa(n))
		if !slices.Contains(out, hp) {
			out = append(out, hp)
		}
	}
	if len(out) > MaxReachableHosts {
		return nil, Userf(nil, "an agent may reach at most %d hosts on your network", MaxReachableHosts)
	}
	return out, nil
}

// MaxStarterPrompts bounds an agent's starter prompts.
const MaxStarterPrompts = 20

// DefaultAgentSlug names the agent created on first start.
const DefaultAgentSlug = "assistant"

// EnsureDefaultAgent creates the agent "assistant" on Ollama when there is
// no agent at all. model, when given, becomes its model (also when it
// exists); otherwise an assistant without a model gets the first installed
// one. With none to be found it stays without, and its calls say how to
// set one. It returns the assistant, if there is one.
func (c *Core) EnsureDefaultAgent(ctx context.Context, model string) (Agent, bool, error) {
	existing, found := c.AgentBySlug(DefaultAgentSlug)
	switch {
	case !found && len(c.Agents()) > 0:
		return Agent{}, false, nil // the user has their own agents
	case found && existing.Model != "" && (model == "" || model == existing.Model):
		return existing, true, nil
	}
	if model == "" {
		model = c.firstInstalledModel(ctx)
	}
	if found {
		existing.Model = model
		a, err := c.SaveAgent(ctx, existing)
		return a, err == nil, err
	}
	a, err := c.SaveAgent(ctx, Agent{
		Slug:          DefaultAgentSlug,
		Name:          "Assistant",
		Description:   "A general assistant running on your computer. Send it a message; pass the returned conversation handle to continue.",
		Prompt:        "You are a helpful, concise assistant.",
		Backend:       BackendOllama,
		Model:         model,
		Conversations: true,
		Enabled:       true,
	})
	return a, err == nil, err
}

func (c *Core) firstInstalledModel(ctx context.Context) string {
	names, err := c.InstalledModels(ctx)
	if err != nil {
		c.log.Warn("list installed models for the default agent", "err", err)
		return ""
	}
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

// ToolInfo describes a tool agents may switch on.
type ToolInfo struct {
	Name, Description string
	// NeedsApproval is the tool's default: it asks before each call.
	NeedsApproval bool
}

// AvailableTools lists the tools agents may switch on, by name.
func (c *Core) AvailableTools() []ToolInfo {
	out := make([]ToolInfo, 0, len(c.tools))
	for _, t := range c.tools {
		spec := t.Spec()
		info := ToolInfo{Name: spec.Name, Description: spec.Description}
		if d, ok := t.(ApprovalDefaulter); ok {
			info.NeedsApproval = d.NeedsApprovalByDefault()
		}
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b ToolInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// InstalledModels lists the models the Ollama backend has installed.
func (c *Core) InstalledModels(ctx context.Context) ([]string, error) {
	l, ok := c.models[BackendOllama].(ModelLister)
	if !ok {
		return nil, Userf(nil, "no Ollama backend is configured")
	}
	return l.ListModels(ctx)
}

// PullModel downloads a model to the Ollama backend.
func (c *Core) PullModel(ctx context.Context, name string, progress func(PullProgress)) error {
	p, ok := c.models[BackendOllama].(ModelPuller)
	if !ok {
		return Userf(nil, "no Ollama backend is configured")
	}
	if strings.TrimSpace(name) == "" {
		return Userf(nil, "type the name of the model to pull, e.g. llama3.2")
	}
	return p.PullModel(ctx, strings.TrimSpace(name), progress)
}

// ---- conversations, for the desktop ----

// RecentConversations lists up to limit conversations, last active first.
func (c *Core) RecentConversations(ctx context.Context, limit int) ([]ConversationSummary, error) {
	return c.history.RecentConversations(ctx, limit)
}

// errCancelledHere is why a turn stopped when the person stopped it.
var errCancelledHere = &UserError{Msg: "the turn was stopped from the Deskhand desktop"}

// CancelTurn stops the turn running in a conversation; false when none runs.
func (c *Core) CancelTurn(conversationID string) bool {
	return c.cancelTurn(conversationID, errCancelledHere)
}

// cancelTurn stops the turn running in a conversation, saying why.
func (c *Core) cancelTurn(conversationID string, why error) bool {
	cancel, ok := c.cancels.Load(conversationID)
	if ok {
		cancel.(context.CancelCauseFunc)(why)
	}
	return ok
}

// ConversationsOf lists the principal's own conversations, last active
// first, from after the mark.
func (c *Core) ConversationsOf(ctx context.Context, principal string, after PageMark, limit int) ([]ConversationSummary, error) {
	return c.history.ConversationsOf(ctx, principal, after, limit)
}

// ConversationOf returns the conversation and its messages when principal
// owns it; anyone else gets ErrUnknownConversation, as for a handle never
// given.
func (c *Core) ConversationOf(ctx context.Context, principal, id string) (Conversation, []Message, error) {
	conv, err := c.history.Conversation(ctx, strings.TrimSpace(id))
	if errors.Is(err, ErrNotFound) || (err == nil && conv.Principal != principal) {
		return Conversation{}, nil, ErrUnknownConversation
	}
	if err != nil {
		return Conversation{}, nil, err
	}
	msgs, err := c.history.Messages(ctx, conv.ID)
	return conv, msgs, err
}

// Transcript is a conversation's messages and turns.
func (c *Core) Transcript(ctx context.Context, conversationID string) ([]Message, []Turn, error) {
	msgs, err := c.history.Messages(ctx, conversationID)
	if err != nil {
		return nil, nil, err
	}
	turns, err := c.history.Turns(ctx, conversationID)
	return msgs, turns, err
}

// ---- clients (principals) ----

// CreateClient registers a client and returns its bearer token, which is
// shown once: only its SHA-256 is kept.
func (c *Core) CreateClient(ctx context.Context, name string) (Client, string, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 100 || name == LocalPrincipal {
		return Client{}, "", Userf(nil, "client name %q is not valid: use 1-100 characters (not %q)", name, LocalPrincipal)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cl := range c.clients {
		if cl.Active() && cl.Name == name {
			return Client{}, "", Userf(nil, "a client named %q already exists; revoke it first or pick another name", name)
		}
	}
	token, hash, err := newToken()
	if err != nil {
		return Client{}, "", err
	}
	cl := Client{ID: uuid.NewString(), Name: name, TokenHash: hash, CreatedAt: c.now()}
	if err := c.history.PutClient(ctx, cl); err != nil {
		return Client{}, "", fmt.Errorf("save client %s: %w", name, err)
	}
	c.clients = append(c.clients, cl)
	c.publish(Event{Kind: EventClientsChanged, Text: name})
	return cl, token, nil
}

// RotateClient gives the named client a new token, creating the client
// when there is none. The old token stops working at once; the client
// stays the same principal, so its conversations remain its own.
func (c *Core) RotateClient(ctx context.Context, name string) (Client, string, error) {
	if err := c.adoptStoredClient(ctx, name); err != nil {
		return Client{}, "", err
	}
	c.mu.Lock()
	i := slices.IndexFunc(c.clients, func(cl Client) bool { return cl.Active() && cl.Name == name })
	if i < 0 {
		c.mu.Unlock()
		return c.CreateClient(ctx, name)
	}
	defer c.mu.Unlock()
	token, hash, err := newToken()
	if err != nil {
		return Client{}, "", err
	}
	cl := c.clients[i]
	cl.TokenHash = hash
	if err := c.history.PutClient(ctx, cl); err != nil {
		return Client{}, "", fmt.Errorf("rotate the token of %s: %w", name, err)
	}
	c.clients[i] = cl
	c.publish(Event{Kind: EventClientsChanged, Text: name})
	return cl, token, nil
}

// adoptStoredClient makes the core know the named active client when the
// history has it but the core does not: another process on the same
// database (a second 'deskhand connect' while the app is not running)
// created it after this core loaded its clients. Rotating then replaces
// that client's token instead of failing to create a second client of
// the same name.
func (c *Core) adoptStoredClient(ctx context.Context, name string) error {
	c.mu.Lock()
	known := slices.ContainsFunc(c.clients, func(cl Client) bool { return cl.Active() && cl.Name == name })
	c.mu.Unlock()
	if known {
		return nil
	}
	stored, err := c.history.Clients(ctx)
	if err != nil {
		return fmt.Errorf("reload clients: %w", err)
	}
	i := slices.IndexFunc(stored, func(cl Client) bool { return cl.Active() && cl.Name == name })
	if i < 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if slices.ContainsFunc(c.clients, func(cl Client) bool { return cl.Active() && cl.Name == name }) {
		return nil
	}
	if j := slices.IndexFunc(c.clients, func(cl Client) bool { return cl.ID == stored[i].ID }); j >= 0 {
		c.clients[j] = stored[i]
	} else {
		c.clients = append(c.clients, stored[i])
	}
	return nil
}

// newToken makes a 256-bit bearer token and the SHA-256 that is kept of it.
func newToken() (token string, hash []byte, err error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return "", nil, fmt.Errorf("make token: %w", err)
	}
	token = "dh_" + base64.RawURLEncoding.EncodeToString(secret)
	sum := sha256.Sum256([]byte(token))
	return token, sum[:], nil
}

// RevokeClient stops accepting the named client's token at once.
func (c *Core) RevokeClient(ctx context.Context, name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, cl := range c.clients {
		if cl.Active() && cl.Name == name {
			cl.RevokedAt = c.now()
			if err := c.history.PutClient(ctx, cl); err != nil {
				return fmt.Errorf("revoke client %s: %w", name, err)
			}
			c.clients[i] = cl
			c.publish(Event{Kind: EventClientsChanged, Text: name})
			return nil
		}
	}
	return Userf(ErrNotFound, "no active client named %q", name)
}

// Clients lists active clients by name.
func (c *Core) Clients() []Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.DeleteFunc(slices.Clone(c.clients), func(cl Client) bool { return !cl.Active() })
	slices.SortFunc(out, func(a, b Client) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// lastUseGranularity limits last-use writes to one per client per minute.
const lastUseGranularity = time.Minute

// Authenticate returns the active client whose token this is. Every active
// client's hash is compared in constant time, so timing tells nothing.
func (c *Core) Authenticate(ctx context.Context, token string) (Client, bool) {
	if token == "" {
		return Client{}, false
	}
	sum := sha256.Sum256([]byte(token))
	c.mu.Lock()
	defer c.mu.Unlock()
	found := -1
	for i, cl := range c.clients {
		if subtle.ConstantTimeCompare(cl.TokenHash, sum[:]) == 1 && cl.Active() {
			found = i
		}
	}
	if found < 0 {
		return Client{}, false
	}
	cl := &c.clients[found]
	if now := c.now(); now.Sub(cl.LastUsedAt) >= lastUseGranularity {
		cl.LastUsedAt = now
		if err := c.history.TouchClient(ctx, cl.ID, now); err != nil {
			c.log.Warn("record client last use", "client", cl.Name, "err", err)
		}
	}
	return *cl, true
}

// ---- settings ----

// Setting returns a stored setting, or def when it is unset.
func (c *Core) Setting(ctx context.Context, key, def string) (string, error) {
	v, err := c.history.Setting(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return def, nil
	}
	return v, err
}

// SetSetting stores a setting.
func (c *Core) SetSetting(ctx context.Context, key, value string) error {
	return c.history.SetSetting(ctx, key, value)
}
