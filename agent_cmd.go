package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
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

const agentUsage = "usage: deskhand agent list | agent add SLUG [--name N] [--model M] [--prompt P] [--description D] [--backend ollama|client] | agent edit SLUG [the same] | agent enable SLUG | agent disable SLUG | agent remove SLUG"

func agentCommand(ctx context.Context, opts options, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return userf(agentUsage)
	}
	sub, rest := args[0], args[1:]
	wantArgs := map[string]int{"list": 0, "add": 1, "edit": 1, "enable": 1, "disable": 1, "remove": 1}
	if n, known := wantArgs[sub]; !known || len(rest) != n {
		return userf(agentUsage)
	}
	ctl, app, done, err := reach(ctx, &opts, stderr)
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
		editor, agents = app.core, func() ([]agent.Agent, error) { return app.core.Agents(), nil }
	}
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
		a = agent.Agent{Slug: rest[0], Name: rest[0], Backend: agent.BackendOllama, Conversations: true, Enabled: true}
	}
	backend := string(a.Backend)
	for _, f := range []struct {
		flag  string
		field *string
		value string
	}{
		{"name", &a.Name, opts.name}, {"model", &a.Model, opts.model}, {"prompt", &a.Prompt, opts.prompt},
		{"description", &a.Description, opts.description}, {"backend", &backend, opts.backend},
	} {
		if opts.set[f.flag] {
			*f.field = f.value
		}
	}
	a.Backend = agent.Backend(backend)
	saved, err := editor.SaveAgent(ctx, a)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "Saved %s (%s).\n", saved.Slug, cmp.Or(saved.Model, "no model yet: set one with --model"))
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
	fmt.Fprintln(tw, "SLUG\tNAME\tENABLED\tBACKEND\tMODEL")
	for _, a := range list {
		fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%s\n", a.Slug, a.Name, a.Enabled, a.Backend, a.Model)
	}
	tw.Flush()
}
