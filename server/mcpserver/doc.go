// Package mcpserver is Deskhand's MCP surface on mark3labs/mcp-go: every
// enabled agent is a tool, served over Streamable HTTP at /mcp (both the
// 2026-07-28 era and 2025-11-25 and earlier, decided per request) and over
// stdio.
//
// mcp-go leaves the localhost guard to us, so every HTTP request passes
// [Guard] first, in this order: Host (loopback or allow-listed, else 403),
// Origin (absent, the server's own loopback origin, or allow-listed, else
// 403), bearer token (else 401 with WWW-Authenticate pointing at the RFC 9728
// metadata), body size (else 413). Legacy MCP sessions are bound to the
// principal whose token opened them.
//
// Conversations on the wire: a call without a handle starts one; the minted
// handle comes back as the last text block and in _meta under
// [ConversationMetaKey]. Unknown and foreign handles get the same isError
// text. Tool failures are isError results; JSON-RPC errors are for protocol
// faults only.
//
// Resumption (SEP-1699) is ours (resume.go, stream.go), not mcp-go's
// WithEventStore, which a spike (issue 13) tried against v1.2.1: its POST
// streams have no priming event or retry field and no way to end mid-call,
// so server-sse-polling cannot pass on it; NewInMemoryEventStore keeps every
// event until the session ends, with no cap, and a dropped or unknown id gets
// 400, not 410 (the EventStore interface cannot say "dropped"); the call's
// context is cancelled when the client drops, so an agent turn would not live
// to be resumed; our Notify writes bypass its store, so those events carry no
// id; and when our keep-alive opens the stream first, its "id:" lines are lost.
package mcpserver
