package mcpserver

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

// DefaultStateTTL is how long a paused turn's requestState stays valid.
const DefaultStateTTL = 600 * time.Second

// stateClaims bind a requestState to one question of one turn, one tool,
// one principal and, for a paused turn, the call's arguments.
type stateClaims struct {
	Turn      string `json:"t"`
	Seq       int    `json:"s"`
	Tool      string `json:"n"`
	Principal string `json:"p"`
	Args      string `json:"a,omitempty"` // argsDigest of the call's arguments; "" binds none
	Expires   int64  `json:"e"`           // unix milliseconds
}

// argsDigest names a call's decoded arguments: equal arguments, however
// spelled (key order, spacing, escapes), have equal digests.
func argsDigest(args any) string {
	canonical, _ := json.Marshal(args) // decoded JSON always encodes; maps in key order
	sum := sha256.Sum256(canonical)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// sealer seals requestState with AES-256-GCM: the client can neither read
// nor forge it. The first key seals; every key opens, for rotation. Each
// state is used once: a replay is refused.
type sealer struct {
	keys []cipher.AEAD
	ttl  time.Duration
	now  func() time.Time

	mu   sync.Mutex
	used map[string]time.Time // states used, or claimed by a request, until they expire
}

var stateAAD = []byte("io.deskhand/requestState/v1")

// newSealer uses the configured keys, or one random key of its own (so
// paused turns, which live in this process anyway, end with it).
func newSealer(keys [][]byte, ttl time.Duration, now func() time.Time) (*sealer, error) {
	if len(keys) == 0 {
		k := make([]byte, 32)
		if _, err := rand.Read(k); err != nil {
			return nil, fmt.Errorf("make requestState key: %w", err)
		}
		keys = [][]byte{k}
	}
	s := &sealer{ttl: ttl, now: now, used: make(map[string]time.Time)}
	for i, k := range keys {
		if len(k) < MinStateKeyBytes {
			return nil, fmt.Errorf("requestState key %d has %d bytes; it needs at least %d bytes of secret randomness", i+1, len(k), MinStateKeyBytes)
		}
		sum := sha256.Sum256(k) // any length in, an AES-256 key out
		block, err := aes.NewCipher(sum[:])
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		s.keys = append(s.keys, aead)
	}
	return s, nil
}

func (s *sealer) seal(c stateClaims) string {
	c.Expires = s.now().Add(s.ttl).UnixMilli()
	plain, _ := json.Marshal(c)
	aead := s.keys[0]
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, stateAAD))
}

// errBadState covers every refusal alike, so a prober learns nothing.
var errBadState = errors.New("invalid requestState")

// open verifies a state for the tool and principal, and claims it for the
// request that presents it: a copy presented meanwhile, or later, is
// refused. The claim holds only if the request goes on to use the state
// (stateUse.keep); otherwise its settle frees the state again, so that a
// retry refused for another fault (a header that disagrees with the body,
// arguments of the wrong shape) does not use it up.
func (s *sealer) open(state, tool, principal string, args any) (stateClaims, *stateUse, error) {
	raw, err := base64.RawURLEncoding.DecodeString(state)
	if err != nil {
		return stateClaims{}, nil, fmt.Errorf("%w: not issued by this server", errBadState)
	}
	var c stateClaims
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
		return stateClaims{}, nil, fmt.Errorf("%w: not issued by this server, or altered", errBadState)
	case now.UnixMilli() > c.Expires:
		return stateClaims{}, nil, fmt.Errorf("%w: expired; call again without requestState to start over", errBadState)
	case c.Tool != tool || c.Principal != principal:
		return stateClaims{}, nil, fmt.Errorf("%w: it belongs to another call", errBadState)
	case c.Args != "" && c.Args != argsDigest(args):
		return stateClaims{}, nil, fmt.Errorf("%w: it belongs to a call with other arguments; retry with the arguments of the call that was answered", errBadState)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, exp := range s.used {
		if now.After(exp) {
			delete(s.used, k)
		}
	}
	if _, replay := s.used[state]; replay {
		return stateClaims{}, nil, fmt.Errorf("%w: already used", errBadState)
	}
	s.used[state] = time.UnixMilli(c.Expires)
	return c, &stateUse{s: s, state: state}, nil
}

// stateUse is a request's claim on a state.
type stateUse struct {
	s     *sealer
	state string

	mu   sync.Mutex
	kept bool
	done bool
}

// keep makes the claim final: the state is used.
func (u *stateUse) keep() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.done {
		u.kept = true
	}
}

// settle ends the request's claim: a state it did not use is free again.
func (u *stateUse) settle() {
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

// SealState returns a requestState for a tool's next input round: sealed,
// bound to the tool and the calling principal, single-use and expiring.
// The retry reaches the tool only if the state is intact (StateVerified).
func (s *Server) SealState(ctx context.Context, tool string, round int) string {
	return s.sealer.seal(stateClaims{Turn: "tool:" + tool, Seq: round, Tool: tool, Principal: PrincipalFrom(ctx)})
}

// StateVerified reports the round of the verified requestState the call
// carries, if any. From then on the state is used: a copy is refused.
func StateVerified(ctx context.Context) (round int, ok bool) {
	c, ok := claimsFrom(ctx)
	if ok {
		keepState(ctx)
	}
	return c.Seq, ok
}

type claimsKey struct{}

// claimed is a verified requestState and the request's claim on it (nil
// once the call went on elsewhere, in a task).
type claimed struct {
	claims stateClaims
	use    *stateUse
}

func claimsFrom(ctx context.Context) (stateClaims, bool) {
	c, ok := ctx.Value(claimsKey{}).(claimed)
	return c.claims, ok
}

// keepState marks the call's requestState used: the call passed every
// check and acts on it.
func keepState(ctx context.Context) {
	if c, ok := ctx.Value(claimsKey{}).(claimed); ok && c.use != nil {
		c.use.keep()
	}
}

// keepingState marks the state of a call used as it reaches the tool:
// mcp-go has checked the call by then, and a replay never reaches it.
func keepingState(h server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		keepState(ctx)
		return h(ctx, req)
	}
}

// verifyState checks a tools/call's requestState before mcp-go sees it: a
// handler cannot answer -32602, and nothing may resume on a bad state. ok
// is false when it has answered the request itself; otherwise settle must
// be called when the request is served, freeing a state it did not use.
func (s *Server) verifyState(w http.ResponseWriter, r *http.Request, msg rpcPeek) (_ *http.Request, settle func(), ok bool) {
	if msg.Method != string(mcp.MethodToolsCall) || msg.Params.RequestState == "" {
		return r, func() {}, true
	}
	claims, use, err := s.sealer.open(msg.Params.RequestState, msg.Params.Name, PrincipalFrom(r.Context()), msg.arguments())
	if err != nil {
		writeJSONRPCError(w, msg.ID, mcp.INVALID_PARAMS, err.Error())
		return r, nil, false
	}
	return r.WithContext(context.WithValue(r.Context(), claimsKey{}, claimed{claims: claims, use: use})), use.settle, true
}

func writeJSONRPCError(w http.ResponseWriter, id json.RawMessage, code int, message string) {
	writeJSONRPCErrorData(w, id, code, message, nil)
}
