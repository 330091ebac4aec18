// Package agent is Deskhand's core: the agents a person defines and the
// providers they think on, the conversations MCP clients hold with them,
// the run loop that answers each call (model, tools, model again), teams,
// the person's tool servers as tools, the question broker that asks a
// person when a turn needs one, approval rules, the clients (principals)
// with their tokens and what each sees, the activity log, search,
// settings, the redactor that keeps secrets out of what leaves the core,
// and the events the desktop listens to.
//
// The core is split by feature: [Agents], [Providers], [Clients],
// [ToolServers], [Conversations] (runs, teams and search), [Questions],
// [Approvals], [Activity], [Events] and [Settings] each own their state
// and its lock; [Core] composes them and hands them out, and the run loop
// reaches them through its own fields. Every event kind is declared
// beside [Event].
//
// Everything else is an edge. The MCP surface (server/mcpserver), the
// desktop and the command line (ui) call into the features; the core
// reaches models, the store, the keychain and tool servers only through
// the ports it declares ([Model], [History] and the other store ports,
// [Secrets], [Tool], [ToolServerRunner], and [Asker] for the calling
// client's person). It imports nothing but the standard library and
// uuid, which deps_test.go enforces.
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
