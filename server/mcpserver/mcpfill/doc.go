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
//   - Resumable call streams (Resumables, WithCallStream, CloseCallStream,
//     Notify). mcp-go's forwarder drops a notification it holds when the
//     answer goes out first, and on a legacy session the forwarder of an
//     earlier call can take one and drop it; it sends no keep-alive on a
//     POST stream; and its WithEventStore cannot serve SEP-1699, as a
//     spike (issue 13) found: its POST streams have no priming event or
//     retry field and no way to end mid-call; NewInMemoryEventStore keeps
//     every event until the session ends, with no cap; a dropped or
//     unknown id gets 400, not 410 (the EventStore interface cannot say
//     "dropped"); the call's context is cancelled when the client drops,
//     so the call would not live to be resumed; writes that bypass it
//     carry no id; and when a keep-alive opens the stream first, its "id:"
//     lines are lost. Delete when mcp-go writes every notification of a
//     call before its answer, sends keep-alives on POST streams and keeps
//     bounded, resumable POST streams that outlive their connection.
//   - Paused turns (PausedTurns, ParkedTurn). On a 2026-07-28 input round
//     mcp-go only runs the handler again from the start when the client
//     retries: there is no way to keep work parked mid-flight across
//     rounds, so work that must not be replayed would be. Delete when
//     mcp-go holds a call's work across input rounds (a continuation it
//     resumes on a verified retry), bounded, with expiry.
//   - Tasks (Tasks, Task). mcp-go has no 2026-07-28 Tasks extension
//     (SEP-2663): no tasks/update, no input_required, and on modern
//     requests tasks/result is removed, so a result cannot be fetched; its
//     legacy tasks cancel the work when the response is written (issue
//     #897). Delete when mcp-go serves the extension, with input_required
//     and tasks/update, bounded per client.
//   - Legacy sessions (Sessions). mcp-go's stateful id manager keeps a
//     tombstone of every ended session, counts none of them, and does not
//     know who opened one: any client holding an id may use it, and a GET
//     opens a stream on any id, as a session nothing counts. Delete when
//     mcp-go bounds sessions per client and binds each to its opener.
//   - Cancelling a legacy call over HTTP (LegacyCalls). mcp-go cancels a
//     call's context when its connection drops, which a 2025-11-25 call
//     must outlive, and never hands notifications/cancelled to the work.
//     Delete when mcp-go lets the work outlive the connection and stops
//     it on notifications/cancelled.
//   - Client capabilities (ClientCapabilities). mcp-go sends elicitation
//     and sampling requests without checking that the client declared
//     them. Delete when mcp-go refuses them itself.
//   - Opaque list cursors (Cursors). mcp-go's tools/list cursor is the
//     last name listed, in base64, which a client can forge and which
//     outlives a restart. Delete when mcp-go's cursors are opaque and
//     refused when foreign.
//
// Peek and the Write functions are how the fill-ins that answer ahead of
// mcp-go read a request and answer it; they go with the last of those.
//
// Some of what mcp-go lacks stays in mcpserver, being inseparable from
// what Deskhand serves: the localhost guard (Origin checks and bearer
// tokens, against the core's clients); routing each request to the fill-in
// that serves it, which needs to know the agents and the extra tools; the
// tool list served from Deskhand's catalog (the page splice and the
// session-tools bypass of tools/list, whose cost is the catalog's size);
// progress notifications made from the core's events; the bridges that
// let a turn ask or sample through a parked turn, a task or a legacy
// session (they speak the core's questions and answers); and the limits'
// defaults, which are Deskhand's policy.
//
// The principal (WithPrincipal, PrincipalFrom) is the client that a
// request comes from: every fill-in keeps what it holds per principal,
// and gives it back to that principal only.
package mcpfill
