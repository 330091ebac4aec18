package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/server/agent"
)

// The activity log of a stdio stream (ServeStdio): no HTTP request to
// wrap, so the recorder reads the newline-delimited messages as they pass
// in and out, pairs each request with its answer by ID, and records a row
// when the answer is written. Notifications from the client are rows of
// their own; the client's answers to the server's requests are not
// requests and are not logged.

// stdioActivity watches one stdio stream.
type stdioActivity struct {
	s   *Server
	rec ActivityRecorder

	mu      sync.Mutex
	era     string
	pending map[string]*agent.ActivityRow // by the request's JSON-RPC ID
	in, out []byte                        // partial lines
}

// stdioMessage is what the recorder reads of a message, either way.
type stdioMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name            string          `json:"name"`
		ProtocolVersion string          `json:"protocolVersion"`
		Arguments       any             `json:"arguments"`
		RequestID       json.RawMessage `json:"requestId"` // notifications/cancelled
	} `json:"params"`
	Result *struct {
		IsError bool              `json:"isError"`
		Content []mcp.TextContent `json:"content"`
		Meta    map[string]any    `json:"_meta"`
	} `json:"result"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// recordStdio wraps in and out to record the stream's requests, and
// returns what records the requests left unanswered when the stream ends;
// without a recorder in and out are returned as they are.
func (s *Server) recordStdio(in io.Reader, out io.Writer) (io.Reader, io.Writer, func()) {
	rec, ok := s.activityRecorder()
	if !ok {
		return in, out, func() {}
	}
	a := &stdioActivity{s: s, rec: rec, pending: make(map[string]*agent.ActivityRow)}
	return &stdioReader{r: in, a: a}, &stdioWriter{w: out, a: a}, a.end
}

// end records the requests still unanswered.
func (a *stdioActivity) end() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, row := range a.pending {
		a.unanswered(id, row, "the stream ended before the answer")
	}
}

// unanswered records a request that got no answer; a.mu is held.
func (a *stdioActivity) unanswered(id string, row *agent.ActivityRow, why string) {
	delete(a.pending, id)
	row.Duration, row.Outcome, row.Reason = time.Since(row.Time), agent.OutcomeProtocolError, why
	a.rec.Record(*row)
}

type stdioReader struct {
	r io.Reader
	a *stdioActivity
}

func (r *stdioReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.a.lines(&r.a.in, p[:n], r.a.request)
	return n, err
}

type stdioWriter struct {
	w io.Writer
	a *stdioActivity
}

func (w *stdioWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.a.lines(&w.a.out, p[:n], w.a.answer)
	return n, err
}

// maxStdioLine bounds a partial line kept: a longer message is not logged
// rather than held.
const maxStdioLine = 4 << 20

// lines hands each complete line of p (after what buf holds) to fn.
func (a *stdioActivity) lines(buf *[]byte, p []byte, fn func(line []byte)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(*buf)+len(p) <= maxStdioLine {
				*buf = append(*buf, p...)
			} else {
				*buf = (*buf)[:0]
			}
			return
		}
		line := p[:i]
		if len(*buf) > 0 {
			line = append(*buf, line...)
			*buf = (*buf)[:0]
		}
		p = p[i+1:]
		if len(bytes.TrimSpace(line)) > 0 {
			fn(line)
		}
	}
}

// request notes a message from the client; a.mu is held.
func (a *stdioActivity) request(line []byte) {
	var msg stdioMessage
	if json.Unmarshal(line, &msg) != nil || msg.Method == "" {
		return // malformed (mcp-go answers it) or an answer to the server
	}
	switch msg.Method {
	case string(mcp.MethodInitialize):
		a.era = msg.Params.ProtocolVersion
	case string(mcp.MethodNotificationCancelled):
		if row, ok := a.pending[string(msg.Params.RequestID)]; ok {
			a.unanswered(string(msg.Params.RequestID), row, "cancelled by the client")
		}
	}
	row := &agent.ActivityRow{Time: time.Now().UTC(), Client: agent.LocalPrincipal, Era: a.era, Method: msg.Method,
		BytesIn: int64(len(line) + 1), Outcome: agent.OutcomeOK}
	if msg.Method == string(mcp.MethodToolsCall) {
		if ag, ok := a.s.core.Agents.BySlug(msg.Params.Name); ok {
			row.Agent = ag.Slug
			if ag.LogArguments {
				row.Arguments = loggedArguments(msg.Params.Arguments)
			}
		}
	}
	if len(msg.ID) == 0 {
		a.rec.Record(*row) // a notification: nothing answers it
		return
	}
	a.pending[string(msg.ID)] = row
}

// answer completes the row of the request a message answers; a.mu is held.
func (a *stdioActivity) answer(line []byte) {
	var msg stdioMessage
	if json.Unmarshal(line, &msg) != nil || msg.Method != "" || len(msg.ID) == 0 {
		return // the server's own requests and notifications
	}
	row, ok := a.pending[string(msg.ID)]
	if !ok {
		return
	}
	delete(a.pending, string(msg.ID))
	row.Duration, row.BytesOut = time.Since(row.Time), int64(len(line)+1)
	switch {
	case msg.Error != nil:
		row.Outcome, row.Text = agent.OutcomeProtocolError, msg.Error.Message
	case msg.Result != nil:
		row.Conversation, _ = msg.Result.Meta[ConversationMetaKey].(string)
		if msg.Result.IsError {
			row.Outcome = agent.OutcomeToolError
			if len(msg.Result.Content) > 0 {
				row.Text = msg.Result.Content[0].Text
			}
		}
	}
	a.rec.Record(*row)
}
