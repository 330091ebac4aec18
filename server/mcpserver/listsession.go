package mcpserver

import (
	"context"
	"net/http"

	"github.com/mark3labs/mcp-go/server"
)

// tools/list of a large catalog. mcp-go's Streamable HTTP session reports
// its session tools as a map that is never nil, even when empty, so mcp-go
// merged every listed tool into a map and sorted the result again on every
// tools/list: with 1,000 agents, about 650 KB and most of a millisecond
// per list, all of it thrown away, since the page is served from the
// catalog (catalog.go). Deskhand sets no session tools, so a tools/list
// over HTTP sees its session without them: mcp-go lists its own tools, in
// order, and nothing more.

// sessionWithoutTools is every method mcp-go's Streamable HTTP session
// has, but its session tools.
type sessionWithoutTools interface {
	server.ClientSession
	server.SessionWithLogging
	server.SessionWithResources
	server.SessionWithResourceTemplates
	server.SessionWithStreamableHTTPConfig
	server.SessionWithSubscriptionFilter
	server.SessionWithSampling
	server.SessionWithElicitation
	server.SessionWithRoots
}

// listSession is a session as a tools/list sees it.
type listSession struct{ sessionWithoutTools }

// listContext is the Streamable HTTP server's context function: a
// tools/list (the requests route hands a splice) whose session holds no
// session tools sees it as a listSession.
func (s *Server) listContext(ctx context.Context, _ *http.Request) context.Context {
	if _, listing := ctx.Value(toolSpliceKey{}).(*toolSplice); !listing {
		return ctx
	}
	session, ok := server.ClientSessionFromContext(ctx).(interface {
		sessionWithoutTools
		server.SessionWithTools
	})
	if !ok || len(session.GetSessionTools()) > 0 {
		return ctx
	}
	return s.mcp.WithContext(ctx, listSession{session})
}
