// Package ollama runs Deskhand's agents on an Ollama server. [Model]
// implements the core's agent.Model, agent.ModelLister and
// agent.ModelDescriber ports over the official client,
// github.com/ollama/ollama/api, except that Chat reads /api/chat's stream
// itself (stream.go), as the client would, for speed.
//
// The client has traps this package covers:
//   - api.Client.Chat returns nil when the context is cancelled mid-stream
//     or the connection is cut; Chat here returns the context's error, or
//     [ErrStreamCut] when no done chunk arrived.
//   - No http.Client.Timeout is ever set, since it would also cut long
//     streamed replies; bound calls with a context instead.
//   - The client signs every request to ollama.com with
//     ~/.ollama/id_ed25519 and fails if that file is missing; with an API
//     key configured, requests to ollama.com carry the key instead.
//   - Ollama cuts a prompt longer than the context window silently,
//     system prompt and tools first; Chat sizes num_ctx to the prompt and
//     leaves out the oldest messages itself, and says so (window.go).
//   - Ollama turns away tools only for the model in hand; Chat refuses
//     them before sending, naming installed models that can call tools.
//
// Failures a person can act on (Ollama not running, model not installed,
// API key missing or wrong, tools for a model that cannot call them, a
// prompt too long for the model's window, Ollama refusing or failing) are
// returned as
// *agent.UserError with the client's error as Err.
package ollama

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/deskhand/deskhand/server/agent"
)

// DefaultBaseURL is where Ollama listens unless configured otherwise.
const DefaultBaseURL = "http://127.0.0.1:11434"

const defaultPort = "11434"

var (
	_ agent.Model       = (*Model)(nil)
	_ agent.ModelLister = (*Model)(nil)
	_ agent.ModelPuller = (*Model)(nil)

	_ agent.ModelDescriber = (*Model)(nil)
)

// Model talks to one Ollama server. It is safe for concurrent use.
type Model struct {
	base   *url.URL // as the user configured it; shown in messages
	client *api.Client
	// clientBase and hc are the client's address and HTTP client, for
	// chatStream, which reads /api/chat itself.
	clientBase *url.URL
	hc         *http.Client
	// chats bounds the chats streaming at once: each holds a buffer of up
	// to 8 MB (api.Client, which signed chats still go through, gives each
	// that much at once, so 200 held 1.6 GB); Ollama runs few in parallel
	// anyway (OLLAMA_NUM_PARALLEL), so the rest wait here.
	chats chan struct{}
	// ctxCap is the largest num_ctx Chat asks for.
	ctxCap int
	infos  infoCache
	now    func() time.Time
}

// DefaultMaxChats is how many chats stream at once unless WithMaxChats
// says otherwise.
const DefaultMaxChats = 8

// Option configures [New].
type Option func(*options)

type options struct {
	apiKey   string
	client   *http.Client
	maxChats int
	ctxCap   int
}

// WithContextCap bounds the context window (num_ctx) Chat asks Ollama
// for, in tokens (default DefaultContextCap; 0 or less: the default). A
// model whose own context length is smaller gets that instead. A larger
// window holds longer conversations and costs the memory its cache takes.
func WithContextCap(n int) Option {
	return func(o *options) { o.ctxCap = n }
}

// WithMaxChats bounds the chats streaming from Ollama at once (default
// DefaultMaxChats); more wait their turn.
func WithMaxChats(n int) Option {
	return func(o *options) { o.maxChats = n }
}

// WithAPIKey sends key as "Authorization: Bearer <key>" on every request,
// for an Ollama behind an authenticating proxy or ollama.com. An empty key
// sends nothing.
func WithAPIKey(key string) Option {
	return func(o *options) { o.apiKey = key }
}

// WithHTTPClient makes requests with a copy of c (its Transport, Jar and
// CheckRedirect). c's Timeout is dropped: it would cut long streamed
// replies; bound calls with a context instead. The default is
// [http.DefaultTransport]'s settings keeping more idle connections (see
// transport.go).
func WithHTTPClient(c *http.Client) Option {
	return func(o *options) { o.client = c }
}

// New returns a Model for the Ollama at baseURL, which is read as Ollama
// reads OLLAMA_HOST (see [ParseBaseURL]); New does not read the environment
// itself.
func New(baseURL string, opts ...Option) (*Model, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	base, err := ParseBaseURL(baseURL)
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Transport: transport}
	if o.client != nil {
		*hc = *o.client
	}
	hc.Timeout = 0

	clientBase := base
	if o.apiKey != "" {
		rt := hc.Transport
		if rt == nil {
			rt = http.DefaultTransport
		}
		bt := &bearerTransport{key: o.apiKey, base: rt}
		if base.Hostname() == "ollama.com" {
			// api.Client signs requests to the host "ollama.com" with the
			// local key file and fails without it. Hand it the same host
			// spelt with a trailing dot and map it back on the way out.
			alias := *base
			alias.Host = net.JoinHostPort("ollama.com.", base.Port())
			bt.alias, bt.real = alias.Host, base.Host
			clientBase = &alias
		}
		hc.Transport = bt
	}
	if o.maxChats <= 0 {
		o.maxChats = DefaultMaxChats
	}
	if o.ctxCap <= 0 {
		o.ctxCap = DefaultContextCap
	}
	return &Model{
		base:       base,
		client:     api.NewClient(clientBase, hc),
		clientBase: clientBase,
		hc:         hc,
		chats:      make(chan struct{}, o.maxChats),
		ctxCap:     o.ctxCap,
		now:        time.Now,
	}, nil
}

// BaseURL is the server's address as New understood it, for example
// "http://127.0.0.1:11434".
func (m *Model) BaseURL() string { return m.base.String() }

// ParseBaseURL reads an Ollama address the way Ollama reads OLLAMA_HOST:
//
//	""                     → http://127.0.0.1:11434
//	"0.0.0.0"              → http://0.0.0.0:11434
//	"localhost:8080"       → http://localhost:8080
//	"http://example.com"   → http://example.com:80
//	"https://example.com"  → https://example.com:443
//	"example.com:1234/p"   → http://example.com:1234/p
//	"ollama.com"           → https://ollama.com:443
//	"[::1]:11434", "::1"   → http://[::1]:11434
//
// Unlike Ollama, which falls back to defaults with a logged warning, it
// rejects schemes other than http and https and ports outside 1–65535.
func ParseBaseURL(s string) (*url.URL, error) {
	s = strings.TrimSpace(s)
	port := defaultPort
	scheme, hostport, ok := strings.Cut(s, "://")
	scheme = strings.ToLower(scheme)
	switch {
	case !ok:
		scheme, hostport = "http", s
		if s == "ollama.com" {
			scheme, hostport = "https", "ollama.com:443"
		}
	case scheme == "http":
		port = "80"
	case scheme == "https":
		port = "443"
	default:
		return nil, fmt.Errorf("ollama address %q: the scheme must be http or https", s)
	}

	hostport, path, _ := strings.Cut(hostport, "/")
	host, p, err := net.SplitHostPort(hostport)
	if err == nil {
		port = p
	} else {
		host = strings.Trim(hostport, "[]")
		if ip := net.ParseIP(host); ip != nil {
			host = ip.String()
		}
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return nil, fmt.Errorf("ollama address %q: the port must be a number from 1 to 65535", s)
	}
	raw := scheme + "://" + net.JoinHostPort(host, port)
	if path = strings.Trim(path, "/"); path != "" {
		raw += "/" + path
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("ollama address %q: %w", s, err)
	}
	return u, nil
}

// bearerTransport adds the API key to each request.
type bearerTransport struct {
	key  string
	base http.RoundTripper
	// alias, when set, is a host name to send to real instead.
	alias, real string
}

func (t *bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r2 := r.Clone(r.Context())
	r2.Header.Set("Authorization", "Bearer "+t.key)
	if t.alias != "" && r2.URL.Host == t.alias {
		r2.URL.Host, r2.Host = t.real, ""
	}
	return t.base.RoundTrip(r2)
}

// ListModels returns the names of the installed models, in the order Ollama
// lists them (GET /api/tags).
func (m *Model) ListModels(ctx context.Context) ([]string, error) {
	lr, err := m.client.List(ctx)
	if err != nil {
		return nil, m.userError(ctx, err, "")
	}
	m.infos.sawModels(lr)
	names := make([]string, 0, len(lr.Models))
	for _, mr := range lr.Models {
		names = append(names, mr.Name)
	}
	return names, nil
}

// PullModel downloads a model, reporting progress as it goes. Like Chat it
// checks what api.Client does not: a cancelled or cut pull is an error.
func (m *Model) PullModel(ctx context.Context, name string, progress func(agent.PullProgress)) error {
	done := false
	err := m.client.Pull(ctx, &api.PullRequest{Model: name}, func(p api.ProgressResponse) error {
		done = done || p.Status == "success"
		if progress != nil {
			progress(agent.PullProgress{Status: p.Status, Completed: p.Completed, Total: p.Total})
		}
		return nil
	})
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err == nil && done {
		m.infos.clear() // the pull may have replaced a model
	}
	if err == nil && !done {
		err = agent.Userf(ErrStreamCut, "the download of %q from Ollama at %s stopped before it finished", name, m.BaseURL())
	}
	var ue *agent.UserError
	switch {
	case err == nil, ctx.Err() != nil, errors.As(err, &ue):
	case isDialError(err):
		err = m.userError(ctx, err, "")
	default:
		err = agent.Userf(err, "Ollama could not pull %q: %s", name, err)
	}
	return err
}

// Version returns the server's version, for example "0.17.4".
func (m *Model) Version(ctx context.Context) (string, error) {
	v, err := m.client.Version(ctx)
	if err != nil {
		return "", m.userError(ctx, err, "")
	}
	return v, nil
}

// Ping checks that Ollama answers (HEAD /). When it does not, the error is
// the same *agent.UserError that Chat returns ("Ollama is not running at …").
func (m *Model) Ping(ctx context.Context) error {
	if err := m.client.Heartbeat(ctx); err != nil {
		return m.userError(ctx, err, "")
	}
	return nil
}

// ErrStreamCut is the Err of the *agent.UserError Chat returns when the
// reply stream ended without its final (done) chunk.
var ErrStreamCut = errors.New("ollama: the chat stream ended without a done chunk")

// userError turns an error of the client into one a person can act on.
// model is the requested model for Chat, "" for other calls.
func (m *Model) userError(ctx context.Context, err error, model string) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ae api.AuthorizationError
	if errors.As(err, &ae) {
		return agent.Userf(err, "Ollama at %s did not accept the request: the API key is missing or wrong — set it in Settings", m.base)
	}
	var se api.StatusError
	if errors.As(err, &se) {
		msg := se.ErrorMessage
		if msg == "" {
			msg = se.Status
		}
		switch {
		case se.StatusCode == http.StatusUnauthorized:
			return agent.Userf(err, "Ollama at %s did not accept the request: the API key is missing or wrong — set it in Settings", m.base)
		case se.StatusCode == http.StatusNotFound && model != "" && strings.Contains(msg, "model"):
			return agent.Userf(err, "model '%s' is not installed — pull it with 'ollama pull %s'", model, model)
		default:
			return agent.Userf(err, "Ollama refused the request: %s", msg)
		}
	}
	if isDialError(err) {
		return agent.Userf(err, "Ollama is not running at %s — start it or change the host in Settings", m.base)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		// The client signs requests (OLLAMA_AUTH set, or the host
		// ollama.com without an API key) with a key file it cannot read.
		return agent.Userf(err, "could not sign the request to Ollama at %s: %s cannot be read — run 'ollama signin' or set an API key in Settings", m.base, pe.Path)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return agent.Userf(err, "could not talk to Ollama at %s — check the host in Settings", m.base)
	}
	if model != "" {
		return agent.Userf(err, "Ollama failed while answering: %s", shorten(err.Error()))
	}
	return agent.Userf(err, "Ollama at %s gave an answer Deskhand does not understand", m.base)
}

func isDialError(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	return strings.Contains(err.Error(), "connection refused")
}

// shorten bounds a message taken from the server (which may be a whole
// HTML page when the address is not an Ollama).
func shorten(s string) string {
	const max = 300
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}
