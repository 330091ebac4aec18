package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/deskhand/deskhand/server/agent"
)

// What went wrong, for callers that branch on it with errors.Is: the Err of
// every *agent.UserError this package returns wraps one of them.
var (
	// ErrUnreachable: no connection to the server (not running, wrong
	// address, no network).
	ErrUnreachable = errors.New("openai: the server cannot be reached")
	// ErrUnauthorized: the key is missing, wrong or revoked (401).
	ErrUnauthorized = errors.New("openai: the API key is missing or wrong")
	// ErrModelNotFound: the server does not have the model.
	ErrModelNotFound = errors.New("openai: the model does not exist on the server")
	// ErrRateLimited: the server asked to slow down (429), even after the
	// one retry; the *HTTPError says for how long when the server did.
	ErrRateLimited = errors.New("openai: rate limited")
	// ErrQuotaExceeded: the account has no quota or credit left (429
	// insufficient_quota); waiting does not help.
	ErrQuotaExceeded = errors.New("openai: the account's quota is used up")
	// ErrContextTooLong: the conversation does not fit the model's
	// context window.
	ErrContextTooLong = errors.New("openai: the conversation is longer than the model's context window")
	// ErrToolsUnsupported: the model or server refused a call with tools.
	ErrToolsUnsupported = errors.New("openai: the model or server does not support tools")
	// ErrStructuredOutputUnsupported: the model or server refused
	// response_format json_schema.
	ErrStructuredOutputUnsupported = errors.New("openai: the model or server does not support structured output (response_format json_schema)")
	// ErrSchemaRefused: the server supports structured output but refused
	// this schema.
	ErrSchemaRefused = errors.New("openai: the server refused the response schema")
	// ErrRefusal: the model declined to answer (a refusal instead of
	// content).
	ErrRefusal = errors.New("openai: the model refused to answer")
	// ErrStreamCut: the reply stream ended before its finish_reason.
	ErrStreamCut = errors.New("openai: the reply stream ended before it finished")
	// ErrServerFailed: the server failed (5xx, or an error in the stream).
	ErrServerFailed = errors.New("openai: the server failed")
	// ErrRefused: any other refusal (4xx).
	ErrRefused = errors.New("openai: the server refused the request")

	// errStreamOptionsRefused: the server refused stream_options; Chat
	// calls again without them.
	errStreamOptionsRefused = errors.New("openai: the server refused stream_options")
)

// HTTPError is a server's refusal as read from its response: OpenAI's
// {"error":{"message","type","param","code"}}, or whatever shape the
// server used. Message has the API key scrubbed out.
type HTTPError struct {
	Status            int
	Code, Type, Param string
	Message           string
	// RetryAfter is what retry-after-ms or Retry-After asked for; 0 when
	// the server did not say.
	RetryAfter time.Duration
}

func (e *HTTPError) Error() string {
	var b strings.Builder
	if e.Status != 0 {
		fmt.Fprintf(&b, "HTTP %d", e.Status)
	} else {
		b.WriteString("error in the stream")
	}
	if e.Code != "" {
		fmt.Fprintf(&b, " (%s)", e.Code)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

// failure holds the last refusal a call received, recorded by the
// middleware before the SDK decodes it.
type failure struct {
	mu  sync.Mutex
	err *HTTPError
}

func (f *failure) set(e *HTTPError) {
	f.mu.Lock()
	f.err = e
	f.mu.Unlock()
}

func (f *failure) get() *HTTPError {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

type failureKey struct{}

func withFailure(ctx context.Context) (context.Context, *failure) {
	f := &failure{}
	return context.WithValue(ctx, failureKey{}, f), f
}

// maxErrorBody bounds what is read of an error response.
const maxErrorBody = 1 << 20

// recordFailure is SDK middleware: it keeps a copy of every response with
// a status of 400 or more in the call's failure, and hands the SDK the
// same body.
func recordFailure(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if err != nil || res == nil || res.StatusCode < 400 {
		return res, err
	}
	f, _ := req.Context().Value(failureKey{}).(*failure)
	if f == nil {
		return res, err
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(body))
	he := parseError(body)
	he.Status = res.StatusCode
	he.RetryAfter = retryAfter(res.Header)
	f.set(he)
	return res, err
}

// parseError reads an error body in the shapes servers use: OpenAI's
// {"error":{…}} (code a string or, in llama.cpp, a number), LM Studio's
// {"error":"…"}, vLLM's and Mistral's top-level {"message":…,"type":…},
// FastAPI's {"detail":…}, or plain text.
func parseError(body []byte) *HTTPError {
	he := &HTTPError{}
	body = bytes.TrimSpace(body)
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		if len(body) > 0 && body[0] != '<' { // not an HTML error page
			he.Message = shorten(string(body))
		}
		return he
	}
	fields := top
	if raw, ok := top["error"]; ok {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			he.Message = shorten(s)
			return he
		}
		var inner map[string]json.RawMessage
		if json.Unmarshal(raw, &inner) == nil {
			fields = inner
		}
	}
	he.Message = shorten(text(fields["message"]))
	if he.Message == "" {
		he.Message = shorten(text(fields["detail"]))
	}
	he.Code = text(fields["code"])
	he.Type = text(fields["type"])
	he.Param = text(fields["param"])
	return he
}

// text reads a JSON string as itself, null as "", and anything else (a
// number, an object) as its JSON text.
func text(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var compact bytes.Buffer
	if json.Compact(&compact, raw) == nil {
		return compact.String()
	}
	return string(raw)
}

// retryAfter reads retry-after-ms (OpenAI's) or Retry-After (seconds or
// an HTTP date), as the SDK's retry does.
func retryAfter(h http.Header) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	if v := h.Get("Retry-After"); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
			return time.Duration(s * float64(time.Second))
		}
		if t, err := http.ParseTime(v); err == nil {
			if d := time.Until(t); d > 0 {
				return d
			}
		}
	}
	return 0
}

// keyPattern finds what looks like an OpenAI-style key (or its masked
// form) in a server's message.
var keyPattern = regexp.MustCompile(`\b(sk|rk|pk)-[A-Za-z0-9_*\-.]{3,}`)

// scrub removes the key, and anything shaped like a key, from a server's
// words.
func (m *Model) scrub(s string) string {
	if m.apiKey != "" {
		s = strings.ReplaceAll(s, m.apiKey, "[the API key]")
	}
	return keyPattern.ReplaceAllString(s, "[a key]")
}

// request is what a failed call asked for, so that a refusal can be
// traced to the feature it names.
type request struct {
	model         string // "" for calls other than Chat
	tools         bool
	schema        bool
	streamOptions bool
}

// userError turns an error of a call into one a person can act on. A
// cancelled or expired ctx is returned as ctx.Err().
func (m *Model) userError(ctx context.Context, err error, fail *failure, req request) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ue *agent.UserError
	if errors.As(err, &ue) {
		return err
	}
	if he := fail.get(); he != nil {
		c := *he
		c.Message = m.scrub(c.Message)
		return m.refusal(ctx, &c, req)
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		he := parseError(se.Event.Data)
		he.Message = m.scrub(he.Message)
		if isContextTooLong(he) {
			return m.refusal(ctx, he, req)
		}
		return agent.Userf(fmt.Errorf("%w: %w", ErrServerFailed, he),
			"%s failed while answering: %s", capitalize(m.who()), orStatus(he))
	}
	if isDialError(err) {
		if m.kind == KindOpenAI && m.name == "" {
			return agent.Userf(fmt.Errorf("%w: %w", ErrUnreachable, err),
				"%s cannot be reached at %s — check the network connection", capitalize(m.who()), m.BaseURL())
		}
		return agent.Userf(fmt.Errorf("%w: %w", ErrUnreachable, err),
			"%s is not reachable — is it running? Start it, or change the provider's base URL in Settings → Models", capitalize(m.who()))
	}
	var ne net.Error
	var uerr *url.Error
	if errors.As(err, &ne) || errors.As(err, &uerr) || errors.Is(err, io.ErrUnexpectedEOF) {
		return agent.Userf(fmt.Errorf("%w: %w", ErrUnreachable, err),
			"could not talk to %s: %s — check the provider's base URL in Settings → Models", m.who(), shorten(err.Error()))
	}
	if req.model != "" {
		return agent.Userf(fmt.Errorf("%w: %w", ErrServerFailed, err),
			"%s failed while answering: %s", capitalize(m.who()), shorten(err.Error()))
	}
	return agent.Userf(fmt.Errorf("%w: %w", ErrServerFailed, err),
		"%s gave an answer Deskhand does not understand — is the base URL that of an OpenAI-compatible API (it usually ends in /v1)?", capitalize(m.who()))
}

// refusal maps a server's refusal.
func (m *Model) refusal(ctx context.Context, he *HTTPError, req request) error {
	who, Who := m.who(), capitalize(m.who())
	wrap := func(sentinel error) error { return fmt.Errorf("%w: %w", sentinel, he) }
	msg := strings.ToLower(he.Message + " " + he.Code + " " + he.Type)
	switch {
	case he.Status == http.StatusUnauthorized || he.Code == "invalid_api_key":
		switch {
		case m.apiKey == "" && m.kind == KindOpenAI:
			return &agent.UserError{Msg: Who + " needs an API key: add it to this provider in Settings → Models", Err: wrap(ErrUnauthorized)}
		case m.apiKey == "":
			return &agent.UserError{Msg: Who + " asks for an API key: add one to this provider in Settings → Models", Err: wrap(ErrUnauthorized)}
		default:
			return &agent.UserError{Msg: Who + " did not accept the API key (it is wrong, revoked, or lacks access) — set the right one in Settings → Models", Err: wrap(ErrUnauthorized)}
		}
	case req.model != "" && isModelNotFound(he):
		return &agent.UserError{Msg: m.modelNotFound(ctx, req.model), Err: wrap(ErrModelNotFound)}
	case he.Code == "insufficient_quota":
		return agent.Userf(wrap(ErrQuotaExceeded), "%s refused the call: the account's quota or credit is used up — check its plan and billing (%s)", Who, he.Message)
	case he.Status == http.StatusTooManyRequests:
		wait := "wait a little and call again"
		if he.RetryAfter > 0 {
			wait = "it asks to wait " + roundWait(he.RetryAfter) + " before calling again"
		}
		return agent.Userf(wrap(ErrRateLimited), "%s is rate limiting Deskhand (tried again once): %s", Who, wait)
	case isContextTooLong(he):
		model := ""
		if req.model != "" {
			model = fmt.Sprintf(" of model '%s'", req.model)
		}
		return agent.Userf(wrap(ErrContextTooLong),
			"the conversation is too long for the context window%s at %s (%s) — start a new conversation, or pick a model with a larger context window", model, who, orStatus(he))
	case req.streamOptions && (strings.Contains(msg, "stream_options") || strings.Contains(msg, "include_usage")):
		return agent.Userf(wrap(errStreamOptionsRefused), "%s does not accept stream_options (used to count tokens): %s", Who, orStatus(he))
	case req.schema && strings.Contains(msg, "invalid schema"):
		return agent.Userf(wrap(ErrSchemaRefused),
			"%s refused the agent's response schema: %s — fix the schema in the agent's settings", Who, orStatus(he))
	case req.schema && (strings.Contains(msg, "json_schema") || strings.Contains(msg, "response_format") || strings.Contains(msg, "structured output")):
		return agent.Userf(wrap(ErrStructuredOutputUnsupported),
			"%s cannot answer in the agent's JSON schema (structured output, response_format json_schema)%s: %s. Deskhand does not call without the schema: pick a model or server that supports structured output, or remove the agent's response schema",
			Who, forModel(req.model), orStatus(he))
	case req.tools && isToolsRefused(msg):
		return agent.Userf(wrap(ErrToolsUnsupported),
			"%s cannot call tools%s: %s — pick a model that can call tools, or turn this agent's tools off", Who, forModel(req.model), orStatus(he))
	case he.Status == http.StatusNotFound:
		return agent.Userf(wrap(ErrRefused),
			"%s answered 404 Not Found (%s) — is the base URL right? It usually ends in /v1", Who, orStatus(he))
	case he.Status >= 500:
		return agent.Userf(wrap(ErrServerFailed), "%s failed (HTTP %d): %s", Who, he.Status, orStatus(he))
	default:
		return agent.Userf(wrap(ErrRefused), "%s refused the request (HTTP %d): %s", Who, he.Status, orStatus(he))
	}
}

func forModel(model string) string {
	if model == "" {
		return ""
	}
	return fmt.Sprintf(" with model '%s'", model)
}

// orStatus is the server's message, or its status when it said nothing.
func orStatus(he *HTTPError) string {
	if he.Message != "" {
		return he.Message
	}
	if he.Status != 0 {
		return fmt.Sprintf("HTTP %d %s", he.Status, http.StatusText(he.Status))
	}
	return "no reason given"
}

func roundWait(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// isModelNotFound: OpenAI's code, or a 404 (or 400, as some servers
// answer) whose words say that a model does not exist: "The model `x`
// does not exist", Ollama's `model "x" not found, try pulling it first`,
// LM Studio's "Model x not found".
func isModelNotFound(he *HTTPError) bool {
	if he.Code == "model_not_found" {
		return true
	}
	if he.Status != http.StatusNotFound && he.Status != http.StatusBadRequest {
		return false
	}
	msg := strings.ToLower(he.Message)
	return strings.Contains(msg, "model") &&
		(strings.Contains(msg, "not found") || strings.Contains(msg, "does not exist") || strings.Contains(msg, "not exist") || strings.Contains(msg, "no such model"))
}

// isContextTooLong: OpenAI's code, llama.cpp's exceed_context_size_error,
// or words that say the prompt is over the context window.
func isContextTooLong(he *HTTPError) bool {
	if he.Code == "context_length_exceeded" || he.Type == "exceed_context_size_error" {
		return true
	}
	msg := strings.ToLower(he.Message)
	for _, s := range []string{"maximum context length", "context length exceeded", "context_length_exceeded",
		"exceeds the available context", "exceed_context_size", "context window", "prompt is too long", "too many tokens"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// isToolsRefused: words that say tools are not supported or not enabled:
// Ollama's "does not support tools", vLLM's `"auto" tool choice requires
// --enable-auto-tool-choice`, llama.cpp's "tools param requires --jinja".
func isToolsRefused(msg string) bool {
	if !strings.Contains(msg, "tool") && !strings.Contains(msg, "function call") {
		return false
	}
	return slices.ContainsFunc([]string{"support", "requires", "enable", "not allowed", "jinja", "unsupported"},
		func(s string) bool { return strings.Contains(msg, s) })
}

// modelNotFound says that the model is missing and which ones the server
// has, when it says.
func (m *Model) modelNotFound(ctx context.Context, model string) string {
	msg := fmt.Sprintf("model '%s' is not available at %s", model, m.who())
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	names, err := m.ListModels(lctx)
	switch {
	case err != nil:
		return msg + " — pick another in the agent's settings"
	case len(names) == 0:
		return msg + ", which lists no models — download or load one there first"
	}
	const show = 10
	list := strings.Join(names[:min(show, len(names))], ", ")
	if len(names) > show {
		list += fmt.Sprintf(" (and %d more)", len(names)-show)
	}
	return msg + "; it has: " + list + " — pick one in the agent's settings"
}

func isDialError(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return true
	}
	return strings.Contains(err.Error(), "connection refused")
}

// shorten bounds a message taken from a server (which may be a whole page
// when the address is not an API).
func shorten(s string) string {
	const max = 300
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}
