// Package agent is Deskhand's core: agents, conversations, the run loop,
// clients (principals) and the events the desktop listens to.
//
// Everything else is an edge. The MCP surface (server/mcpserver) and the GUI
// (ui) call into the core; the core reaches models, the store and the
// keychain only through the ports it declares here ([Model], [History],
// [Secrets]). It imports nothing but the standard library and uuid, which
// deps_test.go enforces.
//
// Invariants:
//   - one turn at a time per conversation ([ErrConversationBusy]);
//   - a conversation belongs to the principal that started it; a handle that
//     is unknown or foreign gets the same [ErrUnknownConversation];
//   - a user message is committed before the model is called, and a turn
//     always ends recorded (completed, failed, cancelled or interrupted);
//   - event delivery never blocks the run loop (slow subscribers lose events).
package agent
