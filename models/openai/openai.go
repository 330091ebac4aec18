// Package openai runs Deskhand's agents on OpenAI's Chat Completions API
// and on the servers that copy it: LM Studio (http://127.0.0.1:1234/v1),
// llama.cpp's server (:8080/v1), vLLM (:8000/v1), LiteLLM, OpenRouter and
// Ollama's /v1. [Model] implements the core's agent.Model,
// agent.ModelLister and agent.ModelDescriber ports over the official SDK,
// github.com/openai/openai-go/v3.
//
// Two provider kinds use it ([WithKind]): [KindOpenAI], api.openai.com with
// a key, and [KindCompatible], any base URL with a key or none. The kind
// and an optional display name ([WithName]) only change what is said to a
// person ("OpenAI" or "LM Studio at http://…") and what DescribeModel
// knows.
//
// Chat streams (SSE) with stream_options.include_usage for the token
// counts, sends tools as function tools and a response schema as
// response_format {"type":"json_schema"} (strict when the schema allows
// it). What the SDK leaves to its callers, this package covers:
//
//   - The SDK's NewClient reads OPENAI_API_KEY, OPENAI_BASE_URL,
//     OPENAI_ORG_ID and more from the environment, and would send a key
//     meant for OpenAI to a local server; the services are built here
//     without it, from the options alone.
//   - Chat makes the request as NewStreaming does (through the SDK, with
//     "stream": true) and reads it with the SDK's SSE decoder, but decodes
//     each chunk into the few fields it uses and puts tool calls together
//     by index itself: the SDK's chunk decoder and accumulator cost more
//     per token than the server's own work, and the compatible servers
//     number tool calls in their own ways (-1, or 0 for every call).
//   - A stream that ends without a finish_reason (the server died or the
//     connection was cut) ends without an error in the SDK; Chat returns
//     [ErrStreamCut] and nothing of the half answer.
//   - Error bodies that are not OpenAI's shape (LM Studio's
//     {"error":"…"}, vLLM's top-level {"object":"error","message":…})
//     lose their status in the SDK; the response is read here before the
//     SDK sees it, so every refusal is mapped from its status and text.
//   - A server that refuses stream_options (Mistral, some proxies) gets
//     the call again without it, once per Model, and reports no usage;
//     a server that refuses tools or the JSON schema is an error that
//     names the capability ([ErrToolsUnsupported],
//     [ErrStructuredOutputUnsupported]): the schema is never dropped.
//   - The SDK retries a 429, 408, 409, 5xx or lost connection once here
//     (not twice), honouring Retry-After up to [DefaultMaxRetryWait];
//     after that the error says how long the provider asked to wait.
//   - No http.Client.Timeout is ever set, since it would also cut long
//     streamed replies; bound calls with a context instead.
//
// Failures a person can act on are returned as *agent.UserError whose Err
// wraps one of this package's sentinel errors and an [*HTTPError] (or the
// transport's error). Secrets never appear in them: the key is scrubbed
// from anything a server says.
package openai

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/deskhand/deskhand/server/agent"
)

// Kind is the kind of provider a Model talks to.
type Kind string

const (
	// KindOpenAI is OpenAI's own API (api.openai.com); it needs a key.
	KindOpenAI Kind = "openai"
	// KindCompatible is any server that speaks OpenAI's Chat Completions
	// API at a base URL; the key is optional.
	KindCompatible Kind = "openai-compatible"
)

// DefaultBaseURL is OpenAI's API.
const DefaultBaseURL = "https://api.openai.com/v1"

// DefaultMaxRetryWait is the longest Retry-After the one automatic retry
// waits for; a provider asking for more gets no retry, and the error says
// how long it asked for.
const DefaultMaxRetryWait = 20 * time.Second

var (
	_ agent.Model          = (*Model)(nil)
	_ agent.ModelLister    = (*Model)(nil)
	_ agent.ModelDescriber = (*Model)(nil)
)

// Model talks to one OpenAI or OpenAI-compatible server. It is safe for
// concurrent use.
type Model struct {
	kind   Kind
	name   string   // display name, for example "LM Studio"; "" for the default
	base   *url.URL // as understood; shown (without user info) in messages
	apiKey string
	http   *http.Client // for LM Studio's native listings
	chat   openai.ChatCompletionService
	models openai.ModelService
	// noStreamOptions is set once the server refused stream_options.
	noStreamOptions atomic.Bool
}

// Option configures [New].
type Option func(*options)

type options struct {
	kind         Kind
	name         string
	apiKey       string
	client       *http.Client
	maxRetryWait time.Duration
}

// WithKind says what the server is (default [KindCompatible], or
// [KindOpenAI] when the base URL is empty).
func WithKind(k Kind) Option {
	return func(o *options) { o.kind = k }
}

// WithName names the server in messages, for example "LM Studio" or
// "vLLM" when it was found at that server's usual address ("LM Studio at
// http://127.0.0.1:1234/v1 …"). By default a compatible server is "the
// OpenAI-compatible server at URL" and OpenAI is "OpenAI".
func WithName(name string) Option {
	return func(o *options) { o.name = strings.TrimSpace(name) }
}

// WithAPIKey sends key as "Authorization: Bearer <key>". An empty key sends
// no Authorization header (and no key from the environment either).
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

// WithMaxRetryWait sets the longest Retry-After the one automatic retry
// waits for (default [DefaultMaxRetryWait]).
func WithMaxRetryWait(d time.Duration) Option {
	return func(o *options) { o.maxRetryWait = d }
}

// New returns a Model for the server at baseURL (see [ParseBaseURL]); an
// empty baseURL with no kind given means OpenAI's API.
func New(baseURL string, opts ...Option) (*Model, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.kind == "" {
		o.kind = KindCompatible
		if strings.TrimSpace(baseURL) == "" {
			o.kind = KindOpenAI
		}
	}
	switch o.kind {
	case KindOpenAI:
		if strings.TrimSpace(baseURL) == "" {
			baseURL = DefaultBaseURL
		}
	case KindCompatible:
		if strings.TrimSpace(baseURL) == "" {
			return nil, errors.New("openai: an OpenAI-compatible server needs a base URL, for example http://127.0.0.1:1234/v1")
		}
	default:
		return nil, fmt.Errorf("openai: unknown provider kind %q (want %q or %q)", o.kind, KindOpenAI, KindCompatible)
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
	if o.maxRetryWait <= 0 {
		o.maxRetryWait = DefaultMaxRetryWait
	}

	m := &Model{kind: o.kind, name: o.name, base: base, apiKey: o.apiKey, http: hc}
	// The services, unlike openai.NewClient, read nothing from the
	// environment: everything they send comes from these options.
	sdk := []option.RequestOption{
		option.WithBaseURL(base.String()),
		option.WithHTTPClient(hc),
		option.WithAPIKey(o.apiKey),
		option.WithMaxRetries(1),
		option.WithMaxRetryDelay(o.maxRetryWait),
		option.WithMiddleware(recordFailure),
	}
	m.chat = openai.NewChatCompletionService(sdk...)
	m.models = openai.NewModelService(sdk...)
	return m, nil
}

// ParseBaseURL reads a server's base URL: "http://127.0.0.1:1234/v1",
// "localhost:8080/v1" (http is assumed), "https://openrouter.ai/api/v1". A
// URL with no path gets "/v1", where every server named in the package
// documentation serves the API; a trailing slash is dropped. Only http and
// https are accepted.
func ParseBaseURL(s string) (*url.URL, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("openai: the base URL is empty")
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("openai: base URL %q: %w", s, err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("openai: base URL %q: the scheme must be http or https", s)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("openai: base URL %q has no host", s)
	}
	if p := u.Port(); p != "" {
		var n int
		if _, err := fmt.Sscan(p, &n); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("openai: base URL %q: the port must be a number from 1 to 65535", s)
		}
	}
	u.Path = strings.TrimRight(u.Path, "/")
	if u.Path == "" {
		u.Path = "/v1"
	}
	u.RawPath, u.RawQuery, u.Fragment = "", "", ""
	return u, nil
}

// BaseURL is the server's base URL as New understood it (without any user
// info), for example "http://127.0.0.1:1234/v1".
func (m *Model) BaseURL() string { return redacted(m.base) }

// Kind is the kind of provider the Model talks to.
func (m *Model) Kind() Kind { return m.kind }

func redacted(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}

// who names the server in messages: "OpenAI", "LM Studio at URL" or "the
// OpenAI-compatible server at URL".
func (m *Model) who() string {
	switch {
	case m.kind == KindOpenAI && m.base.Host == "api.openai.com":
		return cmp.Or(m.name, "OpenAI")
	case m.name != "":
		return m.name + " at " + m.BaseURL()
	case m.kind == KindOpenAI:
		return "OpenAI at " + m.BaseURL()
	default:
		return "the OpenAI-compatible server at " + m.BaseURL()
	}
}

// Who is how messages name the server, capitalised to start a sentence.
func (m *Model) Who() string { return capitalize(m.who()) }

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// missingKey is the error for OpenAI without a key, before any request.
func (m *Model) missingKey() error {
	if m.kind == KindOpenAI && m.apiKey == "" {
		return &agent.UserError{
			Msg: capitalize(m.who()) + " needs an API key: add it to this provider in Settings → Models (or 'deskhand provider add NAME --kind openai --key-stdin')",
			Err: ErrUnauthorized,
		}
	}
	return nil
}

// ListModels returns the ids the server lists at GET /models, in its
// order.
func (m *Model) ListModels(ctx context.Context) ([]string, error) {
	if err := m.missingKey(); err != nil {
		return nil, err
	}
	ctx, fail := withFailure(ctx)
	page, err := m.models.List(ctx, option.WithMaxRetries(0))
	if err != nil {
		return nil, m.userError(ctx, err, fail, request{})
	}
	names := make([]string, 0, len(page.Data))
	for _, mo := range page.Data {
		names = append(names, mo.ID)
	}
	return names, nil
}

// Ping checks that the server answers and takes the key, by listing its
// models. Its error is the one Chat would return.
func (m *Model) Ping(ctx context.Context) error {
	_, err := m.ListModels(ctx)
	return err
}
