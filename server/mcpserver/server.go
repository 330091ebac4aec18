package mcpserver

import (
	"cmp"
	"context"
	"crypto/rand"
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
)

// Paths served by Handler.
const (
	EndpointPath   = "/mcp"
	ServerCardPath = "/mcp/server-card"
	MetadataPath   = "/.well-known/oauth-protected-resource/mcp"
)

// Core is what the MCP surface needs of the core.
type Core interface {
	Authenticator
	EnabledAgents() []agent.Agent
	// ServedAgent finds an agent served as a tool by its slug.
	ServedAgent(slug string) (agent.Agent, bool)
	Agents() []agent.Agent
	ConversationsOf(ctx context.Context, principal string, after agent.PageMark, limit int) ([]agent.ConversationSummary, error)
	ConversationOf(ctx context.Context, principal, id string) (agent.Conversation, []agent.Message, error)
	AgentsRevision() uint64
	Run(ctx context.Context, req agent.RunRequest) (*agent.RunResult, error)
	ConversationLimits() (capacity int, idle time.Duration)
	Subscribe(ctx context.Context, kinds ...agent.EventKind) <-chan agent.Event
	Pending() []agent.Question
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
	// MaxInFlight bounds the requests served at once (default 256); more
	// get 503 with Retry-After.
	MaxInFlight int
	// StateKeys seal and open requestState: the first seals, all open
	// (rotation). Each needs MinStateKeyBytes. None: a random key per run.
	StateKeys [][]byte
	// StateTTL is how long a paused turn waits for the client (default
	// DefaultStateTTL).
	StateTTL time.Duration
	// MaxPaused bounds the paused turns (default DefaultMaxPaused).
	MaxPaused int
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
	// conformance fixtures switch on logging, completions, resource
	// subscriptions and an event store with them).
	ExtraServerOptions []server.ServerOption
	ExtraHTTPOptions   []server.StreamableHTTPOption
	Logger             *slog.Logger
}

// Server serves the enabled agents of a Core as MCP tools.
type Server struct {
	core Core
	opts Options
	log  *slog.Logger
	mcp  *server.MCPServer
	http *server.StreamableHTTPServer

	cat     atomic.Pointer[catalog]
	cursors *cursorCodec
	streams *resumables // call streams kept for resumption

	sealer *sealer
	paused *pausedTurns
	tasks  *taskTable

	mu sync.Mutex
	// Legacy sessions: who opened each, and the conversation it continues
	// with each agent (session id → slug → handle).
	sessionOwner map[string]string
	sessionConv  map[string]map[string]string
	// listeners counts each legacy session's open GET streams: mcp-go
	// sends sampling requests only there.
	listeners map[string]int
	// legacyCalls cancels the turn of a legacy call, by session and
	// request id (cancel.go).
	legacyCalls map[string]context.CancelCauseFunc

	syncMu   sync.Mutex
	syncedAt uint64 // the core's AgentsRevision the tools reflect, plus one
	stopSync context.CancelFunc
	synced   chan struct{}
}

// New builds the server and keeps its tool list in step with the core's
// agents until Close. It fails only on unusable StateKeys.
func New(core Core, opts Options) (*Server, error) {
	opts.Info.Name = cmp.Or(opts.Info.Name, "deskhand")
	opts.Info.Version = cmp.Or(opts.Info.Version, "dev")
	opts.Guard.MetadataPath = MetadataPath
	opts.Guard.Public = append(opts.Guard.Public, ServerCardPath)
	s := &Server{
		core:         core,
		opts:         opts,
		log:          cmp.Or(opts.Logger, slog.New(slog.NewTextHandler(io.Discard, nil))),
		sessionOwner: make(map[string]string),
		sessionConv:  make(map[string]map[string]string),
		listeners:    make(map[string]int),
		legacyCalls:  make(map[string]context.CancelCauseFunc),
		synced:       make(chan struct{}),
		cursors:      newCursorCodec(),
		streams:      newResumables(),
	}
	now := time.Now
	ttl := cmp.Or(opts.StateTTL, DefaultStateTTL)
	var err error
	if s.sealer, err = newSealer(opts.StateKeys, ttl, now); err != nil {
		return nil, err
	}
	s.tasks = &taskTable{tasks: make(map[string]*task), ttl: DefaultTaskTTL, now: now}
	s.paused = &pausedTurns{turns: make(map[string]*parkedTurn), max: cmp.Or(opts.MaxPaused, DefaultMaxPaused), ttl: ttl, now: now}
	hooks := &server.Hooks{}
	// Every request sees the current agents, even before the change event
	// arrives; the event only makes list_changed prompt.
	hooks.AddBeforeAny(func(context.Context, any, mcp.MCPMethod, any) { s.syncTools() })
	hooks.AddBeforeListTools(s.beforeListTools)
	hooks.AddAfterListTools(s.afterListTools)
	hooks.AddOnUnregisterSession(func(_ context.Context, cs server.ClientSession) {
		s.mu.Lock()
		delete(s.sessionOwner, cs.SessionID())
		delete(s.sessionConv, cs.SessionID())
		s.mu.Unlock()
	})
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
		server.WithExtensions(map[string]any{TasksExtension: map[string]any{}}),
		server.WithRecovery(),
		server.WithHooks(hooks),
	}, opts.ExtraServerOptions...)...)
	s.http = server.NewStreamableHTTPServer(s.mcp, append([]server.StreamableHTTPOption{
		server.WithStateful(true),
		server.WithSessionIdleTTL(cmp.Or(opts.SessionIdleTTL, 30*time.Minute)),
		server.WithStreamableHTTPLogger(s.log),
		// The guard checks Host first; mcp-go's own check stays on as a
		// second layer unless hosts are allow-listed, which it cannot know.
		server.WithDisableLocalhostProtection(len(opts.Guard.AllowedHosts) > 0),
	}, opts.ExtraHTTPOptions...)...)
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(conversationTemplate, "Conversation",
		mcp.WithTemplateDescription("One of your conversations, by its handle: what was asked and answered."),
		mcp.WithTemplateMIMEType("text/markdown")), s.readConversationResource)
	s.mcp.AddResourceTemplates(opts.ExtraResourceTemplates...)
	s.syncTools()
	ctx, cancel := context.WithCancel(context.Background())
	s.stopSync = cancel
	events := core.Subscribe(ctx, agent.EventAgentsChanged)
	go func() {
		defer close(s.synced)
		for range events {
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
	mux.Handle(EndpointPath, s.bindSessions(s.readRequest(s.protocol(s.http))))
	mux.HandleFunc(ServerCardPath, s.serveCard)
	mux.HandleFunc(MetadataPath, s.serveMetadata)
	return bodyDeadline(s.bodyTimeout(), Guard(s.core, s.opts.Guard, limitInFlight(cmp.Or(s.opts.MaxInFlight, 256), redirectBrowsers(mux))))
}

// limitInFlight answers 503 rather than queue work beyond n requests.
func limitInFlight(n int, next http.Handler) http.Handler {
	slots := make(chan struct{}, n)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
			next.ServeHTTP(w, r)
		default:
			w.Header().Set("Retry-After", "1")
			http.Error(w, "Too many requests in progress; retry in a moment", http.StatusServiceUnavailable)
		}
	})
}

// Close stops following agent changes and ends legacy sessions.
func (s *Server) Close(ctx context.Context) error {
	s.stopSync()
	<-s.synced
	return s.http.Shutdown(ctx)
}

// ServeStdio serves MCP on in and out as the local principal until ctx ends
// or in closes.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	stdio := server.NewStdioServer(s.mcp)
	stdio.SetContextFunc(func(ctx context.Context) context.Context {
		return withPrincipal(ctx, agent.LocalPrincipal)
	})
	return stdio.Listen(ctx, in, out)
}

func newID() string { return rand.Text() }

// syncTools makes the tools, resources and prompts match the enabled
// agents, if they changed since the last sync; mcp-go notifies clients
// (list_changed).
func (s *Server) syncTools() {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	rev := s.core.AgentsRevision() + 1
	if rev == s.syncedAt {
		return
	}
	s.syncedAt = rev
	agents := s.core.EnabledAgents()
	capacity, idle := s.core.ConversationLimits()
	tools := make([]server.ServerTool, 0, len(agents))
	var resources []server.ServerResource
	var prompts []server.ServerPrompt
	for _, a := range agents {
		tools = append(tools, server.ServerTool{Tool: agentTool(a, capacity, idle), Handler: s.handleCall(a.Slug)})
		resources = append(resources, agentResource(a))
		prompts = append(prompts, starterPrompts(a)...)
	}
	s.mcp.SetResources(append(resources, s.opts.ExtraResources...)...)
	s.mcp.SetPrompts(append(prompts, s.opts.ExtraPrompts...)...)
	if s.opts.SessionTools {
		tools = append(tools, s.sessionTools()...)
	}
	tools = append(tools, s.opts.ExtraTools...)
	list := make([]mcp.Tool, len(tools))
	for i, t := range tools {
		list[i] = t.Tool
	}
	s.cat.Store(newCatalog(list, rev))
	s.mcp.SetTools(tools...)
}

// bindSessions binds each legacy MCP session to the principal that opened
// it: another principal presenting the id is told it does not exist.
func (s *Server) bindSessions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		principal := PrincipalFrom(r.Context())
		if sid := r.Header.Get(server.HeaderKeySessionID); sid != "" {
			s.mu.Lock()
			owner, known := s.sessionOwner[sid]
			s.mu.Unlock()
			if known && owner != principal {
				http.Error(w, "Session not found", http.StatusNotFound)
				return
			}
			if r.Method == http.MethodGet {
				s.mu.Lock()
				s.listeners[sid]++
				s.mu.Unlock()
				defer func() {
					s.mu.Lock()
					if s.listeners[sid]--; s.listeners[sid] <= 0 {
						delete(s.listeners, sid)
					}
					s.mu.Unlock()
				}()
			}
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(&sessionRecorder{ResponseWriter: w, record: func(sid string) {
			s.mu.Lock()
			s.sessionOwner[sid] = principal
			s.mu.Unlock()
		}}, r)
	})
}

// listening reports whether the legacy session has a GET stream open.
func (s *Server) listening(sid string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listeners[sid] > 0
}

// sessionRecorder notes the session id mcp-go assigns in a response.
type sessionRecorder struct {
	http.ResponseWriter
	record func(string)
	done   bool
}

func (w *sessionRecorder) WriteHeader(code int) {
	if !w.done {
		w.done = true
		if sid := w.Header().Get(server.HeaderKeySessionID); sid != "" {
			w.record(sid)
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *sessionRecorder) Write(b []byte) (int, error) {
	if !w.done {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *sessionRecorder) Flush() {
	if !w.done {
		w.WriteHeader(http.StatusOK)
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *sessionRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

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
