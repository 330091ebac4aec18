package connect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Health is what verifying an entry found.
type Health int

// Health values, from "nothing checked" to the failures a person can act on.
const (
	Unchecked      Health = iota // no entry to verify
	Verified                     // a real MCP handshake and tools/list succeeded
	NotRunning                   // nothing answers at the entry's URL: Deskhand is not running
	TokenRefused                 // Deskhand refused the token: revoked, rotated or unknown
	NoToken                      // the entry (or the keychain, for Claude Desktop) holds no token
	Stale                        // the entry points elsewhere than this Deskhand
	Broken                       // anything else; Check.Detail says what
	Disabled                     // the client turned the entry off (State.Disabled says how)
	AwaitsApproval               // the entry works, once the person approves it in the client (State.Pending)
)

func (h Health) String() string {
	switch h {
	case Unchecked:
		return "unchecked"
	case Verified:
		return "verified"
	case NotRunning:
		return "not running"
	case TokenRefused:
		return "token refused"
	case NoToken:
		return "no token"
	case Stale:
		return "stale"
	case Broken:
		return "broken"
	case Disabled:
		return "disabled by the client"
	case AwaitsApproval:
		return "awaits your approval in the client"
	}
	return fmt.Sprintf("Health(%d)", int(h))
}

// Check is the outcome of verifying an entry.
type Check struct {
	Health Health
	Tools  int    // tools listed, when Verified
	Detail string // what was found, in words for a person
}

// verifyHTTP does what an HTTP client does at start: initialize, then
// tools/list, with the entry's token.
func verifyHTTP(ctx context.Context, url, token string) Check {
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPBasicClient(&http.Client{Transport: withToken{token, http.DefaultTransport}}))
	if err != nil {
		return Check{Health: Broken, Detail: fmt.Sprintf("%s is not a usable URL: %v", url, err)}
	}
	c := client.NewClient(tr)
	defer c.Close()
	tools, err := handshake(ctx, c)
	switch {
	case err == nil:
		return Check{Health: Verified, Tools: tools, Detail: fmt.Sprintf("handshake and tools/list at %s: %d tools", url, tools)}
	case errors.Is(err, transport.ErrUnauthorized), errors.Is(err, transport.ErrAuthorizationRequired):
		return Check{Health: TokenRefused, Detail: "Deskhand refused the token (revoked or rotated): connect the client again"}
	case refused(err):
		return Check{Health: NotRunning, Detail: fmt.Sprintf("nothing answers at %s: start Deskhand, then check again", url)}
	}
	return Check{Health: Broken, Detail: fmt.Sprintf("MCP handshake with %s failed: %v", url, err)}
}

// withToken sends the token with every request, the session's closing
// DELETE included: mcp-go sends that DELETE without the headers given
// with WithHTTPHeaders, so Deskhand would refuse it and keep the session
// until it idles out.
type withToken struct {
	token string
	next  http.RoundTripper
}

func (t withToken) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.token == "" {
		return t.next.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return t.next.RoundTrip(r)
}

// refused reports a connection that nobody accepted.
func refused(err error) bool {
	var op *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &op) && op.Op == "dial")
}

// verifyStdio starts command as a stdio client would and does the same
// handshake over its standard input and output.
func verifyStdio(ctx context.Context, command string, args, env []string) Check {
	stderr := &limitedBuffer{max: 8 << 10}
	spawn := func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
		cmd := exec.CommandContext(ctx, command, args...)
		cmd.Env = append(os.Environ(), env...)
		cmd.Stderr = stderr
		return cmd, nil
	}
	tr := &statusRecorder{Stdio: transport.NewStdioWithOptions(command, env, args, transport.WithCommandFunc(spawn))}
	c := client.NewClient(tr)
	tools, err := handshake(ctx, c)
	c.Close()
	if err == nil {
		return Check{Health: Verified, Tools: tools, Detail: fmt.Sprintf("started %s %s: %d tools", command, strings.Join(args, " "), tools)}
	}
	detail := fmt.Sprintf("%s %s failed the MCP handshake: %v", command, strings.Join(args, " "), err)
	if msg := strings.TrimSpace(stderr.String()); msg != "" {
		detail += "; it said: " + msg
	}
	if tr.status() == http.StatusUnauthorized {
		return Check{Health: TokenRefused, Detail: detail}
	}
	return Check{Health: Broken, Detail: detail}
}

// statusRecorder is a stdio transport that notes the HTTP status the
// bridge (`deskhand stdio`) reports in the data of a JSON-RPC error, as
// {"httpStatus": 401}: mcp-go's client keeps only an error's message.
type statusRecorder struct {
	*transport.Stdio
	mu         sync.Mutex
	httpStatus int
}

func (r *statusRecorder) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	resp, err := r.Stdio.SendRequest(ctx, req)
	if err == nil && resp != nil && resp.Error != nil {
		if status := bridgeStatus(resp.Error.Data); status != 0 {
			r.mu.Lock()
			r.httpStatus = status
			r.mu.Unlock()
		}
	}
	return resp, err
}

// status is the last HTTP status the bridge reported; 0 for none.
func (r *statusRecorder) status() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.httpStatus
}

// bridgeStatus reads the bridge's error data (server/bridge.ErrorData,
// which this package may not import).
func bridgeStatus(data any) int {
	raw, err := json.Marshal(data)
	if err != nil {
		return 0
	}
	var d struct {
		HTTPStatus int `json:"httpStatus"`
	}
	if json.Unmarshal(raw, &d) != nil {
		return 0
	}
	return d.HTTPStatus
}

// handshake initializes c and lists its tools.
func handshake(ctx context.Context, c *client.Client) (int, error) {
	if err := c.Start(ctx); err != nil {
		return 0, err
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125 // what the clients we write for speak
	init.Params.ClientInfo = mcp.Implementation{Name: "deskhand-connect", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		return 0, err
	}
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return 0, fmt.Errorf("tools/list: %w", err)
	}
	return len(res.Tools), nil
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *limitedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
