package toolservers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// State is where a server is in its life.
type State string

const (
	StateStopped    State = "stopped"     // not running; starts on first use
	StateStarting   State = "starting"    // spawning or connecting, initialize, tools/list
	StateRunning    State = "running"     // ready for calls
	StateBackingOff State = "backing off" // it failed; the next use after RetryAt starts it again
	StateFailed     State = "failed"      // it failed MaxFailures times in a row; it waits for the person
)

// Status is a server's state, for the desktop and the command line.
type Status struct {
	Name  string
	State State
	Since time.Time // when it entered State
	Tools int       // tools it listed last (0 before its first start)
	// LastError says, in words, why it last failed or stopped on its
	// own, with its last stderr lines ("" when nothing went wrong).
	LastError string
	Failures  int       // failures in a row
	RetryAt   time.Time // when backing off: the first use from then on starts it
	PID       int       // a running stdio server's process (0 otherwise)
	LogFile   string    // its log ("" without Options.LogDir)
}

// Event tells that a server's state or tool list changed.
type Event struct {
	Server       string
	Status       Status
	ToolsChanged bool // its tool list is not what it was
	Removed      bool // Set removed it
}

// ErrClosed is returned once the Manager is closed.
var ErrClosed = errors.New("tool servers are shut down")

// stderrLines is how many of a server's last stderr lines its errors
// quote.
const stderrLines = 8

// Manager runs the person's tool servers; one per process.
type Manager struct {
	o    Options
	base context.Context
	stop context.CancelFunc
	seq  atomic.Uint64

	mu      sync.Mutex
	servers map[string]*server
	live    map[*conn]bool // connections not yet closed
	closed  bool
	wg      sync.WaitGroup // goroutines: watchers, refreshes
}

// server is one configured server. Its fields are guarded by Manager.mu.
type server struct {
	cfg      Config
	log      *serverLog
	state    State
	since    time.Time
	lastErr  string
	failures int
	retryAt  time.Time
	conn     *conn
	starting chan struct{} // closed when a start ends
	tools    []ToolInfo
	removed  bool
}

// conn is one run of a server: a child process or an HTTP session.
type conn struct {
	s         *server
	client    *client.Client
	proc      *process   // stdio only
	stdout    *badOutput // stdio only
	ctx       context.Context
	cancel    context.CancelFunc
	startedAt time.Time

	// Guarded by Manager.mu:
	inflight       int
	calls          map[string]*call // by progress token
	idle           Timer
	refreshing     bool
	refreshAgain   bool
	refreshPending bool // a list_changed came while it started

	lostOnce   sync.Once
	lost       chan struct{}
	lostReason string // set before lost is closed

	closeOnce sync.Once
	closed    chan struct{}
}

// call is a tool call in flight.
type call struct {
	id   string // also its progress token
	tool string
	ctx  context.Context
}

type callKey struct{}

// New makes a Manager with no servers; Set gives it some.
func New(opts Options) *Manager {
	base, stop := context.WithCancel(context.Background())
	return &Manager{
		o: opts.withDefaults(), base: base, stop: stop,
		servers: map[string]*server{}, live: map[*conn]bool{},
	}
}

// Set makes configs the servers: new ones are added (stopped), removed
// ones stopped, changed ones stopped to start again with the new
// configuration on next use (their calls in flight fail). A
// configuration that does not validate changes nothing.
func (m *Manager) Set(configs []Config) error {
	if err := validateSet(configs); err != nil {
		return err
	}
	want := map[string]Config{}
	for _, c := range configs {
		want[c.Name] = c
	}
	var stops []*conn
	var events []Event
	var logs []*serverLog // of the servers replaced or removed
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrClosed
	}
	now := m.o.Clock.Now()
	for name, s := range m.servers {
		if c, ok := want[name]; ok && c.Equal(s.cfg) {
			continue
		}
		s.removed = true
		logs = append(logs, s.log)
		if s.conn != nil {
			stops = append(stops, s.conn)
			s.conn = nil
		}
		delete(m.servers, name)
		if _, ok := want[name]; !ok {
			events = append(events, Event{Server: name, Status: Status{Name: name, State: StateStopped, Since: now}, Removed: true})
		}
	}
	for _, c := range configs {
		if _, ok := m.servers[c.Name]; ok {
			continue
		}
		s := &server{cfg: c, log: newServerLog(m.o.LogDir, c.Name, m.o.MaxLogBytes, m.redactor(c)), state: StateStopped, since: now}
		m.servers[c.Name] = s
		events = append(events, Event{Server: c.Name, Status: m.statusLocked(s)})
	}
	m.mu.Unlock()
	for _, c := range stops {
		c.s.log.Printf("stopping: its configuration changed or it was removed")
		m.closeConn(c)
	}
	for _, l := range logs {
		l.Close()
	}
	for _, e := range events {
		m.emit(e)
	}
	return nil
}

// Reset clears a server's failures, so that its next use starts it
// (the person's "try again").
func (m *Manager) Reset(name string) error {
	m.mu.Lock()
	s, ok := m.servers[name]
	if !ok {
		m.mu.Unlock()
		return unknownServer(name)
	}
	if s.state == StateFailed || s.state == StateBackingOff {
		s.state, s.since, s.failures, s.retryAt = StateStopped, m.o.Clock.Now(), 0, time.Time{}
	}
	e := Event{Server: name, Status: m.statusLocked(s)}
	m.mu.Unlock()
	m.emit(e)
	return nil
}

// Status lists the servers by name.
func (m *Manager) Status() []Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Status, 0, len(m.servers))
	for _, s := range m.servers {
		out = append(out, m.statusLocked(s))
	}
	slices.SortFunc(out, func(a, b Status) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func (m *Manager) statusLocked(s *server) Status {
	st := Status{Name: s.cfg.Name, State: s.state, Since: s.since, Tools: len(s.tools),
		LastError: s.lastErr, Failures: s.failures, LogFile: s.log.path}
	if s.state == StateBackingOff {
		st.RetryAt = s.retryAt
	}
	if s.conn != nil && s.conn.proc != nil {
		st.PID = s.conn.proc.pid
	}
	return st
}

// Tools lists a server's tools, starting it if needed.
func (m *Manager) Tools(ctx context.Context, name string) ([]ToolInfo, error) {
	c, err := m.acquire(ctx, name)
	if err != nil {
		return nil, err
	}
	defer m.release(c)
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(c.s.tools), nil
}

// Call runs a server's tool with args (a JSON object; empty means {}),
// starting the server if needed. A result the server marks isError is a
// Result with IsError, not an error. An error is for what kept the tool
// from answering (unknown tool, bad arguments, a server that fails,
// stops, refuses the call or does not answer in time): a *agent.UserError
// whose message the model can read, or the caller's own context error.
func (m *Manager) Call(ctx context.Context, name, tool string, args json.RawMessage) (Result, error) {
	raw := bytes.TrimSpace(args)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if err := agent.CheckArgumentKeys(ToolName(name, tool), raw, nil); err != nil {
		return Result{}, err
	}
	c, err := m.acquire(ctx, name)
	if err != nil {
		return Result{}, err
	}
	defer m.release(c)
	cfg := c.s.cfg

	m.mu.Lock()
	known := slices.ContainsFunc(c.s.tools, func(t ToolInfo) bool { return t.Tool == tool })
	names := make([]string, 0, len(c.s.tools))
	for _, t := range c.s.tools {
		names = append(names, t.Tool)
	}
	m.mu.Unlock()
	if !known {
		return Result{}, agent.Userf(nil, "the tool server %s has no tool %q (it has: %s)", name, tool, strings.Join(names, ", "))
	}

	callCtx, cancel := context.WithTimeout(ctx, m.o.CallTimeout)
	defer cancel()
	cl := &call{id: fmt.Sprintf("deskhand-%d", m.seq.Add(1)), tool: tool}
	callCtx = context.WithValue(callCtx, callKey{}, cl)
	cl.ctx = callCtx
	m.mu.Lock()
	c.calls[cl.id] = cl
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		delete(c.calls, cl.id)
		m.mu.Unlock()
	}()

	var req mcp.CallToolRequest
	req.Params.Name = tool
	req.Params.Arguments = json.RawMessage(raw)
	req.Params.Meta = &mcp.Meta{ProgressToken: mcp.ProgressToken(cl.id)}
	res, err := c.client.CallTool(callCtx, req)
	if err == nil && res == nil {
		err = errors.New("no result")
	}
	if err != nil {
		var te *transport.Error
		broken := errors.As(err, &te) || errors.Is(err, transport.ErrTransportClosed) || c.isLost()
		err = cfg.scrubError(err)
		switch {
		case ctx.Err() != nil:
			return Result{}, fmt.Errorf("call %s on tool server %s: %w", tool, name, context.Cause(ctx))
		case errors.Is(callCtx.Err(), context.DeadlineExceeded):
			c.s.log.Printf("call %s (%s) cut after %s", tool, cl.id, m.o.CallTimeout)
			return Result{}, agent.Userf(err, "the tool server %s did not answer %s within %s; the call was cancelled", name, tool, m.o.CallTimeout)
		}
		if !broken {
			return Result{}, agent.Userf(err, "the tool server %s refused the call to %s: %s", name, tool, err.Error())
		}
		reason := m.markLost(c, err)
		return Result{}, agent.Userf(err, "the tool server %s (%s) stopped while running %s: %s", name, cfg.Where(), tool, reason)
	}
	return resultText(res, m.o.MaxResultBytes), nil
}

// acquire returns the server's running connection, starting it if
// needed, counted as in use until release.
func (m *Manager) acquire(ctx context.Context, name string) (*conn, error) {
	for {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return nil, ErrClosed
		}
		s, ok := m.servers[name]
		if !ok {
			m.mu.Unlock()
			return nil, unknownServer(name)
		}
		now := m.o.Clock.Now()
		switch s.state {
		case StateRunning:
			c := s.conn
			if c.isLost() {
				// It died and its watcher has not noticed yet: record the
				// crash here, and start it again if that is due.
				s.conn = nil
				note := m.crashedLocked(s, c, now)
				e := Event{Server: name, Status: m.statusLocked(s)}
				m.mu.Unlock()
				s.log.Printf("%s", note)
				m.closeConn(c)
				m.emit(e)
				continue
			}
			c.inflight++
			if c.idle != nil {
				c.idle.Stop()
				c.idle = nil
			}
			m.mu.Unlock()
			return c, nil
		case StateStarting:
			ch := s.starting
			m.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		case StateFailed:
			msg := s.lastErr
			m.mu.Unlock()
			return nil, agent.Userf(nil, "the tool server %s failed %d times in a row and is turned off until the person looks at it: %s", name, m.o.MaxFailures, msg)
		case StateBackingOff:
			if now.Before(s.retryAt) {
				msg, wait := s.lastErr, s.retryAt.Sub(now).Round(time.Second)
				m.mu.Unlock()
				return nil, agent.Userf(nil, "the tool server %s is not available: %s; it will be started again in %s", name, msg, wait)
			}
		}
		// Stopped, or backing off and due: start it.
		ch := make(chan struct{})
		s.state, s.since, s.starting = StateStarting, now, ch
		e := Event{Server: name, Status: m.statusLocked(s)}
		m.mu.Unlock()
		m.emit(e)

		c, tools, err := m.start(s)

		m.mu.Lock()
		close(ch)
		s.starting = nil
		now = m.o.Clock.Now()
		if err == nil && (s.removed || m.closed) {
			m.mu.Unlock()
			m.closeConn(c)
			if m.isClosed() {
				return nil, ErrClosed
			}
			continue // a new configuration took its place
		}
		if err != nil {
			note := m.failLocked(s, now, err.Error())
			e := Event{Server: name, Status: m.statusLocked(s)}
			m.mu.Unlock()
			if note != "" {
				s.log.Printf("%s", note)
			}
			m.emit(e)
			return nil, agent.Userf(err, "the tool server %s could not start: %s", name, err.Error())
		}
		changed := !sameTools(s.tools, tools)
		s.conn, s.tools, s.state, s.since, s.lastErr = c, tools, StateRunning, now, ""
		c.inflight++
		m.wg.Add(1)
		go m.watch(c)
		pending := c.refreshPending
		e = Event{Server: name, Status: m.statusLocked(s), ToolsChanged: changed}
		m.mu.Unlock()
		m.emit(e)
		if pending {
			m.refresh(c)
		}
		return c, nil
	}
}

// failLocked records a failure: backing off, or failed after too many.
// It returns a line for the server's log ("" if none), to be written
// once m.mu is released.
func (m *Manager) failLocked(s *server, now time.Time, why string) (note string) {
	s.failures++
	s.lastErr = why
	if s.failures >= m.o.MaxFailures {
		s.state, s.since = StateFailed, now
		return fmt.Sprintf("failed %d times in a row; turned off until the person looks at it", s.failures)
	}
	wait := time.Duration(0)
	if s.failures > 1 {
		wait = m.o.BackoffBase << (s.failures - 2)
		if wait > m.o.BackoffMax || wait <= 0 {
			wait = m.o.BackoffMax
		}
	}
	s.state, s.since, s.retryAt = StateBackingOff, now, now.Add(wait)
	return ""
}

// release ends a use of c; the last one arms the idle timer.
func (m *Manager) release(c *conn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c.inflight--
	if c.inflight > 0 || c.s.conn != c || m.closed || m.o.IdleTimeout < 0 {
		return
	}
	c.idle = m.o.Clock.AfterFunc(m.o.IdleTimeout, func() { m.idleStop(c) })
}

// idleStop stops c if it is still unused.
func (m *Manager) idleStop(c *conn) {
	m.mu.Lock()
	s := c.s
	if m.closed || s.conn != c || c.inflight > 0 {
		m.mu.Unlock()
		return
	}
	s.conn, s.state, s.since = nil, StateStopped, m.o.Clock.Now()
	e := Event{Server: s.cfg.Name, Status: m.statusLocked(s)}
	m.mu.Unlock()
	s.log.Printf("stopping: unused for %s", m.o.IdleTimeout)
	m.closeConn(c)
	m.emit(e)
}

// watch waits for c to be lost (its process exits, its connection
// breaks) and records the crash.
func (m *Manager) watch(c *conn) {
	defer m.wg.Done()
	select {
	case <-c.lost:
	case <-c.ctx.Done():
		return
	}
	m.mu.Lock()
	s := c.s
	if s.conn != c {
		m.mu.Unlock()
		return
	}
	s.conn = nil
	note := m.crashedLocked(s, c, m.o.Clock.Now())
	e := Event{Server: s.cfg.Name, Status: m.statusLocked(s)}
	m.mu.Unlock()
	s.log.Printf("%s", note)
	m.closeConn(c)
	m.emit(e)
}

// crashedLocked records that c, which was running, is gone. A crash
// sooner than StableAfter after its start counts towards MaxFailures.
// It returns the line for the server's log.
func (m *Manager) crashedLocked(s *server, c *conn, now time.Time) (note string) {
	if now.Sub(c.startedAt) >= m.o.StableAfter {
		s.failures = 0
	}
	note = "stopped on its own: " + c.lostReason
	if more := m.failLocked(s, now, c.lostReason); more != "" {
		note += "\n" + more
	}
	return note
}

// markLost records that c is gone (once) and returns why, in words.
func (m *Manager) markLost(c *conn, err error) string {
	c.lostOnce.Do(func() {
		var why string
		if c.proc != nil {
			select {
			case <-c.proc.done:
			case <-time.After(time.Second): // its stdout closed; the exit follows
			}
			why = c.proc.exited()
		}
		if why == "" {
			why = "the connection failed: " + err.Error()
		}
		c.lostReason = c.s.cfg.scrub(m.withStderr(c, why))
		close(c.lost)
	})
	<-c.lost
	return c.lostReason
}

func (c *conn) isLost() bool {
	select {
	case <-c.lost:
		return true
	default:
		return false
	}
}

// withStderr adds what the server last wrote on stderr, and any line it
// wrote on stdout that was not MCP.
func (m *Manager) withStderr(c *conn, why string) string {
	if c.stdout != nil {
		if bad := c.stdout.First(); bad != "" {
			why += fmt.Sprintf("; it wrote %q on its standard output, which is not MCP (a stdio server must write only JSON-RPC there)", bad)
		}
	}
	if tail := c.s.log.Tail(stderrLines); tail != "" {
		why += "; its last words on stderr:\n" + tail
	}
	return why
}

// closeConn stops c and waits until it is stopped; safe to call more
// than once and from several goroutines.
func (m *Manager) closeConn(c *conn) {
	c.closeOnce.Do(func() {
		m.mu.Lock()
		if c.idle != nil {
			c.idle.Stop()
			c.idle = nil
		}
		m.mu.Unlock()
		c.cancel()
		_ = c.client.Close()
		if c.proc != nil {
			c.proc.stop(m.o.StopGrace)
			c.s.log.Printf("process %d ended (%s)", c.proc.pid, c.proc.exited())
		}
		m.mu.Lock()
		delete(m.live, c)
		m.mu.Unlock()
		close(c.closed)
	})
	<-c.closed
}

// Close stops every server, waits for their processes to end, and makes
// the Manager refuse further use.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	var conns []*conn
	for c := range m.live {
		conns = append(conns, c)
	}
	for _, s := range m.servers {
		s.conn = nil
		s.state = StateStopped
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() { m.closeConn(c) })
	}
	wg.Wait()
	m.stop()
	m.wg.Wait()
	m.mu.Lock()
	var logs []*serverLog
	for _, s := range m.servers {
		logs = append(logs, s.log)
	}
	m.mu.Unlock()
	for _, l := range logs {
		l.Close()
	}
	return nil
}

func (m *Manager) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

func (m *Manager) emit(e Event) {
	if m.o.OnChange != nil {
		m.o.OnChange(e)
	}
}

func unknownServer(name string) error {
	return agent.Userf(nil, "there is no tool server named %q", name)
}

// sameTools reports whether two tool lists have the same definitions.
func sameTools(a, b []ToolInfo) bool {
	return slices.EqualFunc(a, b, func(x, y ToolInfo) bool { return x.Tool == y.Tool && x.Hash == y.Hash && x.Title == y.Title })
}

// redactor is what a server's log keeps of text: its own secrets hidden,
// then the process's.
func (m *Manager) redactor(c Config) func(string) string {
	return func(s string) string {
		s = c.scrub(s)
		if m.o.Redact != nil {
			s = m.o.Redact(s)
		}
		return s
	}
}
