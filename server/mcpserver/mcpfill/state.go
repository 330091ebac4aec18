package mcpfill

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// MinStateKeyBytes is the least secret a configured requestState key holds.
const MinStateKeyBytes = 32

// Claims bind a requestState to one round of one turn, one tool, one
// principal and, when Args is set, the call's arguments.
type Claims struct {
	Turn      string `json:"t"`
	Seq       int    `json:"s"`
	Tool      string `json:"n"`
	Principal string `json:"p"`
	Args      string `json:"a,omitempty"` // ArgsDigest of the call's arguments; "" binds none
	Expires   int64  `json:"e"`           // unix milliseconds, set by Seal
}

// ArgsDigest names a call's decoded arguments: equal arguments, however
// spelled (key order, spacing, escapes), have equal digests.
func ArgsDigest(args any) string {
	canonical, _ := json.Marshal(args) // decoded JSON always encodes; maps in key order
	sum := sha256.Sum256(canonical)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// Sealer seals requestState with AES-256-GCM: the client can neither read
// nor forge it. The first key seals; every key opens, for rotation. Each
// state is used once: a replay is refused.
type Sealer struct {
	keys []cipher.AEAD
	ttl  time.Duration
	now  func() time.Time

	mu   sync.Mutex
	used map[string]time.Time // states used, or claimed by a request, until they expire
}

var stateAAD = []byte("io.deskhand/requestState/v1")

// NewSealer uses the given keys, or one random key of its own (so paused
// turns, which live in this process anyway, end with it). A state sealed
// now expires ttl later, by the clock now.
func NewSealer(keys [][]byte, ttl time.Duration, now func() time.Time) (*Sealer, error) {
	if len(keys) == 0 {
		k := make([]byte, 32)
		if _, err := rand.Read(k); err != nil {
			return nil, fmt.Errorf("make requestState key: %w", err)
		}
		keys = [][]byte{k}
	}
	s := &Sealer{ttl: ttl, now: now, used: make(map[string]time.Time)}
	for i, k := range keys {
		if len(k) < MinStateKeyBytes {
			return nil, fmt.Errorf("requestState key %d has %d bytes; it needs at least %d bytes of secret randomness", i+1, len(k), MinStateKeyBytes)
		}
		sum := sha256.Sum256(k) // any length in, an AES-256 key out
		block, err := aes.NewCipher(sum[:])
		if err != nil {
			return nil, fmt.Errorf("requestState key %d: %w", i+1, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("requestState key %d: %w", i+1, err)
		}
		s.keys = append(s.keys, aead)
	}
	return s, nil
}

// TTL is how long a sealed state stays valid.
func (s *Sealer) TTL() time.Duration { return s.ttl }

// Now is the sealer's clock.
func (s *Sealer) Now() time.Time { return s.now() }

// Seal returns the claims as a requestState, expiring TTL from now.
func (s *Sealer) Seal(c Claims) string {
	c.Expires = s.now().Add(s.ttl).UnixMilli()
	plain, _ := json.Marshal(c)
	aead := s.keys[0]
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, stateAAD))
}

// ErrBadState covers every refusal alike, so a prober learns nothing.
var ErrBadState = errors.New("invalid requestState")

// Open verifies a state for the tool and principal, and claims it for the
// request that presents it: a copy presented meanwhile, or later, is
// refused. The claim holds only if the request goes on to use the state
// (StateUse.Keep); otherwise its Settle frees the state again, so that a
// retry refused for another fault (a header that disagrees with the body,
// arguments of the wrong shape) does not use it up.
func (s *Sealer) Open(state, tool, principal string, args any) (Claims, *StateUse, error) {
	raw, err := base64.RawURLEncoding.DecodeString(state)
	if err != nil {
		return Claims{}, nil, fmt.Errorf("%w: not issued by this server", ErrBadState)
	}
	var c Claims
	opened := false
	for _, aead := range s.keys {
		if len(raw) < aead.NonceSize() {
			break
		}
		plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], stateAAD)
		if err == nil && json.Unmarshal(plain, &c) == nil {
			opened = true
			break
		}
	}
	now := s.now()
	switch {
	case !opened:
		return Claims{}, nil, fmt.Errorf("%w: not issued by this server, or altered", ErrBadState)
	case now.UnixMilli() > c.Expires:
		return Claims{}, nil, fmt.Errorf("%w: expired; call again without requestState to start over", ErrBadState)
	case c.Tool != tool || c.Principal != principal:
		return Claims{}, nil, fmt.Errorf("%w: it belongs to another call", ErrBadState)
	case c.Args != "" && c.Args != ArgsDigest(args):
		return Claims{}, nil, fmt.Errorf("%w: it belongs to a call with other arguments; retry with the arguments of the call that was answered", ErrBadState)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, exp := range s.used {
		if now.After(exp) {
			delete(s.used, k)
		}
	}
	if _, replay := s.used[state]; replay {
		return Claims{}, nil, fmt.Errorf("%w: already used", ErrBadState)
	}
	s.used[state] = time.UnixMilli(c.Expires)
	return c, &StateUse{s: s, state: state}, nil
}

// StateUse is a request's claim on a state.
type StateUse struct {
	s     *Sealer
	state string

	mu   sync.Mutex
	kept bool
	done bool
}

// Keep makes the claim final: the state is used.
func (u *StateUse) Keep() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.done {
		u.kept = true
	}
}

// Settle ends the request's claim: a state it did not use is free again.
func (u *StateUse) Settle() {
	u.mu.Lock()
	free := !u.kept && !u.done
	u.done = true
	u.mu.Unlock()
	if free {
		u.s.mu.Lock()
		delete(u.s.used, u.state)
		u.s.mu.Unlock()
	}
}

type claimsKey struct{}

// claimed is a verified requestState and the request's claim on it (nil
// once the call went on elsewhere, in a task).
type claimed struct {
	claims Claims
	use    *StateUse
}

// ClaimsFrom returns the verified requestState of the call in ctx, if any.
func ClaimsFrom(ctx context.Context) (Claims, bool) {
	c, ok := ctx.Value(claimsKey{}).(claimed)
	return c.claims, ok
}

// WithClaims carries claims already verified, and already used, on to
// where the call goes on (a task).
func WithClaims(ctx context.Context, c Claims) context.Context {
	return context.WithValue(ctx, claimsKey{}, claimed{claims: c})
}

// KeepState marks the call's requestState used: the call passed every
// check and acts on it.
func KeepState(ctx context.Context) {
	if c, ok := ctx.Value(claimsKey{}).(claimed); ok && c.use != nil {
		c.use.Keep()
	}
}

// KeepingState marks the state of a call used as it reaches the tool:
// mcp-go has checked the call by then, and a replay never reaches it.
func KeepingState(h server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		KeepState(ctx)
		return h(ctx, req)
	}
}

// Verify checks a tools/call's requestState before mcp-go sees it: a
// handler cannot answer -32602, and nothing may resume on a bad state. ok
// is false when it has answered the request itself; otherwise settle must
// be called when the request is served, freeing a state it did not use.
func (s *Sealer) Verify(w http.ResponseWriter, r *http.Request, msg Peek) (_ *http.Request, settle func(), ok bool) {
	if msg.Method != string(mcp.MethodToolsCall) || msg.Params.RequestState == "" {
		return r, func() {}, true
	}
	claims, use, err := s.Open(msg.Params.RequestState, msg.Params.Name, PrincipalFrom(r.Context()), msg.Arguments())
	if err != nil {
		WriteError(w, msg.ID, mcp.INVALID_PARAMS, err.Error())
		return r, nil, false
	}
	return r.WithContext(context.WithValue(r.Context(), claimsKey{}, claimed{claims: claims, use: use})), use.Settle, true
}
