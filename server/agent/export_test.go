package agent

import "context"

// FlushLastUse writes the clients' last uses kept in memory now, as the
// background flush does lastUseGranularity after a use.
func (c *Core) FlushLastUse(ctx context.Context) error { return c.flushLastUse(ctx) }
