// Package control is the running app's local control channel: HTTP over a
// Unix domain socket that only the current user can open. The command line
// uses it to reach the running app (tokens, questions, agent edits), so
// changes take effect at once. A socket file is never reachable from a
// browser, and requests that carry an Origin are refused all the same.
//
// Where the socket is, and what keeps it private, depends on the OS (see
// SocketPath). On Unix it is deskhand.sock in the data folder, created mode
// 0600. On Windows, where mode bits mean nothing, it is an AF_UNIX socket
// too (Windows 10 1803 and later), in a folder "control" of the data folder
// whose access list is set every time Deskhand listens: it admits only the
// current user, is inherited by the socket, and inherits nothing from the
// data folder (whose entries admit Administrators, and, for a --data folder
// elsewhere, maybe every user).
//
// Not a named pipe, Windows' usual local channel: a pipe's name is global,
// so another user can create it first (pipe squatting) and receive what
// the command line sends and expects back, such as a token from "token
// rotate". Another user can neither create nor change a folder inside the
// user's own data folder, nor open the socket in it; and the same net
// "unix" code serves every OS.
package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/deskhand/deskhand/server/agent"
)

// socketName is the socket's file name (SocketPath says in which folder).
const socketName = "deskhand.sock"

// Core is what the control channel needs of the core, feature by
// feature. ToolServers and Activity may be nil: their endpoints are then
// not served.
type Core struct {
	Agents interface {
		List() []agent.Agent
		Save(ctx context.Context, a agent.Agent) (agent.Agent, error)
		SetEnabled(ctx context.Context, slug string, enabled bool) error
		Delete(ctx context.Context, slug string) error
	}
	Clients interface {
		Create(ctx context.Context, name string) (agent.Client, string, error)
		Revoke(ctx context.Context, name string) error
		Rotate(ctx context.Context, name string) (agent.Client, string, error)
		List() []agent.Client
		// Which agents each client sees (visibility.go).
		SetAgents(ctx context.Context, clientName string, all bool, slugs []string) error
		Visibility(name string) (agent.Visibility, error)
		VisibleTo(principal string) agent.Visibility
	}
	Providers interface {
		List() []agent.ProviderStatus
		Save(ctx context.Context, p agent.Provider, key agent.KeyChange) (agent.Provider, error)
		Delete(ctx context.Context, name string) error
		Models(ctx context.Context, name string) ([]string, error)
	}
	Questions interface {
		Pending() []agent.Question
		Answer(id string, content map[string]any, declined bool) error
	}
	Approvals *agent.Approvals
	// Conversations finds words in every conversation (search.go).
	Conversations interface {
		Search(ctx context.Context, q agent.SearchQuery) ([]agent.SearchHit, error)
	}
	ToolServers ToolServerCore
	Activity    ActivityCore
}

// CoreOf is the control channel's view of a core.
func CoreOf(c *agent.Core) Core {
	return Core{Agents: c.Agents(), Clients: c.Clients(), Providers: c.Providers(), Questions: c.Questions(),
		Approvals: c.Approvals(), Conversations: c.Conversations(), ToolServers: c.ToolServers(),
		Activity: activityOf{c.Activity(), c.Events()}}
}

// ErrAlreadyRunning means another Deskhand answers on the socket.
var ErrAlreadyRunning = errors.New("another Deskhand is already running with this data folder")

// Server serves the control channel until Close.
type Server struct {
	ln   net.Listener
	srv  *http.Server
	done chan struct{} // closed when Serve returns
	path string

	closing   chan struct{} // closed by Close: followers of the log end
	closeOnce sync.Once
}

// Options are what the control channel tells or does beyond the core.
type Options struct {
	// URL is the MCP endpoint, for the stdio bridge.
	URL string
	// Show, when set, brings the app's window forward for a second launch.
	Show func() bool

	// closing ends the log's followers when the server closes (activity.go).
	closing <-chan struct{}
}

// Listen takes the socket at path (SocketPath of the data folder), removing
// a stale one left by a crash. It makes the socket's folder first, private
// where the OS needs the folder for that.
func Listen(path string, core Core, opts Options) (*Server, error) {
	if err := makeSocketFolder(filepath.Dir(path)); err != nil {
		return nil, err
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return nil, ErrAlreadyRunning
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove stale control socket: %w", err)
	}
	ln, err := listenPrivate(path)
	if err != nil {
		return nil, fmt.Errorf("listen on control socket %s: %w", path, err)
	}
	closing := make(chan struct{})
	opts.closing = closing
	s := &Server{ln: ln, path: path, done: make(chan struct{}), closing: closing,
		srv: &http.Server{Handler: handler(core, opts), ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = s.srv.Serve(ln); close(s.done) }() // ErrServerClosed, after Close
	return s, nil
}

// Close stops serving and removes the socket; it may be called again.
func (s *Server) Close(ctx context.Context) error {
	s.closeOnce.Do(func() { close(s.closing) })
	err := s.srv.Shutdown(ctx)
	<-s.done
	_ = os.Remove(s.path)
	return err
}

type tokenRequest struct {
	Name string `json:"name"`
}

// TokenInfo describes a client token without the token itself.
type TokenInfo struct {
	Name       string    `json:"name"`
	CreatedAt  time.Time `json:"createdAt"`
	LastUsedAt time.Time `json:"lastUsedAt,omitzero"`
	// Agents is which agents the client sees, where listed (visibility.go).
	Agents *ClientAgents `json:"agents,omitempty"`
}

type createdToken struct {
	TokenInfo
	Token string `json:"token"`
}

// Status is what the running app tells about itself.
type Status struct {
	URL        string `json:"url"`        // the MCP endpoint
	Goroutines int    `json:"goroutines"` // for leak checks under load
}

// QuestionInfo is a pending question as the command line shows it.
type QuestionInfo struct {
	ID        string          `json:"id"`
	Kind      string          `json:"kind"`
	Agent     string          `json:"agent"`
	Prompt    string          `json:"prompt"`
	Choices   []string        `json:"choices,omitempty"`
	Schema    map[string]any  `json:"schema"`
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	AskedAt   time.Time       `json:"askedAt"`
	ExpiresAt time.Time       `json:"expiresAt"`
}

type answerRequest struct {
	Content map[string]any `json:"content"`
	Decline bool           `json:"decline"`
}

func questionInfos(qs []agent.Question) []QuestionInfo {
	out := make([]QuestionInfo, 0, len(qs))
	for _, q := range qs {
		out = append(out, QuestionInfo{ID: q.ID, Kind: string(q.Kind), Agent: q.Agent, Prompt: q.Prompt(), Choices: q.Choices,
			Schema: q.Schema(), Tool: q.Tool, Arguments: q.Arguments, AskedAt: q.AskedAt, ExpiresAt: q.ExpiresAt})
	}
	return out
}

// saveProviderRequest is a provider to save and what to do with its API
// key. The key travels only here, over the private socket; this body is
// never logged, and no error repeats it.
type saveProviderRequest struct {
	Provider agent.Provider `json:"provider"`
	SetKey   bool           `json:"setKey"`
	Key      string         `json:"key,omitempty"` // with SetKey; "" removes the key
}

type problem struct {
	Error string `json:"error"`
}

func handler(core Core, opts Options) http.Handler {
	mux := http.NewServeMux()
	visibilityRoutes(mux, core)
	toolServerRoutes(mux, core)
	searchRoutes(mux, core)
	mux.HandleFunc("GET /v1/status", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, Status{URL: opts.URL, Goroutines: runtime.NumGoroutine()})
	})
	mux.HandleFunc("POST /v1/window/show", func(w http.ResponseWriter, r *http.Request) {
		if opts.Show == nil || !opts.Show() {
			reply(w, http.StatusConflict, problem{"this Deskhand runs headless: it has no window to show"})
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /v1/tokens", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, withAgents(core, core.Clients.List()))
	})
	mux.HandleFunc("POST /v1/tokens", func(w http.ResponseWriter, r *http.Request) {
		var req tokenRequest
		if !decode(w, r, 64<<10, &req, "the request body must be JSON like {\"name\": \"cursor\"}") {
			return
		}
		cl, token, err := core.Clients.Create(r.Context(), req.Name)
		if err != nil {
			replyErr(w, err)
			return
		}
		reply(w, http.StatusCreated, createdToken{TokenInfo: tokenInfo(cl), Token: token})
	})
	mux.HandleFunc("POST /v1/tokens/{name}/rotate", func(w http.ResponseWriter, r *http.Request) {
		cl, token, err := core.Clients.Rotate(r.Context(), r.PathValue("name"))
		if err != nil {
			replyErr(w, err)
			return
		}
		reply(w, http.StatusOK, createdToken{TokenInfo: tokenInfo(cl), Token: token})
	})
	mux.HandleFunc("DELETE /v1/tokens/{name}", func(w http.ResponseWriter, r *http.Request) {
		noContent(w, core.Clients.Revoke(r.Context(), r.PathValue("name")))
	})
	mux.HandleFunc("GET /v1/agents", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, core.Agents.List())
	})
	mux.HandleFunc("PUT /v1/agents", func(w http.ResponseWriter, r *http.Request) {
		var a agent.Agent
		if !decode(w, r, 1<<20, &a, "the request body must be an agent as JSON") {
			return
		}
		saved, err := core.Agents.Save(r.Context(), a)
		if err != nil {
			replyErr(w, err)
			return
		}
		reply(w, http.StatusOK, saved)
	})
	mux.HandleFunc("POST /v1/agents/{slug}/enabled", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Enabled bool `json:"enabled"`
		}
		if !decode(w, r, 64<<10, &req, "the request body must be JSON like {\"enabled\": true}") {
			return
		}
		noContent(w, core.Agents.SetEnabled(r.Context(), r.PathValue("slug"), req.Enabled))
	})
	mux.HandleFunc("DELETE /v1/agents/{slug}", func(w http.ResponseWriter, r *http.Request) {
		noContent(w, core.Agents.Delete(r.Context(), r.PathValue("slug")))
	})
	mux.HandleFunc("GET /v1/providers", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, core.Providers.List())
	})
	mux.HandleFunc("PUT /v1/providers", func(w http.ResponseWriter, r *http.Request) {
		var req saveProviderRequest
		// The decoder's own error could quote the body (the key): it is
		// never passed on, only what the body must be.
		if !decode(w, r, 64<<10, &req, "the request body must be JSON like {\"provider\": {\"Name\": \"claude\", \"Kind\": \"anthropic\"}, \"setKey\": true, \"key\": \"…\"}") {
			return
		}
		saved, err := core.Providers.Save(r.Context(), req.Provider, agent.KeyChange{Set: req.SetKey, Key: req.Key})
		if err != nil {
			replyErr(w, err)
			return
		}
		reply(w, http.StatusOK, saved)
	})
	mux.HandleFunc("DELETE /v1/providers/{name}", func(w http.ResponseWriter, r *http.Request) {
		noContent(w, core.Providers.Delete(r.Context(), r.PathValue("name")))
	})
	mux.HandleFunc("GET /v1/providers/{name}/models", func(w http.ResponseWriter, r *http.Request) {
		models, err := core.Providers.Models(r.Context(), r.PathValue("name"))
		if err != nil {
			replyErr(w, err)
			return
		}
		reply(w, http.StatusOK, append([]string{}, models...))
	})
	mux.HandleFunc("GET /v1/questions", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, questionInfos(core.Questions.Pending()))
	})
	mux.HandleFunc("POST /v1/questions/{id}/answer", func(w http.ResponseWriter, r *http.Request) {
		var req answerRequest
		if !decode(w, r, 1<<20, &req, "the request body must be JSON like {\"content\": {\"answer\": \"yes\"}} or {\"decline\": true}") {
			return
		}
		noContent(w, core.Questions.Answer(r.PathValue("id"), req.Content, req.Decline))
	})
	mux.HandleFunc("GET /v1/approval-rules", func(w http.ResponseWriter, r *http.Request) {
		rules, err := core.Approvals.Rules(r.Context())
		if err != nil {
			replyErr(w, err)
			return
		}
		reply(w, http.StatusOK, RuleInfos(rules, core.Agents.List(), core.Clients.List()))
	})
	mux.HandleFunc("DELETE /v1/approval-rules/{id}", func(w http.ResponseWriter, r *http.Request) {
		noContent(w, core.Approvals.Revoke(r.Context(), r.PathValue("id")))
	})
	mux.HandleFunc("POST /v1/approval-rules/{id}/enable", func(w http.ResponseWriter, r *http.Request) {
		noContent(w, core.Approvals.Enable(r.Context(), r.PathValue("id")))
	})
	activityRoutes(mux, core, opts.closing) // the activity log (activity.go)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") != "" {
			http.Error(w, "Forbidden", http.StatusForbidden)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// decode reads a JSON body of at most limit bytes into v; when it cannot,
// it answers 400 saying what the body must be, and returns false.
func decode(w http.ResponseWriter, r *http.Request, limit int64, v any, must string) bool {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit)).Decode(v); err != nil {
		reply(w, http.StatusBadRequest, problem{must})
		return false
	}
	return true
}

// noContent answers a request that returns nothing: 204, or err.
func noContent(w http.ResponseWriter, err error) {
	if err != nil {
		replyErr(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func tokenInfo(c agent.Client) TokenInfo {
	return TokenInfo{Name: c.Name, CreatedAt: c.CreatedAt, LastUsedAt: c.LastUsedAt}
}

func tokenInfos(cs []agent.Client) []TokenInfo {
	out := make([]TokenInfo, 0, len(cs))
	for _, c := range cs {
		out = append(out, tokenInfo(c))
	}
	return out
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func replyErr(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	var ue *agent.UserError
	switch {
	case errors.Is(err, agent.ErrNotFound):
		status = http.StatusNotFound
	case errors.As(err, &ue):
		status = http.StatusBadRequest
	}
	reply(w, status, problem{agent.UserMessage(err)})
}
