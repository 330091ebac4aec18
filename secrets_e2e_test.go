package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/control"
)

// echoingAnthropic is an Anthropic server that lists one model and
// answers every message with a 500 whose error message echoes the
// request's headers, API key included, as some proxies do.
func echoingAnthropic(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodGet {
			_, _ = io.WriteString(w, `{"data":[{"type":"model","id":"claude-echo","display_name":"Echo","created_at":"2025-01-01T00:00:00Z"}],"has_more":false,"first_id":"claude-echo","last_id":"claude-echo"}`)
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = fmt.Fprintf(w, `{"type":"error","error":{"type":"api_error","message":"upstream failed for X-Api-Key: %s"}}`, r.Header.Get("X-Api-Key"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestNoSecretValueLeaks is issue 36's item 3: a provider whose server
// echoes its key in an error, a stdio tool server that prints its secret
// environment to stderr and an HTTP tool server whose 500 echoes its
// secret header leave none of those values, nor the client's token, in
// the data folder (the database, its WAL, serve's and the tool servers'
// logs; the secrets' fallback file aside), in what serve and the commands
// print, or in the error the client gets.
func TestNoSecretValueLeaks(t *testing.T) {
	const providerKey, envSecret, headerSecret = "sk-ant-echo-7f2c91d4e8", "ts-env-5d1e0c9a", "hdr-val-3b8e61f2"
	anthropic := echoingAnthropic(t)
	echoHeaders := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_ = r.Header.Write(w)
	}))
	t.Cleanup(echoHeaders.Close)
	srv := startServe(t, ollamatest.NewServer(t))
	var printed strings.Builder
	must := func(stdin string, args ...string) string {
		t.Helper()
		out, errOut, err := deskhandIn(t, stdin, append([]string{"--data", srv.dir}, args...)...)
		printed.WriteString(out + errOut)
		if err != nil {
			t.Fatalf("deskhand %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
		}
		return out
	}
	must(providerKey+"\n", "provider", "add", "claude", "--kind", "anthropic", "--url", anthropic.URL, "--key-stdin")
	must(envSecret+"\n", "toolserver", "add", "envdump", "--secret-env", "DUMP_TOKEN", "--command", "sh", "--", "-c", `echo "env: DUMP_TOKEN=$DUMP_TOKEN" >&2; exit 3`)
	must("Bearer "+headerSecret+"\n", "toolserver", "add", "echoer", "--url", echoHeaders.URL+"/mcp", "--secret-header", "Authorization")
	for _, name := range []string{"envdump", "echoer"} {
		out, errOut, _ := deskhandIn(t, "", "--data", srv.dir, "toolserver", "check", name) // each fails; what it says is checked below
		printed.WriteString(out + errOut)
	}

	ctl, err := control.Dial(control.SocketPath(srv.dir))
	if err != nil {
		t.Fatal(err)
	}
	agents, err := ctl.Agents(t.Context())
	if err != nil || len(agents) == 0 {
		t.Fatalf("agents: %v %v", agents, err)
	}
	a := agents[0]
	a.Provider, a.Model = "claude", "claude-echo"
	if _, err := ctl.SaveAgent(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	out, _, err := deskhand(t, "--data", srv.dir, "token", "create", "cli") // shown once, by design: not in printed
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(out)
	res := callAssistant(t, mcpClient(t, srv.url, token), map[string]any{"message": "hello"})
	answer := res.Content[0].(mcp.TextContent).Text
	if !res.IsError || !strings.Contains(answer, "Anthropic failed") {
		t.Fatalf("the call on the echoing server: %+v", res)
	}
	srv.stop(t)

	stored := dataBytes(t, srv.dir)
	if !strings.Contains(stored, "upstream failed for X-Api-Key") || !strings.Contains(stored, "env: DUMP_TOKEN=") {
		t.Fatalf("the echoes are not in the data folder: this test reads the wrong files")
	}
	for _, secret := range []string{providerKey, envSecret, headerSecret, token} {
		for where, text := range map[string]string{"the data folder": stored, "what serve printed": srv.output.String(),
			"what the commands printed": printed.String(), "the client's error": answer} {
			if strings.Contains(text, secret) {
				t.Errorf("%q is in %s", secret, where)
			}
		}
	}
}
