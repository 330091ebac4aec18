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
// The protocol pieces mcp-go v1.2.1 lacks (sealed requestState, resumable
// streams, bounds on bodies and on what clients hold, and more) are filled
// in by package mcpfill, beneath this one; its doc says what to delete
// when mcp-go has each.
package mcpserver
