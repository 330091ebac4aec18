package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
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
	return s.core.VisibleTo(PrincipalFrom(ctx))
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

// hiddenURI stands for a hidden agent's resource in the read mcp-go
// answers: a URI no agent can have (slugs have no dots), so mcp-go
// answers it "not found" as for any URI it does not know.
var hiddenURI = AgentResourcePrefix + ".hidden-" + rand.Text()

// hideResource makes a read of a hidden agent's resource a read of
// hiddenURI, and the answer name the URI asked for again: the answer is
// then mcp-go's own "not found", byte for byte, whatever the era or the
// session's state. ok is false when the resource is not hidden.
func (s *Server) hideResource(w http.ResponseWriter, r *http.Request, msg rpcPeek) (_ *rewriter, _ *http.Request, ok bool) {
	uri := msg.Params.URI
	if !strings.HasPrefix(uri, AgentResourcePrefix) || !s.hides(s.visibleTo(r.Context()), 'r', uri) {
		return nil, r, false
	}
	body, err := io.ReadAll(r.Body) // read and bounded before
	if err != nil {
		return nil, r, false
	}
	quoted, _ := json.Marshal(uri)
	hidden, _ := json.Marshal(hiddenURI)
	body = bytes.ReplaceAll(body, quoted, hidden)
	r = r.Clone(r.Context())
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	if r.Header.Get("Mcp-Name") == uri {
		r.Header.Set("Mcp-Name", hiddenURI)
	}
	return &rewriter{w: w, status: http.StatusOK, from: hidden[1 : len(hidden)-1], to: quoted[1 : len(quoted)-1]}, r, true
}

// rewriter holds an answer as mcp-go writes it and writes it with from
// replaced by to.
type rewriter struct {
	w        http.ResponseWriter
	status   int
	body     bytes.Buffer
	from, to []byte
}

func (rw *rewriter) Header() http.Header         { return rw.w.Header() }
func (rw *rewriter) WriteHeader(status int)      { rw.status = status }
func (rw *rewriter) Write(b []byte) (int, error) { return rw.body.Write(b) }
func (rw *rewriter) Flush()                      {} // written whole by finish

func (rw *rewriter) finish() {
	rw.w.Header().Del("Content-Length")
	rw.w.WriteHeader(rw.status)
	_, _ = rw.w.Write(bytes.ReplaceAll(rw.body.Bytes(), rw.from, rw.to))
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
	s.sessions.mu.Lock()
	var sids []string
	for sid, ls := range s.sessions.live {
		if ls.owner == principal {
			sids = append(sids, sid)
		}
	}
	s.sessions.mu.Unlock()
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
