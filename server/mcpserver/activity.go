package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver/mcpfill"
)

// The activity log's view of the MCP surface: recordActivity, outside the
// guard, sees every request to /mcp, the refused ones included, and hands
// one row per request to the core when the answer is written. The guard's
// side of the chain fills in the note it puts in the request's context:
// the principal (notePrincipal), the JSON-RPC method and agent (noteRPC,
// from the peek the server makes anyway), and what mcp-go answered (its
// hooks). Nothing is written on the request's path: the core queues the
// row for the store's next group commit. A row never holds a token or an
// Authorization header; it holds a call's arguments only for agents that
// log them (agent.Agent.LogArguments), with what looks like a secret
// redacted.

// ActivityRecorder is what recording needs of the core; a Core without it,
// or whose log is off, records nothing and pays nothing.
type ActivityRecorder interface {
	Record(row agent.ActivityRow)
	Enabled() bool
}

// activityRecorder is the core's recorder when its log is on.
func (s *Server) activityRecorder() (ActivityRecorder, bool) {
	rec := s.core.Activity
	return rec, rec != nil && rec.Enabled()
}

// activityNote is what the handlers learn of a request, for its row.
type activityNote struct {
	mu           sync.Mutex
	principal    string
	known        bool   // past the guard
	refused      string // why the guard refused it (guardRefuses)
	method       string
	era          string // an initialize's protocolVersion
	agent        string
	logArguments bool // the agent keeps its calls' arguments
	conversation string
	outcome      agent.ActivityOutcome
	text         string
	arguments    string
}

type noteKey struct{}

func noteFrom(ctx context.Context) *activityNote {
	n, _ := ctx.Value(noteKey{}).(*activityNote)
	return n
}

// recordActivity wraps the whole handler: it records each request to
// EndpointPath once its answer is written.
func (s *Server) recordActivity(next http.Handler) http.Handler {
	rec, ok := s.activityRecorder()
	if !ok {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != EndpointPath {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		note := &activityNote{}
		cw := &countingWriter{ResponseWriter: w}
		var body *countingBody
		if r.Body != nil && r.Body != http.NoBody {
			body = &countingBody{ReadCloser: r.Body}
			r.Body = body
		}
		next.ServeHTTP(cw, r.WithContext(context.WithValue(r.Context(), noteKey{}, note)))
		row := agent.ActivityRow{
			Time:     start.UTC(),
			Era:      r.Header.Get("Mcp-Protocol-Version"),
			Duration: time.Since(start),
			BytesOut: cw.n,
		}
		if body != nil {
			row.BytesIn = body.n
		}
		note.mu.Lock()
		row.Client, row.Method, row.Agent, row.Conversation = note.principal, note.method, note.agent, note.conversation
		row.Outcome, row.Text, row.Arguments = note.outcome, note.text, note.arguments
		known, refused := note.known, note.refused
		if row.Era == "" {
			row.Era = note.era
		}
		note.mu.Unlock()
		if row.Method == "" {
			row.Method = r.Method // a GET stream, a DELETE, a body that is not JSON-RPC
		}
		status := cw.status()
		switch {
		case refused != "":
			row.Outcome, row.Reason = agent.OutcomeRefused, refused
		case !known && status == http.StatusRequestTimeout:
			row.Outcome, row.Reason = agent.OutcomeRefused, "body too slow"
		case !known && status >= 400:
			row.Outcome, row.Reason = agent.OutcomeRefused, http.StatusText(status)
		case row.Outcome != "":
		case status >= 400:
			row.Outcome, row.Reason = agent.OutcomeProtocolError, http.StatusText(status)
		case cw.sawError():
			row.Outcome = agent.OutcomeProtocolError
		default:
			row.Outcome = agent.OutcomeOK
		}
		rec.Record(row)
	})
}

// notePrincipal, just inside the guard, records who is calling.
func notePrincipal(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n := noteFrom(r.Context()); n != nil {
			n.mu.Lock()
			n.principal, n.known = PrincipalFrom(r.Context()), true
			n.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

// noteRPC records a request's method, and the agent it concerns: the one
// it calls, whose description it reads or whose starter prompt it gets.
func (s *Server) noteRPC(r *http.Request, msg *mcpfill.Peek) {
	n := noteFrom(r.Context())
	if n == nil {
		return
	}
	var slug string
	var logArguments bool
	switch msg.Method {
	case string(mcp.MethodToolsCall):
		if a, ok := s.core.Agents.BySlug(msg.Params.Name); ok {
			slug, logArguments = a.Slug, a.LogArguments
		}
	case string(mcp.MethodResourcesRead): // an agent's description
		if name, ok := strings.CutPrefix(msg.Params.URI, AgentResourcePrefix); ok {
			if a, ok := s.core.Agents.BySlug(name); ok {
				slug = a.Slug
			}
		}
	case string(mcp.MethodPromptsGet): // a starter prompt, named slug.N
		if name, _, ok := strings.Cut(msg.Params.Name, "."); ok {
			if a, ok := s.core.Agents.BySlug(name); ok {
				slug = a.Slug
			}
		}
	}
	n.mu.Lock()
	n.method, n.agent, n.logArguments = msg.Method, slug, logArguments
	if msg.Method == string(mcp.MethodInitialize) {
		n.era = msg.Params.ProtocolVersion
	}
	n.mu.Unlock()
}

// activityHooks learn from mcp-go how a request ended.
func activityHooks(hooks *server.Hooks) {
	hooks.AddAfterCallTool(func(ctx context.Context, _ any, req *mcp.CallToolRequest, result any) {
		n := noteFrom(ctx)
		res, ok := result.(*mcp.CallToolResult)
		if n == nil || !ok || res == nil {
			return
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		if n.logArguments && req != nil {
			n.arguments = loggedArguments(req.Params.Arguments)
		}
		if res.Meta != nil {
			n.conversation, _ = res.Meta.AdditionalFields[ConversationMetaKey].(string)
		}
		if res.IsError {
			n.outcome = agent.OutcomeToolError
			for _, c := range res.Content {
				if t, ok := c.(mcp.TextContent); ok {
					n.text = t.Text
					break
				}
			}
		}
	})
	hooks.AddOnError(func(ctx context.Context, _ any, _ mcp.MCPMethod, _ any, err error) {
		n := noteFrom(ctx)
		if n == nil {
			return
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		n.outcome = agent.OutcomeProtocolError
		if err != nil {
			n.text = err.Error()
		}
	})
}

// loggedArguments are a call's arguments as JSON; the core redacts and
// bounds what the log keeps (agent.Activity.Record).
func loggedArguments(args any) string {
	b, err := json.Marshal(args)
	if err != nil {
		return ""
	}
	return string(b)
}

// countingWriter counts the bytes of an answer and keeps its first ones,
// to tell a JSON-RPC error; it keeps http.Flusher and the
// ResponseController's other methods (Unwrap).
type countingWriter struct {
	http.ResponseWriter
	code int
	n    int64
	head []byte
}

// headBytes is how much of an answer is kept to tell a JSON-RPC error.
const headBytes = 96

func (w *countingWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *countingWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	if len(w.head) < headBytes {
		w.head = append(w.head, p[:min(len(p), headBytes-len(w.head))]...)
	}
	n, err := w.ResponseWriter.Write(p)
	w.n += int64(n)
	return n, err
}

func (w *countingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *countingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *countingWriter) status() int {
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}

// sawError reports whether the answer is a JSON-RPC error (in JSON, or as
// an SSE stream's first event).
func (w *countingWriter) sawError() bool {
	head := w.head
	if i := bytes.Index(head, []byte("data:")); i >= 0 {
		head = head[i+len("data:"):]
	}
	return bytes.Contains(head, []byte(`"error":{`)) && !bytes.Contains(head, []byte(`"result":`)) &&
		strings.HasPrefix(strings.TrimSpace(string(head)), "{")
}

// countingBody counts the bytes of a request body as it is read.
type countingBody struct {
	io.ReadCloser
	n int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	return n, err
}
