// Package tools is Deskhand's catalog of built-in tools: the things an
// agent can do besides talking, offered to its model as [agent.Tool]s.
//
//   - current_time tells the date, time and weekday in a time zone;
//   - read_file, list_dir and write_file work on files, but only inside
//     the folders the user allowed for the agent ([agent.Agent.Folders]);
//   - fetch_url reads a web page or API response as text.
//
// write_file and fetch_url reach outside the conversation, so they ask a
// person for approval unless the user switched that off
// ([agent.ApprovalDefaulter]).
//
// The folder rule is the security core of the package. A path, absolute
// or relative to the agent's first folder, is cleaned and its symbolic
// links are resolved (those of its longest existing prefix, and dangling
// links by hand) before it is checked against the resolved folders on
// path-component boundaries; the file is then reached through an
// [os.Root] opened on the folder, with the resolved relative path, so a
// link swapped in after the check still cannot lead out of it.
//
// Every refusal and every failure the model can act on is an
// [*agent.UserError], whose message is what the model reads.
package tools
