// Package agent is Deskhand's core: the agents a person defines, the
// conversations MCP clients hold with them, the run loop that answers each
// call (model, tools, model again), the question broker that asks a person
// when a turn needs one, the clients (principals) and their tokens,
// settings, and the events the desktop listens to.
//
// Everything else is an edge. The MCP surface (server/mcpserver), the
// desktop and the command line (ui) call into the core; the core reaches
// models, the store and the keychain only through the ports it declares
// ([Model], [History], [Secrets], [Tool], and [Asker] for the calling
// client's person). It imports nothing but the standard library and uuid,
// which deps_test.go enforces.
//
// The files follow the parts: core.go (configuration, start and close),
// agents.go, clients.go, conversations.go, settings.go, run.go (the run
// loop), turns.go (the turns in progress, for Close and DeleteAgent),
// live.go (what a running turn has done so far, for the desktop),
// broker.go (questions and approvals), registry.go (conversations in
// memory), events.go, errors.go and ports.go.
//
// Invariants:
//   - one turn at a time per conversation ([ErrConversationBusy]);
//   - a conversation belongs to the principal that started it; a handle that
//     is unknown or foreign gets the same [ErrUnknownConversation];
//   - a user message is committed before the model is called, and a turn
//     always ends recorded (completed, failed, cancelled or interrupted);
//   - a question is answered once, by the first of the calling client and
//     the desktop that the agent's routing allows; approvals go to the
//     person at the desktop unless the agent lets the client approve; with
//     nobody able to answer, or none in time, the turn fails: an answer is
//     never invented;
//   - no lock that a request takes is held across a store write: changes
//     of agents and of clients go one at a time under their own locks,
//     and a client's last use is kept in memory and written in the
//     background and at Close;
//   - Close refuses new turns, then waits for the running ones;
//   - event delivery never blocks the run loop (slow subscribers lose events).
package agent
