package agent

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// CreateClient registers a client and returns its bearer token, which is
// shown once: only its SHA-256 is kept.
func (c *Core) CreateClient(ctx context.Context, name string) (Client, string, error) {
	c.clientWrites.Lock()
	defer c.clientWrites.Unlock()
	return c.createClient(ctx, name)
}

// createClient is CreateClient; the caller holds clientWrites.
func (c *Core) createClient(ctx context.Context, name string) (Client, string, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 100 || name == LocalPrincipal {
		return Client{}, "", Userf(nil, "client name %q is not valid: use 1-100 characters (not %q)", name, LocalPrincipal)
	}
	if _, ok := c.activeClient(name); ok {
		return Client{}, "", Userf(nil, "a client named %q already exists; revoke it first or pick another name", name)
	}
	token, hash, err := c.newToken()
	if err != nil {
		return Client{}, "", err
	}
	cl := Client{ID: uuid.NewString(), Name: name, TokenHash: hash, CreatedAt: c.now()}
	if err := c.history.PutClient(ctx, cl); err != nil {
		return Client{}, "", fmt.Errorf("save client %s: %w", name, err)
	}
	c.clientsMu.Lock()
	c.clients = append(c.clients, cl)
	c.clientsMu.Unlock()
	c.publish(Event{Kind: EventClientsChanged, Text: name})
	return cl, token, nil
}

// activeClient finds the named active client in memory.
func (c *Core) activeClient(name string) (Client, bool) {
	c.clientsMu.Lock()
	defer c.clientsMu.Unlock()
	i := slices.IndexFunc(c.clients, func(cl Client) bool { return cl.Active() && cl.Name == name })
	if i < 0 {
		return Client{}, false
	}
	return c.clients[i], true
}

// updateClient applies a change written to the store to the client in
// memory. Its last use is the one in memory, which may be newer than the
// one written: that one is then written again at the next flush.
func (c *Core) updateClient(written Client) Client {
	c.clientsMu.Lock()
	defer c.clientsMu.Unlock()
	i := slices.IndexFunc(c.clients, func(cl Client) bool { return cl.ID == written.ID })
	if i < 0 {
		c.clients = append(c.clients, written)
		return written
	}
	if used := c.clients[i].LastUsedAt; used.After(written.LastUsedAt) {
		written.LastUsedAt = used
		c.markUsedLocked(written.ID, used)
	}
	c.clients[i] = written
	return written
}

// RotateClient gives the named client a new token, creating the client
// when there is none. The old token stops working at once; the client
// stays the same principal, so its conversations remain its own.
func (c *Core) RotateClient(ctx context.Context, name string) (Client, string, error) {
	c.clientWrites.Lock()
	defer c.clientWrites.Unlock()
	if err := c.adoptStoredClient(ctx, name); err != nil {
		return Client{}, "", err
	}
	cl, ok := c.activeClient(name)
	if !ok {
		return c.createClient(ctx, name)
	}
	token, hash, err := c.newToken()
	if err != nil {
		return Client{}, "", err
	}
	cl.TokenHash = hash
	if err := c.history.PutClient(ctx, cl); err != nil {
		return Client{}, "", fmt.Errorf("rotate the token of %s: %w", name, err)
	}
	cl = c.updateClient(cl)
	c.publish(Event{Kind: EventClientsChanged, Text: name})
	return cl, token, nil
}

// adoptStoredClient makes the core know the named active client when the
// history has it but the core does not: another process on the same
// database (a second 'deskhand connect' while the app is not running)
// created it after this core loaded its clients. Rotating then replaces
// that client's token instead of failing to create a second client of
// the same name. The caller holds clientWrites.
func (c *Core) adoptStoredClient(ctx context.Context, name string) error {
	if _, known := c.activeClient(name); known {
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
	c.updateClient(stored[i])
	return nil
}

// newToken makes a 256-bit bearer token and the SHA-256 that is kept of it.
func (c *Core) newToken() (token string, hash []byte, err error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return "", nil, fmt.Errorf("make token: %w", err)
	}
	token = "dh_" + base64.RawURLEncoding.EncodeToString(secret)
	c.redact.Learn(token)
	sum := sha256.Sum256([]byte(token))
	return token, sum[:], nil
}

// RevokeClient stops accepting the named client's token at once.
func (c *Core) RevokeClient(ctx context.Context, name string) error {
	c.clientWrites.Lock()
	defer c.clientWrites.Unlock()
	cl, ok := c.activeClient(name)
	if !ok {
		return Userf(ErrNotFound, "no active client named %q", name)
	}
	cl.RevokedAt = c.now()
	if err := c.history.PutClient(ctx, cl); err != nil {
		return fmt.Errorf("revoke client %s: %w", name, err)
	}
	c.updateClient(cl)
	c.publish(Event{Kind: EventClientsChanged, Text: name})
	return nil
}

// Clients lists active clients by name.
func (c *Core) Clients() []Client {
	c.clientsMu.Lock()
	defer c.clientsMu.Unlock()
	out := slices.DeleteFunc(slices.Clone(c.clients), func(cl Client) bool { return !cl.Active() })
	slices.SortFunc(out, func(a, b Client) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// lastUseGranularity limits last-use updates to one per client per
// minute; the updates are written to the store in the background, at most
// once per lastUseGranularity, and at Close.
const lastUseGranularity = time.Minute

// Authenticate returns the active client whose token this is. Every active
// client's hash is compared in constant time, so timing tells nothing. It
// never waits for the store: the last use is kept in memory and written
// later (see lastUseGranularity).
func (c *Core) Authenticate(ctx context.Context, token string) (Client, bool) {
	if token == "" {
		return Client{}, false
	}
	sum := sha256.Sum256([]byte(token))
	c.clientsMu.Lock()
	defer c.clientsMu.Unlock()
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
		c.markUsedLocked(cl.ID, now)
	}
	return *cl, true
}

// markUsedLocked queues a client's last use for the store and arms the
// background flush (unless the core is closing: Close flushes last). The
// caller holds clientsMu.
func (c *Core) markUsedLocked(id string, at time.Time) {
	if prev, ok := c.unflushed[id]; !ok || at.After(prev) {
		c.unflushed[id] = at
	}
	c.armFlushLocked()
}

// armFlushLocked schedules a flush in lastUseGranularity unless one is
// scheduled or the core is closing. No goroutine waits meanwhile: the
// flush runs on a timer's, which Close stops or waits for. The caller
// holds clientsMu.
func (c *Core) armFlushLocked() {
	if c.flushTimer != nil || c.flushStopped {
		return
	}
	c.flushes.Add(1)
	c.flushTimer = time.AfterFunc(lastUseGranularity, c.backgroundFlush)
}

// backgroundFlush is the scheduled flush; it schedules the next one when
// uses are left to write (new ones, or ones the store refused).
func (c *Core) backgroundFlush() {
	defer c.flushes.Done()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.base), flushTimeout)
	defer cancel()
	if err := c.flushLastUse(ctx); err != nil {
		c.log.Warn("record clients' last use", "err", err)
	}
	c.clientsMu.Lock()
	defer c.clientsMu.Unlock()
	c.flushTimer = nil
	if len(c.unflushed) > 0 {
		c.armFlushLocked()
	}
}

// flushTimeout bounds one flush of last uses.
const flushTimeout = 10 * time.Second

// flushLastUse writes the last uses kept in memory to the store. What
// cannot be written stays queued for the next flush.
func (c *Core) flushLastUse(ctx context.Context) error {
	c.flushing.Lock() // flushes go in order: a later use is never overwritten
	defer c.flushing.Unlock()
	c.clientsMu.Lock()
	batch := c.unflushed
	c.unflushed = make(map[string]time.Time)
	c.clientsMu.Unlock()
	var errs []error
	for id, at := range batch {
		err := c.history.TouchClient(ctx, id, at)
		if err == nil || errors.Is(err, ErrNotFound) { // gone: nothing to record
			continue
		}
		errs = append(errs, fmt.Errorf("record last use of client %s: %w", id, err))
		c.clientsMu.Lock()
		if prev, ok := c.unflushed[id]; !ok || at.After(prev) {
			c.unflushed[id] = at
		}
		c.clientsMu.Unlock()
	}
	return errors.Join(errs...)
}

// stopFlusher stops the background flush, for good, and writes what is
// left.
func (c *Core) stopFlusher() {
	c.clientsMu.Lock()
	c.flushStopped = true
	if c.flushTimer != nil && c.flushTimer.Stop() {
		c.flushes.Done() // it will not run
	}
	c.flushTimer = nil
	c.clientsMu.Unlock()
	c.flushes.Wait() // for a flush under way
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.base), flushTimeout)
	defer cancel()
	if err := c.flushLastUse(ctx); err != nil {
		c.log.Warn("record clients' last use at close", "err", err)
	}
}
