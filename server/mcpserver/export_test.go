package mcpserver

// Listening exposes whether a legacy session has its GET stream open, so
// tests can wait for a client's stream before relying on it.
func (s *Server) Listening(sid string) bool { return s.listening(sid) }
