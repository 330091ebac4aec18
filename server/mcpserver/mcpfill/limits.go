package mcpfill

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// What a client can make the server hold has a total cap and a
// per-client share (a client is a principal), so that one client can
// never take what the others need.

// LimitHit tells which limit refused something.
type LimitHit int

const (
	WithinLimits LimitHit = iota
	ClientLimit           // the client's share is used up
	TotalLimit            // the total cap is reached
)

// Quota counts what clients hold of one resource against a total cap and
// a per-client share.
type Quota struct {
	// Total and PerClient are the limits, fixed by NewQuota.
	Total, PerClient int

	mu   sync.Mutex
	used int
	by   map[string]int // principal → units held
}

// NewQuota makes a quota; a share larger than the total is the total.
func NewQuota(total, perClient int) *Quota {
	return &Quota{Total: total, PerClient: min(perClient, total), by: make(map[string]int)}
}

// Take holds one unit for the principal unless its share or the total is
// used up.
func (q *Quota) Take(principal string) LimitHit {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.by[principal] >= q.PerClient:
		return ClientLimit
	case q.used >= q.Total:
		return TotalLimit
	}
	q.by[principal]++
	q.used++
	return WithinLimits
}

// Give returns a unit the principal took.
func (q *Quota) Give(principal string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.by[principal]--; q.by[principal] <= 0 {
		delete(q.by, principal)
	}
	q.used--
}

// LimitRequests serves a request only within the limits on requests in
// progress (inFlight) and, among them, open streams (those isStream
// tells); beyond them it answers at once, 429 when the client used up its
// share and 503 when all clients together reached the total, with
// Retry-After and a message naming the limit. The principal is the
// request's (WithPrincipal).
func LimitRequests(inFlight, streams *Quota, isStream func(*http.Request) bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		principal := PrincipalFrom(r.Context())
		switch inFlight.Take(principal) {
		case ClientLimit:
			Refuse(w, http.StatusTooManyRequests, 1, fmt.Sprintf("Too many requests in progress for this client: %d at once is the limit for each client. Wait for some to finish, then retry.", inFlight.PerClient))
			return
		case TotalLimit:
			Refuse(w, http.StatusServiceUnavailable, 1, fmt.Sprintf("Too many requests in progress: %d at once is Deskhand's limit for all clients together. Retry in a moment.", inFlight.Total))
			return
		}
		defer inFlight.Give(principal)
		if isStream(r) {
			switch streams.Take(principal) {
			case ClientLimit:
				Refuse(w, http.StatusTooManyRequests, 5, fmt.Sprintf("Too many open streams for this client: %d at once (GET /mcp and subscriptions/listen) is the limit for each client. Close the streams you no longer use, then retry.", streams.PerClient))
				return
			case TotalLimit:
				Refuse(w, http.StatusServiceUnavailable, 5, fmt.Sprintf("Too many open streams: %d at once (GET /mcp and subscriptions/listen) is Deskhand's limit for all clients together. Retry later.", streams.Total))
				return
			}
			defer streams.Give(principal)
		}
		next.ServeHTTP(w, r)
	})
}

// Shelf keeps ids for clients, each client's oldest first, within a total
// and a per-client share. Unlike a Quota it never refuses: what is put on
// it pushes out the oldest of the same client when over its share and,
// when over the total, the oldest of the client that holds the most (the
// oldest of all among equals), so that a client within its share loses
// nothing to one that is not. It is not safe for concurrent use.
type Shelf struct {
	// Total and PerClient are the limits, fixed by NewShelf.
	Total, PerClient int

	n   int
	seq uint64
	by  map[string][]shelved // principal → oldest first
}

type shelved struct {
	id    string
	until time.Time // when it expires
	seq   uint64    // when it was put on the shelf
}

// PushedOut is what Put pushed out, and which limit did.
type PushedOut struct {
	Principal, ID string
	Until         time.Time
	Hit           LimitHit
}

// NewShelf makes a shelf; a share larger than the total is the total.
func NewShelf(total, perClient int) *Shelf {
	return &Shelf{Total: total, PerClient: min(perClient, total), by: make(map[string][]shelved)}
}

// Len is how many ids the shelf holds.
func (s *Shelf) Len() int { return s.n }

// Put adds id as the principal's newest, kept until until, and returns
// what it pushed out.
func (s *Shelf) Put(principal, id string, until time.Time) []PushedOut {
	s.seq++
	s.by[principal] = append(s.by[principal], shelved{id: id, until: until, seq: s.seq})
	s.n++
	var out []PushedOut
	for len(s.by[principal]) > s.PerClient {
		out = append(out, s.popOldest(principal, ClientLimit))
	}
	for s.n > s.Total {
		out = append(out, s.popOldest(s.largest(), TotalLimit))
	}
	return out
}

// largest is the client holding the most; among equals, the one holding
// the oldest.
func (s *Shelf) largest() string {
	var who string
	for p, held := range s.by {
		most := s.by[who]
		if who == "" || len(held) > len(most) || (len(held) == len(most) && held[0].seq < most[0].seq) {
			who = p
		}
	}
	return who
}

func (s *Shelf) popOldest(principal string, hit LimitHit) PushedOut {
	held := s.by[principal]
	out := PushedOut{Principal: principal, ID: held[0].id, Until: held[0].until, Hit: hit}
	if len(held) == 1 {
		delete(s.by, principal)
	} else {
		held[0] = shelved{}
		s.by[principal] = held[1:]
	}
	s.n--
	return out
}

// Expire takes off the shelf what expired before now, and returns its ids.
func (s *Shelf) Expire(now time.Time) []string {
	var ids []string
	for p, held := range s.by {
		held = slices.DeleteFunc(held, func(e shelved) bool {
			if now.After(e.until) {
				ids = append(ids, e.id)
				return true
			}
			return false
		})
		if len(held) == 0 {
			delete(s.by, p)
		} else {
			s.by[p] = held
		}
	}
	s.n -= len(ids)
	return ids
}

// Refuse answers a request turned away for a limit, saying when to retry.
func Refuse(w http.ResponseWriter, status, retryAfter int, msg string) {
	w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	http.Error(w, msg, status)
}
