package agent

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Redacted stands in text for a secret taken out.
const Redacted = "[redacted]"

// MinSecretLength is the shortest secret value redacted by its exact
// value: shorter ones ("1", "true") would blot out ordinary words. Shapes
// and name=value pairs catch secrets of any length.
const MinSecretLength = 8

// secretShapes match secrets by their shape: Deskhand's client tokens,
// bearer and basic credentials, OpenAI and Anthropic keys (sk-), Google
// (AIza), GitHub (gh?_, github_pat_), GitLab (glpat-), Slack (xox?-),
// AWS access key IDs (AKIA, ASIA), Stripe live and test keys (sk_, rk_)
// and PEM private keys, to their end or the text's.
var secretShapes = regexp.MustCompile(`dh_[A-Za-z0-9_-]{16,}` +
	`|(?i:bearer\s+)[A-Za-z0-9._~+/=-]{8,}|(?i:basic\s+)[A-Za-z0-9+/=]{8,}` +
	`|\bsk-[A-Za-z0-9_-]{16,}|\bAIza[0-9A-Za-z_-]{30,}` +
	`|\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}|\bglpat-[A-Za-z0-9_-]{20,}` +
	`|\bxox[abposr]-[A-Za-z0-9-]{10,}` +
	`|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b` +
	`|\b[sr]k_(?:live|test)_[A-Za-z0-9]{10,}` +
	`|-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)`)

// secretPairs match a value given under a name that says it is secret, as
// name=value (a query, a command line, an environment dump) or as a JSON
// member: password=…, client_secret=…, access_token=…, "api_key": "…".
// Groups 1 and 3 (the name) stay; 2 and 4 are the value.
var secretPairs = regexp.MustCompile(`(?i)(\b[a-z0-9_.-]*(?:password|passwd|secret|token|api_?key)=)([^\s&"',;]+)` +
	`|(?i)("[a-z0-9_.-]*(?:password|passwd|secret|token|api_?key)"\s*:\s*")((?:[^"\\]|\\.)+)`)

// LooksSecret reports whether s holds a secret by its shape or a value
// under a secret name.
func LooksSecret(s string) bool { return secretShapes.MatchString(s) || secretPairs.MatchString(s) }

// RedactSecrets replaces what looks like a token, a key or a password
// (LooksSecret) with [redacted]; a Redactor also knows the exact values.
func RedactSecrets(s string) string {
	s = secretShapes.ReplaceAllString(s, Redacted)
	return secretPairs.ReplaceAllString(s, "${1}${3}"+Redacted)
}

// Redactor takes every secret out of text meant for a log, the database
// or a client: the exact values of the secrets this process holds (it
// learns each one that passes through the Secrets port it wraps, and each
// client token minted) and the shapes of RedactSecrets. It is safe for
// concurrent use; redacting takes no lock.
type Redactor struct {
	mu     sync.Mutex
	values map[string]bool
	known  atomic.Pointer[strings.Replacer] // nil: no value known
}

// NewRedactor knows no value yet.
func NewRedactor() *Redactor { return &Redactor{values: make(map[string]bool)} }

// Learn adds secret values; those shorter than MinSecretLength are left
// to the shapes.
func (r *Redactor) Learn(values ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	added := false
	for _, v := range values {
		if len(v) >= MinSecretLength && !r.values[v] {
			r.values[v], added = true, true
		}
	}
	if !added {
		return
	}
	// Longest first, so that a value inside another never leaves the
	// rest of the longer one behind.
	sorted := make([]string, 0, len(r.values))
	for v := range r.values {
		sorted = append(sorted, v)
	}
	slices.SortFunc(sorted, func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	pairs := make([]string, 0, 2*len(sorted))
	for _, v := range sorted {
		pairs = append(pairs, v, Redacted)
	}
	r.known.Store(strings.NewReplacer(pairs...))
}

// Redact takes the known values and the shapes out of s.
func (r *Redactor) Redact(s string) string {
	if s == "" {
		return s
	}
	if known := r.known.Load(); known != nil {
		s = known.Replace(s)
	}
	return RedactSecrets(s)
}

// Error is err with its message for people redacted, and err itself
// kept behind it for errors.Is and the log (whose writer redacts).
func (r *Redactor) Error(err error) error {
	msg := UserMessage(err)
	if clean := r.Redact(msg); clean != msg {
		return &UserError{Msg: clean, Err: err}
	}
	return err
}

// Writer redacts each Write whole before w has it: for writers whose
// writes are whole records (a slog handler writes one line at a time).
func (r *Redactor) Writer(w io.Writer) io.Writer { return redactingWriter{r: r, w: w} }

type redactingWriter struct {
	r *Redactor
	w io.Writer
}

func (rw redactingWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(rw.w, rw.r.Redact(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Handler redacts each record's message and attributes (an error's text
// included) before h has them, whatever h writes to.
func (r *Redactor) Handler(h slog.Handler) slog.Handler { return redactingHandler{r: r, h: h} }

type redactingHandler struct {
	r *Redactor
	h slog.Handler
}

func (rh redactingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return rh.h.Enabled(ctx, l)
}

func (rh redactingHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, rh.r.Redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(rh.attr(a))
		return true
	})
	return rh.h.Handle(ctx, out)
}

func (rh redactingHandler) attr(a slog.Attr) slog.Attr {
	switch v := a.Value.Resolve(); v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, rh.r.Redact(v.String()))
	case slog.KindGroup:
		group := v.Group()
		attrs := make([]any, len(group))
		for i, g := range group {
			attrs[i] = rh.attr(g)
		}
		return slog.Group(a.Key, attrs...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, rh.r.Redact(err.Error()))
		}
		return slog.String(a.Key, rh.r.Redact(v.String()))
	}
	return a
}

func (rh redactingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = rh.attr(a)
	}
	return redactingHandler{r: rh.r, h: rh.h.WithAttrs(clean)}
}

func (rh redactingHandler) WithGroup(name string) slog.Handler {
	return redactingHandler{r: rh.r, h: rh.h.WithGroup(name)}
}

// Secrets wraps a Secrets port so that every value read from it or
// stored through it is learned.
func (r *Redactor) Secrets(s Secrets) Secrets {
	if s == nil {
		return nil
	}
	return learningSecrets{Secrets: s, r: r}
}

type learningSecrets struct {
	Secrets
	r *Redactor
}

func (l learningSecrets) Get(key string) (string, error) {
	v, err := l.Secrets.Get(key)
	if err == nil {
		l.r.Learn(v)
	}
	return v, err
}

func (l learningSecrets) Set(key, value string) error {
	l.r.Learn(value)
	return l.Secrets.Set(key, value)
}

// TextLog logs to w at level and above, in slog's text format, through
// r: no secret value it knows reaches w.
func (r *Redactor) TextLog(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(r.Writer(w), &slog.HandlerOptions{Level: level}))
}
