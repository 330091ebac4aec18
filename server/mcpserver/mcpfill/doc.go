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
//   - Request bodies (BodyDeadline, ReadRequest, MaxProgressTokenBytes).
//     mcp-go reads a POST body with io.ReadAll, with no bound on its size
//     or on how long it takes to arrive, and repeats whatever progress
//     token a client sends in every notification of the call. Delete each
//     bound when mcp-go's Streamable HTTP transport has it.
//   - Sealed requestState (Sealer, Claims, ClaimsFrom, KeepState). mcp-go
//     passes requestState through as plain text, neither sealed nor
//     verified, lets a replay through, and a tool handler cannot answer
//     the -32602 a bad state needs. Delete when mcp-go seals and verifies
//     the state itself, binds it to the caller and the call, and refuses a
//     replay before the handler runs.
//
// Peek and the Write functions are how the fill-ins that answer ahead of
// mcp-go read a request and answer it; they go with the last of those.
//
// The principal (WithPrincipal, PrincipalFrom) is the client that a
// request comes from: every fill-in keeps what it holds per principal,
// and gives it back to that principal only.
package mcpfill
