package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Providers: the model servers agents run on, each set up once by the
// person (kind, address, and an API key kept by the Secrets port).

var providerNamePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`)

// defaultBaseURLs are the addresses of the kinds that have one.
var defaultBaseURLs = map[ProviderKind]string{
	ProviderOpenAI:    "https://api.openai.com/v1",
	ProviderAnthropic: "https://api.anthropic.com",
}

// Providers are the model servers agents run on, and the models made for
// them.
type Providers struct {
	c         *Core
	store     ProviderStore
	connector ModelConnector
	// local are where EnsureDefault looks for a model on first start.
	local []Provider
	// writes makes changes of providers go one at a time across their
	// store and keychain writes; no request takes it.
	writes sync.Mutex
	// mu guards byName and connected; never held across I/O.
	mu     sync.Mutex
	byName map[string]Provider
	// connected caches each provider's model, made by the connector for
	// the provider as it was at UpdatedAt.
	connected map[string]connectedModel
}

// ProviderStatus is a provider as the person sees it.
type ProviderStatus struct {
	Provider
	HasKey bool
	// UsedBy are the slugs of the agents that run on it.
	UsedBy []string
}

// List lists the providers by name, with whether each has a key and
// which agents use it.
func (pv *Providers) List() []ProviderStatus {
	c := pv.c
	pv.mu.Lock()
	ps := make([]Provider, 0, len(pv.byName))
	for _, p := range pv.byName {
		ps = append(ps, p)
	}
	pv.mu.Unlock()
	slices.SortFunc(ps, func(a, b Provider) int { return strings.Compare(a.Name, b.Name) })
	agents := c.agents.List()
	out := make([]ProviderStatus, 0, len(ps))
	for _, p := range ps {
		st := ProviderStatus{Provider: p, HasKey: c.secretOf(p.Name) != ""}
		for _, a := range agents {
			if a.Provider == p.Name {
				st.UsedBy = append(st.UsedBy, a.Slug)
			}
		}
		out = append(out, st)
	}
	return out
}

// Get returns the provider named name.
func (pv *Providers) Get(name string) (Provider, bool) {
	pv.mu.Lock()
	defer pv.mu.Unlock()
	p, ok := pv.byName[name]
	return p, ok
}

// KeyChange says what Providers.Save does with a provider's API key.
type KeyChange struct {
	Set bool   // replace the key with Key; "" removes it
	Key string // never logged, stored or put in an error
}

// Save adds a provider or changes one (by name), and sets or
// removes its API key in the keychain. The key goes nowhere else.
func (pv *Providers) Save(ctx context.Context, p Provider, key KeyChange) (Provider, error) {
	c := pv.c
	if err := validateProvider(&p); err != nil {
		return Provider{}, err
	}
	if key.Set && strings.TrimSpace(key.Key) != key.Key {
		return Provider{}, Userf(nil, "the API key has spaces or line breaks around it: paste only the key")
	}
	if key.Set && c.secrets == nil {
		return Provider{}, Userf(nil, "there is no keychain to keep the key in")
	}
	pv.writes.Lock()
	defer pv.writes.Unlock()
	now := c.now()
	if old, ok := pv.Get(p.Name); ok {
		p.CreatedAt = old.CreatedAt
	} else {
		p.CreatedAt = now
	}
	p.UpdatedAt = now
	switch {
	case key.Set && key.Key != "":
		if err := c.secrets.Set(ProviderSecretKey(p.Name), key.Key); err != nil {
			return Provider{}, Userf(err, "cannot keep the API key of %s in the keychain", p.Name)
		}
	case key.Set:
		if err := c.secrets.Delete(ProviderSecretKey(p.Name)); err != nil && !errors.Is(err, ErrNotFound) {
			return Provider{}, Userf(err, "cannot remove the API key of %s from the keychain", p.Name)
		}
	}
	if err := pv.store.PutProvider(ctx, p); err != nil {
		return Provider{}, fmt.Errorf("save provider %s: %w", p.Name, err)
	}
	pv.mu.Lock()
	pv.byName[p.Name] = p
	delete(pv.connected, p.Name)
	pv.mu.Unlock()
	c.publish(Event{Kind: EventProvidersChanged, Text: p.Name})
	return p, nil
}

// Delete removes a provider no agent uses, and its API key.
func (pv *Providers) Delete(ctx context.Context, name string) error {
	c := pv.c
	pv.writes.Lock()
	defer pv.writes.Unlock()
	if _, ok := pv.Get(name); !ok {
		return Userf(ErrNotFound, "no provider named %q", name)
	}
	var users []string
	for _, a := range c.agents.List() {
		if a.Provider == name {
			users = append(users, a.Slug)
		}
	}
	if len(users) > 0 {
		return Userf(nil, "provider %s is used by %s: move them to another provider first", name, strings.Join(users, ", "))
	}
	if err := pv.store.DeleteProvider(ctx, name); err != nil {
		return fmt.Errorf("delete provider %s: %w", name, err)
	}
	pv.mu.Lock()
	delete(pv.byName, name)
	delete(pv.connected, name)
	pv.mu.Unlock()
	c.publish(Event{Kind: EventProvidersChanged, Text: name})
	if c.secrets != nil {
		if err := c.secrets.Delete(ProviderSecretKey(name)); err != nil && !errors.Is(err, ErrNotFound) {
			c.log.Warn("remove a deleted provider's API key", "provider", name, "err", err)
		}
	}
	return nil
}

// Models lists the models a provider offers (what its server
// answers now), for the editor's picker and "provider check".
func (pv *Providers) Models(ctx context.Context, name string) ([]string, error) {
	c := pv.c
	m, err := c.providerModel(name)
	if err != nil {
		return nil, err
	}
	l, ok := m.(ModelLister)
	if !ok {
		return nil, Userf(nil, "provider %s cannot list its models: type the model's name", name)
	}
	models, err := l.ListModels(ctx)
	if err != nil {
		return nil, c.redact.Error(err) // a server's error may echo its key
	}
	return models, nil
}

// DescribeModel says what a provider's model can do, where its server
// tells; unknown otherwise.
func (pv *Providers) DescribeModel(ctx context.Context, provider, model string) (ModelInfo, error) {
	c := pv.c
	m, err := c.providerModel(provider)
	if err != nil {
		return ModelInfo{}, err
	}
	d, ok := m.(ModelDescriber)
	if !ok {
		return ModelInfo{Name: model}, nil
	}
	info, err := d.DescribeModel(ctx, model)
	if err != nil {
		return ModelInfo{}, c.redact.Error(err)
	}
	return info, nil
}

// connectedModel is a provider's model as made for one version of it.
type connectedModel struct {
	model Model
	at    time.Time
}

// providerModel is the model of the named provider: the fixed one of
// Config.Models, or the connector's, made once per version of the
// provider.
func (c *Core) providerModel(name string) (Model, error) {
	if m := c.models[Backend(name)]; m != nil && Backend(name) != BackendClient {
		return m, nil
	}
	p, ok := c.providers.Get(name)
	if !ok {
		return nil, Userf(ErrNotFound, "no provider named %q: add it in Settings → Models or with 'deskhand provider add'", name)
	}
	c.providers.mu.Lock()
	cm, ok := c.providers.connected[name]
	c.providers.mu.Unlock()
	if ok && cm.at.Equal(p.UpdatedAt) {
		return cm.model, nil
	}
	if c.providers.connector == nil {
		return nil, Userf(nil, "provider %s cannot be reached from here", name)
	}
	// The keychain may be slow (a locked one asks for a password): never
	// under providersMu.
	m, err := c.providers.connector.Connect(p, c.secretOf(name))
	if err != nil {
		return nil, Userf(err, "cannot connect to provider %s: %v", name, err)
	}
	c.providers.mu.Lock()
	if cur, ok := c.providers.byName[name]; ok && cur.UpdatedAt.Equal(p.UpdatedAt) {
		c.providers.connected[name] = connectedModel{model: m, at: p.UpdatedAt}
	}
	c.providers.mu.Unlock()
	return m, nil
}

// secretOf is the provider's API key, "" when it has none or the keychain
// cannot be read (the provider's server then says the key is missing).
func (c *Core) secretOf(name string) string {
	if c.secrets == nil {
		return ""
	}
	key, err := c.secrets.Get(ProviderSecretKey(name))
	if err != nil && !errors.Is(err, ErrNotFound) {
		c.log.Debug("read a provider's API key", "provider", name, "err", err)
	}
	return key
}

func validateProvider(p *Provider) error {
	p.Name = strings.TrimSpace(p.Name)
	if !providerNamePattern.MatchString(p.Name) || p.Name == string(BackendClient) {
		return Userf(nil, "provider name %q is not valid: use 1-40 lower-case letters, digits, '-' or '_' (not \"client\")", p.Name)
	}
	if !slices.Contains(ProviderKinds, p.Kind) {
		kinds := make([]string, len(ProviderKinds))
		for i, k := range ProviderKinds {
			kinds[i] = string(k)
		}
		return Userf(nil, "provider kind %q is not known: use one of %s", p.Kind, strings.Join(kinds, ", "))
	}
	p.BaseURL = strings.TrimRight(strings.TrimSpace(p.BaseURL), "/")
	if p.BaseURL == "" {
		if p.Kind == ProviderOpenAICompatible {
			return Userf(nil, "an OpenAI-compatible provider needs the server's address, such as http://127.0.0.1:1234/v1 (LM Studio), http://127.0.0.1:8080/v1 (llama.cpp) or http://127.0.0.1:8000/v1 (vLLM)")
		}
		p.BaseURL = defaultBaseURLs[p.Kind]
		return nil
	}
	u, err := url.Parse(p.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return Userf(err, "%q is not a server address: write it as http://host:port or https://host/path, without a user, query or fragment", p.BaseURL)
	}
	return nil
}

// agentProvider is the provider an agent runs on: its own, or the one
// every store starts with.
func agentProvider(a Agent) string { return cmp.Or(a.Provider, OllamaProvider) }

// checkProviderOf refuses an agent whose provider does not exist, or whose
// response schema its model says it cannot answer in. Where the server
// cannot say (most OpenAI-compatible ones), the first call will tell.
func (c *Core) checkProviderOf(ctx context.Context, a Agent) error {
	if c.models[Backend(a.Provider)] == nil {
		if _, ok := c.providers.Get(a.Provider); !ok {
			return Userf(ErrNotFound, "no provider named %q: add it in Settings → Models or with 'deskhand provider add'", a.Provider)
		}
	}
	if len(a.ResponseSchema) == 0 || a.Model == "" || a.Backend == BackendClient {
		return nil
	}
	info, err := c.providers.DescribeModel(ctx, a.Provider, a.Model)
	if err != nil {
		c.log.Warn("describe a model to check its structured output", "provider", a.Provider, "model", a.Model, "err", err)
		return nil
	}
	if info.StructuredOutput == CapabilityNo {
		return Userf(nil, "model %s of provider %s cannot answer in the shape of a response schema: pick another model or remove the schema", a.Model, a.Provider)
	}
	return nil
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
