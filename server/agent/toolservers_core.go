package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// toolServerState is the tool servers and agents' attachments, kept in
// memory for the turn path (see toolservers_run.go).
// ToolServers are the person's MCP servers and the agents they are
// attached to: what each server offers, and the tools held back since
// their definitions changed.
type ToolServers struct {
	c *Core
	toolServerState
}

type toolServerState struct {
	store   ToolServerStore // nil: tool servers are not wired
	running ToolServerRunner

	// writes makes changes go one at a time across their store, keychain
	// and running-set writes; no request takes it.
	writes sync.Mutex
	// mu guards the maps; never held across I/O.
	mu       sync.Mutex
	servers  map[string]ToolServer        // by name
	attached map[string][]AgentToolServer // by agent ID, by server name
	held     map[heldKey]HeldTool
}

type heldKey struct{ agentID, server, tool string }

// HeldTool is a server tool whose definition changed since the person
// attached it: it is not offered to the agent's model until they look
// again (ToolServers.Repin).
type HeldTool struct {
	Agent  string // slug
	Server string
	Tool   string
	// Old is the definition the person attached (empty when they never
	// saw this tool); New is what the server lists now.
	Old, New string
	Since    time.Time
}

var toolServerNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,32}$`)

// ToolServerSecrets are the values of a server's secret variables and
// headers, by name. They go to the Secrets port only.
type ToolServerSecrets struct {
	Env     map[string]string
	Headers map[string]string
}

func (c *Core) toolServersOn() error {
	if c.toolServers.store == nil || c.toolServers.running == nil {
		return Userf(nil, "tool servers are not available in this Deskhand")
	}
	return nil
}

// loadToolServers reads the servers and attachments and hands the servers
// to the running set.
func (c *Core) loadToolServers(ctx context.Context, st ToolServerStore, running ToolServerRunner) error {
	ts := &c.toolServers
	ts.servers, ts.attached, ts.held = map[string]ToolServer{}, map[string][]AgentToolServer{}, map[heldKey]HeldTool{}
	if st == nil || running == nil {
		return nil
	}
	ts.store, ts.running = st, running
	servers, err := st.ToolServers(ctx)
	if err != nil {
		return fmt.Errorf("load tool servers: %w", err)
	}
	for _, s := range servers {
		ts.servers[s.Name] = s
	}
	atts, err := st.AgentToolServers(ctx)
	if err != nil {
		return fmt.Errorf("load agents' tool servers: %w", err)
	}
	for _, a := range atts {
		ts.attached[a.AgentID] = append(ts.attached[a.AgentID], a)
	}
	if err := running.Set(c.toolServerConfigs(servers)); err != nil {
		// Deskhand still starts: the servers are listed, with the error.
		c.log.Error("the tool servers could not be set up", "err", err)
	}
	return nil
}

// toolServerConfigs resolves the servers' secrets; a secret missing from
// the keychain is left empty, with a warning.
func (c *Core) toolServerConfigs(servers []ToolServer) []ToolServerConfig {
	out := make([]ToolServerConfig, 0, len(servers))
	for _, s := range servers {
		cfg := ToolServerConfig{ToolServer: s, SecretEnvValues: map[string]string{}, SecretHeaderValues: map[string]string{}}
		get := func(key, what, name string) string {
			if c.secrets == nil {
				return ""
			}
			v, err := c.secrets.Get(key)
			if err != nil {
				c.log.Warn("a tool server's secret is missing from the keychain", "server", s.Name, what, name, "err", err)
			}
			return v
		}
		for _, k := range s.SecretEnv {
			cfg.SecretEnvValues[k] = get(ToolServerEnvKey(s.Name, k), "env", k)
		}
		for _, k := range s.SecretHeaders {
			cfg.SecretHeaderValues[k] = get(ToolServerHeaderKey(s.Name, k), "header", k)
		}
		out = append(out, cfg)
	}
	return out
}

// List lists the tool servers by name. Secret values are never
// here, only their names.
func (tsv *ToolServers) List() []ToolServer {
	tsv.mu.Lock()
	defer tsv.mu.Unlock()
	out := slices.Collect(maps.Values(tsv.servers))
	slices.SortFunc(out, func(a, b ToolServer) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Statuses says how each server is doing (state, tool count,
// last error, log file).
func (tsv *ToolServers) Statuses() []ToolServerStatus {
	c := tsv.c
	if c.toolServersOn() != nil {
		return nil
	}
	return tsv.running.Status()
}

// checkToolServer says what is wrong with a server's definition and its
// secrets.
func checkToolServer(s ToolServer, sec ToolServerSecrets, existing *ToolServer) error {
	switch {
	case !toolServerNameRE.MatchString(s.Name) || strings.Contains(s.Name, "__"):
		return Userf(nil, "the tool server name %q may use only letters, digits, '_' and '-' (at most 32, and no '__')", s.Name)
	case (s.Command == "") == (s.URL == ""):
		return Userf(nil, "the tool server %s needs either a command (stdio) or a URL (Streamable HTTP), not both", s.Name)
	case s.URL != "" && (len(s.Args) > 0 || len(s.Env) > 0 || len(s.SecretEnv) > 0 || s.Dir != ""):
		return Userf(nil, "the tool server %s has a URL: arguments, environment and a folder are for a command", s.Name)
	case s.Command != "" && (len(s.Headers) > 0 || len(s.SecretHeaders) > 0):
		return Userf(nil, "the tool server %s is a command: headers are for a URL", s.Name)
	}
	type secretSet struct {
		what   string
		plain  map[string]string
		secret []string
		values map[string]string
		had    []string
	}
	sets := []secretSet{
		{what: "environment variable", plain: s.Env, secret: s.SecretEnv, values: sec.Env},
		{what: "header", plain: s.Headers, secret: s.SecretHeaders, values: sec.Headers},
	}
	if existing != nil {
		sets[0].had, sets[1].had = existing.SecretEnv, existing.SecretHeaders
	}
	for _, set := range sets {
		seen := map[string]bool{}
		for _, k := range set.secret {
			switch {
			case strings.TrimSpace(k) == "" || strings.ContainsAny(k, "=/\x00\n"):
				return Userf(nil, "the secret %s name %q of %s is not a name", set.what, k, s.Name)
			case seen[k]:
				return Userf(nil, "the secret %s %s of %s is named twice", set.what, k, s.Name)
			}
			seen[k] = true
			if _, ok := set.plain[k]; ok {
				return Userf(nil, "the %s %s of %s is given both as a secret and in plain", set.what, k, s.Name)
			}
			if _, ok := set.values[k]; !ok && !slices.Contains(set.had, k) {
				return Userf(nil, "the secret %s %s of %s has no value", set.what, k, s.Name)
			}
		}
		for k := range set.values {
			if !seen[k] {
				return Userf(nil, "a value was given for %s %s of %s, which is not one of its secrets", set.what, k, s.Name)
			}
		}
		for k := range set.plain {
			if strings.TrimSpace(k) == "" || strings.ContainsAny(k, "=\x00\n") {
				return Userf(nil, "the %s name %q of %s is not a name", set.what, k, s.Name)
			}
		}
	}
	return nil
}

// Add registers a server; its secret values go to the Secrets
// port. It does not start the server (Check does).
func (tsv *ToolServers) Add(ctx context.Context, s ToolServer, sec ToolServerSecrets) error {
	c := tsv.c
	return c.putToolServer(ctx, s, sec, false)
}

// Update changes a server; secrets not given keep their value,
// secrets it no longer names are deleted.
func (tsv *ToolServers) Update(ctx context.Context, s ToolServer, sec ToolServerSecrets) error {
	c := tsv.c
	return c.putToolServer(ctx, s, sec, true)
}

func (c *Core) putToolServer(ctx context.Context, s ToolServer, sec ToolServerSecrets, update bool) error {
	if err := c.toolServersOn(); err != nil {
		return err
	}
	ts := &c.toolServers
	ts.writes.Lock()
	defer ts.writes.Unlock()
	ts.mu.Lock()
	old, exists := ts.servers[s.Name]
	ts.mu.Unlock()
	switch {
	case update && !exists:
		return Userf(ErrNotFound, "there is no tool server named %q", s.Name)
	case !update && exists:
		return Userf(nil, "there is already a tool server named %q: remove it first, or change it", s.Name)
	}
	var had *ToolServer
	if exists {
		had = &old
	}
	if err := checkToolServer(s, sec, had); err != nil {
		return err
	}
	if len(sec.Env)+len(sec.Headers) > 0 && c.secrets == nil {
		return Userf(nil, "no keychain is available to keep the secrets of %s", s.Name)
	}
	now := c.now()
	s.CreatedAt, s.UpdatedAt = now, now
	if exists {
		s.CreatedAt = old.CreatedAt
	}
	// The running set checks the configuration before anything is kept.
	next := c.toolServers.List()
	next = slices.DeleteFunc(next, func(o ToolServer) bool { return o.Name == s.Name })
	next = append(next, s)
	configs := c.toolServerConfigs(next[:len(next)-1])
	// Its secrets: those given, else (on update) those kept.
	kept := ToolServer{Name: s.Name}
	for _, k := range s.SecretEnv {
		if _, given := sec.Env[k]; !given {
			kept.SecretEnv = append(kept.SecretEnv, k)
		}
	}
	for _, k := range s.SecretHeaders {
		if _, given := sec.Headers[k]; !given {
			kept.SecretHeaders = append(kept.SecretHeaders, k)
		}
	}
	mine := c.toolServerConfigs([]ToolServer{kept})[0]
	mine.ToolServer = s
	maps.Copy(mine.SecretEnvValues, sec.Env)
	maps.Copy(mine.SecretHeaderValues, sec.Headers)
	configs = append(configs, mine)
	if err := ts.running.Set(configs); err != nil {
		return Userf(err, "%s", err.Error())
	}
	for k, v := range sec.Env {
		if err := c.secrets.Set(ToolServerEnvKey(s.Name, k), v); err != nil {
			c.resetToolServers()
			return Userf(err, "cannot keep the secret %s of %s in the keychain", k, s.Name)
		}
	}
	for k, v := range sec.Headers {
		if err := c.secrets.Set(ToolServerHeaderKey(s.Name, k), v); err != nil {
			c.resetToolServers()
			return Userf(err, "cannot keep the secret header %s of %s in the keychain", k, s.Name)
		}
	}
	if err := ts.store.PutToolServer(ctx, s); err != nil {
		c.resetToolServers()
		return fmt.Errorf("save tool server %s: %w", s.Name, err)
	}
	if exists {
		c.deleteToolServerSecrets(old, func(kind, k string) bool {
			if kind == "env" {
				return !slices.Contains(s.SecretEnv, k)
			}
			return !slices.Contains(s.SecretHeaders, k)
		})
	}
	ts.mu.Lock()
	ts.servers[s.Name] = s
	ts.mu.Unlock()
	c.log.Info("tool server saved", "server", s.Name, "update", update)
	c.publish(Event{Kind: EventToolServersChanged, Text: s.Name})
	return nil
}

// resetToolServers hands the running set the servers as kept.
func (c *Core) resetToolServers() {
	if err := c.toolServers.running.Set(c.toolServerConfigs(c.toolServers.List())); err != nil {
		c.log.Error("reset the tool servers", "err", err)
	}
}

func (c *Core) deleteToolServerSecrets(s ToolServer, which func(kind, name string) bool) {
	if c.secrets == nil {
		return
	}
	del := func(key string) {
		if err := c.secrets.Delete(key); err != nil && !errors.Is(err, ErrNotFound) {
			c.log.Warn("delete a tool server's secret", "server", s.Name, "err", err)
		}
	}
	for _, k := range s.SecretEnv {
		if which("env", k) {
			del(ToolServerEnvKey(s.Name, k))
		}
	}
	for _, k := range s.SecretHeaders {
		if which("header", k) {
			del(ToolServerHeaderKey(s.Name, k))
		}
	}
}

// Remove stops and removes a server, detaches it from every
// agent and deletes its secrets.
func (tsv *ToolServers) Remove(ctx context.Context, name string) error {
	c := tsv.c
	if err := c.toolServersOn(); err != nil {
		return err
	}
	tsv.writes.Lock()
	defer tsv.writes.Unlock()
	tsv.mu.Lock()
	s, ok := tsv.servers[name]
	tsv.mu.Unlock()
	if !ok {
		return Userf(ErrNotFound, "there is no tool server named %q", name)
	}
	if err := tsv.store.DeleteToolServer(ctx, name); err != nil {
		return fmt.Errorf("remove tool server %s: %w", name, err)
	}
	tsv.mu.Lock()
	delete(tsv.servers, name)
	for id, atts := range tsv.attached {
		tsv.attached[id] = slices.DeleteFunc(atts, func(a AgentToolServer) bool { return a.Server == name })
	}
	for k := range tsv.held {
		if k.server == name {
			delete(tsv.held, k)
		}
	}
	tsv.mu.Unlock()
	c.resetToolServers()
	c.deleteToolServerSecrets(s, func(string, string) bool { return true })
	c.toolServersChanged()
	return nil
}

// CheckedTool is a server's tool with the name the model sees.
type CheckedTool struct {
	ServerTool
	Name string
}

// ToolServerCheck is what ToolServers.Check found.
type ToolServerCheck struct {
	Status ToolServerStatus
	Tools  []CheckedTool
	// Error says why the server could not be asked ("" when it answered).
	Error string
}

// Check starts the server if need be (a server that failed is
// tried again) and lists its tools with their namespaced names. A server
// that fails is not an error: Error and Status say what happened.
func (tsv *ToolServers) Check(ctx context.Context, name string) (ToolServerCheck, error) {
	c := tsv.c
	if err := c.toolServersOn(); err != nil {
		return ToolServerCheck{}, err
	}
	tsv.mu.Lock()
	_, ok := tsv.servers[name]
	tsv.mu.Unlock()
	if !ok {
		return ToolServerCheck{}, Userf(ErrNotFound, "there is no tool server named %q", name)
	}
	var out ToolServerCheck
	if err := tsv.running.Reset(name); err != nil {
		c.log.Warn("reset a tool server", "server", name, "err", err)
	}
	tools, err := tsv.running.Tools(ctx, name)
	if err != nil {
		if ctx.Err() != nil {
			return ToolServerCheck{}, ctx.Err()
		}
		var ue *UserError
		if errors.As(err, &ue) {
			out.Error = ue.Msg
		} else {
			out.Error = err.Error()
		}
	}
	refs := make([]ServerToolRef, 0, len(tools))
	for _, t := range tools {
		refs = append(refs, ServerToolRef{t.Server, t.Tool})
	}
	names, nerr := tsv.running.Names(refs)
	if nerr != nil {
		return ToolServerCheck{}, fmt.Errorf("name the tools of %s: %w", name, nerr)
	}
	for _, t := range tools {
		out.Tools = append(out.Tools, CheckedTool{ServerTool: t, Name: names[ServerToolRef{t.Server, t.Tool}]})
	}
	for _, st := range tsv.running.Status() {
		if st.Name == name {
			out.Status = st
		}
	}
	return out, nil
}

// ToolServerAttachment is what the person chose for one server of an
// agent.
type ToolServerAttachment struct {
	Server string
	// Tools are the tools offered; none means all of them.
	Tools []string
	// AskFirst are the tools whose every call waits for approval
	// (besides those that need it anyway: every tool the server does not
	// mark read-only).
	AskFirst []string
}

// definitionText is what a pinned definition shows the person.
func definitionText(t ServerTool) string {
	b, err := json.Marshal(struct {
		Tool        string          `json:"tool"`
		Title       string          `json:"title,omitempty"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema,omitempty"`
		ReadOnly    bool            `json:"readOnly"`
	}{t.Tool, t.Title, t.Description, t.InputSchema, t.ReadOnly})
	if err != nil {
		return ""
	}
	return string(b)
}

// Attach gives an agent a server's tools (all, or those chosen),
// each pinned to its definition as the server lists it now. When the
// server can be asked, chosen tools must exist; when it cannot, the tools
// are kept unpinned and held until the person looks again.
func (tsv *ToolServers) Attach(ctx context.Context, slug string, req ToolServerAttachment) (AgentToolServer, error) {
	c := tsv.c
	a, err := c.toolServerAgent(slug)
	if err != nil {
		return AgentToolServer{}, err
	}
	exists := func() bool {
		tsv.mu.Lock()
		defer tsv.mu.Unlock()
		_, ok := tsv.servers[req.Server]
		return ok
	}
	if !exists() {
		return AgentToolServer{}, Userf(ErrNotFound, "there is no tool server named %q", req.Server)
	}
	// Asked before the write lock: it may start the server, which takes a while.
	listed, lerr := tsv.running.Tools(ctx, req.Server)
	if lerr != nil && ctx.Err() != nil {
		return AgentToolServer{}, ctx.Err()
	}
	tsv.writes.Lock()
	defer tsv.writes.Unlock()
	if !exists() { // removed meanwhile
		return AgentToolServer{}, Userf(ErrNotFound, "there is no tool server named %q", req.Server)
	}
	byName := map[string]ServerTool{}
	for _, t := range listed {
		byName[t.Tool] = t
	}
	for _, t := range slices.Concat(req.Tools, req.AskFirst) {
		if _, ok := byName[t]; !ok && lerr == nil {
			return AgentToolServer{}, Userf(nil, "the tool server %s has no tool %q (it has: %s)", req.Server, t, strings.Join(slices.Sorted(maps.Keys(byName)), ", "))
		}
	}
	for _, t := range req.AskFirst {
		if len(req.Tools) > 0 && !slices.Contains(req.Tools, t) {
			return AgentToolServer{}, Userf(nil, "%q is to ask first but is not among the tools chosen of %s", t, req.Server)
		}
	}
	att := AgentToolServer{AgentID: a.ID, Server: req.Server, AllTools: len(req.Tools) == 0}
	names := req.Tools
	if att.AllTools {
		names = slices.Sorted(maps.Keys(byName))
		for _, t := range req.AskFirst { // the server could not be asked
			if !slices.Contains(names, t) {
				names = append(names, t)
			}
		}
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		at := AttachedTool{Tool: n, AskFirst: slices.Contains(req.AskFirst, n)}
		if t, ok := byName[n]; ok {
			at.Hash, at.Definition = t.Hash, definitionText(t)
		}
		att.Tools = append(att.Tools, at)
	}
	if err := tsv.store.PutAgentToolServer(ctx, att); err != nil {
		return AgentToolServer{}, fmt.Errorf("attach %s to %s: %w", req.Server, slug, err)
	}
	tsv.mu.Lock()
	list := slices.DeleteFunc(tsv.attached[a.ID], func(o AgentToolServer) bool { return o.Server == req.Server })
	list = append(list, att)
	slices.SortFunc(list, func(x, y AgentToolServer) int { return strings.Compare(x.Server, y.Server) })
	tsv.attached[a.ID] = list
	for k := range tsv.held {
		if k.agentID == a.ID && k.server == req.Server {
			delete(tsv.held, k)
		}
	}
	tsv.mu.Unlock()
	c.toolServersChanged()
	if lerr != nil {
		c.log.Warn("tool server attached without asking it", "server", req.Server, "agent", slug, "err", lerr)
	}
	return att, nil
}

// toolServerAgent is the agent named slug, when tool servers are on.
func (c *Core) toolServerAgent(slug string) (Agent, error) {
	if err := c.toolServersOn(); err != nil {
		return Agent{}, err
	}
	a, ok := c.agents.BySlug(slug)
	if !ok {
		return Agent{}, Userf(ErrNotFound, "there is no agent named %q", slug)
	}
	return a, nil
}

// Detach takes a server's tools from an agent.
func (tsv *ToolServers) Detach(ctx context.Context, slug, server string) error {
	c := tsv.c
	a, err := c.toolServerAgent(slug)
	if err != nil {
		return err
	}
	tsv.writes.Lock()
	defer tsv.writes.Unlock()
	if err := tsv.store.DeleteAgentToolServer(ctx, a.ID, server); errors.Is(err, ErrNotFound) {
		return Userf(err, "the tool server %q is not attached to %s", server, slug)
	} else if err != nil {
		return fmt.Errorf("detach %s from %s: %w", server, slug, err)
	}
	tsv.mu.Lock()
	tsv.attached[a.ID] = slices.DeleteFunc(tsv.attached[a.ID], func(o AgentToolServer) bool { return o.Server == server })
	for k := range tsv.held {
		if k.agentID == a.ID && k.server == server {
			delete(tsv.held, k)
		}
	}
	tsv.mu.Unlock()
	c.toolServersChanged()
	return nil
}

// Attached lists the servers attached to an agent, by name.
func (tsv *ToolServers) Attached(slug string) ([]AgentToolServer, error) {
	c := tsv.c
	a, ok := c.agents.BySlug(slug)
	if !ok {
		return nil, Userf(ErrNotFound, "there is no agent named %q", slug)
	}
	tsv.mu.Lock()
	defer tsv.mu.Unlock()
	return slices.Clone(tsv.attached[a.ID]), nil
}

// Repin is the person's look again at a held tool: its
// definition as the server lists it now becomes the pinned one, and it is
// offered again.
func (tsv *ToolServers) Repin(ctx context.Context, slug, server, tool string) error {
	c := tsv.c
	a, err := c.toolServerAgent(slug)
	if err != nil {
		return err
	}
	notAttached := Userf(ErrNotFound, "the tool server %q is not attached to %s", server, slug)
	if _, ok := c.attachment(a.ID, server); !ok {
		return notAttached
	}
	// Asked before the write lock: it may start the server, which takes a while.
	listed, err := tsv.running.Tools(ctx, server)
	if err != nil {
		return Userf(err, "cannot ask the tool server %s for its tools: %s", server, UserMessage(err))
	}
	tsv.writes.Lock()
	defer tsv.writes.Unlock()
	att, ok := c.attachment(a.ID, server)
	if !ok { // detached meanwhile
		return notAttached
	}
	j := slices.IndexFunc(listed, func(t ServerTool) bool { return t.Tool == tool })
	if j < 0 {
		return Userf(ErrNotFound, "the tool server %s has no tool %q now", server, tool)
	}
	k := slices.IndexFunc(att.Tools, func(t AttachedTool) bool { return t.Tool == tool })
	switch {
	case k >= 0:
		att.Tools[k].Hash, att.Tools[k].Definition = listed[j].Hash, definitionText(listed[j])
	case att.AllTools:
		att.Tools = append(att.Tools, AttachedTool{Tool: tool, Hash: listed[j].Hash, Definition: definitionText(listed[j])})
	default:
		return Userf(nil, "the tool %q of %s is not among those chosen for %s", tool, server, slug)
	}
	if err := tsv.store.PutAgentToolServer(ctx, att); err != nil {
		return fmt.Errorf("pin %s of %s for %s: %w", tool, server, slug, err)
	}
	tsv.mu.Lock()
	if i := slices.IndexFunc(tsv.attached[a.ID], func(o AgentToolServer) bool { return o.Server == server }); i >= 0 {
		tsv.attached[a.ID][i] = att
	}
	delete(tsv.held, heldKey{a.ID, server, tool})
	tsv.mu.Unlock()
	c.toolServersChanged()
	return nil
}

// attachment is a copy of the agent's attachment of server.
func (c *Core) attachment(agentID, server string) (AgentToolServer, bool) {
	ts := &c.toolServers
	ts.mu.Lock()
	defer ts.mu.Unlock()
	i := slices.IndexFunc(ts.attached[agentID], func(o AgentToolServer) bool { return o.Server == server })
	if i < 0 {
		return AgentToolServer{}, false
	}
	att := ts.attached[agentID][i]
	att.Tools = slices.Clone(att.Tools)
	return att, true
}

// Held lists the tools held since their definition
// changed, with the old and new definitions, oldest first.
func (tsv *ToolServers) Held() []HeldTool {
	tsv.mu.Lock()
	defer tsv.mu.Unlock()
	out := slices.Collect(maps.Values(tsv.held))
	slices.SortFunc(out, func(a, b HeldTool) int {
		return cmpOr(a.Since.Compare(b.Since), strings.Compare(a.Agent+"\x00"+a.Server+"\x00"+a.Tool, b.Agent+"\x00"+b.Server+"\x00"+b.Tool))
	})
	return out
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// toolServerEffects is what the agent can do through its tool servers'
// tools, as their pinned definitions say: a tool its server marks
// read-only reads (and may reach the network); any other may do anything,
// and so may a server given with all its tools (it may add one).
func (c *Core) toolServerEffects(a Agent) Effects {
	ts := &c.toolServers
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var all Effects
	for _, att := range ts.attached[a.ID] {
		if att.AllTools {
			return EffectsUnknown
		}
		for _, t := range att.Tools {
			var def struct {
				ReadOnly bool `json:"readOnly"`
			}
			if json.Unmarshal([]byte(t.Definition), &def) != nil || !def.ReadOnly {
				return EffectsUnknown
			}
			all |= EffectReads | EffectFetches
		}
	}
	return all
}

// toolServersChanged tells the MCP surface that agents' reach changed
// (their annotations).
func (c *Core) toolServersChanged() {
	c.agents.rev.Add(1)
	c.publish(Event{Kind: EventAgentsChanged})
}
