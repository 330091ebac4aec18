package toolservers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// start runs or connects to the server and lists its tools.
func (m *Manager) start(s *server) (*conn, []ToolInfo, error) {
	cfg := s.cfg
	ctx, cancel := context.WithCancel(m.base)
	c := &conn{s: s, ctx: ctx, cancel: cancel, startedAt: m.o.Clock.Now(),
		calls: map[string]*call{}, lost: make(chan struct{}), closed: make(chan struct{})}
	s.log.resetTail()
	s.log.Printf("starting %s", cfg.Where())

	var tr transport.Interface
	if cfg.IsStdio() {
		p, err := startProcess(cfg, s.log)
		if err != nil {
			cancel()
			s.log.Printf("cannot start: %v", err)
			return nil, nil, fmt.Errorf("cannot run %s: %w", cfg.Command, err)
		}
		c.proc = p
		c.stdout = &badOutput{r: p.stdout}
		tr = transport.NewIO(c.stdout, p.stdin, nil)
		s.log.Printf("process %d started", p.pid)
	} else {
		h, err := transport.NewStreamableHTTP(cfg.URL,
			transport.WithHTTPHeaders(maps.Clone(cfg.Headers)),
			transport.WithHTTPLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
			// Servers of 2025-11-25 and before (all of today's) send
			// list_changed, and requests outside a call, on the GET
			// stream. It keeps the session on those revisions, which
			// 2026-07-28 servers still speak.
			//lint:ignore SA1019 subscriptions/listen (its replacement) is for 2026-07-28 servers only.
			transport.WithContinuousListening(),
		)
		if err != nil {
			cancel()
			return nil, nil, fmt.Errorf("cannot connect to %s: %w", cfg.Where(), err)
		}
		tr = &cancellingHTTP{StreamableHTTP: h}
	}

	var opts []client.ClientOption
	if m.o.Elicit != nil {
		opts = append(opts, client.WithElicitationHandler(elicitHandler{m, c}))
	}
	if m.o.Sample != nil && cfg.AllowSampling {
		opts = append(opts, client.WithSamplingHandler(sampleHandler{m, c}))
	}
	c.client = client.NewClient(tr, opts...)
	c.client.OnNotification(func(n mcp.JSONRPCNotification) { m.onNotification(c, n) })

	m.mu.Lock()
	m.live[c] = true
	m.mu.Unlock()
	if c.proc != nil {
		m.mu.Lock()
		if !m.closed {
			m.wg.Add(1)
			go func() {
				defer m.wg.Done()
				select {
				case <-c.proc.done:
					m.markLost(c, errors.New("the process ended"))
				case <-c.closed:
				}
			}()
		}
		m.mu.Unlock()
	}

	tools, err := m.handshake(c)
	if err != nil {
		why := err.Error()
		switch {
		case c.isLost():
			why = c.lostReason
		case c.proc != nil && (errors.Is(err, transport.ErrTransportClosed) || c.proc.exited() != ""):
			why = m.markLost(c, err)
		default:
			why = m.withStderr(c, why)
		}
		s.log.Printf("start failed: %s", why)
		m.closeConn(c)
		return nil, nil, errors.New(cfg.scrub(why))
	}
	s.log.Printf("running: %d tools", len(tools))
	return c, tools, nil
}

// handshake initializes the session and lists the tools, within the
// start timeout.
func (m *Manager) handshake(c *conn) ([]ToolInfo, error) {
	// The transport keeps Start's context for the requests the server
	// sends (elicitation, sampling) and, over HTTP, its GET stream: the
	// connection's, not the handshake's.
	if err := c.client.Start(c.ctx); err != nil {
		return nil, fmt.Errorf("cannot connect to %s: %w", c.s.cfg.Where(), err)
	}
	ctx, cancel := context.WithTimeout(c.ctx, m.o.StartTimeout)
	defer cancel()
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: m.o.ClientName, Version: m.o.ClientVersion}
	if _, err := c.client.Initialize(ctx, init); err != nil {
		if ctx.Err() != nil && c.ctx.Err() == nil {
			return nil, fmt.Errorf("it did not answer initialize within %s", m.o.StartTimeout)
		}
		return nil, fmt.Errorf("initialize: %w", err)
	}
	tools, err := m.listTools(ctx, c)
	if err != nil && ctx.Err() != nil && c.ctx.Err() == nil {
		return nil, fmt.Errorf("it did not list its tools within %s", m.o.StartTimeout)
	}
	return tools, err
}

// listTools lists every page of the server's tools.
func (m *Manager) listTools(ctx context.Context, c *conn) ([]ToolInfo, error) {
	res, err := c.client.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return nil, fmt.Errorf("tools/list: %w", err)
	}
	name := c.s.cfg.Name
	out := make([]ToolInfo, 0, len(res.Tools))
	for _, t := range res.Tools {
		info, err := toolInfo(name, t)
		if err != nil {
			c.s.log.Printf("tool %q left out: %v", t.Name, err)
			continue
		}
		out = append(out, info)
	}
	return out, nil
}

// toolInfo describes one listed tool.
func toolInfo(server string, t mcp.Tool) (ToolInfo, error) {
	schema := t.RawInputSchema
	if schema == nil {
		b, err := json.Marshal(t.InputSchema)
		if err != nil {
			return ToolInfo{}, fmt.Errorf("input schema: %w", err)
		}
		schema = b
	}
	a := Annotations{Title: t.Annotations.Title, ReadOnlyHint: t.Annotations.ReadOnlyHint,
		DestructiveHint: t.Annotations.DestructiveHint, IdempotentHint: t.Annotations.IdempotentHint,
		OpenWorldHint: t.Annotations.OpenWorldHint}
	hash, err := DefinitionHash(t.Name, t.Description, schema, a)
	if err != nil {
		return ToolInfo{}, err
	}
	title := t.Title
	if title == "" {
		title = a.Title
	}
	return ToolInfo{Server: server, Tool: t.Name, Name: ToolName(server, t.Name), Title: title,
		Description: t.Description, InputSchema: schema, Annotations: a, Hash: hash}, nil
}

// onNotification handles what a server notifies; it runs on the
// transport's reading goroutine, so it must not block.
func (m *Manager) onNotification(c *conn, n mcp.JSONRPCNotification) {
	switch n.Method {
	case string(mcp.MethodNotificationToolsListChanged):
		m.refresh(c)
	case string(mcp.MethodNotificationProgress):
		if m.o.OnProgress == nil {
			return
		}
		f := n.Params.AdditionalFields
		token := fmt.Sprint(f["progressToken"])
		m.mu.Lock()
		cl := c.calls[token]
		m.mu.Unlock()
		if cl == nil {
			return
		}
		p := Progress{Server: c.s.cfg.Name, Tool: cl.tool}
		p.Progress, _ = f["progress"].(float64)
		p.Total, _ = f["total"].(float64)
		p.Message, _ = f["message"].(string)
		m.o.OnProgress(cl.ctx, p)
	}
}

// refresh lists the tools again after a list_changed, in the
// background; notifications that come meanwhile make one more round.
func (m *Manager) refresh(c *conn) {
	m.mu.Lock()
	if m.closed || c.ctx.Err() != nil {
		m.mu.Unlock()
		return
	}
	if c.s.conn != c {
		// Still starting: the list the start is taking may be the old
		// one; list again once it runs.
		c.refreshPending = true
		m.mu.Unlock()
		return
	}
	if c.refreshing {
		c.refreshAgain = true
		m.mu.Unlock()
		return
	}
	c.refreshing = true
	m.wg.Add(1)
	m.mu.Unlock()
	go func() {
		defer m.wg.Done()
		for {
			ctx, cancel := context.WithTimeout(c.ctx, m.o.StartTimeout)
			tools, err := m.listTools(ctx, c)
			cancel()
			m.mu.Lock()
			var e *Event
			if err == nil && c.s.conn == c && !sameTools(c.s.tools, tools) {
				c.s.tools = tools
				e = &Event{Server: c.s.cfg.Name, Status: m.statusLocked(c.s), ToolsChanged: true}
			}
			again := c.refreshAgain && c.ctx.Err() == nil
			c.refreshAgain = false
			c.refreshing = again
			m.mu.Unlock()
			if err != nil && c.ctx.Err() == nil {
				c.s.log.Printf("listing the tools again after list_changed: %v", err)
			}
			if e != nil {
				c.s.log.Printf("its tool list changed: %d tools", len(tools))
				m.emit(*e)
			}
			if !again {
				return
			}
		}
	}()
}

// origin finds the call a server's request relates to: the one whose
// context the request came with (Streamable HTTP), else the server's only
// call in flight.
func (m *Manager) origin(c *conn, ctx context.Context) (Origin, context.Context) {
	o := Origin{Server: c.s.cfg.Name}
	cl, _ := ctx.Value(callKey{}).(*call)
	if cl == nil {
		m.mu.Lock()
		if len(c.calls) == 1 {
			for _, only := range c.calls {
				cl = only
			}
		}
		m.mu.Unlock()
	}
	if cl == nil {
		return o, ctx
	}
	o.Tool, o.CallID, o.Known = cl.tool, cl.id, true
	return o, cl.ctx
}

type elicitHandler struct {
	m *Manager
	c *conn
}

func (h elicitHandler) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	from, ctx := h.m.origin(h.c, ctx)
	h.c.s.log.Printf("elicitation request (%s)", originWords(from))
	return h.m.o.Elicit(ctx, from, req)
}

type sampleHandler struct {
	m *Manager
	c *conn
}

func (h sampleHandler) CreateMessage(ctx context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	from, ctx := h.m.origin(h.c, ctx)
	h.c.s.log.Printf("sampling request (%s)", originWords(from))
	if !h.c.s.cfg.AllowSampling || h.m.o.Sample == nil {
		return nil, errors.New("Deskhand does not let this server use the person's model: sampling is off for it")
	}
	return h.m.o.Sample(ctx, from, req)
}

func originWords(o Origin) string {
	if !o.Known {
		return "not related to a known call"
	}
	return "during " + o.Tool + " " + o.CallID
}

// cancellingHTTP is mcp-go's Streamable HTTP transport, which also tells
// a server that a tools/call it was sent is cancelled. mcp-go's client
// sends notifications/cancelled only over stdio; over HTTP it relies on
// the request's stream ending, which a 2025-11-25 server (the TypeScript
// SDK's, for one) does not take as a cancellation: the tool runs on.
type cancellingHTTP struct {
	*transport.StreamableHTTP
}

// cancelNoticeTimeout bounds sending a notifications/cancelled.
const cancelNoticeTimeout = 2 * time.Second

func (t *cancellingHTTP) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	resp, err := t.StreamableHTTP.SendRequest(ctx, req)
	if err == nil || ctx.Err() == nil || req.Method != string(mcp.MethodToolsCall) ||
		mcp.IsModernProtocol(req.Header.Get("Mcp-Protocol-Version")) {
		return resp, err
	}
	n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
		Method: string(mcp.MethodNotificationCancelled),
		Params: mcp.NotificationParams{AdditionalFields: map[string]any{"requestId": req.ID, "reason": context.Cause(ctx).Error()}},
	}}
	nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelNoticeTimeout)
	defer cancel()
	_ = t.StreamableHTTP.SendNotification(nctx, n)
	return resp, err
}
