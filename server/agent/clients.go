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
	"sync"
	"time"

	"github.com/google/uuid"
)

// Clients are the MCP clients with a token, what each may see, and when
// each was last used.
type Clients struct {
	c     *Core
	store ClientStore
	// writes makes changes of clients (create, rotate, revoke) go one at
	// a time across their store writes; no request takes it.
	writes sync.Mutex
	// mu guards list, unflushed and the flush fields; never held across
	// I/O.
	mu   sync.Mutex
	list []Client
	// unflushed are last uses not yet written, by client ID.
	unflushed map[string]time.Time
	// flushTimer runs the next background flush of them, if one is
	// scheduled; flushes counts the scheduled or running ones, for Close;
	// flushStopped once Close stopped them.
	flushTimer   *time.Timer
	flushes      sync.WaitGroup
	flushStopped bool
	// flushing makes flushes of last uses go one at a time.
	flushing sync.Mutex
	// visibility is which agents each client sees, kept for the request
	// path (visibility.go).
	visibility visibilityCache
}

// Create registers a client and returns its bearer token, which is
// shown once: only its SHA-256 is kept.
func (cs *Clients) Create(ctx context.Context, name string) (Client, string, error) {
	c := cs.c
	cs.writes.Lock()
	defer cs.writes.Unlock()
	return c.createClient(ctx, name)
}

// createClient is Create; the caller holds clientWrites.
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
	if err := c.clients.store.PutClient(ctx, cl); err != nil {
		return Client{}, "", fmt.Errorf("save client %s: %w", name, err)
	}
	c.clients.mu.Lock()
	c.clients.list = append(c.clients.list, cl)
	c.clients.mu.Unlock()
	c.publish(Event{Kind: EventClientsChanged, Text: name})
	return cl, token, nil
}

// activeClient finds the named active client in memory.
func (c *Core) activeClient(name string) (Client, bool) {
	c.clients.mu.Lock()
	defer c.clients.mu.Unlock()
	i := slices.IndexFunc(c.clients.list, func(cl Client) bool { return cl.Active() && cl.Name == name })
	if i < 0 {
		return Client{}, false
	}
	return c.clients.list[i], true
}

// Principal is who a caller named name is: the active client of that
// name, or this computer's own (LocalPrincipal) when there is none.
func (cs *Clients) Principal(name string) string {
	if cl, ok := cs.c.activeClient(name); ok {
		return cl.ID
	}
	return LocalPrincipal
}

// updateClient applies a change written to the store to the client in
// memory. Its last use is the one in memory, which may be newer than the
// one written: that one is then written again at the next flush.
func (c *Core) updateClient(written Client) Client {
	c.clients.mu.Lock()
	defer c.clients.mu.Unlock()
	i := slices.IndexFunc(c.clients.list, func(cl Client) bool { return cl.ID == written.ID })
	if i < 0 {
		c.clients.list = append(c.clients.list, written)
		return written
	}
	if used := c.clients.list[i].LastUsedAt; used.After(written.LastUsedAt) {
		written.LastUsedAt = used
		c.markUsedLocked(written.ID, used)
	}
	c.clients.list[i] = written
	return written
}

// Rotate gives the named client a new token, creating the client
// when there is none. The old token stops working at once; the client
// stays the same principal, so its conversations remain its own.
func (cs *Clients) Rotate(ctx context.Context, name string) (Client, string, error) {
	c := cs.c
	cs.writes.Lock()
	defer cs.writes.Unlock()
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
	if err := cs.store.PutClient(ctx, cl); err != nil {
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
	stored, err := c.clients.store.Clients(ctx)
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

// Revoke stops accepting the named client's token at once.
func (cs *Clients) Revoke(ctx context.Context, name string) error {
	c := cs.c
	cs.writes.Lock()
	defer cs.writes.Unlock()
	cl, ok := c.activeClient(name)
	if !ok {
		return Userf(ErrNotFound, "no active client named %q", name)
	}
	cl.RevokedAt = c.now()
	if err := cs.store.PutClient(ctx, cl); err != nil {
		return fmt.Errorf("revoke client %s: %w", name, err)
	}
	c.updateClient(cl)
	c.publish(Event{Kind: EventClientsChanged, Text: name})
	return nil
}

// List lists active clients by name.
func (cs *Clients) List() []Client {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	out := slices.DeleteFunc(slices.Clone(cs.list), func(cl Client) bool { return !cl.Active() })
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
func (cs *Clients) Authenticate(ctx context.Context, token string) (Client, bool) {
	c := cs.c
	if token == "" {
		return Client{}, false
	}
	sum := sha256.Sum256([]byte(token))
	cs.mu.Lock()
	defer cs.mu.Unlock()
	found := -1
	for i, cl := range cs.list {
		if subtle.ConstantTimeCompare(cl.TokenHash, sum[:]) == 1 && cl.Active() {
			found = i
		}
	}
	if found < 0 {
		return Client{}, false
	}
	cl := &cs.list[found]
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
	if prev, ok := c.clients.unflushed[id]; !ok || at.After(prev) {
		c.clients.unflushed[id] = at
	}
	c.armFlushLocked()
}

// armFlushLocked schedules a flush in lastUseGranularity unless one is
// scheduled or the core is closing. No goroutine waits meanwhile: the
// flush runs on a timer's, which Close stops or waits for. The caller
// holds clientsMu.
func (c *Core) armFlushLocked() {
	if c.clients.flushTimer != nil || c.clients.flushStopped {
		return
	}
	c.clients.flushes.Add(1)
	c.clients.flushTimer = time.AfterFunc(lastUseGranularity, c.backgroundFlush)
}

// backgroundFlush is the scheduled flush; it schedules the next one when
// uses are left to write (new ones, or ones the store refused).
func (c *Core) backgroundFlush() {
	defer c.clients.flushes.Done()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.base), flushTimeout)
	defer cancel()
	if err := c.flushLastUse(ctx); err != nil {
		c.log.Warn("record clients' last use", "err", err)
	}
	c.clients.mu.Lock()
	defer c.clients.mu.Unlock()
	c.clients.flushTimer = nil
	if len(c.clients.unflushed) > 0 {
		c.armFlushLocked()
	}
}

// flushTimeout bounds one flush of last uses.
const flushTimeout = 10 * time.Second

// flushLastUse writes the last uses kept in memory to the store. What
// cannot be written stays queued for the next flush.
func (c *Core) flushLastUse(ctx context.Context) error {
	c.clients.flushing.Lock() // flushes go in order: a later use is never overwritten
	defer c.clients.flushing.Unlock()
	c.clients.mu.Lock()
	batch := c.clients.unflushed
	c.clients.unflushed = make(map[string]time.Time)
	c.clients.mu.Unlock()
	var errs []error
	for id, at := range batch {
		err := c.clients.store.TouchClient(ctx, id, at)
		if err == nil || errors.Is(err, ErrNotFound) { // gone: nothing to record
			continue
		}
		errs = append(errs, fmt.Errorf("record last use of client %s: %w", id, err))
		c.clients.mu.Lock()
		if prev, ok := c.clients.unflushed[id]; !ok || at.After(prev) {
			c.clients.unflushed[id] = at
		}
		c.clients.mu.Unlock()
	}
	return errors.Join(errs...)
}

// stopFlusher stops the background flush, for good, and writes what is
// left.
func (c *Core) stopFlusher() {
	c.clients.mu.Lock()
	c.clients.flushStopped = true
	if c.clients.flushTimer != nil && c.clients.flushTimer.Stop() {
		c.clients.flushes.Done() // it will not run
	}
	c.clients.flushTimer = nil
	c.clients.mu.Unlock()
	c.clients.flushes.Wait() // for a flush under way
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.base), flushTimeout)
	defer cancel()
	if err := c.flushLastUse(ctx); err != nil {
		c.log.Warn("record clients' last use at close", "err", err)
	}
}

// ClientStore keeps principals (hashed tokens only).
type ClientStore interface {
	Clients(ctx context.Context) ([]Client, error)
	PutClient(ctx context.Context, c Client) error
	TouchClient(ctx context.Context, id string, at time.Time) error
}
