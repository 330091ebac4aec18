package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/ollama/ollama/api"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/control"
	"github.com/deskhand/deskhand/server/servertest"
	"github.com/deskhand/deskhand/store"
	"github.com/deskhand/deskhand/store/keychain"
	"github.com/deskhand/deskhand/store/storetest"
	"github.com/deskhand/deskhand/ui/cli"
)

// deskhand runs the command line in-process.
func deskhand(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(t.Context(), args, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), err
}

// TestNoDisplayServesHeadless: "deskhand" alone is the tray app; with no
// display it says so and serves headless.
func TestNoDisplayServesHeadless(t *testing.T) {
	t.Setenv("DISPLAY", "")
	t.Setenv("WAYLAND_DISPLAY", "")
	fake := ollamatest.NewServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	var stderr servertest.Output
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--data", t.TempDir(), "--addr", "127.0.0.1:0", "--ollama", fake.URL}, strings.NewReader(""), io.Discard, &stderr)
	}()
	serveURL(t, &stderr)
	if !strings.Contains(stderr.String(), "No display") {
		t.Errorf("no word about the missing display:\n%s", stderr.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
}

func TestCommandErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, "unknown command"},
		{[]string{"--data", dir, "token"}, "usage"},
		{[]string{"--data", dir, "token", "create"}, "usage"},
		{[]string{"--data", dir, "token", "revoke", "nobody"}, "no active client"},
		{[]string{"--data", dir, "serve", "--addr", "nonsense"}, "HOST:PORT"},
		{[]string{"--data", dir, "serve", "--addr", "0.0.0.0:0", "--insecure-no-auth"}, "requires authentication"},
	} {
		_, _, err := deskhand(t, c.args...)
		if err == nil || !strings.Contains(agent.UserMessage(err), c.want) {
			t.Errorf("%v: %v, want a message with %q", c.args, err, c.want)
		}
	}
	out, _, err := deskhand(t, "version")
	if err != nil || !strings.HasPrefix(out, "deskhand ") {
		t.Errorf("version: %q %v", out, err)
	}
	// Flags a command does not take are refused with its usage, status 2
	// (these two used to run and exit 0).
	for _, args := range [][]string{{"version", "--rotate"}, {"--data", dir, "token", "list", "--backend", "foo"}} {
		var stdout, stderr bytes.Buffer
		if status := exitStatus(t.Context(), args, strings.NewReader(""), &stdout, &stderr); status != 2 || !strings.Contains(stderr.String(), "usage: deskhand") || stdout.Len() > 0 {
			t.Errorf("%q: status %d, stdout %q, stderr:\n%s", args, status, stdout.String(), stderr.String())
		}
	}
}

var tokenLine = regexp.MustCompile(`^dh_[A-Za-z0-9_-]{43}\n$`)

func TestTokenCommandsWithoutTheApp(t *testing.T) {
	dir := t.TempDir()
	out, _, err := deskhand(t, "--data", dir, "token", "create", "cursor")
	if err != nil || !tokenLine.MatchString(out) {
		t.Fatalf("token create printed %q (%v); want the token alone", out, err)
	}
	list, _, _ := deskhand(t, "--data", dir, "token", "list")
	if !strings.Contains(list, "cursor") || strings.Contains(list, strings.TrimSpace(out)) {
		t.Errorf("token list = %q", list)
	}
	if _, _, err := deskhand(t, "--data", dir, "token", "revoke", "cursor"); err != nil {
		t.Fatal(err)
	}
	if list, _, _ := deskhand(t, "--data", dir, "token", "list"); strings.Contains(list, "cursor") {
		t.Errorf("revoked client still listed: %q", list)
	}
}

// TestServe runs "deskhand serve" in-process: tokens made and revoked
// through the control channel take effect at once, and the server stops
// cleanly when its context ends.
func TestServe(t *testing.T) {
	srv := startServe(t, ollamatest.NewServer(t))
	dir, url := srv.dir, srv.url

	token, _, err := deskhand(t, "--data", dir, "token", "create", "cli")
	if err != nil {
		t.Fatal(err)
	}
	token = strings.TrimSpace(token)
	c := mcpClient(t, url, token)
	res := callAssistant(t, c, map[string]any{"message": "My name is Ada."})
	if res.IsError || !strings.Contains(res.Content[0].(mcp.TextContent).Text, "Ada") {
		t.Fatalf("call through serve: %+v", res)
	}

	if _, _, err := deskhand(t, "--data", dir, "token", "revoke", "cli"); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("revoked token got %d while the server runs", resp.StatusCode)
	}

	if _, _, err := deskhand(t, "serve", "--data", dir, "--addr", "127.0.0.1:0"); err == nil || !strings.Contains(agent.UserMessage(err), "already running") {
		t.Errorf("second serve on the same data folder: %v", err)
	}

	srv.stop(t)
}

// served is "deskhand serve" running in-process.
type served struct {
	dir, url string
	cancel   context.CancelFunc
	done     chan error
	output   *servertest.Output // what serve prints, its log included
}

// startServe starts "deskhand serve" on a free port and a fresh data
// folder, with Ollama at fake; it is stopped when the test ends.
func startServe(t *testing.T, fake *ollamatest.Server) *served {
	t.Helper()
	return startServeIn(t, fake, t.TempDir())
}

// startServeIn is startServe on the data folder dir.
func startServeIn(t *testing.T, fake *ollamatest.Server, dir string) *served {
	t.Helper()
	return startServeAt(t, fake, dir, "127.0.0.1:0")
}

// startServeAt is startServeIn on the address addr.
func startServeAt(t *testing.T, fake *ollamatest.Server, dir, addr string) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	s := &served{dir: dir, cancel: cancel, done: make(chan error, 1), output: &servertest.Output{}}
	go func() {
		s.done <- run(ctx, []string{"serve", "--data", s.dir, "--addr", addr, "--ollama", fake.URL}, strings.NewReader(""), s.output, s.output)
	}()
	t.Cleanup(cancel)
	s.url = serveURL(t, s.output)
	return s
}

// stop ends serve as Ctrl-C would and checks it stops cleanly.
func (s *served) stop(t *testing.T) {
	t.Helper()
	s.cancel()
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("serve ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
}

// TestServeBoundsHeaders: headers beyond 64 KiB are refused before the
// token is looked at (net/http would take 1 MiB).
func TestServeBoundsHeaders(t *testing.T) {
	srv := startServe(t, ollamatest.NewServer(t))
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.url, strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+strings.Repeat("x", 128<<10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a 128 KiB header got %s, want 431", resp.Status)
	}
	srv.stop(t)
}

// TestStdio serves over pipes as "deskhand stdio" does.
func TestStdio(t *testing.T) {
	fake := ollamatest.NewServer(t)
	c, inW, done := stdioSession(t, "stdio-test", io.Discard, "stdio", "--data", t.TempDir(), "--ollama", fake.URL)
	first := callAssistant(t, c, map[string]any{"message": "My name is Ada."})
	second := callAssistant(t, c, map[string]any{"message": "What is my name?"})
	if got := second.Content[0].(mcp.TextContent).Text; got != "I remember: My name is Ada. | What is my name?" || first.IsError {
		t.Errorf("stdio session did not continue its conversation: %q", got)
	}
	inW.Close()
	c.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("stdio did not stop when its input closed")
	}
}

// TestStdioInProcessServesAsTheClient: with no app running, "deskhand
// stdio --client cursor" serves as cursor, so it sees only the agents
// cursor may see.
func TestStdioInProcessServesAsTheClient(t *testing.T) {
	fake := ollamatest.NewServer(t)
	dir := t.TempDir()
	for _, args := range [][]string{
		{"agent", "add", "scribe", "--model", "llama3.2"}, {"agent", "add", "researcher", "--model", "llama3.2"},
		{"token", "create", "cursor"}, {"token", "agents", "cursor", "researcher"},
	} {
		if _, stderr, err := deskhand(t, append([]string{"--data", dir, "--ollama", fake.URL}, args...)...); err != nil {
			t.Fatalf("%v: %v %s", args, err, stderr)
		}
	}
	tools := func(args ...string) (names []string) {
		c, inW, done := stdioSession(t, "stdio-test", io.Discard, append([]string{"stdio", "--data", dir, "--ollama", fake.URL}, args...)...)
		res, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		inW.Close()
		c.Close()
		<-done
		return names
	}
	if got := tools("--client", "cursor"); !slices.Equal(got, []string{"researcher"}) {
		t.Errorf("stdio --client cursor lists %v, want [researcher]", got)
	}
	if got := tools(); !slices.Contains(got, "scribe") {
		t.Errorf("plain stdio lists %v, without scribe", got)
	}
}

// servingAt is the line serve prints once it serves; its submatch is the
// MCP endpoint's URL.
var servingAt = regexp.MustCompile(`serving your agents at (\S+)`)

// serveURL waits for serve's banner in out and returns the URL.
func serveURL(t *testing.T, out *servertest.Output) string {
	t.Helper()
	return out.WaitFor(t, servingAt, 15*time.Second)[1]
}

func mcpClient(t *testing.T, url, token string) *client.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr)
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var init mcp.InitializeRequest
	init.Params.ClientInfo = mcp.Implementation{Name: "serve-test", Version: "0"}
	if _, err := c.Initialize(t.Context(), init); err != nil {
		t.Fatal(err)
	}
	return c
}

func callAssistant(t *testing.T, c *client.Client, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	var req mcp.CallToolRequest
	req.Params.Name = "assistant"
	req.Params.Arguments = args
	res, err := c.CallTool(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestQuestionsFromTheCommandLine: headless, the command line is the
// desktop: a question nobody else can answer is listed by "questions" and
// answered by "answer"; a second answer is refused.
func TestQuestionsFromTheCommandLine(t *testing.T) {
	fake := ollamatest.NewServer(t, ollamatest.WithReplyFunc(func(req api.ChatRequest) ollamatest.Reply {
		if last := req.Messages[len(req.Messages)-1]; last.Role == "tool" {
			return ollamatest.Reply{Content: "answer was: " + last.Content}
		}
		return ollamatest.Reply{ToolCalls: []api.ToolCall{ollamatest.ToolCall("call_ask00001", "ask_user", `{"question":"Favourite colour?","choices":["red","blue"]}`)}}
	}))
	srv := startServe(t, fake)
	dir := srv.dir
	token, _, err := deskhand(t, "--data", dir, "token", "create", "cli")
	if err != nil {
		t.Fatal(err)
	}
	c := mcpClient(t, srv.url, strings.TrimSpace(token)) // declares no elicitation

	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	result := make(chan outcome, 1)
	go func() {
		var req mcp.CallToolRequest
		req.Params.Name = "assistant"
		req.Params.Arguments = map[string]any{"message": "pick one"}
		res, err := c.CallTool(t.Context(), req)
		result <- outcome{res, err}
	}()

	// The question lives in the serving process; the only event a separate
	// command line has is its own output, so this polls "questions" on a
	// ticker, for at most 10 s.
	var listing string
	idPattern := regexp.MustCompile(`(?m)^([0-9a-f-]{36})  question from assistant`)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
poll:
	for {
		listing, _, err = deskhand(t, "--data", dir, "questions")
		if err != nil {
			t.Fatal(err)
		}
		if idPattern.MatchString(listing) {
			break
		}
		select {
		case <-tick.C:
		case <-deadline:
			break poll
		}
	}
	m := idPattern.FindStringSubmatch(listing)
	if m == nil || !strings.Contains(listing, "Favourite colour?") || !strings.Contains(listing, "red | blue") {
		t.Fatalf("questions printed:\n%s", listing)
	}
	if _, _, err := deskhand(t, "--data", dir, "answer", m[1], "green"); err == nil {
		t.Error("an answer outside the choices was accepted")
	}
	if _, _, err := deskhand(t, "--data", dir, "answer", m[1], "blue"); err != nil {
		t.Fatal(err)
	}
	out := <-result
	if out.err != nil {
		t.Fatalf("the call waiting on the question: %v", out.err)
	}
	if res := out.res; res.IsError || res.Content[0].(mcp.TextContent).Text != "answer was: blue" {
		t.Errorf("turn result: %+v", res)
	}
	if _, _, err := deskhand(t, "--data", dir, "answer", m[1], "red"); err == nil || !strings.Contains(agent.UserMessage(err), "no longer open") {
		t.Errorf("second answer: %v", err)
	}
	srv.stop(t)
}

func TestQuestionsNeedTheApp(t *testing.T) {
	_, _, err := deskhand(t, "--data", t.TempDir(), "questions")
	if err == nil || !strings.Contains(agent.UserMessage(err), "not running") {
		t.Errorf("err = %v", err)
	}
}

// TestSavedSettingsApplyAtStart: the address and Ollama host saved in
// Settings are used when no flag or environment variable says otherwise.
func TestSavedSettingsApplyAtStart(t *testing.T) {
	t.Setenv("DESKHAND_ADDR", "")
	t.Setenv("OLLAMA_HOST", "")
	fake := ollamatest.NewServer(t)
	dir := t.TempDir()
	db := storetest.OpenAt(t, filepath.Join(dir, store.FileName))
	for k, v := range map[string]string{"server.addr": "127.0.0.1:0", "ollama.host": fake.URL} {
		if err := db.SetSetting(t.Context(), k, v); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	ctx, cancel := context.WithCancel(t.Context())
	var stderr servertest.Output
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve", "--data", dir}, strings.NewReader(""), io.Discard, &stderr) }()
	url := serveURL(t, &stderr)
	if strings.Contains(url, ":7345/") {
		t.Errorf("the saved address was ignored: %s", url)
	}
	if !strings.Contains(stderr.String(), fake.URL) {
		t.Errorf("the saved Ollama host was ignored:\n%s", stderr.String())
	}
	cancel()
	<-done
}

// TestStdioBridgesToTheRunningApp: "deskhand stdio --client NAME" relays to
// the running app with a token of its own, minted once and kept out of argv.
func TestStdioBridgesToTheRunningApp(t *testing.T) {
	srv := startServe(t, ollamatest.NewServer(t))
	var stderr servertest.Output
	c, inW, done := stdioSession(t, "claude-desktop", &stderr, "stdio", "--client", "claude-desktop", "--data", srv.dir)
	res := callAssistant(t, c, map[string]any{"message": "My name is Ada."})
	if res.IsError || !strings.Contains(res.Content[0].(mcp.TextContent).Text, "Ada") {
		t.Fatalf("call through the bridge: %+v", res)
	}
	c.Close()
	inW.Close()
	if err := <-done; err != nil {
		t.Errorf("bridge ended with %v", err)
	}
	list, _, _ := deskhand(t, "--data", srv.dir, "token", "list")
	if !strings.Contains(list, "claude-desktop") || !strings.Contains(stderr.String(), "Created a token") {
		t.Errorf("no token of its own: %q / %q", list, stderr.String())
	}
	srv.stop(t)
}

// TestStdioKeepsAnotherEntrysToken: "deskhand stdio --client cursor" for a
// client whose token lives in its HTTP entry (not in this keychain)
// refuses and says what to do, and that entry's token keeps working.
func TestStdioKeepsAnotherEntrysToken(t *testing.T) {
	srv := startServe(t, ollamatest.NewServer(t))
	out, _, err := deskhand(t, "--data", srv.dir, "token", "create", "cursor")
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	err = run(t.Context(), []string{"stdio", "--client", "cursor", "--data", srv.dir}, strings.NewReader(""), io.Discard, &stderr)
	if err == nil || !strings.Contains(agent.UserMessage(err), "--client cursor-stdio") {
		t.Errorf("stdio for an existing HTTP client: %v (stderr %q)", err, stderr.String())
	}
	if res := callAssistant(t, mcpClient(t, srv.url, strings.TrimSpace(out)), map[string]any{"message": "hello"}); res.IsError {
		t.Errorf("cursor's own token after the stdio attempt: %+v", res)
	}
	srv.stop(t)
}

// TestStdioWithoutAClientNameBridgesToo: a plain "deskhand stdio" also
// relays to the running app (under the client name "stdio") rather than
// opening the database beside it.
func TestStdioWithoutAClientNameBridgesToo(t *testing.T) {
	srv := startServe(t, ollamatest.NewServer(t))
	var stderr servertest.Output
	c, inW, done := stdioSession(t, "plain", &stderr, "stdio", "--data", srv.dir)
	if res := callAssistant(t, c, map[string]any{"message": "hello"}); res.IsError {
		t.Fatalf("call: %+v", res)
	}
	c.Close()
	inW.Close()
	if err := <-done; err != nil {
		t.Errorf("stdio ended with %v", err)
	}
	if list, _, _ := deskhand(t, "--data", srv.dir, "token", "list"); !strings.Contains(list, "stdio") || strings.Contains(stderr.String(), "serving in-process") {
		t.Errorf("not bridged: tokens %q, stderr %q", list, stderr.String())
	}
	srv.stop(t)
}

// stdioSession runs the command line with pipes for stdin and stdout and
// connects a legacy-era mcp-go client to it. Closing stdin ends the run,
// whose result arrives on done.
func stdioSession(t *testing.T, name string, stderr io.Writer, args ...string) (*client.Client, *io.PipeWriter, <-chan error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(t.Context(), args, inR, outW, stderr)
		outW.Close()
	}()
	c := client.NewClient(transport.NewIO(outR, inW, io.NopCloser(strings.NewReader(""))))
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	init.Params.ClientInfo = mcp.Implementation{Name: name, Version: "0"}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize over stdio: %v\n%v", err, stderr)
	}
	return c, inW, done
}

// TestPortTaken: serving on a port another process holds fails at once,
// naming that process where the OS tells.
func TestPortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, _, err = deskhand(t, "serve", "--data", t.TempDir(), "--addr", ln.Addr().String(), "--ollama", "http://127.0.0.1:1")
	msg := agent.UserMessage(err)
	if err == nil || !strings.Contains(msg, "cannot listen on "+ln.Addr().String()) {
		t.Fatalf("serve on a taken port: %v", err)
	}
	if runtime.GOOS == "linux" && !strings.Contains(msg, fmt.Sprintf("(pid %d)", os.Getpid())) {
		t.Errorf("the message does not name the process holding the port: %s", msg)
	}
}

// TestKilledMidTurn: a Deskhand process killed with SIGKILL in the middle
// of a turn loses nothing it acknowledged; at the next start the turn is
// recorded interrupted and the conversation carries on.
func TestKilledMidTurn(t *testing.T) {
	fake := ollamatest.NewServer(t, ollamatest.WithChunkDelay(200*time.Millisecond))
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(exe, "serve", "--data", dir, "--addr", "127.0.0.1:0", "--ollama", fake.URL)
	child.Env = append(os.Environ(), asMainEnv+"=1", "LANG=en_US.UTF-8")
	var stderr servertest.Output
	child.Stderr = &stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	url := serveURL(t, &stderr)
	token, _, err := deskhand(t, "--data", dir, "token", "create", "survivor")
	if err != nil {
		t.Fatal(err)
	}
	c := mcpClient(t, url, strings.TrimSpace(token))
	first := callAssistant(t, c, map[string]any{"message": "Remember: the door is blue."})
	handle, _ := first.Meta.AdditionalFields["io.deskhand/conversation"].(string)
	if first.IsError || handle == "" {
		t.Fatalf("first call: %+v", first)
	}
	before := len(fake.ChatRequests())
	go func() {
		var req mcp.CallToolRequest
		req.Params.Name = "assistant"
		req.Params.Arguments = map[string]any{"message": "one two three four five", "conversation": handle}
		_, _ = c.CallTool(t.Context(), req) // dies with the process
	}()
	wait, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := fake.WaitChatRequests(wait, before+1); err != nil {
		t.Fatalf("the model was never asked: %v", err)
	}
	// The turn's start is written while the model works: wait until it is
	// recorded, read as another program would. The write happens in the
	// child process, which signals nothing this one can wait on (its
	// output says nothing of turns), so this polls its database on a
	// ticker, bounded by the same deadline.
	ro, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, store.FileName)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		var running int
		if err := ro.QueryRowContext(wait, "SELECT count(*) FROM turns WHERE status = 'running'").Scan(&running); err != nil {
			t.Fatalf("the running turn was not recorded: %v", err)
		}
		if running > 0 {
			break
		}
		select {
		case <-tick.C:
		case <-wait.Done():
			t.Fatalf("the running turn was not recorded: %v", wait.Err())
		}
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()

	srv := startServeIn(t, fake, dir)
	db := storetest.OpenAt(t, filepath.Join(dir, store.FileName))
	turns, err := db.Turns(t.Context(), handle)
	if err != nil || len(turns) != 2 || turns[0].Status != agent.TurnCompleted || turns[1].Status != agent.TurnInterrupted {
		t.Fatalf("turns after the kill: %+v, %v", turns, err)
	}
	msgs, _ := db.Messages(t.Context(), handle)
	if len(msgs) != 3 || msgs[2].Content != "one two three four five" {
		t.Errorf("messages after the kill: %+v", msgs)
	}
	again := callAssistant(t, mcpClient(t, srv.url, strings.TrimSpace(token)), map[string]any{"message": "What colour is the door?", "conversation": handle})
	if again.IsError || !strings.Contains(again.Content[0].(mcp.TextContent).Text, "door is blue") {
		t.Errorf("after the restart: %+v", again)
	}
	srv.stop(t)
}

// TestReadOnlyDataFolder: a data folder that cannot be written is refused
// with the OS's reason and what to do; nothing else is tried.
func TestReadOnlyDataFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if _, _, err := deskhand(t, "--data", dir, "token", "create", "first"); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		// root writes through file modes: make the folder a read-only mount.
		if out, err := exec.Command("mount", "-t", "tmpfs", "tmpfs", dir).CombinedOutput(); err != nil {
			t.Skipf("cannot mount a read-only folder here (%v: %s)", err, out)
		}
		t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
		if out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput(); err != nil {
			t.Fatalf("remount read-only: %v: %s", err, out)
		}
	} else {
		if err := os.Chmod(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
	}
	_, _, err := deskhand(t, "--data", dir, "token", "create", "second")
	if msg := agent.UserMessage(err); err == nil || !strings.Contains(msg, "cannot be written") {
		t.Errorf("a read-only data folder: %v (%q)", err, msg)
	}
}

// TestPOSIXLocaleIsQuiet: under the "C" locale of minimal shells and
// containers, a command says nothing about locales (fyne cannot parse "C"
// and used to print an error at every start).
func TestPOSIXLocaleIsQuiet(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, env := range []string{"LANG=C.UTF-8", "LC_ALL=C.UTF-8", "LANG=C", "LC_ALL=POSIX"} {
		cmd := exec.Command(exe, "token", "list", "--data", t.TempDir())
		cmd.Env = append(os.Environ(), asMainEnv+"=1", "LANG=", "LC_ALL=", "LC_MESSAGES=", env)
		out, err := cmd.CombinedOutput()
		if err != nil || strings.Contains(string(out), "locale") || !strings.HasPrefix(string(out), "NAME") {
			t.Errorf("%s: %v\n%s", env, err, out)
		}
	}
}

// TestBadResponseSchemaRefused: the core main builds checks a response
// schema with the compiler mcp-go's output validation uses, and says why
// it does not compile.
func TestBadResponseSchemaRefused(t *testing.T) {
	g := &cli.Globals{Data: t.TempDir(), Ollama: "http://127.0.0.1:9"}
	a, err := program{}.open(t.Context(), g, slog.New(slog.DiscardHandler), agent.NewRedactor(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	_, err = a.core.Agents().Save(t.Context(), agent.Agent{Slug: "shaped", ResponseSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"nmber"}}}`)})
	if err == nil || !strings.Contains(agent.UserMessage(err), "/properties/n/type") {
		t.Errorf("a schema that does not compile: %v", err)
	}
}

// TestAgentReachAndApproversFromTheCommandLine: the command line sets what
// the editor sets: the hosts an agent may reach on the network, and
// whether the calling client may approve its tool calls.
func TestAgentReachAndApproversFromTheCommandLine(t *testing.T) {
	dir := t.TempDir()
	stored := func() agent.Agent {
		t.Helper()
		db := storetest.OpenAt(t, filepath.Join(dir, store.FileName))
		defer db.Close()
		agents, err := db.Agents(t.Context())
		if err != nil || len(agents) != 1 {
			t.Fatalf("agents = %v, %v", agents, err)
		}
		return agents[0]
	}
	if _, _, err := deskhand(t, "--data", dir, "agent", "add", "fetcher", "--reach", "NAS.local:8080, 192.168.1.20:11434", "--client-may-approve"); err != nil {
		t.Fatal(err)
	}
	if a := stored(); !a.ClientMayApprove || strings.Join(a.ReachableHosts, ",") != "nas.local:8080,192.168.1.20:11434" {
		t.Errorf("after add: may approve %v, reach %q", a.ClientMayApprove, a.ReachableHosts)
	}
	if _, _, err := deskhand(t, "--data", dir, "agent", "edit", "fetcher", "--reach", "", "--client-may-approve=false"); err != nil {
		t.Fatal(err)
	}
	if a := stored(); a.ClientMayApprove || a.ReachableHosts != nil {
		t.Errorf("after edit: may approve %v, reach %q", a.ClientMayApprove, a.ReachableHosts)
	}
	if _, _, err := deskhand(t, "--data", dir, "agent", "edit", "fetcher", "--reach", "nas.local"); err == nil || !strings.Contains(agent.UserMessage(err), `"nas.local" is not a host and port`) {
		t.Errorf("a host without a port: %v", err)
	}
}

// TestProviderKeyOnlyInTheKeychain (issue 15): a provider's API key given
// to 'deskhand provider add --key-stdin' goes to the keychain and nowhere
// else, whether the command line opens the store itself (the app not
// running) or hands the key to the running app over its control channel.
// The key is looked for in the data folder (the database, its -wal and
// -shm, every other file), in serve's output, in what the commands print
// and in every process's argv (ps), taken while the command waits for the
// key and serve runs. It needs a real Secret Service, as the fallback file
// would (rightly) hold the key: run store/keychain/testdata/real-keyring.sh,
// which starts one in a private D-Bus session.
func TestProviderKeyOnlyInTheKeychain(t *testing.T) {
	if os.Getenv("DESKHAND_REAL_KEYRING") != "1" {
		t.Skip("needs a real Secret Service: run store/keychain/testdata/real-keyring.sh, which starts one in a private D-Bus session")
	}
	if _, err := exec.LookPath("ps"); err != nil {
		t.Fatalf("ps not found (package procps): %v", err)
	}
	_, noSecretTool := exec.LookPath("secret-tool")
	if noSecretTool != nil {
		t.Log("secret-tool not found (package libsecret-tools): the key is read back with 'provider list' only")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// lookup is what the Secret Service holds for the provider, read as
	// another program would (go-keyring's attributes: service, username).
	lookup := func(name string, want string) string {
		t.Helper()
		if noSecretTool != nil {
			return want
		}
		out, err := exec.Command("secret-tool", "lookup", "service", keychain.DefaultService, "username", agent.ProviderSecretKey(name)).Output()
		if err != nil {
			t.Errorf("secret-tool lookup of %s: %v", name, err)
		}
		return strings.TrimSuffix(string(out), "\n")
	}
	// notInFolder looks for key in every file of dir, and says which of the
	// database's files it read.
	notInFolder := func(dir, key, when string) {
		t.Helper()
		read := map[string]bool{}
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			read[d.Name()] = true
			if bytes.Contains(b, []byte(key)) {
				t.Errorf("%s: the key is in %s", when, path)
			}
			return nil
		})
		if err != nil {
			t.Errorf("%s: %v", when, err)
		}
		if !read[store.FileName] {
			t.Errorf("%s: no database in %s to look in (read %v)", when, dir, read)
		}
		t.Logf("%s: looked for the key in %v", when, read)
	}
	// add runs 'deskhand provider add claude --kind anthropic --key-stdin'
	// as its own process on dir; while it waits for the key on stdin, every
	// process's argv is taken (serve's too, when it runs).
	add := func(dir, key string) {
		t.Helper()
		cmd := exec.Command(exe, "provider", "add", "claude", "--kind", "anthropic", "--key-stdin", "--data", dir)
		cmd.Env = append(os.Environ(), asMainEnv+"=1")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ps, err := exec.Command("ps", "-eo", "args").Output()
		if err != nil {
			t.Errorf("ps: %v", err)
		}
		if !bytes.Contains(ps, []byte("provider add claude --kind anthropic --key-stdin --data "+dir)) {
			t.Errorf("ps did not see the command waiting for its key:\n%s", ps)
		}
		if bytes.Contains(ps, []byte(key)) {
			t.Errorf("the key is in a process's argv:\n%s", ps)
		}
		_, werr := io.WriteString(stdin, key+"\n")
		stdin.Close()
		if err := cmd.Wait(); err != nil || werr != nil {
			t.Fatalf("provider add: %v, %v\n%s", err, werr, out.String())
		}
		if strings.Contains(out.String(), key) {
			t.Errorf("provider add printed the key:\n%s", out.String())
		}
		t.Logf("provider add printed: %s", out.String())
	}
	listed := func(dir string) string {
		t.Helper()
		out, errOut, err := deskhand(t, "--data", dir, "provider", "list")
		if err != nil {
			t.Fatalf("provider list: %v\n%s", err, errOut)
		}
		return out
	}
	hasKey := regexp.MustCompile(`(?m)^claude\s+anthropic\s+https://api\.anthropic\.com\s+yes\s`)
	t.Cleanup(func() {
		_ = exec.Command("secret-tool", "clear", "service", keychain.DefaultService, "username", agent.ProviderSecretKey("claude")).Run()
	})

	// The app not running: the command opens the store and the keychain.
	direct := "sk-ant-direct-" + rand.Text()
	dir := t.TempDir()
	add(dir, direct)
	if got := lookup("claude", direct); got != direct {
		t.Errorf("the Secret Service holds %q, want the key", got)
	}
	if out := listed(dir); !hasKey.MatchString(out) || strings.Contains(out, direct) {
		t.Errorf("provider list:\n%s", out)
	}
	notInFolder(dir, direct, "the app not running")

	// The app running: the key goes to it over the control channel.
	fake := ollamatest.NewServer(t)
	running := "sk-ant-running-" + rand.Text()
	dir = t.TempDir()
	serve := exec.Command(exe, "serve", "--data", dir, "--addr", "127.0.0.1:0", "--ollama", fake.URL)
	serve.Env = append(os.Environ(), asMainEnv+"=1")
	var serveOut servertest.Output
	serve.Stdout, serve.Stderr = &serveOut, &serveOut
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer serve.Process.Kill()
	serveURL(t, &serveOut)
	add(dir, running)
	if got := lookup("claude", running); got != running {
		t.Errorf("the Secret Service holds %q, want the key given to the running app", got)
	}
	// Listed by the running app: the provider is its own, not only the
	// database's (it reads its providers at start).
	if _, err := control.Dial(control.SocketPath(dir)); err != nil {
		t.Fatalf("the app is not running: %v", err)
	}
	if out := listed(dir); !hasKey.MatchString(out) {
		t.Errorf("provider list from the running app:\n%s", out)
	}
	notInFolder(dir, running, "the app running")
	if err := serve.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := serve.Wait(); err != nil {
		t.Errorf("serve: %v\n%s", err, serveOut.String())
	}
	if strings.Contains(serveOut.String(), running) {
		t.Errorf("serve's output has the key:\n%s", serveOut.String())
	}
	notInFolder(dir, running, "after serve stopped")
	if _, _, err := deskhand(t, "--data", dir, "provider", "remove", "claude"); err != nil {
		t.Errorf("provider remove: %v", err)
	}
	if noSecretTool == nil {
		if out, err := exec.Command("secret-tool", "lookup", "service", keychain.DefaultService, "username", agent.ProviderSecretKey("claude")).Output(); err == nil || len(out) > 0 {
			t.Errorf("after provider remove, the Secret Service still holds %q (%v)", out, err)
		}
	}
}
