package ollama

import "time"

// SetNow replaces the clock m's cache of /api/show answers reads.
func SetNow(m *Model, now func() time.Time) { m.now = now }
