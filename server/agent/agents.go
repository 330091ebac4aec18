package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
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

// Agents are the agents the person defined, kept in memory for the
// request path; changes are written through and announced.
type Agents struct {
	c     *Core
	store AgentStore
	// writes makes changes of agents go one at a time across their store
	// writes; no request takes it.
	writes sync.Mutex
	// mu guards byID and bySlug; it is never held across I/O.
	mu   sync.Mutex
	byID map[string]Agent
	// bySlug is the agents in slug order, rebuilt at each change, so that
	// lookups on the call path neither scan nor sort.
	bySlug []Agent
	// rev counts agent changes (and pauses), so adapters can tell a stale
	// copy.
	rev atomic.Uint64
}

var slugPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// List lists all agents in slug order.
func (ags *Agents) List() []Agent {
	ags.mu.Lock()
	defer ags.mu.Unlock()
	return slices.Clone(ags.bySlug)
}

// agentsChangedLocked rebuilds the slug index after a change of agents.
func (c *Core) agentsChangedLocked() {
	c.agents.bySlug = slices.Collect(maps.Values(c.agents.byID))
	slices.SortFunc(c.agents.bySlug, func(a, b Agent) int { return strings.Compare(a.Slug, b.Slug) })
}

// Revision changes whenever an agent is created or changed.
func (ags *Agents) Revision() uint64 {
	return ags.rev.Load()
}

// Enabled lists the agents served as tools, in slug order: none
// while serving is paused.
func (ags *Agents) Enabled() []Agent {
	c := ags.c
	if c.settings.paused.Load() {
		return nil
	}
	return slices.DeleteFunc(ags.List(), func(a Agent) bool { return !a.Enabled })
}

// BySlug finds an agent; ok is false when none has the slug.
func (ags *Agents) BySlug(slug string) (Agent, bool) {
	ags.mu.Lock()
	defer ags.mu.Unlock()
	if i, ok := slices.BinarySearchFunc(ags.bySlug, slug, func(a Agent, slug string) int { return strings.Compare(a.Slug, slug) }); ok {
		return ags.bySlug[i], true
	}
	return Agent{}, false
}

// Served finds an agent served as a tool: enabled, while serving is
// not paused.
func (ags *Agents) Served(slug string) (Agent, bool) {
	c := ags.c
	a, ok := ags.BySlug(slug)
	return a, ok && a.Enabled && !c.settings.paused.Load()
}

// Save creates (empty ID) or updates an agent after validating it.
func (ags *Agents) Save(ctx context.Context, a Agent) (Agent, error) {
	c := ags.c
	if err := validateAgent(&a); err != nil {
		return Agent{}, err
	}
	if err := c.checkSchema(a.ResponseSchema); err != nil {
		return Agent{}, err
	}
	if err := c.checkProviderOf(ctx, a); err != nil {
		return Agent{}, err
	}
	// Agent changes go one at a time, so that what is written is what was
	// checked; lookups (every request) take only mu, which no write holds.
	ags.writes.Lock()
	defer ags.writes.Unlock()
	now := c.now()
	if err := c.checkAgentChange(&a, now); err != nil {
		return Agent{}, err
	}
	if err := c.checkTeam(&a); err != nil { // team.go
		return Agent{}, err
	}
	a.UpdatedAt = now
	if err := ags.store.PutAgent(ctx, a); err != nil {
		return Agent{}, fmt.Errorf("save agent %s: %w", a.Slug, err)
	}
	c.setAgent(a)
	return a, nil
}

// checkAgentChange gives a its ID and creation time and refuses a change
// of an agent that is gone, or a slug that another agent has.
func (c *Core) checkAgentChange(a *Agent, now time.Time) error {
	c.agents.mu.Lock()
	defer c.agents.mu.Unlock()
	if a.ID == "" {
		a.ID = uuid.NewString()
		a.CreatedAt = now
	} else if old, ok := c.agents.byID[a.ID]; ok {
		a.CreatedAt = old.CreatedAt
	} else {
		return Userf(ErrNotFound, "no agent with id %q", a.ID)
	}
	for _, other := range c.agents.byID {
		if other.Slug == a.Slug && other.ID != a.ID {
			return ErrSlugTaken
		}
	}
	return nil
}

// setAgent puts a (back) among the agents and tells subscribers.
func (c *Core) setAgent(a Agent) {
	c.agents.mu.Lock()
	c.agents.byID[a.ID] = a
	c.agentsChangedLocked()
	c.agents.mu.Unlock()
	c.agents.rev.Add(1)
	c.publish(Event{Kind: EventAgentsChanged, Agent: a.Slug})
}

// Delete removes an agent with its conversations. Its turns still
// running are stopped and recorded first (waiting for up to agentStopWait,
// or until ctx ends, when the agent stays), and no new one can start
// meanwhile.
func (ags *Agents) Delete(ctx context.Context, slug string) error {
	c := ags.c
	gone, ok := c.takeAgent(slug)
	if !ok {
		return Userf(ErrNotFound, "no agent named %q", slug)
	}
	// A turn that started before the agent left the map is in turns by
	// now: Run tracks it before it checks that its agent still exists.
	running := c.conversations.turns.of(gone.ID)
	for _, lt := range running {
		lt.cancel(errAgentDeleted)
	}
	err := c.awaitTurns(ctx, slug, running)
	if err == nil {
		ags.writes.Lock()
		defer ags.writes.Unlock()
		err = ags.store.DeleteAgent(ctx, gone.ID)
	}
	if err != nil {
		c.setAgent(gone) // still there: put it back
		return fmt.Errorf("delete agent %s: %w", slug, err)
	}
	c.dropFromTeams(gone.ID) // team.go
	return nil
}

// takeAgent removes the agent from the ones served.
func (c *Core) takeAgent(slug string) (Agent, bool) {
	c.agents.writes.Lock()
	defer c.agents.writes.Unlock()
	c.agents.mu.Lock()
	var gone Agent
	for id, a := range c.agents.byID {
		if a.Slug == slug {
			gone = a
			delete(c.agents.byID, id)
		}
	}
	c.agentsChangedLocked()
	c.agents.mu.Unlock()
	if gone.ID == "" {
		return Agent{}, false
	}
	c.agents.rev.Add(1)
	c.publish(Event{Kind: EventAgentsChanged, Agent: slug})
	return gone, true
}

// awaitTurns waits until the turns are recorded, for up to agentStopWait;
// it gives up when ctx ends.
func (c *Core) awaitTurns(ctx context.Context, slug string, running []*liveTurn) error {
	if len(running) == 0 {
		return nil
	}
	bound := time.NewTimer(agentStopWait)
	defer bound.Stop()
	for _, lt := range running {
		select {
		case <-lt.done:
		case <-bound.C:
			c.log.Warn("deleting an agent whose turns did not stop in time", "agent", slug, "wait", agentStopWait)
			return nil
		case <-ctx.Done():
			return fmt.Errorf("wait for its turns to stop: %w", context.Cause(ctx))
		}
	}
	return nil
}

// agentExists says whether the agent (by ID) is still defined.
func (c *Core) agentExists(id string) bool {
	c.agents.mu.Lock()
	defer c.agents.mu.Unlock()
	_, ok := c.agents.byID[id]
	return ok
}

// agentStopWait bounds how long Agents.Delete waits for the agent's turns.
const agentStopWait = 5 * time.Second

// errAgentDeleted is why a turn stopped when its agent was deleted.
var errAgentDeleted = &UserError{Msg: "the agent was deleted while it worked; the turn was stopped"}

// SetEnabled is the kill switch: a disabled agent leaves the tool list.
func (ags *Agents) SetEnabled(ctx context.Context, slug string, enabled bool) error {
	a, ok := ags.BySlug(slug)
	if !ok {
		return Userf(ErrNotFound, "no agent named %q", slug)
	}
	a.Enabled = enabled
	_, err := ags.Save(ctx, a)
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
	switch a.Backend {
	case "", BackendOllama: // as saved before providers
		a.Backend = BackendProvider
	case BackendProvider, BackendClient:
	default:
		return Userf(nil, "model backend %q is not known: use %q or %q", a.Backend, BackendProvider, BackendClient)
	}
	a.Provider = agentProvider(*a)
	a.Model = strings.TrimSpace(a.Model)
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
	if a.Icon, err = CheckIcon(a.Icon); err != nil {
		return err
	}
	// JSON null (an agent that went through JSON without one) is no schema.
	if s := strings.TrimSpace(string(a.ResponseSchema)); s == "" || s == "null" {
		a.ResponseSchema = nil
	}
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

// EnsureDefault creates the agent "assistant" when there is no agent
// at all. model, when given, becomes its model (also when it exists, on
// the provider it has). Otherwise an assistant without a model gets the
// first model that can call tools on the first server of
// Config.LocalServers that answers; a server found that is not a
// provider yet becomes one. With none to be found it stays without, on
// the provider "ollama", and its calls say how to set one. It returns the
// assistant, if there is one.
func (ags *Agents) EnsureDefault(ctx context.Context, model string) (Agent, bool, error) {
	c := ags.c
	existing, found := ags.BySlug(DefaultAgentSlug)
	switch {
	case !found && len(ags.List()) > 0:
		return Agent{}, false, nil // the user has their own agents
	case found && existing.Model != "" && (model == "" || model == existing.Model):
		return existing, true, nil
	}
	if !found {
		existing = Agent{
			Slug:          DefaultAgentSlug,
			Name:          "Assistant",
			Description:   "A general assistant running on your computer. Send it a message; pass the returned conversation handle to continue.",
			Prompt:        "You are a helpful, concise assistant.",
			Backend:       BackendProvider,
			Provider:      OllamaProvider,
			Conversations: true,
			Enabled:       true,
		}
	}
	if model != "" {
		existing.Model = model
	} else if provider, found := c.findLocalModel(ctx); found.Name != "" {
		if _, known := c.providers.Get(provider.Name); !known {
			if _, err := c.providers.Save(ctx, provider, KeyChange{}); err != nil {
				return Agent{}, false, err
			}
		}
		existing.Provider, existing.Model = provider.Name, found.Name
		c.log.Info("the agent 'assistant' runs on a model found on this computer", "provider", provider.Name, "url", provider.BaseURL, "model", found.Name)
	}
	a, err := ags.Save(ctx, existing)
	if err == nil && a.Model == "" {
		c.log.Warn(noModelFound)
	}
	return a, err == nil, err
}

// noModelFound says what to do when no model server answered on first
// start.
const noModelFound = `the agent 'assistant' has no model: no model server answered on this computer (Ollama on port 11434, LM Studio 1234, llama.cpp 8080, vLLM 8000). Do one of these, then restart Deskhand:
  - install Ollama (https://ollama.com) and run: ollama pull qwen3
  - start LM Studio's server (Developer tab, or: lms server start) with a model loaded
  - add a provider you have: deskhand provider add NAME --kind openai-compatible|openai|anthropic [--url URL] --key-stdin
    then: deskhand agent edit assistant --provider NAME --model MODEL`

// localServerWait bounds how long each local server may take to list its
// models on first start.
const localServerWait = 3 * time.Second

// findLocalModel asks each of Config.LocalServers, in order, for a model
// that can call tools (or may: most OpenAI-compatible servers cannot
// say), preferring one that says it can. A server that is already a
// provider (by name) is asked as that provider is set up.
func (c *Core) findLocalModel(ctx context.Context) (Provider, ModelInfo) {
	candidates := c.providers.local
	if len(candidates) == 0 {
		candidates = []Provider{{Name: OllamaProvider, Kind: ProviderOllama}}
	}
	for _, candidate := range candidates {
		p := candidate
		if known, ok := c.providers.Get(candidate.Name); ok {
			p = known
		} else if err := validateProvider(&p); err != nil {
			c.log.Warn("a local model server's address is not valid", "provider", p.Name, "err", err)
			continue
		}
		var m Model
		var err error
		if known, ok := c.providers.Get(p.Name); ok && known == p {
			m, err = c.providerModel(p.Name)
		} else if c.providers.connector != nil {
			m, err = c.providers.connector.Connect(p, "")
		} else {
			continue
		}
		if err != nil {
			continue
		}
		if info, ok := firstToolModel(ctx, m); ok {
			return p, info
		}
	}
	return Provider{}, ModelInfo{}
}

// firstToolModel lists m's models and returns the first that says it
// calls tools, else the first that does not say it cannot.
func firstToolModel(ctx context.Context, m Model) (ModelInfo, bool) {
	ctx, cancel := context.WithTimeout(ctx, localServerWait)
	defer cancel()
	lister, ok := m.(ModelLister)
	if !ok {
		return ModelInfo{}, false
	}
	names, err := lister.ListModels(ctx)
	if err != nil || len(names) == 0 {
		return ModelInfo{}, false
	}
	describer, _ := m.(ModelDescriber)
	var maybe ModelInfo
	for _, name := range names {
		info := ModelInfo{Name: name}
		if describer != nil {
			if got, err := describer.DescribeModel(ctx, name); err == nil {
				info = got
				info.Name = name
			}
		}
		switch info.Tools {
		case CapabilityYes:
			return info, true
		case CapabilityUnknown:
			if maybe.Name == "" {
				maybe = info
			}
		}
	}
	return maybe, maybe.Name != ""
}

// ToolInfo describes a tool agents may switch on.
type ToolInfo struct {
	Name, Description string
	// NeedsApproval is the tool's default: it asks before each call.
	NeedsApproval bool
	// Effects is what the tool can do (EffectsOf).
	Effects Effects
}

// AvailableTools lists the tools agents may switch on, by name.
func (ags *Agents) AvailableTools() []ToolInfo {
	c := ags.c
	out := make([]ToolInfo, 0, len(c.tools))
	for _, t := range c.tools {
		spec := t.Spec()
		info := ToolInfo{Name: spec.Name, Description: spec.Description, Effects: EffectsOf(t)}
		if d, ok := t.(ApprovalDefaulter); ok {
			info.NeedsApproval = d.NeedsApprovalByDefault()
		}
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b ToolInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// PullModel downloads a model to the provider OllamaProvider.
func (pv *Providers) PullModel(ctx context.Context, name string, progress func(PullProgress)) error {
	c := pv.c
	m, err := c.providerModel(OllamaProvider)
	if err != nil {
		return err
	}
	p, ok := m.(ModelPuller)
	if !ok {
		return Userf(nil, "provider %s cannot download models", OllamaProvider)
	}
	if strings.TrimSpace(name) == "" {
		return Userf(nil, "type the name of the model to pull, e.g. llama3.2")
	}
	return p.PullModel(ctx, strings.TrimSpace(name), progress)
}

// checkSchema runs Config.CheckSchema on a response schema.
func (c *Core) checkSchema(schema json.RawMessage) error {
	if len(schema) == 0 || c.schemaCheck == nil {
		return nil
	}
	if err := c.schemaCheck(schema); err != nil {
		return Userf(err, "the response schema is not a valid JSON Schema: %v", err)
	}
	return nil
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
