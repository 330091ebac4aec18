// Package toolservers runs the person's own MCP servers (filesystem,
// GitHub, databases, browsers…) as tools for Deskhand's agents, with
// mcp-go's client over stdio and Streamable HTTP.
//
// A [Manager] (one per process) holds the servers' plain [Config]s, whose
// secrets the caller has already resolved. A server starts on first use
// ([Manager.Tools], [Manager.Call]), stops after an idle timeout, is
// started again after a crash with an exponential backoff (a server that
// keeps failing at once ends [StateFailed] with its last stderr lines),
// and is stopped with its whole process group on [Manager.Close]: on
// Linux (parent-death signal) and Windows (a job object) a child also dies
// with Deskhand, even killed. Each server's stderr goes to its
// own size-capped log file. A notifications/tools/list_changed from a
// server refreshes its tool list, and [Options.OnChange] hears of it.
//
// The model sees a server's tool under the name [ToolName] gives it
// (server__tool, at most 64 characters of [a-zA-Z0-9_-]); [NewNameTable]
// keeps the names of one agent's set unique and maps them back. Each
// [ToolInfo] carries a Hash of its definition, for the rule that a tool's
// definition is pinned when the person attaches it. [NewTool] makes an
// [agent.Tool] of one server tool; it needs approval unless the server
// marks it read-only.
//
// A call is cut after [Options.CallTimeout] with a message the model
// reads; a cancelled call is cancelled on the server too
// (notifications/cancelled). Results are turned into text, other content
// summarised ("[image/png, 12 KB]"), and cut at [Options.MaxResultBytes].
// Elicitation and sampling requests from a server go to the hooks in
// [Options]; sampling is declared, and answered, only for servers whose
// Config allows it.
package toolservers
