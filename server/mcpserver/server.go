package mcpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver/mcpfill"
)

// Paths served by Handler.
const (
	EndpointPath   = "/mcp"
	ServerCardPath = "/mcp/server-card"
	MetadataPath   = "/.well-known/oauth-protected-resource/mcp"
)

// Core is what the MCP surface needs of the core, feature by feature.
type Core struct {
	Agents        Agents
	Clients       Clients
	Conversations Conversations
	Questions     interface{ Pending() []agent.Question }
	Events        interface {
		Subscribe(ctx context.Context, kinds ...agent.EventKind) <-chan agent.Event
	}
	// Settings says whether the person paused serving.
	Settings interface{ Paused() bool }
	// Activity records each call; nil records nothing.
	Activity ActivityRecorder
}

// CoreOf is the MCP surface's view of a core.
func CoreOf(c *agent.Core) Core {
	return Core{Agents: c.Agents(), Clients: c.Clients(), Conversations: c.Conversations(),
		Questions: c.Questions(), Events: c.Events(), Settings: c.Settings(), Activity: c.Activity()}
}

// Agents are the agents served as tools.
type Agents interface {
	List() []agent.Agent
	Enabled() []agent.Agent
	// Served finds an agent served as a tool by its slug.
	Served(slug string) (agent.Agent, bool)
	// BySlug finds an agent, served or not (the activity log names the
	// agent a paused or disabled call was for).
	BySlug(slug string) (agent.Agent, bool)
	Revision() uint64
	// Hints are the agent's tool annotations, derived from what it can
	// reach (annotations.go).
	Hints(a agent.Agent) agent.ToolHints
}

// Clients are who may call, and what each sees.
type Clients interface {
	Authenticator
	// VisibleTo says which agents the principal sees, from memory.
	VisibleTo(principal string) agent.Visibility
}

// Conversations are where calls run and what clients may read back.
type Conversations interface {
	Run(ctx context.Context, req agent.RunRequest) (*agent.RunResult, error)
	ListFor(ctx context.Context, principal string, after agent.PageMark, limit int) ([]agent.ConversationSummary, error)
	Read(ctx context.Context, principal, id string) (agent.Conversation, []agent.Message, error)
	Limits() (capacity int, idle time.Duration)
}

// Info is the server's metadata, set in Settings (never taken from an agent).
type Info struct {
	Name         string
	Version      string
	Title        string
	Description  string
	Instructions string
	WebsiteURL   string
}

// Options configures a Server.
type Options struct {
	Info  Info
	Guard GuardOptions
	// SessionIdleTTL ends legacy MCP sessions idle this long (default 30 min).
	SessionIdleTTL time.Duration

	// Limits on what clients can make Deskhand hold: a total, and each
	// client's share of it (limits.go has the defaults and their reasons).
	// With Guard.InsecureNoAuth every client is one principal, so a share
	// left unset is the whole total.
	//
	// MaxSessions and MaxSessionsPerClient bound the legacy MCP sessions
	// in all and of one client (defaults DefaultMaxSessions,
	// DefaultMaxSessionsPerClient); an initialize beyond them is refused,
	// no session evicted.
	MaxSessions, MaxSessionsPerClient int
	// MaxInFlight and MaxInFlightPerClient bound the requests served at
	// once, in all and of one client (defaults DefaultMaxInFlight,
	// DefaultMaxInFlightPerClient); MaxStreams and MaxStreamsPerClient
	// bound the long-lived streams among them (defaults DefaultMaxStreams,
	// DefaultMaxStreamsPerClient). More get 503 (all clients) or 429 (one
	// client) with Retry-After.
	MaxInFlight, MaxInFlightPerClient int
	MaxStreams, MaxStreamsPerClient   int
	// MaxPaused bounds the turns held for clients while they wait: calls
	// paused on a question and unfinished tasks, together (default
	// DefaultMaxPaused); MaxPausedPerClient is one client's share (default
	// DefaultMaxPausedPerClient). Beyond them a call is refused with a tool
	// error, and no other turn is evicted.
	MaxPaused, MaxPausedPerClient int
	// MaxFinishedTasks bounds the finished tasks kept for their clients to
	// read (default DefaultMaxFinishedTasks); MaxFinishedTasksPerClient is
	// one client's share (default DefaultMaxFinishedTasksPerClient). Beyond
	// its share a client's oldest finished tasks go; beyond the total, the
	// oldest of the client that holds the most. Only their results are
	// lost: a tasks/get of one says it was dropped and which limit did it.
	MaxFinishedTasks, MaxFinishedTasksPerClient int
	// MaxKeptStreams and MaxKeptStreamsPerClient bound the 2025-11-25 call
	// streams kept for resumption, in all and of one client (defaults
	// DefaultMaxKeptStreams, DefaultMaxKeptStreamsPerClient): open ones,
	// those a tool detached (CloseCallStream), and ended ones for a while.
	// MaxKeptBytes and MaxKeptBytesPerClient bound their events (defaults
	// DefaultMaxKeptBytes, DefaultMaxKeptBytesPerClient). To stay within
	// them a client's oldest ended streams go first, then, for bytes, the
	// oldest events of its open ones; over a total, those of the client
	// that holds the most. A stream with no room (the streams in the way
	// are all open) is served without resumption. A resumption of what
	// went is answered 410 Gone, naming the limit.
	MaxKeptStreams, MaxKeptStreamsPerClient int
	MaxKeptBytes, MaxKeptBytesPerClient     int
	// StateKeys seal and open requestState: the first seals, all open
	// (rotation). Each needs mcpfill.MinStateKeyBytes. None: a random key per run.
	StateKeys [][]byte
	// StateTTL is how long a paused turn waits for the client (default
	// DefaultStateTTL).
	StateTTL time.Duration
	// Now is the clock that paused turns, sealed request states and tasks
	// expire by (default time.Now); tests move it instead of sleeping.
	Now func() time.Time
	// ExtraTools are served beside the agents, as plain mcp-go tools. One
	// that keeps state across input rounds seals it with Server.SealState;
	// a tampered or replayed state never reaches it.
	ExtraTools []server.ServerTool
	// KeepAlive is how often a tools/call that waits gets an SSE comment
	// (default DefaultKeepAlive; negative: never).
	KeepAlive time.Duration
	// BodyTimeout is how long a request body may take to arrive once its
	// headers are in (default DefaultBodyTimeout; negative: no limit).
	BodyTimeout time.Duration
	// SessionTools serves the read-only tools that let a client list and
	// read its own conversations (off by default).
	SessionTools bool
	// PageSize is how many tools a tools/list page holds (default
	// DefaultPageSize).
	PageSize int
	// ExtraPrompts, ExtraResources and ExtraResourceTemplates are served
	// as they are, beside the agents' own.
	ExtraPrompts           []server.ServerPrompt
	ExtraResources         []server.ServerResource
	ExtraResourceTemplates []server.ServerResourceTemplate
	// ExtraServerOptions and ExtraHTTPOptions go to mcp-go after ours (the
	// conformance fixtures switch on logging, completions and resource
	// subscriptions with them; resumption is ours, see the package doc).
	ExtraServerOptions []server.ServerOption
	ExtraHTTPOptions   []server.StreamableHTTPOption
	Logger             *slog.Logger
}

// quota is one of the limits, as set or by default. With tokens off every
// client is the same principal, so a default share is the whole.
func (o Options) quota(total, defaultTotal, perClient, defaultPerClient int) *mcpfill.Quota {
	return mcpfill.NewQuota(o.limit(total, defaultTotal, perClient, defaultPerClient))
}

// limit is a total and a per-client share, as set or by default.
func (o Options) limit(total, defaultTotal, perClient, defaultPerClient int) (int, int) {
	total = cmp.Or(total, defaultTotal)
	if perClient == 0 && o.Guard.InsecureNoAuth {
		perClient = total
	}
	return total, cmp.Or(perClient, defaultPerClient)
}

// Server serves the enabled agents of a Core as MCP tools.
type Server struct {
	core Core
	opts Options
	log  *slog.Logger
	mcp  *server.MCPServer
	http *server.StreamableHTTPServer

	cat     atomic.Pointer[catalog]
	cursors *mcpfill.Cursors
	streams *mcpfill.Resumables // call streams kept for resumption

	sealer *mcpfill.Sealer
	paused *mcpfill.PausedTurns
	tasks  *mcpfill.Tasks
	// waits counts the paused turns and unfinished tasks together.
	waits *mcpfill.Quota

	sessions              *mcpfill.Sessions
	inFlight, openStreams *mcpfill.Quota
	// legacyCalls lets a legacy session's notifications/cancelled stop
	// the turn of its call.
	legacyCalls *mcpfill.LegacyCalls

	syncMu   sync.Mutex
	syncedAt uint64 // the agents' Revision the tools reflect, plus one
	stopSync context.CancelFunc
	synced   chan struct{}

	vis visibilityState // which agents each client sees (visibility.go)
}

// New builds the server and keeps its tool list in step with the core's
// agents until Close. It fails only on unusable StateKeys.
func New(core Core, opts Options) (*Server, error) {
	opts.Info.Name = cmp.Or(opts.Info.Name, "deskhand")
	opts.Info.Version = cmp.Or(opts.Info.Version, "dev")
	opts.Guard.MetadataPath = MetadataPath
	opts.Guard.Public = append(opts.Guard.Public, ServerCardPath)
	s := &Server{
		core:        core,
		opts:        opts,
		log:         cmp.Or(opts.Logger, slog.New(slog.NewTextHandler(io.Discard, nil))),
		legacyCalls: &mcpfill.LegacyCalls{Cancelled: errClientCancelled},
		synced:      make(chan struct{}),
		cursors:     mcpfill.NewCursors(),
		waits:       opts.quota(opts.MaxPaused, DefaultMaxPaused, opts.MaxPausedPerClient, DefaultMaxPausedPerClient),
		inFlight:    opts.quota(opts.MaxInFlight, DefaultMaxInFlight, opts.MaxInFlightPerClient, DefaultMaxInFlightPerClient),
		openStreams: opts.quota(opts.MaxStreams, DefaultMaxStreams, opts.MaxStreamsPerClient, DefaultMaxStreamsPerClient),
	}
	var kept mcpfill.KeptLimits
	kept.Streams, kept.StreamsPerClient = opts.limit(opts.MaxKeptStreams, DefaultMaxKeptStreams, opts.MaxKeptStreamsPerClient, DefaultMaxKeptStreamsPerClient)
	kept.Bytes, kept.BytesPerClient = opts.limit(opts.MaxKeptBytes, DefaultMaxKeptBytes, opts.MaxKeptBytesPerClient, DefaultMaxKeptBytesPerClient)
	s.streams = mcpfill.NewResumables(kept)
	idleTTL := cmp.Or(opts.SessionIdleTTL, 30*time.Minute)
	s.sessions = mcpfill.NewSessions(opts.quota(opts.MaxSessions, DefaultMaxSessions, opts.MaxSessionsPerClient, DefaultMaxSessionsPerClient), idleTTL)
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	ttl := cmp.Or(opts.StateTTL, DefaultStateTTL)
	var err error
	if s.sealer, err = mcpfill.NewSealer(opts.StateKeys, ttl, now); err != nil {
		return nil, err
	}
	s.tasks = mcpfill.NewTasks(s.waits, mcpfill.DefaultTaskTTL, now, mcpfill.NewShelf(opts.limit(opts.MaxFinishedTasks, DefaultMaxFinishedTasks,
		opts.MaxFinishedTasksPerClient, DefaultMaxFinishedTasksPerClient)))
	s.tasks.Hidden, s.tasks.WaitingElsewhere, s.tasks.Cancelled, s.tasks.Log = s.toolHidden, s.waitingOnDesktop, errTaskCancelled, s.log
	s.paused = mcpfill.NewPausedTurns(s.sealer, s.waits, errPauseExpired, userError)
	hooks := &server.Hooks{}
	// Every request sees the current agents, even before the change event
	// arrives; the event only makes list_changed prompt.
	hooks.AddBeforeAny(func(context.Context, any, mcp.MCPMethod, any) { s.syncTools() })
	hooks.AddBeforeListTools(s.beforeListTools)
	hooks.AddAfterListTools(s.afterListTools)
	// A session mcp-go forgets without asking its id manager (a GET's
	// own, when the stream ends) ends here.
	hooks.AddOnUnregisterSession(func(_ context.Context, cs server.ClientSession) { s.sessions.End(cs.SessionID()) })
	hooks.AddBeforeSubscriptionsListen(s.beforeListen)
	hooks.AddAfterListResources(s.afterListResources)
	hooks.AddBeforeReadResource(s.beforeReadResource)
	activityHooks(hooks) // the activity log (activity.go)
	s.mcp = server.NewMCPServer(opts.Info.Name, opts.Info.Version, append([]server.ServerOption{
		server.WithToolCapabilities(true),
		server.WithResourceCapabilities(false, true),
		server.WithPromptCapabilities(true),
		server.WithMethodCacheHints(mcp.MethodToolsList, CatalogTTLMs, mcp.CacheScopePrivate),
		server.WithTitle(opts.Info.Title),
		server.WithDescription(opts.Info.Description),
		server.WithWebsiteURL(opts.Info.WebsiteURL),
		server.WithInstructions(opts.Info.Instructions),
		server.WithOutputSchemaValidation(),
		server.WithExtensions(map[string]any{mcpfill.TasksExtension: map[string]any{}}),
		server.WithRecovery(),
		server.WithHooks(hooks),
		server.WithToolFilter(s.filterTools),
		server.WithPromptFilter(s.filterPrompts),
	}, opts.ExtraServerOptions...)...)
	s.http = server.NewStreamableHTTPServer(s.mcp, append([]server.StreamableHTTPOption{
		// Stateful, with our own id manager (mcpfill.Sessions).
		server.WithSessionIdManagerResolver(s.sessions),
		server.WithSessionIdleTTL(idleTTL),
		server.WithStreamableHTTPLogger(s.log),
		// The guard checks Host first; mcp-go's own check stays on as a
		// second layer unless hosts are allow-listed, which it cannot know.
		server.WithDisableLocalhostProtection(len(opts.Guard.AllowedHosts) > 0),
		server.WithHTTPContextFunc(s.listContext), // listsession.go
	}, opts.ExtraHTTPOptions...)...)
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(conversationTemplate, "Conversation",
		mcp.WithTemplateDescription("One of your conversations, by its handle: what was asked and answered."),
		mcp.WithTemplateMIMEType("text/markdown")), s.readConversationResource)
	s.mcp.AddResourceTemplates(opts.ExtraResourceTemplates...)
	s.syncTools()
	ctx, cancel := context.WithCancel(context.Background())
	s.stopSync = cancel
	events := core.Events.Subscribe(ctx, agent.EventAgentsChanged, agent.EventClientAgentsChanged)
	go func() {
		defer close(s.synced)
		for e := range events {
			if e.Kind == agent.EventClientAgentsChanged {
				s.notifyPrincipal(e.Text)
				continue
			}
			s.syncTools()
		}
	}()
	return s, nil
}

// MCP returns the underlying mcp-go server.
func (s *Server) MCP() *server.MCPServer { return s.mcp }

// Handler serves /mcp, the server card and the RFC 9728 metadata, all
// behind the guard.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle(EndpointPath, s.sessions.Bind(mcpfill.ReadRequest(MaxBodyBytes, s.protocol(s.http))))
	mux.HandleFunc(ServerCardPath, s.serveCard)
	mux.HandleFunc(MetadataPath, s.serveMetadata)
	return s.recordActivity(bodyDeadline(s.bodyTimeout(), Guard(s.core.Clients, s.opts.Guard, notePrincipal(s.limitRequests(redirectBrowsers(mux))))))
}

// Close stops following agent changes and ends legacy sessions.
func (s *Server) Close(ctx context.Context) error {
	s.stopSync()
	<-s.synced
	return s.http.Shutdown(ctx)
}

// ServeStdio serves MCP on in and out as principal (a client's ID, or
// agent.LocalPrincipal) until ctx ends or in closes.
func (s *Server) ServeStdio(ctx context.Context, principal string, in io.Reader, out io.Writer) error {
	stdio := server.NewStdioServer(s.mcp)
	stdio.SetContextFunc(func(ctx context.Context) context.Context {
		return withPrincipal(ctx, principal)
	})
	// mcp-go's stdio session is one, "stdio", never minted by the id
	// manager: it lives as long as this stream, uncounted.
	defer s.sessions.Open(mcpfill.StdioSessionID, principal)()
	in, out, unanswered := s.recordStdio(in, out) // the activity log (activity_stdio.go)
	defer unanswered()
	return stdio.Listen(ctx, in, unmarkingWriter{out})
}

// unmarkingWriter cuts hiddenMark out of each line mcp-go writes (one
// Write a message).
type unmarkingWriter struct{ w io.Writer }

func (u unmarkingWriter) Write(p []byte) (int, error) {
	if _, err := u.w.Write(unmarkHidden(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// syncTools makes the tools, resources and prompts match the enabled
// agents, if they changed since the last sync; mcp-go notifies clients
// (list_changed).
func (s *Server) syncTools() {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	rev := s.core.Agents.Revision() + 1
	if rev == s.syncedAt {
		return
	}
	s.syncedAt = rev
	agents := s.core.Agents.Enabled()
	capacity, idle := s.core.Conversations.Limits()
	tools := make([]server.ServerTool, 0, len(agents))
	var resources []server.ServerResource
	var prompts []server.ServerPrompt
	for _, a := range agents {
		tools = append(tools, server.ServerTool{Tool: s.agentTool(a, capacity, idle), Handler: s.handleCall(a.Slug)})
		resources = append(resources, agentResource(a))
		prompts = append(prompts, starterPrompts(a)...)
	}
	s.mcp.SetResources(append(resources, s.opts.ExtraResources...)...)
	s.mcp.SetPrompts(append(prompts, s.opts.ExtraPrompts...)...)
	if s.opts.SessionTools {
		tools = append(tools, s.sessionTools()...)
	}
	for _, t := range s.opts.ExtraTools {
		tools = append(tools, server.ServerTool{Tool: t.Tool, Handler: mcpfill.KeepingState(t.Handler)})
	}
	list := make([]mcp.Tool, len(tools))
	for i, t := range tools {
		list[i] = t.Tool
	}
	// While paused the list holds no agent, but a client that calls one it
	// listed before is told why it does not run, not "tool not found":
	// mcp-go knows the agents' tools, the catalog (what is listed) not.
	if s.core.Settings.Paused() {
		for _, a := range s.core.Agents.List() {
			if a.Enabled {
				tools = append(tools, server.ServerTool{Tool: s.agentTool(a, capacity, idle), Handler: s.handleCall(a.Slug)})
			}
		}
	}
	s.setOwners(s.core.Agents.List())
	s.cat.Store(newCatalog(list, rev))
	s.mcp.SetTools(tools...)
}

// redirectBrowsers sends a browser's GET of /mcp to the server card.
func redirectBrowsers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isBrowserVisit(r) {
			http.Redirect(w, r, ServerCardPath, http.StatusFound)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// serveCard describes the server without tool schemas; public.
func (s *Server) serveCard(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "Method not allowed", http.StatusMethodNotAllowed)
		return
	}
	info := s.opts.Info
	card := map[string]any{
		"name":        info.Name,
		"title":       info.Title,
		"version":     info.Version,
		"description": info.Description,
		"websiteUrl":  info.WebsiteURL,
		"endpoint":    "http://" + r.Host + EndpointPath,
		"transport":   "streamable-http",
		"protocolVersions": append([]string{mcp.ProtocolVersion20260728},
			mcp.LegacyProtocolVersions()...),
		"authentication": map[string]any{
			"required":         !s.opts.Guard.InsecureNoAuth,
			"scheme":           "bearer",
			"resourceMetadata": "http://" + r.Host + MetadataPath,
		},
	}
	writeJSON(w, card)
}

// serveMetadata is the RFC 9728 protected resource metadata; public.
func (s *Server) serveMetadata(w http.ResponseWriter, r *http.Request) {
	server.NewProtectedResourceMetadataHandler(server.ProtectedResourceMetadataConfig{
		Resource:               "http://" + r.Host + EndpointPath,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           cmp.Or(s.opts.Info.Title, s.opts.Info.Name),
	}).ServeHTTP(w, r)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
