package connect

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/deskhand/deskhand/server/agent"
)

// ImportTarget is where imported servers are registered: the core's tool
// servers, in this process or through the control channel.
type ImportTarget interface {
	// Registered names the tool servers registered already.
	Registered(ctx context.Context) ([]string, error)
	Add(ctx context.Context, s agent.ToolServer, sec agent.ToolServerSecrets) error
}

// ImportRow is one server found in the clients' files, and what import
// did with it (or would do, on a dry run).
type ImportRow struct {
	Found  FoundServer
	Server agent.ToolServer
	// Left says why it is not imported; "" when it is.
	Left string
	sec  agent.ToolServerSecrets
}

// From names the clients it came from.
func (r ImportRow) From() string {
	var from []string
	for _, src := range r.Found.Sources {
		from = append(from, src.Client.Name)
	}
	return strings.Join(slices.Compact(from), ", ")
}

// ImportReport is what import found and did.
type ImportReport struct {
	Rows     []ImportRow
	Imported int
	DryRun   bool
	// Found holds what import read past: entries it skipped and files it
	// could not read.
	Found Found
}

// Result says what became of the row's server, for a person.
func (r ImportReport) Result(row ImportRow) string {
	result := "imported"
	switch {
	case row.Left != "":
		result = "left: " + row.Left
	case r.DryRun:
		result = "would be imported"
	}
	if n := len(row.Found.Secrets); n > 0 && row.Left == "" {
		result += fmt.Sprintf(" (%d secret(s) to the keychain)", n)
	}
	if row.Found.Disabled() {
		result += "; turned off in every client it came from"
	}
	return result
}

// Notes are the lines below the table: each server's notes, then the
// entries skipped and the files that could not be read.
func (r ImportReport) Notes() []string {
	var out []string
	for _, row := range r.Rows {
		for _, n := range row.Found.Notes {
			out = append(out, row.Found.Name+": "+n)
		}
	}
	for _, s := range r.Found.Skipped {
		out = append(out, fmt.Sprintf("skipped %s in %s (%s): %s", s.Source.Name, s.Source.Client.Name, s.Source.Path, s.Reason))
	}
	for _, e := range r.Found.Errors {
		out = append(out, fmt.Sprintf("could not read %s (%s): %s", e.Path, e.Client.Name, agent.UserMessage(e.Err)))
	}
	return out
}

// ImportServers finds the MCP servers the clients' files hold and
// registers on target those planImport keeps, unless dryRun.
func ImportServers(ctx context.Context, target ImportTarget, env Env, opts ImportOptions, dryRun bool) (ImportReport, error) {
	found := FindServers(env, opts)
	registered, err := target.Registered(ctx)
	if err != nil {
		return ImportReport{}, err
	}
	r := ImportReport{Rows: planImport(found.Servers, registered), DryRun: dryRun, Found: found}
	for i, row := range r.Rows {
		if row.Left != "" || dryRun {
			continue
		}
		if err := target.Add(ctx, row.Server, row.sec); err != nil {
			r.Rows[i].Left = "not added: " + agent.UserMessage(err)
			continue
		}
		r.Imported++
	}
	return r, nil
}

// planImport decides, for each server found in the clients' files, what
// to register: its plain values as they are, its secrets for the
// keychain. A server already registered under that name, one whose
// secrets sit in its arguments or URL (the keychain cannot hold those),
// and one whose values the client fills in (references to variables or
// inputs) are left, each with what to do instead.
func planImport(found []FoundServer, registered []string) []ImportRow {
	var out []ImportRow
	for _, fs := range found {
		r := ImportRow{Found: fs}
		s := agent.ToolServer{Name: fs.Name, Command: fs.Command, Args: fs.Args, Dir: fs.Dir, Env: fs.Env, URL: fs.URL, Headers: fs.Headers}
		for _, sec := range fs.Secrets {
			if sec.Kind == Header {
				s.SecretHeaders = append(s.SecretHeaders, sec.Key)
				r.sec.Headers = put(r.sec.Headers, sec.Key, sec.Value())
			} else {
				s.SecretEnv = append(s.SecretEnv, sec.Key)
				r.sec.Env = put(r.sec.Env, sec.Key, sec.Value())
			}
		}
		r.Server = s
		switch {
		case slices.Contains(registered, fs.Name):
			r.Left = "a tool server of that name is registered already"
		case len(fs.SecretArgs) > 0 || fs.SecretURL:
			r.Left = "a secret sits in its arguments or URL, which the keychain cannot hold: move it to an environment variable or a header, then add it with 'deskhand toolserver add'"
		case len(fs.Refs) > 0:
			var needs []string
			for _, ref := range fs.Refs {
				needs = append(needs, ref.Needs...)
			}
			r.Left = "the client fills in " + strings.Join(needs, ", ") + ": add it with 'deskhand toolserver add' and --secret-env or --secret-header for those"
		}
		out = append(out, r)
	}
	return out
}

// put sets m[k], making m when it is nil.
func put(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}
