package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/deskhand/deskhand/server/agent"
)

// agentToolServerFlags are the flags of agent edit that change its tool
// servers; they go alone.
type agentToolServerFlags struct {
	toolServer, askFirst, noToolServer, repin string
}

func (f *agentToolServerFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.toolServer, "toolserver", "", "give the agent a tool server's tools: NAME for all of them, NAME:TOOL,TOOL… for those")
	fs.StringVar(&f.askFirst, "ask-first", "", "with --toolserver: TOOL,TOOL… whose every call waits for your approval (tools the server does not mark read-only always do)")
	fs.StringVar(&f.noToolServer, "no-toolserver", "", "take a tool server's tools from the agent")
	fs.StringVar(&f.repin, "repin", "", "SERVER:TOOL, a held tool whose new definition you looked at (see 'deskhand toolserver held'): offer it again")
}

// agentToolServers runs the tool-server flags of agent edit on the agent
// slug; handled is false when none is given. fields are the agent's
// other flags, which go in an edit of their own.
func (inv *invocation) agentToolServers(cmd *cobra.Command, f *agentToolServerFlags, fields *pflag.FlagSet, slug string) (handled bool, err error) {
	ctx, given := cmd.Context(), cmd.Flags().Changed
	if !slices.ContainsFunc([]string{"toolserver", "ask-first", "no-toolserver", "repin"}, given) {
		return false, nil
	}
	others := given("model")
	fields.VisitAll(func(fl *pflag.Flag) { others = others || fl.Changed })
	if others {
		return true, usagef(cmd, "change an agent's tool servers in an 'agent edit' of their own, without other changes")
	}
	n := 0
	for _, name := range []string{"toolserver", "no-toolserver", "repin"} {
		if given(name) {
			n++
		}
	}
	switch {
	case n != 1:
		return true, usagef(cmd, "give one of --toolserver, --no-toolserver and --repin")
	case given("ask-first") && !given("toolserver"):
		return true, usagef(cmd, "--ask-first goes with --toolserver")
	}
	keeper, done, err := inv.reachToolServers(ctx)
	if err != nil {
		return true, err
	}
	defer done()
	stderr := inv.stderr
	split := func(s string) []string {
		return slices.DeleteFunc(strings.Split(s, ","), func(t string) bool { return strings.TrimSpace(t) == "" })
	}
	switch {
	case given("no-toolserver"):
		if err := keeper.DetachToolServer(ctx, slug, f.noToolServer); err != nil {
			return true, err
		}
		fmt.Fprintf(stderr, "%s no longer has the tools of %s.\n", slug, f.noToolServer)
	case given("repin"):
		server, tool, ok := strings.Cut(f.repin, ":")
		if !ok || server == "" || tool == "" {
			return true, usagef(cmd, "--repin takes SERVER:TOOL")
		}
		if err := keeper.RepinToolServerTool(ctx, slug, server, tool); err != nil {
			return true, err
		}
		fmt.Fprintf(stderr, "The tool %s of %s is pinned to its definition as it is now, and offered to %s again.\n", tool, server, slug)
	default:
		server, tools, _ := strings.Cut(f.toolServer, ":")
		req := agent.ToolServerAttachment{Server: server, Tools: split(tools), AskFirst: split(f.askFirst)}
		att, err := keeper.AttachToolServer(ctx, slug, req)
		if err != nil {
			return true, err
		}
		which := "all its tools"
		if !att.AllTools {
			which = fmt.Sprintf("%d of its tools", len(att.Tools))
		}
		fmt.Fprintf(stderr, "%s has %s of %s, each pinned to its definition as it is now.\n", slug, which, server)
		for _, t := range att.Tools {
			if t.Hash == "" {
				fmt.Fprintf(stderr, "The server could not be asked for its tools: they are held until you look (deskhand toolserver check %s, then --repin).\n", server)
				break
			}
		}
	}
	return true, nil
}
