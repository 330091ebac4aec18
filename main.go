// Command deskhand serves your own AI agents to every MCP client on this
// computer. Run "deskhand --help" for the commands.
//
// This file is the wiring: it builds the parts (store, keychain, models,
// core) and hands them, with the MCP server and the desktop, to the
// command line (package ui/cli), which picks the command; main exits with
// its status.
package main

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/deskhand/deskhand/assets"
	"github.com/deskhand/deskhand/models/providers"
	"github.com/deskhand/deskhand/models/sampling"
	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/bridge"
	"github.com/deskhand/deskhand/server/mcpserver"
	"github.com/deskhand/deskhand/server/tools"
	"github.com/deskhand/deskhand/server/toolservers"
	"github.com/deskhand/deskhand/store"
	"github.com/deskhand/deskhand/store/keychain"
	"github.com/deskhand/deskhand/ui/cli"
	_ "github.com/deskhand/deskhand/ui/desktop/locale" // a POSIX locale, before fyne reads it
	"github.com/deskhand/deskhand/ui/desktop/platform"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// program is Deskhand built from the parts main picks; a test may pick
// others.
type program struct {
	// localServers are where the first start looks for a model.
	localServers []agent.Provider
}

// DefaultAddr is where the MCP endpoint listens unless told otherwise.
const DefaultAddr = "127.0.0.1:7345"

func main() {
	cli.UseTerminal()
	os.Exit(exitStatus(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// exitStatus runs the command line and returns the exit status.
func exitStatus(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Exit(run(ctx, args, stdin, stdout, stderr), stderr)
}

// run runs the command line with the parts built here.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return program{localServers: providers.LocalServers()}.run(ctx, args, stdin, stdout, stderr)
}

func (p program) run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return cli.Run(ctx, cli.Env{
		Version:        version,
		DefaultDataDir: store.DefaultDir(),
		DefaultAddr:    DefaultAddr,
		EndpointPath:   mcpserver.EndpointPath,
		Getenv:         os.Getenv,
		Executable:     os.Executable,
		ExtensionIcon:  assets.Icon.Content(),
		Desktop:        p.runDesktop,
		HaveDisplay:    platform.HaveDisplay,
		Serve:          p.serve,
		ServeStdio:     p.serveStdio,
		Open: func(ctx context.Context, g *cli.Globals, stderr io.Writer) (*cli.Opened, error) {
			log, redact := newLog(stderr, slog.LevelWarn)
			a, err := p.open(ctx, g, log, redact, false)
			if err != nil {
				return nil, err
			}
			return &cli.Opened{Core: a.core, Secrets: a.secrets, Close: a.close}, nil
		},
		Secrets: func(data string, warn func(string)) agent.Secrets { return keychain.InDataFolder(data, warn) },
		Bridge: func(ctx context.Context, url, token string, stdin io.Reader, stdout, stderr io.Writer) error {
			log, redact := newLog(stderr, slog.LevelInfo)
			redact.Learn(token)
			b := &bridge.Bridge{URL: url, Token: token, Log: log}
			return b.Run(ctx, stdin, stdout)
		},
	}, args, stdin, stdout, stderr)
}

// wiring is the core with what it owns.
type wiring struct {
	db   *store.DB
	core *agent.Core
	// keychain is the OS keychain; secrets reads and writes it through
	// the redactor, which so learns every secret this process holds.
	keychain *keychain.Store
	secrets  agent.Secrets
	// keychainProblem is what the keychain's probe at start found; nil
	// when it works.
	keychainProblem error
	// connector makes the providers' models.
	connector *providers.Connector
	// noModel: first start found no model for the assistant.
	noModel bool
	log     *slog.Logger
	// unreachable is what no agent's fetch may reach: Deskhand's own
	// endpoint and the providers' servers.
	unreachable *tools.Unreachable
	toolServers io.Closer // the person's MCP servers
}

// open wires store, keychain, models and core.
// desktop says whether a person here can answer questions (serve's
// command line); stdio has nobody to ask but the client.
// Flags and environment variables win over what Settings saved (the
// address, the Ollama host, open local development), which wins over the
// defaults; g is completed accordingly.
func (p program) open(ctx context.Context, g *cli.Globals, log *slog.Logger, redact *agent.Redactor, desktop bool) (*wiring, error) {
	db, err := store.OpenIn(ctx, g.Data)
	if err != nil {
		return nil, err
	}
	saved, err := db.Settings(ctx, "server.addr", "ollama.host", "server.insecure_no_auth", agent.SettingLogEnabled)
	if err != nil {
		db.Close()
		return nil, err
	}
	g.Addr = cmp.Or(g.Addr, saved["server.addr"], DefaultAddr)
	g.Ollama = cmp.Or(g.Ollama, saved["ollama.host"])
	g.InsecureNoAuth = g.InsecureNoAuth || saved["server.insecure_no_auth"] == "true"
	chain := keychain.InDataFolder(g.Data, func(msg string) { log.Warn(msg) })
	secrets := redact.Secrets(chain)
	unreachable := &tools.Unreachable{}
	unreachable.Set("deskhand", g.Addr)
	connector := &providers.Connector{
		OllamaHost: g.Ollama,
		LegacyOllamaKey: func() string {
			key, _ := secrets.Get("ollama-api-key")
			return key
		},
		Reached: func(name, url string) { unreachable.Set("provider/"+name, url) },
	}
	toolServers, toolServerPort, hostReady := toolservers.ForCore(toolservers.Options{LogDir: filepath.Join(g.Data, "toolservers"), Logger: log, Redact: redact.Redact})
	core, err := agent.New(ctx, agent.Config{
		History:      db,
		Models:       map[agent.Backend]agent.Model{agent.BackendClient: sampling.Model{}},
		Connector:    connector,
		Secrets:      secrets,
		LocalServers: p.localServers,
		Tools:        tools.Catalog(tools.Options{Never: unreachable.List}),
		Logger:       log,
		Desktop:      desktop,
		// The log is on unless the person turned it off.
		NoActivityLog: saved[agent.SettingLogEnabled] == "false",
		// The response schema must compile as mcp-go will use it.
		CheckSchema:     mcpserver.CheckSchema,
		ToolServerStore: db, ToolServers: toolServerPort,
		Redactor: redact,
	})
	if err != nil {
		toolServers.Close()
		db.Close()
		return nil, err
	}
	hostReady(core.ToolServers()) // their questions and sampling go to the core
	// Every provider's server is out of the agents' reach from the start,
	// not only once an agent used it.
	if list, err := db.Providers(ctx); err == nil {
		for _, p := range list {
			unreachable.Set("provider/"+p.Name, connector.Address(p))
		}
	}
	return &wiring{db: db, core: core, keychain: chain, secrets: secrets, connector: connector, log: log, unreachable: unreachable, toolServers: toolServers}, nil
}

// newLog logs to w at level and above, through a redactor that the
// wiring teaches every secret it holds: no secret value reaches the log.
func newLog(w io.Writer, level slog.Level) (*slog.Logger, *agent.Redactor) {
	redact := agent.NewRedactor()
	return redact.TextLog(w, level), redact
}

func (a *wiring) close() {
	a.core.Close()
	if err := a.toolServers.Close(); err != nil { // after the turns, before the store
		a.log.Error("stop tool servers", "err", err)
	}
	if err := a.db.Close(); err != nil {
		a.log.Error("close database", "err", err)
	}
}
