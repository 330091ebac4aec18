package cli

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/deskhand/deskhand/server/agent"
)

// agentEditor is what 'deskhand agent' needs: the running app's control
// channel, so clients hear of changes at once, or the core over the store.
type agentEditor interface {
	SaveAgent(ctx context.Context, a agent.Agent) (agent.Agent, error)
	SetAgentEnabled(ctx context.Context, slug string, enabled bool) error
	DeleteAgent(ctx context.Context, slug string) error
}

const agentSynopsis = "deskhand agent list | agent add SLUG [--name N] [--provider P] [--model M] [--prompt P] [--description D] [--backend provider|client] [--reach HOST:PORT,…] [--client-may-approve] [--icon EMOJI|FILE] [--log-arguments] [--team SLUG,… | --no-team] | agent edit SLUG [the same] | agent edit SLUG (--toolserver NAME[:TOOL,…] [--ask-first TOOL,…] | --no-toolserver NAME | --repin SERVER:TOOL) | agent enable SLUG | agent disable SLUG | agent remove SLUG"

// agentFields are the flags of agent add and edit (with --model).
var agentFields = []string{"name", "provider", "prompt", "description", "backend", "reach", "client-may-approve", "icon", "log-arguments", "team", "no-team"}

func agentFlags(fs *flag.FlagSet, f *cmdFlags) {
	fs.StringVar(&f.name, "name", "", "add, edit: the agent's display name")
	fs.StringVar(&f.prompt, "prompt", "", "add, edit: its system prompt")
	fs.StringVar(&f.description, "description", "", "add, edit: what it does, for the calling model")
	fs.StringVar(&f.provider, "provider", "", "add, edit: the provider whose --model it runs on (see 'deskhand provider list'; default \""+agent.OllamaProvider+"\")")
	fs.StringVar(&f.backend, "backend", "", "add, edit: provider (its provider's model, the default) or client (the calling client's model, else its provider's); ollama, the old spelling, is --backend provider --provider ollama")
	fs.StringVar(&f.reach, "reach", "", "add, edit: the hosts on your network its fetch_url may reach, as host:port, comma-separated (\"\" for none)")
	fs.BoolVar(&f.clientMayApprove, "client-may-approve", false, "add, edit: let the calling client approve its tool calls (otherwise you approve them here); --client-may-approve=false takes it back")
	fs.BoolVar(&f.logArguments, "log-arguments", false, "add, edit: keep the arguments of its calls and the answers to its questions in the activity log ('deskhand log'); --log-arguments=false stops")
	fs.StringVar(&f.icon, "icon", "", "add, edit: how clients show it: an emoji, or an image file (PNG, JPEG or SVG, at most 64 KiB); \"\" for none")
	agentToolServerFlags(fs, f)
	teamFlags(fs, f) // agent_team.go
}

func runAgent(ctx context.Context, inv *invocation, f *cmdFlags, words []string, usage string) error {
	if len(words) == 0 {
		return usagef(usage, "usage: %s", agentSynopsis)
	}
	sub, rest := words[0], words[1:]
	wantArgs := map[string]int{"list": 0, "add": 1, "edit": 1, "enable": 1, "disable": 1, "remove": 1}
	if n, known := wantArgs[sub]; !known || len(rest) != n {
		return usagef(usage, "usage: %s", agentSynopsis)
	}
	if sub != "add" && sub != "edit" {
		for _, name := range agentFields {
			if inv.set[name] {
				return usagef(usage, "--%s is for 'agent add' and 'agent edit', not 'agent %s'", name, sub)
			}
		}
	}
	if handled, err := runAgentToolServers(ctx, inv, f, sub, rest, usage); handled {
		return err
	}
	if f.backend == string(agent.BackendOllama) && inv.set["provider"] && f.provider != agent.OllamaProvider {
		return usagef(usage, "--backend ollama means the provider %q, not %q: give --backend provider --provider %s", agent.OllamaProvider, f.provider, f.provider)
	}
	ctl, app, done, err := inv.reach(ctx)
	if err != nil {
		return err
	}
	defer done()
	var (
		editor agentEditor
		agents func() ([]agent.Agent, error)
	)
	if ctl != nil {
		editor, agents = ctl, func() ([]agent.Agent, error) { return ctl.Agents(ctx) }
	} else {
		editor, agents = localAgents{app.Core.Agents()}, func() ([]agent.Agent, error) { return app.Core.Agents().List(), nil }
	}
	stdout, stderr := inv.stdout, inv.stderr
	switch sub {
	case "list":
		list, err := agents()
		if err != nil {
			return err
		}
		printAgents(stdout, list)
		return nil
	case "enable", "disable":
		if err := editor.SetAgentEnabled(ctx, rest[0], sub == "enable"); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "%s %sd.\n", rest[0], sub)
		return nil
	case "remove":
		if err := editor.DeleteAgent(ctx, rest[0]); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "Removed %s and its conversations.\n", rest[0])
		return nil
	}
	list, err := agents()
	if err != nil {
		return err
	}
	var a agent.Agent
	switch found := findAgent(list, rest[0]); {
	case sub == "add" && found != nil:
		return userf("an agent named %q exists; change it with 'deskhand agent edit %s'", rest[0], rest[0])
	case sub == "edit" && found == nil:
		return agent.Userf(agent.ErrNotFound, "no agent named %q; see 'deskhand agent list'", rest[0])
	case sub == "edit":
		a = *found
	default:
		a = agent.Agent{Slug: rest[0], Name: rest[0], Backend: agent.BackendProvider, Provider: agent.OllamaProvider, Conversations: true, Enabled: true}
	}
	backend := string(a.Backend)
	for _, fl := range []struct {
		flag  string
		field *string
		value string
	}{
		{"name", &a.Name, f.name}, {"provider", &a.Provider, f.provider}, {"model", &a.Model, inv.g.Model}, {"prompt", &a.Prompt, f.prompt},
		{"description", &a.Description, f.description}, {"backend", &backend, f.backend},
	} {
		if inv.set[fl.flag] {
			*fl.field = fl.value
		}
	}
	a.Backend = agent.Backend(backend)
	if a.Backend == agent.BackendOllama { // the old spelling
		a.Backend, a.Provider = agent.BackendProvider, agent.OllamaProvider
	}
	if inv.set["reach"] {
		a.ReachableHosts = strings.FieldsFunc(f.reach, func(r rune) bool { return r == ',' || r == ' ' })
	}
	if inv.set["client-may-approve"] {
		a.ClientMayApprove = f.clientMayApprove
	}
	if inv.set["log-arguments"] {
		a.LogArguments = f.logArguments
	}
	if inv.set["icon"] {
		if a.Icon, err = iconFlag(f.icon); err != nil {
			return err
		}
	}
	if err := applyTeam(inv, f, usage, list, &a); err != nil { // agent_team.go
		return err
	}
	saved, err := editor.SaveAgent(ctx, a)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "Saved %s (%s, provider %s).\n", saved.Slug, cmp.Or(saved.Model, "no model yet: set one with --model"), saved.Provider)
	return nil
}

func findAgent(list []agent.Agent, slug string) *agent.Agent {
	for i := range list {
		if list[i].Slug == slug {
			return &list[i]
		}
	}
	return nil
}

func printAgents(w io.Writer, list []agent.Agent) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SLUG\tNAME\tENABLED\tBACKEND\tPROVIDER\tMODEL\tTEAM")
	for _, a := range list {
		fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%s\t%s\t%s\n", a.Slug, a.Name, a.Enabled, a.Backend, cmp.Or(a.Provider, agent.OllamaProvider), a.Model, teamSlugs(list, a))
	}
	tw.Flush()
}
