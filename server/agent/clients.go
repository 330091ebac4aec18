package agent

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// CreateClient registers a client and returns its bearer token, which is
// shown once: only its SHA-256 is kept.
func (c *Core) CreateClient(ctx context.Context, name string) (Client, string, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 100 || name == LocalPrincipal {
		return Client{}, "", Userf(nil, "client name %q is not valid: use 1-100 characters (not %q)", name, LocalPrincipal)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cl := range c.clients {
		if cl.Active() && cl.Name == name {
			return Client{}, "", Userf(nil, "a client named %q already exists; revoke it first or pick another name", name)
		}
	}
	token, hash, err := newToken()
	if err != nil {
		return Client{}, "", err
	}
	cl := Client{ID: uuid.NewString(), Name: name, TokenHash: hash, CreatedAt: c.now()}
	if err := c.history.PutClient(ctx, cl); err != nil {
		return Client{}, "", fmt.Errorf("save client %s: %w", name, err)
	}
	c.clients = append(c.clients, cl)
	c.publish(Event{Kind: EventClientsChanged, Text: name})
	return cl, token, nil
}

// RotateClient gives the named client a new token, creating the client
// when there is none. The old token stops working at once; the client
// stays the same principal, so its conversations remain its own.
func (c *Core) RotateClient(ctx context.Context, name string) (Client, string, error) {
	if err := c.adoptStoredClient(ctx, name); err != nil {
		return Client{}, "", err
	}
	c.mu.Lock()
	i := slices.IndexFunc(c.clients, func(cl Client) bool { return cl.Active() && cl.Name == name })
	if i < 0 {
		c.mu.Unlock()
		return c.CreateClient(ctx, name)
	}
	defer c.mu.Unlock()
	token, hash, err := newToken()
	if err != nil {
		return Client{}, "", err
	}
	cl := c.clients[i]
	cl.TokenHash = hash
	if err := c.history.PutClient(ctx, cl); err != nil {
		return Client{}, "", fmt.Errorf("rotate the token of %s: %w", name, err)
	}
	c.clients[i] = cl
	c.publish(Event{Kind: EventClientsChanged, Text: name})
	return cl, token, nil
}

// adoptStoredClient makes the core know the named active client when the
// history has it but the core does not: another process on the same
// database (a second 'deskhand connect' while the app is not running)
// created it after this core loaded its clients. Rotating then replaces
// that client's token instead of failing to create a second client of
// the same name.
func (c *Core) adoptStoredClient(ctx context.Context, name string) error {
	c.mu.Lock()
	known := slices.ContainsFunc(c.clients, func(cl Client) bool { return cl.Active() && cl.Name == name })
	c.mu.Unlock()
	if known {
		return nil
	}
	stored, err := c.history.Clients(ctx)
	if err != nil {
		return fmt.Errorf("reload clients: %w", err)
	}
	i := slices.IndexFunc(stored, func(cl Client) bool { return cl.Active() && cl.Name == name })
	if i < 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if slices.ContainsFunc(c.clients, func(cl Client) bool { return cl.Active() && cl.Name == name }) {
		return nil
	}
	if j := slices.IndexFunc(c.clients, func(cl Client) bool { return cl.ID == stored[i].ID }); j >= 0 {
		c.clients[j] = stored[i]
	} else {
		c.clients = append(c.clients, stored[i])
	}
	return nil
}

// newToken makes a 256-bit bearer token and the SHA-256 that is kept of it.
func newToken() (token string, hash []byte, err error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return "", nil, fmt.Errorf("make token: %w", err)
	}
	token = "dh_" + base64.RawURLEncoding.EncodeToString(secret)
	sum := sha256.Sum256([]byte(token))
	return token, sum[:], nil
}

// RevokeClient stops accepting the named client's token at once.
func (c *Core) RevokeClient(ctx context.Context, name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, cl := range c.clients {
		if cl.Active() && cl.Name == name {
			cl.RevokedAt = c.now()
			if err := c.history.PutClient(ctx, cl); err != nil {
				return fmt.Errorf("revoke client %s: %w", name, err)
			}
			c.clients[i] = cl
			c.publish(Event{Kind: EventClientsChanged, Text: name})
			return nil
		}
	}
	return Userf(ErrNotFound, "no active client named %q", name)
}

// Clients lists active clients by name.
func (c *Core) Clients() []Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.DeleteFunc(slices.Clone(c.clients), func(cl Client) bool { return !cl.Active() })
	slices.SortFunc(out, func(a, b Client) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// lastUseGranularity limits last-use writes to one per client per minute.
const lastUseGranularity = time.Minute

// Authenticate returns the active client whose token this is. Every active
// client's hash is compared in constant time, so timing tells nothing.
func (c *Core) Authenticate(ctx context.Context, token string) (Client, bool) {
	if token == "" {
		return Client{}, false
	}
	sum := sha256.Sum256([]byte(token))
	c.mu.Lock()
	defer c.mu.Unlock()
	found := -1
	for i, cl := range c.clients {
		if subtle.ConstantTimeCompare(cl.TokenHash, sum[:]) == 1 && cl.Active() {
			found = i
		}
	}
	if found < 0 {
		return Client{}, false
	}
	cl := &c.clients[found]
	if now := c.now(); now.Sub(cl.LastUsedAt) >= lastUseGranularity {
		cl.LastUsedAt = now
		if err := c.history.TouchClient(ctx, cl.ID, now); err != nil {
			c.log.Warn("record client last use", "client", cl.Name, "err", err)
		}
	}
	return *cl, true
}
