// Command deskhand serves your own AI agents to every MCP client on this
// computer. Run "deskhand --help" for the commands.
package main

import (
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"
	"github.com/godbus/dbus/v5"

	"github.com/deskhand/deskhand/assets"
	"github.com/deskhand/deskhand/models/ollama"
	"github.com/deskhand/deskhand/models/sampling"
	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/bridge"
	"github.com/deskhand/deskhand/server/control"
	"github.com/deskhand/deskhand/server/mcpserver"
	"github.com/deskhand/deskhand/server/tools"
	"github.com/deskhand/deskhand/store"
	"github.com/deskhand/deskhand/store/keychain"
	"github.com/deskhand/deskhand/ui/connect"
	"github.com/deskhand/deskhand/ui/desktop"
	_ "github.com/deskhand/deskhand/ui/desktop/locale" // a POSIX locale, before fyne reads it
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// DefaultAddr is where the MCP endpoint listens unless told otherwise.
const DefaultAddr = "127.0.0.1:7345"

const usage = `Deskhand serves your own AI agents as MCP tools to every AI client on this computer.

Usage:
  deskhand [flags] [command] [arguments]

Without a command, Deskhand starts as a tray app with its window (headless when there is
no display).

Commands:
  serve                 serve the agents headless on http://ADDR/mcp until stopped (Ctrl-C)
  stdio [--client NAME] for stdio-only clients: bridge to the running app with the client's
                        token from the keychain (NAME, default "stdio"), or serve the agents
                        in-process when the app is not running
  connect CLIENT...|--all
                        write Deskhand into each client's config with a token of its own,
                        read it back and verify it with a real MCP handshake; clients:
                        cursor, claude-code, vscode, windsurf, codex, claude-desktop
      --project DIR     the project's file instead (Cursor, Claude Code, VS Code)
      --dry-run         show what would be written, write nothing
      --rotate          issue new tokens even where the entry works
  connect --status [CLIENT...]
                        report each client's entry: connected and verified, token
                        refused, Deskhand not running, stale, not connected
  connect --link CLIENT print Cursor's or VS Code's install link (it holds a token)
  disconnect CLIENT...|--all
                        remove Deskhand's entry and revoke that client's token
  token create NAME     create a bearer token for the client NAME; prints the token alone
  token list            list clients and when their tokens were created and last used
  token rotate NAME     give the client a new token (its conversations stay its own)
  token revoke NAME     revoke the client's token at once
  agent list            list the agents
  agent add SLUG        add an agent (SLUG is its tool name) with --name, --model, --prompt,
                        --description, --backend ollama|client
  agent edit SLUG       change the given fields of an agent
  agent enable SLUG | agent disable SLUG
                        put an agent on the tool list or take it off
  agent remove SLUG     delete an agent and its conversations
                        (while the app runs, clients hear of every change at once)
  questions             list the questions the agents are waiting on (while serve runs)
  answer ID TEXT        answer a question; for an approval, TEXT is approve or deny
                        (add --comment TEXT for the agent); --decline declines instead
  version               print the version

Flags (each also after the command):
  --data DIR            data folder (env DESKHAND_DATA; default %s)
  --addr HOST:PORT      MCP endpoint address (env DESKHAND_ADDR; default %s)
  --ollama URL          Ollama server (env OLLAMA_HOST; default http://127.0.0.1:11434)
  --model NAME          model of the default agent "assistant" (default: the first installed)
  --insecure-no-auth    open local development: accept MCP requests without a token (INSECURE)
`

type options struct {
	data, addr, ollamaHost, model string
	insecureNoAuth                bool
	decline                       bool   // answer
	comment                       string // answer
	client                        string // stdio: the bridged client's name

	// connect and disconnect
	all, dryRun, rotate, status, link bool
	project                           string

	// agent add and edit
	name, prompt, description, backend string

	set map[string]bool // the flags given
}

func main() {
	err := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "deskhand:", agent.UserMessage(err))
		var ue *agent.UserError
		if !errors.As(err, &ue) {
			fmt.Fprintln(os.Stderr, "detail:", err)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	opts, words, err := parseArgs(args, stderr)
	if err != nil {
		return err
	}
	if len(words) == 0 {
		return runDesktop(ctx, opts, stderr)
	}
	switch cmd, rest := words[0], words[1:]; cmd {
	case "serve":
		return serve(ctx, opts, stderr)
	case "stdio":
		return stdioServe(ctx, opts, stdin, stdout, stderr)
	case "token":
		return tokenCommand(ctx, opts, rest, stdout, stderr)
	case "connect", "disconnect":
		return connectCommand(ctx, opts, cmd == "disconnect", rest, stdout, stderr)
	case "agent":
		return agentCommand(ctx, opts, rest, stdout, stderr)
	case "questions":
		return questionsCommand(ctx, opts, stdout)
	case "answer":
		return answerCommand(ctx, opts, rest, stderr)
	case "version":
		fmt.Fprintf(stdout, "deskhand %s (%s %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return nil
	case "help":
		fmt.Fprintf(stdout, usage, defaultDataDir(), DefaultAddr)
		return nil
	default:
		return userf("unknown command %q; see 'deskhand --help'", cmd)
	}
}

// parseArgs accepts the global flags before, between and after the words.
func parseArgs(args []string, stderr io.Writer) (options, []string, error) {
	opts := options{
		data:       os.Getenv("DESKHAND_DATA"),
		addr:       os.Getenv("DESKHAND_ADDR"), // else Settings, else DefaultAddr
		ollamaHost: os.Getenv("OLLAMA_HOST"),
	}
	fs := flag.NewFlagSet("deskhand", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintf(stderr, usage, defaultDataDir(), DefaultAddr) }
	fs.StringVar(&opts.data, "data", opts.data, "data folder")
	fs.StringVar(&opts.addr, "addr", opts.addr, "MCP endpoint address")
	fs.StringVar(&opts.ollamaHost, "ollama", opts.ollamaHost, "Ollama server URL")
	fs.StringVar(&opts.model, "model", "", "model of the default agent")
	fs.BoolVar(&opts.insecureNoAuth, "insecure-no-auth", false, "accept MCP requests without a token")
	fs.BoolVar(&opts.decline, "decline", false, "answer: decline the question")
	fs.StringVar(&opts.comment, "comment", "", "answer: a comment with an approval or denial")
	fs.StringVar(&opts.client, "client", "", "stdio: bridge to the running app as this client")
	fs.BoolVar(&opts.all, "all", false, "connect: every installed client")
	fs.StringVar(&opts.project, "project", "", "connect: the project folder's configuration (Cursor, Claude Code, VS Code)")
	fs.BoolVar(&opts.dryRun, "dry-run", false, "connect: show what would be written, write nothing")
	fs.BoolVar(&opts.rotate, "rotate", false, "connect: issue new tokens even where the entry works")
	fs.BoolVar(&opts.status, "status", false, "connect: report each client's entry and verify it")
	fs.BoolVar(&opts.link, "link", false, "connect: print the client's install link (Cursor, VS Code)")
	fs.StringVar(&opts.name, "name", "", "agent: its display name")
	fs.StringVar(&opts.prompt, "prompt", "", "agent: its system prompt")
	fs.StringVar(&opts.description, "description", "", "agent: what it does, for the calling model")
	fs.StringVar(&opts.backend, "backend", "", "agent: ollama or client (the calling client's model)")
	var words []string
	for {
		if err := fs.Parse(args); err != nil {
			return opts, nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		words = append(words, fs.Arg(0))
		args = fs.Args()[1:]
	}
	opts.data = cmp.Or(opts.data, defaultDataDir())
	opts.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { opts.set[f.Name] = true })
	return opts, words, nil
}

func defaultDataDir() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return filepath.Join(".", "deskhand-data")
	}
	return filepath.Join(dir, "Deskhand")
}

func userf(format string, args ...any) error { return agent.Userf(nil, format, args...) }

// wiring is the core with what it owns.
type wiring struct {
	db      *store.DB
	core    *agent.Core
	secrets *keychain.Store
	ollama  *ollama.Model
	log     *slog.Logger
	// unreachable is what no agent's fetch may reach: Deskhand's own
	// endpoint and its model server.
	unreachable *tools.Unreachable
}

// open wires store, keychain, models and core.
// desktop says whether a person here can answer questions (serve's
// command line); stdio has nobody to ask but the client.
// Flags and environment variables win over what Settings saved (the
// address, the Ollama host, open local development), which wins over the
// defaults; opts is completed accordingly.
func open(ctx context.Context, opts *options, log *slog.Logger, desktop bool) (*wiring, error) {
	if err := os.MkdirAll(opts.data, 0o700); err != nil {
		return nil, agent.Userf(err, "cannot create the data folder %s", opts.data)
	}
	probe, err := os.CreateTemp(opts.data, ".write-check-*")
	if err != nil {
		return nil, agent.Userf(err, "the data folder %s cannot be written (%s): Deskhand keeps its database there; make it writable or choose another folder with --data", opts.data, osReason(err))
	}
	probe.Close()
	os.Remove(probe.Name())
	db, err := store.Open(ctx, filepath.Join(opts.data, store.FileName))
	if errors.Is(err, store.ErrBusy) {
		return nil, agent.Userf(err, "the database in %s is locked by another program (a database browser, or a copy of Deskhand the control channel does not reach): close it and try again", opts.data)
	}
	if err != nil {
		return nil, agent.Userf(err, "cannot open the database in %s", opts.data)
	}
	saved := func(key string) string {
		v, _ := db.Setting(ctx, key)
		return v
	}
	opts.addr = cmp.Or(opts.addr, saved("server.addr"), DefaultAddr)
	opts.ollamaHost = cmp.Or(opts.ollamaHost, saved("ollama.host"))
	opts.insecureNoAuth = opts.insecureNoAuth || saved("server.insecure_no_auth") == "true"
	secrets := secretsIn(opts.data, func(msg string) { log.Warn(msg) })
	var ollamaOpts []ollama.Option
	if key, err := secrets.Get("ollama-api-key"); err == nil && key != "" {
		ollamaOpts = append(ollamaOpts, ollama.WithAPIKey(key))
	}
	model, err := ollama.New(opts.ollamaHost, ollamaOpts...)
	if err != nil {
		db.Close()
		return nil, agent.Userf(err, "the Ollama address %q is not valid", opts.ollamaHost)
	}
	unreachable := &tools.Unreachable{}
	unreachable.Set("deskhand", opts.addr)
	unreachable.Set("ollama", model.BaseURL())
	core, err := agent.New(ctx, agent.Config{
		History: db,
		Models:  map[agent.Backend]agent.Model{agent.BackendOllama: model, agent.BackendClient: sampling.Model{}},
		Tools:   tools.Catalog(tools.Options{Never: unreachable.List}),
		Logger:  log,
		Desktop: desktop,
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	return &wiring{db: db, core: core, secrets: secrets, ollama: model, log: log, unreachable: unreachable}, nil
}

// osReason is the OS's own words for a file error ("read-only file
// system"), without the path and operation around them.
func osReason(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// secretsIn is the keychain, with its fallback file in the data folder;
// warn is told when a secret goes to (or stays in) that file.
func secretsIn(data string, warn func(string)) *keychain.Store {
	return keychain.New(keychain.Options{FallbackPath: filepath.Join(data, "secrets.json"), Warn: warn})
}

func (a *wiring) close() {
	a.core.Close()
	if err := a.db.Close(); err != nil {
		a.log.Error("close database", "err", err)
	}
}

// ensureAssistant creates the default agent on first start, and applies
// --model to it.
func (a *wiring) ensureAssistant(ctx context.Context, model string) error {
	assistant, ok, err := a.core.EnsureDefaultAgent(ctx, model)
	if err != nil {
		return err
	}
	if ok && assistant.Model == "" {
		a.log.Warn("the agent 'assistant' has no model: no Ollama model is installed or Ollama is not reachable. Install one with 'ollama pull llama3.2' and restart, or pass --model NAME")
	}
	return nil
}

// boot starts what serve and stdio share: logs on stderr, a context that
// ends on SIGINT or SIGTERM, and the opened app with its default agent.
func boot(ctx context.Context, opts *options, stderr io.Writer, desktop bool) (context.Context, *wiring, func(), error) {
	log := slog.New(slog.NewTextHandler(stderr, nil))
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	a, err := open(ctx, opts, log, desktop)
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	cleanup := func() { a.close(); stop() }
	if err := a.ensureAssistant(ctx, opts.model); err != nil {
		cleanup()
		return nil, nil, nil, err
	}
	return ctx, a, cleanup, nil
}

func serve(ctx context.Context, opts options, stderr io.Writer) error {
	ctx, a, cleanup, err := boot(ctx, &opts, stderr, true)
	if err != nil {
		return err
	}
	defer cleanup()
	srv, err := startServing(ctx, opts, a, stderr, nil)
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		a.log.Info("shutting down")
	case err = <-srv.failed:
		a.log.Error("HTTP server stopped", "err", err)
	}
	srv.stop()
	return nil
}

// serving is the MCP endpoint and the control channel, running.
type serving struct {
	url    string
	failed <-chan error // the HTTP server stopped by itself
	stop   func()       // ends turns (recorded interrupted), then streams, then the servers
}

// startServing serves the app's agents on the MCP endpoint and opens the
// control channel; show (may be nil) brings a window forward for a second
// launch.
func startServing(ctx context.Context, opts options, a *wiring, stderr io.Writer, show func() bool) (*serving, error) {
	log := a.log
	// Without a keychain, warn when secrets already sit in the fallback
	// file; otherwise say it once, quietly: the first secret saved warns.
	if err := a.secrets.Probe(); err != nil && a.secrets.Insecure() {
		log.Warn(agent.UserMessage(err))
	} else if err != nil {
		log.Info(agent.UserMessage(err))
	}
	if v, err := a.ollama.Version(ctx); err != nil {
		log.Warn(agent.UserMessage(err))
	} else {
		log.Info("using Ollama", "url", a.ollama.BaseURL(), "version", v)
	}
	keys, err := stateKeys(os.Getenv("DESKHAND_STATE_KEYS"))
	if err != nil {
		return nil, err
	}
	mcp, err := mcpserver.New(a.core, mcpserver.Options{
		Info: serverInfo(ctx, a.core),
		Guard: mcpserver.GuardOptions{
			AllowedHosts:   splitList(setting(ctx, a.core, "server.allowed_hosts")),
			AllowedOrigins: splitList(setting(ctx, a.core, "server.allowed_origins")),
			InsecureNoAuth: opts.insecureNoAuth,
		},
		StateKeys:    keys,
		PageSize:     pageSize(setting(ctx, a.core, "server.page_size"), log),
		SessionTools: setting(ctx, a.core, "server.session_tools") == "true",
		Logger:       log,
	})
	if err != nil {
		return nil, agent.Userf(err, "DESKHAND_STATE_KEYS is not usable")
	}
	listeners, err := listen(opts)
	if err != nil {
		return nil, err
	}
	url := "http://" + listeners[0].Addr().String() + mcpserver.EndpointPath
	served := []string{opts.addr}
	for _, ln := range listeners {
		served = append(served, ln.Addr().String())
	}
	a.unreachable.Set("deskhand", served...)
	// For 'deskhand connect' while the app is stopped.
	if err := a.core.SetSetting(ctx, lastURLSetting, url); err != nil {
		log.Warn("remember the endpoint", "err", err)
	}
	ctl, err := control.Listen(filepath.Join(opts.data, control.SocketName), a.core, control.Options{URL: url, Show: show})
	if err != nil {
		for _, ln := range listeners {
			ln.Close()
		}
		if errors.Is(err, control.ErrAlreadyRunning) {
			return nil, agent.Userf(err, "Deskhand is already running with the data folder %s", opts.data)
		}
		return nil, err
	}

	// Cancelled on shutdown: subscriptions/listen streams wait on it.
	baseCtx, cancelBase := context.WithCancel(context.Background())
	srv := &http.Server{
		Handler:           mcp.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return baseCtx },
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		// MCP headers are short (a token, a session id, a tool name): 64
		// KiB, not net/http's 1 MiB, is what a connection can make the
		// server hold before its token is checked. Bodies have a deadline
		// of their own that answers 408 (mcpserver.Options.BodyTimeout);
		// a WriteTimeout would cut event streams.
		MaxHeaderBytes: 64 << 10,
	}
	failed := make(chan error, len(listeners))
	for _, ln := range listeners {
		go func() { failed <- srv.Serve(ln) }()
	}
	fmt.Fprintf(stderr, "Deskhand %s is serving your agents at %s\n", version, url)
	fmt.Fprintf(stderr, "Data folder: %s\n", opts.data)
	if opts.insecureNoAuth {
		fmt.Fprintln(stderr, "WARNING: open local development mode (--insecure-no-auth): MCP requests need no token.")
	} else {
		fmt.Fprintln(stderr, "Clients need a token: run 'deskhand token create NAME' and send 'Authorization: Bearer <token>'.")
	}
	stop := func() {
		a.core.Close()
		cancelBase()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := mcp.Close(shutdownCtx); err != nil {
			log.Warn("close MCP sessions", "err", err)
		}
		if err := srv.Shutdown(shutdownCtx); err != nil {
			log.Warn("shut down HTTP server", "err", err)
		}
		if err := ctl.Close(shutdownCtx); err != nil {
			log.Warn("close control channel", "err", err)
		}
	}
	return &serving{url: url, failed: failed, stop: stop}, nil
}

// runDesktop runs the tray app: the agents served, the window and the popups.
// With no display it says so and serves headless.
func runDesktop(ctx context.Context, opts options, stderr io.Writer) error {
	if !haveDisplay() {
		fmt.Fprintln(stderr, "No display (DISPLAY and WAYLAND_DISPLAY are unset): serving headless. Answer questions with 'deskhand questions' and 'deskhand answer'.")
		return serve(ctx, opts, stderr)
	}
	// A second launch shows the first one's window instead.
	if ctl, err := control.Dial(filepath.Join(opts.data, control.SocketName)); err == nil {
		if err := ctl.ShowWindow(ctx); err != nil {
			return err
		}
		fmt.Fprintln(stderr, "Deskhand is already running; its window is shown.")
		return nil
	}
	ctx, a, cleanup, err := boot(ctx, &opts, stderr, true)
	if err != nil {
		return err
	}
	defer cleanup()
	fy := fyneapp.NewWithID("io.deskhand.Deskhand")
	var shown atomic.Pointer[desktop.App] // set once the window exists
	show := func() bool {
		fyne.Do(func() {
			if w := shown.Load(); w != nil {
				w.Show()
			}
		})
		return true
	}
	srv, err := startServing(ctx, opts, a, stderr, show)
	if err != nil {
		return err
	}
	defer srv.stop()

	tray := sessionBusReachable()
	if !tray {
		a.log.Info("no D-Bus session bus: running without a tray icon")
	}
	var conn desktop.Connector
	if m, err := newManager(opts, srv.url, coreTokens{a.core}, a.secrets); err != nil {
		a.log.Warn("connecting clients is not available", "err", err)
	} else {
		conn = connector{m}
	}
	win := desktop.New(fy, a.core, desktop.Options{Tray: tray, ServerURL: srv.url, DataDir: opts.data, Logger: a.log, Connector: conn,
		Icon: assets.Icon, PausedIcon: assets.PausedIcon, QuestionIcon: assets.QuestionIcon})
	shown.Store(win)
	followCtx, stopFollowing := context.WithCancel(ctx)
	defer stopFollowing()
	win.Follow(followCtx)
	go func() {
		select {
		case <-followCtx.Done():
		case err := <-srv.failed:
			a.log.Error("HTTP server stopped", "err", err)
		}
		fyne.Do(fy.Quit)
	}()
	win.Show()
	fy.Run()
	return nil
}

// haveDisplay tells whether a window can be shown (on Linux and the BSDs:
// whether an X11 or Wayland display is set).
func haveDisplay() bool {
	switch runtime.GOOS {
	case "windows", "darwin":
		return true
	}
	return os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != ""
}

// sessionBusReachable tells whether the tray can be used: fyne's tray
// crashes on quit when there is no D-Bus session bus.
func sessionBusReachable() bool {
	if runtime.GOOS != "linux" && runtime.GOOS != "freebsd" && runtime.GOOS != "openbsd" {
		return true
	}
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		return false
	}
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// listen binds the MCP address: loopback only unless a non-loopback address
// is configured, which needs tokens on.
func listen(opts options) ([]net.Listener, error) {
	host, port, err := net.SplitHostPort(opts.addr)
	if err != nil {
		return nil, agent.Userf(err, "--addr %q is not HOST:PORT", opts.addr)
	}
	hosts := []string{host}
	switch host {
	case "", "localhost":
		hosts = []string{"127.0.0.1", "::1"}
	default:
		ip := net.ParseIP(host)
		if ip == nil || !ip.IsLoopback() {
			if opts.insecureNoAuth {
				return nil, userf("refusing to serve on %s without tokens: a non-loopback address requires authentication; drop --insecure-no-auth", opts.addr)
			}
		}
	}
	var out []net.Listener
	for i, h := range hosts {
		ln, err := net.Listen("tcp", net.JoinHostPort(h, port))
		if err != nil {
			if i > 0 { // ::1 is a bonus; some machines have no IPv6 loopback
				continue
			}
			if user := portUser(port); user != "" {
				return nil, agent.Userf(err, "cannot listen on %s: the port is taken by %s; stop it or choose another port with --addr", net.JoinHostPort(h, port), user)
			}
			return nil, agent.Userf(err, "cannot listen on %s (is another program using the port? choose another with --addr)", net.JoinHostPort(h, port))
		}
		out = append(out, ln)
		if port == "0" { // keep the same port on both loopbacks
			_, port, _ = net.SplitHostPort(ln.Addr().String())
		}
	}
	return out, nil
}

// stateKeys reads DESKHAND_STATE_KEYS: hex keys, comma-separated, the
// first sealing requestState and all opening it. Unset: a random key per
// run, which is enough while paused turns live in this process.
func stateKeys(env string) ([][]byte, error) {
	var keys [][]byte
	for _, field := range splitList(env) {
		k, err := hex.DecodeString(field)
		if err != nil || len(k) < mcpserver.MinStateKeyBytes {
			return nil, userf("DESKHAND_STATE_KEYS must hold hex keys of at least %d bytes each, separated by commas (make one with 'openssl rand -hex 32')", mcpserver.MinStateKeyBytes)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// pageSize reads the tools/list page size setting; 0 means the default.
func pageSize(v string, log *slog.Logger) int {
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		log.Warn("the setting server.page_size must be a whole number above 0; using the default", "value", v)
		return 0
	}
	return n
}

func setting(ctx context.Context, core *agent.Core, key string) string {
	v, _ := core.Setting(ctx, key, "")
	return v
}

func splitList(s string) []string {
	if f := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' || r == ' ' }); len(f) > 0 {
		return f
	}
	return nil
}

// serverInfo reads the server's metadata from settings.
func serverInfo(ctx context.Context, core *agent.Core) mcpserver.Info {
	get := func(key, def string) string {
		v, _ := core.Setting(ctx, "server."+key, def)
		return v
	}
	return mcpserver.Info{
		Name:         get("name", "deskhand"),
		Version:      version,
		Title:        get("title", "Deskhand"),
		Description:  get("description", "Your own AI agents, served from your desktop."),
		Instructions: get("instructions", "Each tool is an agent. Send it a message; to continue a conversation pass back the handle a previous call returned."),
		WebsiteURL:   get("website", ""),
	}
}

// bridge relays stdio to the running app as the named client, minting its
// token (kept in the keychain, never in argv or a config file) the first
// time. ok is false when no app is running.
func bridgeStdio(ctx context.Context, opts options, stdin io.Reader, stdout, stderr io.Writer) (ok bool, err error) {
	ctl, err := control.Dial(filepath.Join(opts.data, control.SocketName))
	if err != nil {
		return false, nil
	}
	st, err := ctl.Status(ctx)
	if err != nil {
		return true, err
	}
	secrets := secretsIn(opts.data, func(msg string) { fmt.Fprintln(stderr, msg) })
	token, err := secrets.Get(connect.SecretKey(opts.client))
	if err != nil && !errors.Is(err, agent.ErrNotFound) {
		// No keychain to read: a new token goes to the reported fallback.
		fmt.Fprintln(stderr, agent.UserMessage(err))
	}
	if err != nil {
		// Rotate rather than create: the client may exist with a token this
		// keychain lost.
		if token, err = ctl.RotateToken(ctx, opts.client); err != nil {
			return true, err
		}
		if err := secrets.Set(connect.SecretKey(opts.client), token); err != nil {
			return true, err
		}
		fmt.Fprintf(stderr, "Created a token for %q; it is kept in the keychain (or the fallback file reported above), never in a config file or argv.\n", opts.client)
	}
	b := &bridge.Bridge{URL: st.URL, Token: token, Log: slog.New(slog.NewTextHandler(stderr, nil))}
	return true, b.Run(ctx, stdin, stdout)
}

// stdioClient names a stdio client that gives no --client.
const stdioClient = "stdio"

// stdioServe bridges to the running app (so conversations, questions and
// the database are the app's), or serves in-process when none runs.
func stdioServe(ctx context.Context, opts options, stdin io.Reader, stdout, stderr io.Writer) error {
	opts.client = cmp.Or(opts.client, stdioClient)
	ran, err := bridgeStdio(ctx, opts, stdin, stdout, stderr)
	if ran {
		return err
	}
	fmt.Fprintln(stderr, "Deskhand is not running: serving in-process; questions can only go to this client.")
	ctx, a, cleanup, err := boot(ctx, &opts, stderr, false)
	if err != nil {
		return err
	}
	defer cleanup()
	mcp, err := mcpserver.New(a.core, mcpserver.Options{Info: serverInfo(ctx, a.core), Logger: a.log})
	if err != nil {
		return err
	}
	defer mcp.Close(context.Background())
	err = mcp.ServeStdio(ctx, stdin, stdout)
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

const tokenUsage = "usage: deskhand token create NAME | token list | token rotate NAME | token revoke NAME"

// tokenCommand manages client tokens: through the running app when there
// is one (so changes apply at once), else on the store directly.
func tokenCommand(ctx context.Context, opts options, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return userf(tokenUsage)
	}
	sub, rest := args[0], args[1:]
	wantArgs := map[string]int{"create": 1, "list": 0, "revoke": 1, "rotate": 1}
	if n, known := wantArgs[sub]; !known || len(rest) != n {
		return userf(tokenUsage)
	}
	ctl, a, done, err := reach(ctx, &opts, stderr)
	if err != nil {
		return err
	}
	defer done()
	var keeper tokenKeeper
	if ctl != nil {
		keeper = controlTokens{ctl}
	} else {
		keeper = coreTokens{a.core}
	}
	switch sub {
	case "create", "rotate":
		issue := keeper.Create
		if sub == "rotate" {
			issue = keeper.Rotate
		}
		token, err := issue(ctx, rest[0])
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, token)
	case "list":
		infos, err := keeper.List(ctx)
		if err != nil {
			return err
		}
		printTokens(stdout, infos)
	case "revoke":
		if err := keeper.Revoke(ctx, rest[0]); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "Revoked the token of %q.\n", rest[0])
	}
	return nil
}

// reach finds the running app's control channel, so that a command's
// changes apply at once, or else opens the data folder itself; done
// closes what was opened.
func reach(ctx context.Context, opts *options, stderr io.Writer) (ctl *control.Client, a *wiring, done func(), err error) {
	if ctl, err := control.Dial(filepath.Join(opts.data, control.SocketName)); err == nil {
		return ctl, nil, func() {}, nil
	}
	a, err = open(ctx, opts, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})), false)
	if err != nil {
		return nil, nil, nil, err
	}
	return nil, a, a.close, nil
}

func printTokens(w io.Writer, infos []control.TokenInfo) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tCREATED\tLAST USED")
	for _, t := range infos {
		last := "never"
		if !t.LastUsedAt.IsZero() {
			last = t.LastUsedAt.Local().Format(time.DateTime)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, t.CreatedAt.Local().Format(time.DateTime), last)
	}
	tw.Flush()
}

// errNotServing: questions live in the running app only.
var errNotServing = &agent.UserError{Msg: "Deskhand is not running with this data folder, so no question is waiting; start it with 'deskhand serve'"}

func questionsCommand(ctx context.Context, opts options, stdout io.Writer) error {
	ctl, err := control.Dial(filepath.Join(opts.data, control.SocketName))
	if err != nil {
		return errNotServing
	}
	qs, err := ctl.Questions(ctx)
	if err != nil {
		return err
	}
	if len(qs) == 0 {
		fmt.Fprintln(stdout, "No question is waiting.")
		return nil
	}
	for _, q := range qs {
		fmt.Fprintf(stdout, "%s  %s from %s, expires %s\n  %s\n", q.ID, q.Kind, q.Agent, q.ExpiresAt.Local().Format(time.TimeOnly), q.Prompt)
		if len(q.Choices) > 0 {
			fmt.Fprintf(stdout, "  choices: %s\n", strings.Join(q.Choices, " | "))
		}
		if q.Kind == string(agent.KindApproval) {
			fmt.Fprintf(stdout, "  answer with: deskhand answer %s approve|deny [--comment TEXT]\n", q.ID)
		} else {
			fmt.Fprintf(stdout, "  answer with: deskhand answer %s TEXT  (or --decline)\n", q.ID)
		}
	}
	return nil
}

func answerCommand(ctx context.Context, opts options, args []string, stderr io.Writer) error {
	if len(args) == 0 || (len(args) == 1 && !opts.decline) {
		return userf("usage: deskhand answer ID TEXT | deskhand answer ID approve|deny [--comment TEXT] | deskhand answer ID --decline")
	}
	ctl, err := control.Dial(filepath.Join(opts.data, control.SocketName))
	if err != nil {
		return errNotServing
	}
	id, words := args[0], args[1:]
	if opts.decline {
		if err := ctl.Answer(ctx, id, nil, true); err != nil {
			return err
		}
		fmt.Fprintln(stderr, "Declined.")
		return nil
	}
	qs, err := ctl.Questions(ctx)
	if err != nil {
		return err
	}
	var content map[string]any
	for _, q := range qs {
		if q.ID != id {
			continue
		}
		content = map[string]any{"answer": strings.Join(words, " ")}
		if q.Kind == string(agent.KindApproval) {
			switch strings.ToLower(strings.Join(words, " ")) {
			case "approve", "yes", "allow":
				content = map[string]any{"approve": true}
			case "deny", "no":
				content = map[string]any{"approve": false}
			default:
				return userf("an approval is answered with approve or deny, not %q", strings.Join(words, " "))
			}
			if opts.comment != "" {
				content["comment"] = opts.comment
			}
		}
	}
	if content == nil {
		return agent.ErrQuestionClosed
	}
	if err := ctl.Answer(ctx, id, content, false); err != nil {
		return err
	}
	fmt.Fprintln(stderr, "Answered.")
	return nil
}
