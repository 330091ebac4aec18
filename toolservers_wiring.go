package main

import (
	"log/slog"
	"path/filepath"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/toolservers"
)

// newToolServers makes the Manager of the person's tool servers (logs
// under DATA/toolservers/, redacted) and the core's port over it;
// coreBuilt hands it the core once made, to which the servers' questions
// go, and their requests for a model (sampling, for servers allowed to).
func newToolServers(data string, log *slog.Logger, redact func(string) string) (m *toolservers.Manager, port agent.ToolServerRunner, coreBuilt func(*agent.Core)) {
	m, port, hostReady := toolservers.ForCore(toolservers.Options{LogDir: filepath.Join(data, "toolservers"), Logger: log, Redact: redact})
	return m, port, func(c *agent.Core) { hostReady(c.ToolServers()) }
}

// stopToolServers stops the person's MCP servers with their processes.
func (a *wiring) stopToolServers() {
	if err := a.toolServers.Close(); err != nil {
		a.log.Error("stop tool servers", "err", err)
	}
}
