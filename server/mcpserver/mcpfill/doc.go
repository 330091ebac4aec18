// Package mcpfill holds the pieces of the MCP protocol that
// mark3labs/mcp-go v1.2.1 lacks and Deskhand needs, each behind the small
// types and func fields that package mcpserver fills in. It knows nothing
// of agents, catalogs or the core: mcpserver maps those onto MCP.
//
// Each fill-in, what mcp-go v1.2.1 lacks, and what to delete when it has it:
//
//   - Limits (Quota, Shelf, LimitRequests). mcp-go caps nothing a client
//     can make the server hold: requests in flight, open streams, legacy
//     sessions, finished tasks. Delete a limit when mcp-go enforces a total
//     and a per-client share of that resource itself.
//
// The principal (WithPrincipal, PrincipalFrom) is the client that a
// request comes from: every fill-in keeps what it holds per principal,
// and gives it back to that principal only.
package mcpfill
