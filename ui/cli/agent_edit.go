package cli

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/deskhand/deskhand/server/agent"
)

// agentFields are the flags of agent add and edit, with the global
// --model: each given one sets its field.
type agentFields struct {
	name, prompt, description, provider, backend string
	reach                                        string // host:port, comma-separated
	icon                                         string // an emoji or an image file
	clientMayApprove, logArguments               bool
	team                                         string // slugs, comma-separated
	noTeam                                       bool
}

func (f *agentFields) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.name, "name", "", "the agent's display name")
	fs.StringVar(&f.prompt, "prompt", "", "its system prompt")
	fs.StringVar(&f.description, "description", "", "what it does, for the calling model")
	fs.StringVar(&f.provider, "provider", "", "the provider whose --model it runs on (see 'deskhand provider list'; default \""+agent.OllamaProvider+"\")")
	fs.StringVar(&f.backend, "backend", "", "provider (its provider's model, the default) or client (the calling client's model, else its provider's); ollama, the old spelling, is --backend provider --provider ollama")
	fs.StringVar(&f.reach, "reach", "", "the hosts on your network its fetch_url may reach, as host:port, comma-separated (\"\" for none)")
	fs.BoolVar(&f.clientMayApprove, "client-may-approve", false, "let the calling client approve its tool calls (otherwise you approve them here); --client-may-approve=false takes it back")
	fs.BoolVar(&f.logArguments, "log-arguments", false, "keep the arguments of its calls and the answers to its questions in the activity log ('deskhand log'); --log-arguments=false stops")
	fs.StringVar(&f.icon, "icon", "", "how clients show it: an emoji, or an image file (PNG, JPEG or SVG, at most 64 KiB); \"\" for none")
	teamFlags(fs, f) // agent_team.go
}

// agentSaveCommand is 'deskhand agent add' or 'deskhand agent edit'
// (verb); edit also gives and takes an agent's tool servers.
func (inv *invocation) agentSaveCommand(verb string) *cobra.Command {
	f := &agentFields{}
	fields := pflag.NewFlagSet(verb, pflag.ContinueOnError)
	f.register(fields)
	var ts *agentToolServerFlags
	c := &cobra.Command{
		Use:   verb + " SLUG",
		Short: "add an agent, SLUG its tool name, with --name, --provider, --model…",
		Args:  exactly(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return inv.saveAgent(cmd, f, fields, ts, args[0])
		},
	}
	c.Flags().AddFlagSet(fields)
	if verb == "edit" {
		c.Short = "change the given fields of an agent, or its tool servers"
		c.Long = `Change the fields of the agent SLUG that flags give (--model: its model), or, in an edit
of their own, its tool servers: --toolserver, --ask-first, --no-toolserver, --repin.`
		ts = &agentToolServerFlags{}
		ts.register(c.Flags()) // agent_toolservers.go
	}
	_ = c.MarkFlagFilename("icon", "png", "jpg", "jpeg", "svg")
	return c
}

// saveAgent adds the agent slug, or changes it, with the fields given;
// ts, edit's tool-server flags, change its tool servers instead.
func (inv *invocation) saveAgent(cmd *cobra.Command, f *agentFields, fields *pflag.FlagSet, ts *agentToolServerFlags, slug string) error {
	ctx, given, adding := cmd.Context(), cmd.Flags().Changed, cmd.Name() == "add"
	if ts != nil {
		if handled, err := inv.agentToolServers(cmd, ts, fields, slug); handled {
			return err
		}
	}
	if f.backend == string(agent.BackendOllama) && given("provider") && f.provider != agent.OllamaProvider {
		return usagef(cmd, "--backend ollama means the provider %q, not %q: give --backend provider --provider %s", agent.OllamaProvider, f.provider, f.provider)
	}
	return inv.withAgents(ctx, func(editor agentEditor, agents func() ([]agent.Agent, error)) error {
		list, err := agents()
		if err != nil {
			return err
		}
		var a agent.Agent
		switch found := findAgent(list, slug); {
		case adding && found != nil:
			return userf("an agent named %q exists; change it with 'deskhand agent edit %s'", slug, slug)
		case !adding && found == nil:
			return agent.Userf(agent.ErrNotFound, "no agent named %q; see 'deskhand agent list'", slug)
		case !adding:
			a = *found
		default:
			a = agent.Agent{Slug: slug, Name: slug, Backend: agent.BackendProvider, Provider: agent.OllamaProvider, Conversations: true, Enabled: true}
		}
		if err := f.apply(cmd, inv.g.Model, list, &a); err != nil {
			return err
		}
		saved, err := editor.SaveAgent(ctx, a)
		if err != nil {
			return err
		}
		fmt.Fprintf(inv.stderr, "Saved %s (%s, provider %s).\n", saved.Slug, cmp.Or(saved.Model, "no model yet: set one with --model"), saved.Provider)
		return nil
	})
}

// apply sets the fields of a that cmd's flags give; model is --model's.
func (f *agentFields) apply(cmd *cobra.Command, model string, list []agent.Agent, a *agent.Agent) error {
	given := cmd.Flags().Changed
	backend := string(a.Backend)
	for _, fl := range []struct {
		flag  string
		field *string
		value string
	}{
		{"name", &a.Name, f.name}, {"provider", &a.Provider, f.provider}, {"model", &a.Model, model}, {"prompt", &a.Prompt, f.prompt},
		{"description", &a.Description, f.description}, {"backend", &backend, f.backend},
	} {
		if given(fl.flag) {
			*fl.field = fl.value
		}
	}
	a.Backend = agent.Backend(backend)
	if a.Backend == agent.BackendOllama { // the old spelling
		a.Backend, a.Provider = agent.BackendProvider, agent.OllamaProvider
	}
	if given("reach") {
		a.ReachableHosts = strings.FieldsFunc(f.reach, func(r rune) bool { return r == ',' || r == ' ' })
	}
	if given("client-may-approve") {
		a.ClientMayApprove = f.clientMayApprove
	}
	if given("log-arguments") {
		a.LogArguments = f.logArguments
	}
	if given("icon") {
		icon, err := iconFlag(f.icon)
		if err != nil {
			return err
		}
		a.Icon = icon
	}
	return applyTeam(cmd, f, list, a) // agent_team.go
}
