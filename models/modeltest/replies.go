package modeltest

import "sync"

// Replies picks each request's reply for a fake: the scripted replies in
// order, then, once they are used up, the hook's (Func), else Echo's. It
// is safe for concurrent use; the zero value with Echo set is ready.
type Replies[Req, Rep any] struct {
	Scripted []Rep
	Func     func(Req) Rep // nil: Echo
	Echo     func(Req) Rep

	mu   sync.Mutex
	next int // index of the next scripted reply
}

// Next is the reply to req.
func (s *Replies[Req, Rep]) Next(req Req) Rep {
	s.mu.Lock()
	if s.next < len(s.Scripted) {
		reply := s.Scripted[s.next]
		s.next++
		s.mu.Unlock()
		return reply
	}
	s.mu.Unlock()
	if s.Func != nil {
		return s.Func(req)
	}
	return s.Echo(req)
}
