// Package anthropic runs Deskhand's agents on Anthropic's Messages API
// (provider kind [Kind]). [Model] implements the core's agent.Model,
// agent.ModelLister and agent.ModelDescriber ports over the official SDK,
// github.com/anthropics/anthropic-sdk-go/v2 (v2.15.0, API version
// 2026-10-21, which the SDK sends as anthropic-version).
//
// How the core's conversation maps onto a request (messages.go):
//   - system messages go to the top-level "system" parameter, one text
//     block each, never into "messages";
//   - an assistant's tool calls become tool_use blocks, and the tool
//     messages answering them become ONE user message of tool_result
//     blocks, in the order of the calls (a call a past turn left
//     unanswered gets a tool_result marked as an error, since the API
//     refuses a tool_use without its result in the next message);
//   - "max_tokens", which the API requires, is [DefaultMaxTokens] unless
//     [WithMaxTokens] says otherwise;
//   - a response schema (ChatRequest.Format) is sent as Anthropic's
//     structured output, output_config.format {"type":"json_schema"},
//     which the SDK v2.15 has; no forced "respond" tool is used, and the
//     reply's text is the JSON answer (schema.go says why and how the
//     schema is adapted).
//
// Replies are streamed (POST /v1/messages with "stream": true, made by the
// SDK's client, framed by its ssestream; each event is decoded into a small
// struct of the fields read, stream.go): text and thinking deltas reach
// onDelta as they arrive, tool_use input is put together from its
// input_json_delta pieces, and usage and the stop reason come with
// message_delta. A stream that ends without message_stop is an error
// ([ErrStreamCut]), never a short answer.
//
// The SDK has traps this package covers:
//   - NewClient reads ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, profiles and
//     more from the environment and the home folder; New turns that off,
//     so only what Deskhand configured is used.
//   - The SDK sends an API key given with option.WithAPIKey as
//     "Authorization: Bearer"; New sends it as "x-api-key" instead, the
//     header Anthropic's API reference documents (and the one
//     Anthropic-compatible gateways accept).
//   - The SDK retries 408, 409, 429 and 5xx answers (twice by default) and
//     waits as long as their retry-after says, however long that is; here
//     a retry-after over [MaxRetryWait] ends the call at once, so that a
//     person is told to try later rather than kept waiting.
//   - No http.Client.Timeout is ever set, since it would also cut long
//     streamed replies; bound calls with a context instead.
//
// Failures a person can act on (key missing or wrong, unknown model, rate
// limit, overload, a conversation too long for the model, Anthropic
// unreachable) are returned as *agent.UserError with the SDK's error as
// Err (an *anthropic.Error of the SDK for answers of the API).
package anthropic

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/deskhand/deskhand/server/agent"
)

// Kind is the provider kind of this adapter in Deskhand's settings.
const Kind = "anthropic"

// DefaultBaseURL is Anthropic's API.
const DefaultBaseURL = "https://api.anthropic.com"

// DefaultMaxTokens bounds each reply unless [WithMaxTokens] says
// otherwise. The API requires a bound; every current Claude model allows
// at least this many output tokens.
const DefaultMaxTokens = 8192

// DefaultMaxRetries is how often a failed request is retried unless
// [WithMaxRetries] says otherwise (the SDK's own default).
const DefaultMaxRetries = 2

// MaxRetryWait is the longest retry-after the SDK is left to wait out
// before retrying; an answer asking for a longer wait ends the call.
const MaxRetryWait = 10 * time.Second

var (
	_ agent.Model          = (*Model)(nil)
	_ agent.ModelLister    = (*Model)(nil)
	_ agent.ModelDescriber = (*Model)(nil)
)

// Errors in the Err chain of the *agent.UserError that Chat returns, for
// callers that branch on them.
var (
	// ErrNoAPIKey: New was given no API key.
	ErrNoAPIKey = errors.New("anthropic: no API key")
	// ErrStreamCut: the reply stream ended without message_stop.
	ErrStreamCut = errors.New("anthropic: the reply stream ended without message_stop")
	// ErrPromptTooLong: the request did not fit the model's context window
	// (it wraps the SDK's error too).
	ErrPromptTooLong = errors.New("anthropic: prompt is too long")
	// ErrRefused: the model declined to answer (stop_reason "refusal").
	ErrRefused = errors.New("anthropic: the model refused to answer")
	// ErrTruncated: the reply hit max_tokens (or the context window) in
	// the middle of a tool call or of a structured answer.
	ErrTruncated = errors.New("anthropic: the reply was cut at its token limit")
)

// Model talks to Anthropic's API with one API key. It is safe for
// concurrent use.
type Model struct {
	base      *url.URL // as configured; shown in messages
	client    sdk.Client
	maxTokens int64
}

// Option configures [New].
type Option func(*options)

type options struct {
	client     *http.Client
	maxTokens  int
	maxRetries int
}

// WithHTTPClient makes requests with a copy of c (its Transport, Jar and
// CheckRedirect). c's Timeout is dropped: it would cut long streamed
// replies; bound calls with a context instead. The default is a clone of
// http.DefaultTransport that waits at most 10 minutes for response
// headers, as the SDK's own default does, and keeps an idle connection
// for each of up to [maxIdlePerHost] chats at once (the default keeps 2,
// so that concurrent chats opened a connection each).
func WithHTTPClient(c *http.Client) Option {
	return func(o *options) { o.client = c }
}

// WithMaxTokens sets "max_tokens", the bound on each reply (thinking
// included) that the API requires; n <= 0 means [DefaultMaxTokens].
func WithMaxTokens(n int) Option {
	return func(o *options) { o.maxTokens = n }
}

// WithMaxRetries sets how often a request that failed in a way worth
// retrying (a connection error, 408, 409, 429, 5xx, 529 overloaded) is
// retried; n < 0 means [DefaultMaxRetries], 0 none.
func WithMaxRetries(n int) Option {
	return func(o *options) { o.maxRetries = n }
}

// New returns a Model for the API at baseURL ("" means [DefaultBaseURL];
// see [ParseBaseURL]) with the API key apiKey, which is required.
func New(baseURL, apiKey string, opts ...Option) (*Model, error) {
	o := options{maxRetries: DefaultMaxRetries}
	for _, opt := range opts {
		opt(&o)
	}
	base, err := ParseBaseURL(baseURL)
	if err != nil {
		return nil, err
	}
	apiKey = strings.TrimSpace(apiKey)
	if apiKey == "" {
		return nil, &agent.UserError{Msg: "an Anthropic API key is required — set it in Settings", Err: ErrNoAPIKey}
	}
	if o.maxTokens <= 0 {
		o.maxTokens = DefaultMaxTokens
	}
	if o.maxRetries < 0 {
		o.maxRetries = DefaultMaxRetries
	}
	hc := &http.Client{}
	if o.client != nil {
		*hc = *o.client
	} else if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t = t.Clone()
		t.ResponseHeaderTimeout = 10 * time.Minute
		t.MaxIdleConnsPerHost = maxIdlePerHost
		hc.Transport = t
	}
	hc.Timeout = 0
	client := sdk.NewClient(
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(base.String()),
		option.WithHeader("X-Api-Key", apiKey),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(o.maxRetries),
		option.WithMiddleware(capRetryWait),
	)
	return &Model{base: base, client: client, maxTokens: int64(o.maxTokens)}, nil
}

// BaseURL is the API's address as New understood it, for example
// "https://api.anthropic.com".
func (m *Model) BaseURL() string { return m.base.String() }

// ParseBaseURL reads the configured address of the API:
//
//	""                                → https://api.anthropic.com
//	"api.anthropic.com"               → https://api.anthropic.com
//	"https://gateway.example/anthropic/" → https://gateway.example/anthropic
//	"http://127.0.0.1:8080"           → http://127.0.0.1:8080
//
// The path, if any, is kept (requests go to <base>/v1/messages); the
// scheme must be http or https and there may be no query or fragment.
func ParseBaseURL(s string) (*url.URL, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		s = DefaultBaseURL
	}
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("anthropic address %q: %w", s, err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("anthropic address %q: the scheme must be http or https", s)
	case u.Host == "" || u.Hostname() == "":
		return nil, fmt.Errorf("anthropic address %q: there is no host", s)
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return nil, fmt.Errorf("anthropic address %q: no query, fragment or user name may follow the host and path", s)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("anthropic address %q: the port must be a number from 1 to 65535", s)
		}
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// ListModels returns the IDs of the models the API key may use, in the
// order the API lists them (most recently released first), all pages of
// GET /v1/models.
func (m *Model) ListModels(ctx context.Context) ([]string, error) {
	pager := m.client.Models.ListAutoPaging(ctx, sdk.ModelListParams{Limit: sdk.Int(1000)})
	names := []string{}
	for pager.Next() {
		names = append(names, pager.Current().ID)
	}
	if err := pager.Err(); err != nil {
		return nil, m.userError(ctx, err, "")
	}
	return names, nil
}

// DescribeModel says what the model can do, from GET /v1/models/{name}:
// tools yes for Claude models (IDs starting "claude-"); structured output
// as the API's capabilities.structured_outputs says, or yes for a Claude
// model when it says nothing (Chat sends output_config.format); the
// context window is max_input_tokens, 0 when not reported. Name is the
// model's ID, to which the API resolves an alias.
func (m *Model) DescribeModel(ctx context.Context, name string) (agent.ModelInfo, error) {
	if strings.TrimSpace(name) == "" {
		return agent.ModelInfo{}, errNoModel
	}
	info, err := m.client.Models.Get(ctx, name, sdk.ModelGetParams{})
	if err != nil {
		return agent.ModelInfo{}, m.userError(ctx, err, name)
	}
	out := agent.ModelInfo{Name: info.ID}
	if out.Name == "" {
		out.Name = name
	}
	claude := strings.HasPrefix(out.Name, "claude-")
	if claude {
		out.Tools, out.StructuredOutput = agent.CapabilityYes, agent.CapabilityYes
	}
	if so := info.Capabilities.StructuredOutputs; so.JSON.Supported.Valid() {
		out.StructuredOutput = agent.CapabilityNo
		if so.Supported {
			out.StructuredOutput = agent.CapabilityYes
		}
	}
	if info.JSON.MaxInputTokens.Valid() && info.MaxInputTokens > 0 && info.MaxInputTokens <= math.MaxInt32 {
		out.ContextLength = int(info.MaxInputTokens)
	}
	return out, nil
}

var errNoModel = &agent.UserError{Msg: "no Anthropic model is chosen — choose one in the agent's settings", Err: errors.New("anthropic: empty model name")}

// capRetryWait is a middleware that stops the SDK from retrying an answer
// whose retry-after asks for more than MaxRetryWait (the SDK would wait it
// out, however long): it marks the answer "x-should-retry: false", which
// the SDK obeys.
func capRetryWait(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if err == nil && res != nil && res.StatusCode >= 400 {
		if d, ok := retryAfter(res.Header); ok && d > MaxRetryWait {
			res.Header.Set("X-Should-Retry", "false")
		}
	}
	return res, err
}

// retryAfter reads retry-after-ms or retry-after (seconds or an HTTP
// date), as the SDK does.
func retryAfter(h http.Header) (time.Duration, bool) {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, time.Until(t)), true
	}
	return 0, false
}

// msgStreamCut is the message for a reply stream that broke off.
const msgStreamCut = "Anthropic's answer broke off before its end (was the connection cut?); nothing of that answer was kept, so call again"

// promptTooLong matches the message of the 400 the API answers for a
// request that does not fit the context window.
var promptTooLong = regexp.MustCompile(`prompt is too long: (\d+) tokens > (\d+) maximum`)

// userError turns an error of the SDK into one a person can act on. model
// is the requested model for Chat and DescribeModel, "" for ListModels.
func (m *Model) userError(ctx context.Context, err error, model string) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ue *agent.UserError
	if errors.As(err, &ue) {
		return err
	}
	var ae *sdk.Error
	if errors.As(err, &ae) {
		return m.apiError(ae, model)
	}
	switch {
	case isDialError(err):
		return agent.Userf(err, "could not reach Anthropic at %s — check the network connection or the base URL in Settings", m.base)
	case isCut(err):
		return &agent.UserError{Msg: msgStreamCut, Err: fmt.Errorf("%w: %w", ErrStreamCut, err)}
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return agent.Userf(err, "could not talk to Anthropic at %s — check the base URL in Settings", m.base)
	}
	return agent.Userf(err, "Anthropic at %s gave an answer Deskhand does not understand", m.base)
}

// apiError words an error answer of the API, by its error type (which a
// mid-stream "error" event carries too, with the stream's status 200) and
// else by its HTTP status.
func (m *Model) apiError(ae *sdk.Error, model string) error {
	msg := shorten(ae.Message)
	if msg == "" {
		msg = http.StatusText(ae.StatusCode)
	}
	kind := ae.Type()
	status := ae.StatusCode
	switch {
	case kind == sdk.ErrorTypeAuthenticationError || kind == "" && status == http.StatusUnauthorized:
		return agent.Userf(ae, "Anthropic did not accept the API key (%s) — check it in Settings", msg)
	case kind == sdk.ErrorTypePermissionError || kind == "" && status == http.StatusForbidden:
		return agent.Userf(ae, "Anthropic does not let this API key do that: %s", msg)
	case kind == sdk.ErrorTypeNotFoundError || kind == "" && status == http.StatusNotFound:
		if model == "" {
			return agent.Userf(ae, "Anthropic at %s answered \"not found\" (%s) — check the base URL in Settings", m.base, msg)
		}
		return agent.Userf(ae, "Anthropic has no model '%s' that this API key may use — choose another in the agent's settings (%s)", model, msg)
	case kind == sdk.ErrorTypeRateLimitError || kind == "" && status == http.StatusTooManyRequests:
		if d, ok := retryHeader(ae); ok {
			return agent.Userf(ae, "Anthropic's rate limit for this API key was reached; try again in %s (%s)", roundUp(d), msg)
		}
		return agent.Userf(ae, "Anthropic's rate limit for this API key was reached; try again in a minute (%s)", msg)
	case kind == sdk.ErrorTypeOverloadedError || kind == "" && status == 529:
		return agent.Userf(ae, "Anthropic is overloaded right now; try again in a few minutes")
	case kind == sdk.ErrorTypeInvalidRequestError && promptTooLong.MatchString(ae.Message):
		sub := promptTooLong.FindStringSubmatch(ae.Message)
		what := "this model"
		if model != "" {
			what = "'" + model + "'"
		}
		return agent.Userf(fmt.Errorf("%w: %w", ErrPromptTooLong, ae),
			"the conversation is too long for %s (%s tokens, at most %s): start a new conversation, or choose a model with a larger context window", what, sub[1], sub[2])
	case kind == sdk.ErrorTypeAPIError || kind == sdk.ErrorTypeTimeoutError || status >= 500:
		return agent.Userf(ae, "Anthropic failed while answering: %s", msg)
	}
	return agent.Userf(ae, "Anthropic refused the request: %s", msg)
}

// retryHeader is the wait an error answer asks for.
func retryHeader(ae *sdk.Error) (time.Duration, bool) {
	if ae.Response == nil {
		return 0, false
	}
	return retryAfter(ae.Response.Header)
}

// roundUp words d in whole seconds (at least one).
func roundUp(d time.Duration) string {
	s := int64(math.Ceil(d.Seconds()))
	if s < 1 {
		s = 1
	}
	if s == 1 {
		return "1 second"
	}
	return fmt.Sprintf("%d seconds", s)
}

func isDialError(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns) || strings.Contains(err.Error(), "connection refused")
}

// isCut reports whether err is a connection that broke off mid-answer.
func isCut(err error) bool {
	var op *net.OpError
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &op) && op.Op == "read" ||
		strings.Contains(err.Error(), "connection reset by peer")
}

// shorten bounds a message taken from the server (which may be a whole
// HTML page when the base URL is not Anthropic's API).
func shorten(s string) string {
	const max = 300
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}
