package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/deskhand/deskhand/server/agent"
)

// Per-client visibility: each client sees every agent or only those the
// person chose (agent.Visibility). A hidden agent is absent from
// tools/list, resources/list and prompts/list, and calling, reading or
// getting it is answered exactly as for one that does not exist. Each
// distinct visible set has its own catalog, made on first use and kept
// until the agents change; clients that see all share the server's.
type visibilityState struct {
	// owners maps each agent tool's name, starter prompt's name and
	// resource's URI to its agent's slug, as of the last sync.
	owners atomic.Pointer[map[owned]string]
	// catalogs are the catalogs of limited sets, of one revision.
	catalogs atomic.Pointer[setCatalogs]

	mu sync.Mutex
	// listeners are the modern subscriptions/listen streams open, by
	// their session, with the principal that opened them.
	listeners map[server.ClientSession]string
}

// owned is a tool ('t'), prompt ('p') or resource ('r') by its name or URI.
type owned struct {
	kind byte
	name string
}

type setCatalogs struct {
	revision uint64
	byKey    sync.Map // Visibility.Key() → *catalog
}

// setOwners records which agent each tool, prompt and resource belongs
// to; syncTools calls it before it stores the new catalog.
func (s *Server) setOwners(agents []agent.Agent) {
	owners := make(map[owned]string, 3*len(agents))
	for _, a := range agents {
		owners[owned{'t', a.Slug}] = a.Slug
		owners[owned{'r', agentResource(a).Resource.URI}] = a.Slug
		for _, p := range starterPrompts(a) {
			owners[owned{'p', p.Prompt.Name}] = a.Slug
		}
	}
	s.vis.owners.Store(&owners)
}

// hides reports whether v hides the agent of this tool, prompt or
// resource (kind 't', 'p' or 'r'); what belongs to no agent is never
// hidden.
func (s *Server) hides(v agent.Visibility, kind byte, name string) bool {
	if v.All {
		return false
	}
	owners := s.vis.owners.Load()
	if owners == nil {
		return false
	}
	slug, ok := (*owners)[owned{kind, name}]
	return ok && !v.Sees(slug)
}

func (s *Server) visibleTo(ctx context.Context) agent.Visibility {
	return s.core.Clients.VisibleTo(PrincipalFrom(ctx))
}

// filterTools is mcp-go's tool filter: it applies to tools/list and, one
// tool at a time, to tools/call, which then answers "tool not found"
// exactly as for an unknown name.
func (s *Server) filterTools(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	v := s.visibleTo(ctx)
	if v.All {
		return tools
	}
	return slices.DeleteFunc(slices.Clone(tools), func(t mcp.Tool) bool { return s.hides(v, 't', t.Name) })
}

// filterPrompts is mcp-go's prompt filter, for prompts/list and
// prompts/get.
func (s *Server) filterPrompts(ctx context.Context, prompts []mcp.Prompt) []mcp.Prompt {
	v := s.visibleTo(ctx)
	if v.All {
		return prompts
	}
	return slices.DeleteFunc(slices.Clone(prompts), func(p mcp.Prompt) bool { return s.hides(v, 'p', p.Name) })
}

// afterListResources leaves hidden agents' resources off resources/list.
func (s *Server) afterListResources(ctx context.Context, _ any, _ *mcp.ListResourcesRequest, res *mcp.ListResourcesResult) {
	v := s.visibleTo(ctx)
	if v.All || res == nil {
		return
	}
	res.Resources = slices.DeleteFunc(res.Resources, func(r mcp.Resource) bool { return s.hides(v, 'r', r.URI) })
}

// toolHidden reports whether the calling principal may not see the agent
// tool of this name.
func (s *Server) toolHidden(ctx context.Context, name string) bool {
	return s.hides(s.visibleTo(ctx), 't', name)
}

// catalogFor is the catalog the calling principal sees: the server's for
// one that sees all agents, else its set's, made on first use.
func (s *Server) catalogFor(ctx context.Context) *catalog {
	base := s.cat.Load()
	v := s.visibleTo(ctx)
	if v.All {
		return base
	}
	sets := s.vis.catalogs.Load()
	if sets == nil || sets.revision != base.revision {
		fresh := &setCatalogs{revision: base.revision}
		if s.vis.catalogs.CompareAndSwap(sets, fresh) {
			sets = fresh
		} else if sets = s.vis.catalogs.Load(); sets.revision != base.revision {
			sets = fresh // another revision won meanwhile: serve, do not keep
		}
	}
	if c, ok := sets.byKey.Load(v.Key()); ok {
		return c.(*catalog)
	}
	tools := slices.DeleteFunc(slices.Clone(base.tools), func(t mcp.Tool) bool { return s.hides(v, 't', t.Name) })
	c, _ := sets.byKey.LoadOrStore(v.Key(), newCatalog(tools, base.revision))
	return c.(*catalog)
}

// hiddenMark turns a read of a hidden agent's resource into a read of a
// URI no agent can have (slugs have no dots), so mcp-go answers it with
// its own "not found"; the mark is then cut out of the answer, which so
// names the URI asked for, byte for byte as for an agent that does not
// exist, on every era and over stdio. It is random per process, so no
// request can carry it.
var hiddenMark = AgentResourcePrefix + ".hidden-" + rand.Text() + "/"

// beforeReadResource hides hidden agents' resources. It is mcp-go's hook,
// so it decides on the very request mcp-go decoded and will serve,
// whatever escapes or header encodings carried it.
func (s *Server) beforeReadResource(ctx context.Context, _ any, req *mcp.ReadResourceRequest) {
	if s.hides(s.visibleTo(ctx), 'r', req.Params.URI) {
		req.Params.URI = hiddenMark + req.Params.URI
	}
}

// unmarkHidden cuts hiddenMark out of an answer.
func unmarkHidden(b []byte) []byte {
	if !bytes.Contains(b, hiddenMarkBytes) {
		return b
	}
	return bytes.ReplaceAll(b, hiddenMarkBytes, nil)
}

var hiddenMarkBytes = []byte(hiddenMark)

// unmarking holds a resources/read answer as mcp-go writes it and writes
// it with hiddenMark cut out.
type unmarking struct {
	w      http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (u *unmarking) Header() http.Header         { return u.w.Header() }
func (u *unmarking) WriteHeader(status int)      { u.status = status }
func (u *unmarking) Write(b []byte) (int, error) { return u.body.Write(b) }
func (u *unmarking) Flush()                      {} // written whole by finish

func (u *unmarking) finish() {
	u.w.Header().Del("Content-Length")
	u.w.WriteHeader(u.status)
	_, _ = u.w.Write(unmarkHidden(u.body.Bytes()))
}

// beforeListen remembers which principal opened a subscriptions/listen
// stream, until the stream ends.
func (s *Server) beforeListen(ctx context.Context, _ any, _ *mcp.SubscriptionsListenRequest) {
	session := server.ClientSessionFromContext(ctx)
	if session == nil {
		return
	}
	s.vis.mu.Lock()
	if s.vis.listeners == nil {
		s.vis.listeners = make(map[server.ClientSession]string)
	}
	s.vis.listeners[session] = PrincipalFrom(ctx)
	s.vis.mu.Unlock()
	context.AfterFunc(ctx, func() {
		s.vis.mu.Lock()
		delete(s.vis.listeners, session)
		s.vis.mu.Unlock()
	})
}

// listChanged are the notifications a client hears when its visible set
// changes.
var listChanged = []string{
	mcp.MethodNotificationToolsListChanged,
	mcp.MethodNotificationResourcesListChanged,
	mcp.MethodNotificationPromptsListChanged,
}

// notifyPrincipal tells the principal's sessions, and no one else's, that
// the lists changed: its legacy sessions, and its modern listen streams
// that asked for each kind.
func (s *Server) notifyPrincipal(principal string) {
	sids := s.sessions.OwnedBy(principal)
	s.vis.mu.Lock()
	var streams []server.ClientSession
	for session, p := range s.vis.listeners {
		if p == principal {
			streams = append(streams, session)
		}
	}
	s.vis.mu.Unlock()
	for _, method := range listChanged {
		for _, sid := range sids {
			_ = s.mcp.SendNotificationToSpecificClient(sid, method, nil) // gone or not initialized: nothing to tell
		}
		for _, session := range streams {
			sendIfSubscribed(session, method)
		}
	}
}

// sendIfSubscribed sends a notification to a listen stream that asked for
// its kind, without waiting: a full channel loses it, as mcp-go's own
// broadcast does.
func sendIfSubscribed(session server.ClientSession, method string) {
	f, ok := session.(server.SessionWithSubscriptionFilter)
	if !ok {
		return
	}
	filter, active := f.SubscriptionFilter()
	if !active {
		return
	}
	switch method {
	case mcp.MethodNotificationToolsListChanged:
		ok = filter.ToolsListChanged
	case mcp.MethodNotificationResourcesListChanged:
		ok = filter.ResourcesListChanged
	case mcp.MethodNotificationPromptsListChanged:
		ok = filter.PromptsListChanged
	}
	if !ok {
		return
	}
	select {
	case session.NotificationChannel() <- mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{Method: method}}:
	default:
	}
}
