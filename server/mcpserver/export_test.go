package mcpserver

// Listening exposes whether a legacy session has its GET stream open, so
// tests can wait for a client's stream before relying on it.
func (s *Server) Listening(sid string) bool { return s.sessions.Listening(sid) }

// OnSessionEnd calls f with the id of each legacy session that ends.
func (s *Server) OnSessionEnd(f func(sid string)) { s.sessions.OnEnd(f) }

// SessionState counts what the server holds for legacy sessions: the live
// sessions, those continuing a conversation, their open GET streams and
// their calls that notifications/cancelled can stop.
func (s *Server) SessionState() (live, conversations, listeners, calls int) {
	live, conversations, listeners = s.sessions.Count()
	return live, conversations, listeners, s.legacyCalls.Len()
}

// OnTaskFinished calls f with the id of each task once it has finished and
// is kept (or not) within the limits on finished tasks.
func (s *Server) OnTaskFinished(f func(id string)) { s.tasks.OnFinish(f) }
