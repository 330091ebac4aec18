package mcpserver

// Listening exposes whether a legacy session has its GET stream open, so
// tests can wait for a client's stream before relying on it.
func (s *Server) Listening(sid string) bool { return s.listening(sid) }

// OnSessionEnd calls f with the id of each legacy session that ends.
func (s *Server) OnSessionEnd(f func(sid string)) {
	s.sessions.mu.Lock()
	defer s.sessions.mu.Unlock()
	s.sessions.ended = f
}

// SessionState counts what the server holds for legacy sessions: the live
// sessions, those continuing a conversation, their open GET streams and
// their calls that notifications/cancelled can stop.
func (s *Server) SessionState() (live, conversations, listeners, calls int) {
	live, conversations = s.sessions.count()
	s.mu.Lock()
	defer s.mu.Unlock()
	return live, conversations, len(s.listeners), len(s.legacyCalls)
}

// OnTaskFinished calls f with the id of each task once it has finished and
// is kept (or not) within the limits on finished tasks.
func (s *Server) OnTaskFinished(f func(id string)) {
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	s.tasks.onFinish = f
}
