package toolservers

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// Defaults of [Options].
const (
	DefaultIdleTimeout    = 10 * time.Minute
	DefaultCallTimeout    = 5 * time.Minute
	DefaultStartTimeout   = time.Minute
	DefaultMaxResultBytes = 1 << 20 // as the built-in tools' read and fetch limits
	DefaultMaxFailures    = 5
	DefaultBackoffBase    = time.Second
	DefaultBackoffMax     = time.Minute
	DefaultStableAfter    = time.Minute
	DefaultStopGrace      = 2 * time.Second
)

// Options configures a [Manager]. The zero value works: no log files,
// no elicitation nor sampling.
type Options struct {
	// LogDir holds each server's log, NAME.log (its stderr and Deskhand's
	// lines about it), capped at MaxLogBytes (0: DefaultMaxLogBytes) and
	// rotated once to NAME.log.1. Empty: no files; the last stderr lines
	// are still kept for error messages.
	LogDir      string
	MaxLogBytes int64

	// IdleTimeout stops a server no call has used for that long (0:
	// DefaultIdleTimeout; negative: never).
	IdleTimeout time.Duration
	// CallTimeout cuts a call the server has not answered (0:
	// DefaultCallTimeout); the model reads that it was cut.
	CallTimeout time.Duration
	// StartTimeout bounds starting a server: spawning or connecting,
	// initialize and the first tools/list (0: DefaultStartTimeout).
	StartTimeout time.Duration
	// MaxResultBytes caps a call's result text (0: DefaultMaxResultBytes).
	MaxResultBytes int

	// MaxFailures is how many failures in a row (a start that fails, or a
	// crash sooner than StableAfter after its start) make a server
	// StateFailed until its configuration changes or Reset is called
	// (0: DefaultMaxFailures). Between failures a server backs off:
	// nothing the first time, then BackoffBase doubling up to BackoffMax.
	MaxFailures int
	BackoffBase time.Duration
	BackoffMax  time.Duration
	StableAfter time.Duration
	// StopGrace is how long a stopping child gets after its stdin closes,
	// and again after SIGTERM, before it is killed (0: DefaultStopGrace).
	StopGrace time.Duration

	// Clock tells the time and runs the idle timers (nil: the system's).
	Clock Clock
	// Logger receives Deskhand's own lines (nil: none). Secrets never
	// reach it.
	Logger *slog.Logger
	// Redact takes the process's secrets out of what a server's log
	// keeps (its stderr may print its environment, an error may echo its
	// headers), after its own configuration's secrets are hidden (nil:
	// only those).
	Redact func(string) string

	// OnChange hears each change of a server's state or tool list. It is
	// called without locks held, possibly from several goroutines; it
	// must not block for long.
	OnChange func(Event)
	// OnProgress hears a server's progress notifications for a call; ctx
	// is the call's. It must not block (the server's messages wait).
	OnProgress func(ctx context.Context, p Progress)
	// Elicit answers a server's elicitation/create (nil: elicitation is
	// not declared, and servers do not ask).
	Elicit ElicitFunc
	// Sample answers a server's sampling/createMessage, for servers whose
	// Config has AllowSampling (nil: sampling is declared to none).
	Sample SampleFunc

	// ClientName and ClientVersion introduce Deskhand to the servers
	// (default "deskhand", "dev").
	ClientName, ClientVersion string
}

// Progress is a server's progress notification for a call.
type Progress struct {
	Server, Tool string
	Progress     float64
	Total        float64 // 0 when the server does not know
	Message      string
}

// Origin tells which server sent a request, and for which call when that
// is known: over Streamable HTTP the request comes on the call's own
// stream; over stdio nothing relates them, so it is known only when the
// server has a single call in flight.
type Origin struct {
	Server string
	// Tool and CallID are the call's, when Known.
	Tool   string
	CallID string
	Known  bool
}

// ElicitFunc answers an elicitation request. ctx is the related call's
// when the origin is known (its values, its cancellation), otherwise the
// server connection's.
type ElicitFunc func(ctx context.Context, from Origin, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error)

// SampleFunc answers a sampling request, as ElicitFunc.
type SampleFunc func(ctx context.Context, from Origin, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error)

// Clock is the time as the Manager sees it; tests inject their own.
type Clock interface {
	Now() time.Time
	// AfterFunc runs f in its own goroutine after d.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc.
type Timer interface {
	// Stop prevents the call if it has not started; it reports whether
	// it did.
	Stop() bool
}

type systemClock struct{}

func (systemClock) Now() time.Time                            { return time.Now() }
func (systemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&o.IdleTimeout, DefaultIdleTimeout)
	def(&o.CallTimeout, DefaultCallTimeout)
	def(&o.StartTimeout, DefaultStartTimeout)
	def(&o.BackoffBase, DefaultBackoffBase)
	def(&o.BackoffMax, DefaultBackoffMax)
	def(&o.StableAfter, DefaultStableAfter)
	def(&o.StopGrace, DefaultStopGrace)
	if o.MaxLogBytes <= 0 {
		o.MaxLogBytes = DefaultMaxLogBytes
	}
	if o.MaxResultBytes <= 0 {
		o.MaxResultBytes = DefaultMaxResultBytes
	}
	if o.MaxFailures <= 0 {
		o.MaxFailures = DefaultMaxFailures
	}
	if o.Clock == nil {
		o.Clock = systemClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.ClientName == "" {
		o.ClientName = "deskhand"
	}
	if o.ClientVersion == "" {
		o.ClientVersion = "dev"
	}
	return o
}
