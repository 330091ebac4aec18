package agent

import "context"

// FlushLastUse writes the clients' last uses kept in memory now, as the
// background flush does lastUseGranularity after a use.
func (cs *Clients) FlushLastUse(ctx context.Context) error {
	c := cs.c
	return c.flushLastUse(ctx)
}
