package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/control"
)

// toolServerKeeper is what 'deskhand toolserver' and the tool-server
// flags of 'deskhand agent edit' need: the running app's control channel
// (so a change applies at once, and secrets go to the app's keychain over
// its private socket), or the core over the store.
type toolServerKeeper interface {
	ToolServers(ctx context.Context) ([]control.ToolServerInfo, error)
	AddToolServer(ctx context.Context, s agent.ToolServer, sec agent.ToolServerSecrets) error
	RemoveToolServer(ctx context.Context, name string) error
	CheckToolServer(ctx context.Context, name string) (agent.ToolServerCheck, error)
	HeldToolServerTools(ctx context.Context) ([]agent.HeldTool, error)
	AgentToolServers(ctx context.Context, slug string) ([]agent.AgentToolServer, error)
	AttachToolServer(ctx context.Context, slug string, req agent.ToolServerAttachment) (agent.AgentToolServer, error)
	DetachToolServer(ctx context.Context, slug, server string) error
	RepinToolServerTool(ctx context.Context, slug, server, tool string) error
}

var _ toolServerKeeper = (*control.Client)(nil)

// reachToolServers is inv.reach for the tool-server commands.
func (inv *invocation) reachToolServers(ctx context.Context) (toolServerKeeper, func(), error) {
	ctl, app, done, err := inv.reach(ctx)
	if err != nil {
		return nil, nil, err
	}
	if ctl != nil {
		return ctl, done, nil
	}
	return localToolServers{s: app.Core.ToolServers()}, done, nil
}

func (inv *invocation) toolServerCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "toolserver COMMAND",
		Short: "your own MCP servers as the agents' tools",
		Long: `Register your own MCP servers (a command Deskhand runs, or a Streamable HTTP URL), check
them, and see the tools held because their definition changed; give one to an agent with
'deskhand agent edit SLUG --toolserver NAME'.`,
	}
	c.AddCommand(
		inv.toolServerAddCommand(), // toolserver_add.go
		&cobra.Command{
			Use:   "list",
			Short: "list the tool servers, their state and tools",
			Args:  exactly(0),
			RunE: func(cmd *cobra.Command, _ []string) error {
				return inv.withToolServers(cmd.Context(), func(keeper toolServerKeeper) error {
					list, err := keeper.ToolServers(cmd.Context())
					if err != nil {
						return err
					}
					printToolServers(inv.stdout, list)
					return nil
				})
			},
		},
		&cobra.Command{
			Use:   "check NAME",
			Short: "start the server and list its tools",
			Args:  exactly(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return inv.withToolServers(cmd.Context(), func(keeper toolServerKeeper) error { return inv.checkToolServer(cmd.Context(), keeper, args[0]) })
			},
		},
		&cobra.Command{
			Use:   "remove NAME",
			Short: "remove a tool server: detach it from every agent and delete its secrets",
			Args:  exactly(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return inv.withToolServers(cmd.Context(), func(keeper toolServerKeeper) error {
					if err := keeper.RemoveToolServer(cmd.Context(), args[0]); err != nil {
						return err
					}
					fmt.Fprintf(inv.stderr, "Removed tool server %s: it is detached from every agent and its secrets are deleted.\n", args[0])
					return nil
				})
			},
		},
		&cobra.Command{
			Use:   "held",
			Short: "list the tools held: their definition changed since they were attached",
			Args:  exactly(0),
			RunE: func(cmd *cobra.Command, _ []string) error {
				return inv.withToolServers(cmd.Context(), func(keeper toolServerKeeper) error {
					held, err := keeper.HeldToolServerTools(cmd.Context())
					if err != nil {
						return err
					}
					printHeld(inv.stdout, held)
					return nil
				})
			},
		},
		inv.toolServerImportCommand(), // toolserver_import.go
	)
	return c
}

// withToolServers runs do with the running app's tool servers when there
// is one, else with the data folder's.
func (inv *invocation) withToolServers(ctx context.Context, do func(toolServerKeeper) error) error {
	keeper, done, err := inv.reachToolServers(ctx)
	if err != nil {
		return err
	}
	defer done()
	return do(keeper)
}

func (inv *invocation) checkToolServer(ctx context.Context, keeper toolServerKeeper, name string) error {
	stdout, stderr := inv.stdout, inv.stderr
	fmt.Fprintf(stderr, "Starting %s and asking for its tools…\n", name)
	check, err := keeper.CheckToolServer(ctx, name)
	if err != nil {
		return err
	}
	if check.Error != "" {
		return userf("%s", terminalText(check.Error)+logNote(check.Status))
	}
	fmt.Fprintf(stderr, "%s is %s with %d tool(s):\n", name, check.Status.State, len(check.Tools))
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME THE MODEL SEES\tTOOL\tAPPROVAL\tDESCRIPTION")
	for _, t := range check.Tools {
		approval := "asks"
		if t.ReadOnly {
			approval = "read-only"
		}
		desc, _, _ := strings.Cut(strings.TrimSpace(t.Description), "\n")
		if len(desc) > 80 {
			desc = desc[:77] + "..."
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, terminalText(t.Tool), approval, terminalText(desc))
	}
	return tw.Flush()
}

// arguments, or the URL without its query and user.
func where(s agent.ToolServer) string {
	if s.Command != "" {
		return strings.Join(append([]string{s.Command}, s.Args...), " ")
	}
	u, err := url.Parse(s.URL)
	if err != nil {
		return "(a URL that does not parse)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

func logNote(st agent.ToolServerStatus) string {
	if st.LogFile == "" {
		return ""
	}
	return " (its log: " + st.LogFile + ")"
}

func printToolServers(w io.Writer, list []control.ToolServerInfo) {
	if len(list) == 0 {
		fmt.Fprintln(w, "No tool server yet: add one with 'deskhand toolserver add'.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTRANSPORT\tWHERE\tSTATE\tTOOLS\tLAST ERROR\tLOG")
	for _, s := range list {
		transport := "http"
		if s.IsStdio() {
			transport = "stdio"
		}
		lastErr, _, _ := strings.Cut(s.Status.LastError, "\n")
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", s.Name, transport, terminalText(where(s.ToolServer)), s.Status.State, s.Status.Tools,
			cmp.Or(terminalText(lastErr), "-"), cmp.Or(s.Status.LogFile, "-"))
	}
	tw.Flush()
}

func printHeld(w io.Writer, held []agent.HeldTool) {
	if len(held) == 0 {
		fmt.Fprintln(w, "No tool is held.")
		return
	}
	for _, h := range held {
		fmt.Fprintf(w, "%s: the tool %s of %s changed since it was attached; it is held.\n  before: %s\n  now:    %s\n  look, then: deskhand agent edit %s --repin %s:%s\n",
			h.Agent, terminalText(h.Tool), h.Server, cmp.Or(terminalText(h.Old), "(never seen)"), terminalText(h.New), h.Agent, h.Server, terminalText(h.Tool))
	}
}
