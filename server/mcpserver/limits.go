package mcpserver

import "sync"

// What a client can make Deskhand hold has a total cap and a per-client
// share (a client is a principal: one bearer token), so that one client
// can never take what the others need. The defaults:
const (
	// DefaultMaxPaused bounds the turns held for clients while they wait
	// for an answer: modern-era calls paused on a question and unfinished
	// tasks, together (DESIGN §2: at most 256 paused turns). Each holds a
	// goroutine and, often, a question on the desktop.
	DefaultMaxPaused = 256
	// DefaultMaxPausedPerClient is one client's share of them: a quarter,
	// so it takes four clients at their limit to fill Deskhand, and a
	// client running many sub-agents in parallel still has room.
	DefaultMaxPausedPerClient = 64
)

// limitHit tells which limit refused a request.
type limitHit int

const (
	withinLimits limitHit = iota
	clientLimit           // the client's share is used up
	totalLimit            // the total cap is reached
)

// quota counts what clients hold of one resource against a total cap and
// a per-client share.
type quota struct {
	total, perClient int

	mu   sync.Mutex
	used int
	by   map[string]int // principal → units held
}

// newQuota makes a quota; a share larger than the total is the total.
func newQuota(total, perClient int) *quota {
	return &quota{total: total, perClient: min(perClient, total), by: make(map[string]int)}
}

// take holds one unit for the principal unless its share or the total is
// used up.
func (q *quota) take(principal string) limitHit {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.by[principal] >= q.perClient:
		return clientLimit
	case q.used >= q.total:
		return totalLimit
	}
	q.by[principal]++
	q.used++
	return withinLimits
}

// give returns a unit the principal took.
func (q *quota) give(principal string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.by[principal]--; q.by[principal] <= 0 {
		delete(q.by, principal)
	}
	q.used--
}
