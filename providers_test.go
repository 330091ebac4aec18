package main

import (
	"bytes"
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/models/anthropic/anthropictest"
	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/models/openai/openaitest"
	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/control"
	"github.com/deskhand/deskhand/server/servertest"
	"github.com/deskhand/deskhand/server/tools"
)

// TestAgentOnAnthropic (issue 15): an agent moved to an Anthropic provider
// whose key came from --key-stdin answers a call with a tool round, on
// the running app, through Anthropic's wire format.
func TestAgentOnAnthropic(t *testing.T) {
	const key = "sk-ant-test-8c1f0d"
	fake := anthropictest.NewServer(t, anthropictest.WithAPIKey(key), anthropictest.WithReplies(
		anthropictest.Reply{ToolUses: []anthropictest.ToolUse{{Name: tools.NameCurrentTime, Input: `{}`}}},
		anthropictest.Reply{Text: "It is tea time."},
	))
	srv := startServe(t, ollamatest.NewServer(t))

	var stdout, stderr bytes.Buffer
	args := []string{"--data", srv.dir, "provider", "add", "claude", "--kind", "anthropic", "--url", fake.URL, "--key-stdin"}
	if err := run(t.Context(), args, strings.NewReader(key+"\n"), &stdout, &stderr); err != nil {
		t.Fatalf("provider add: %v\n%s", err, stderr.String())
	}
	ctl, err := control.Dial(control.SocketPath(srv.dir))
	if err != nil {
		t.Fatal(err)
	}
	agents, err := ctl.Agents(t.Context())
	if err != nil || len(agents) != 1 {
		t.Fatalf("agents: %+v, %v", agents, err)
	}
	a := agents[0]
	a.Provider, a.Model = "claude", anthropictest.DefaultModel
	a.Tools = []agent.AgentTool{{Name: tools.NameCurrentTime}}
	if _, err := ctl.SaveAgent(t.Context(), a); err != nil {
		t.Fatal(err)
	}

	token, _, err := deskhand(t, "--data", srv.dir, "token", "create", "cli")
	if err != nil {
		t.Fatal(err)
	}
	res := callAssistant(t, mcpClient(t, srv.url, strings.TrimSpace(token)), map[string]any{"message": "What time is it?"})
	if res.IsError || !strings.Contains(res.Content[0].(mcp.TextContent).Text, "It is tea time.") {
		t.Fatalf("call on Anthropic: %+v", res)
	}
	reqs := fake.MessageRequests()
	if len(reqs) != 2 {
		t.Fatalf("Anthropic got %d message requests, want 2 (the tool round, then the answer)", len(reqs))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != "user" || len(last.Content) != 1 || last.Content[0].Type != "tool_result" {
		t.Errorf("the second request does not end with the tool's result: %+v", last)
	}
	if strings.Contains(stderr.String()+stdout.String(), key) {
		t.Error("provider add printed the key")
	}
}

// TestFirstStartFindsALocalServer (issue 15): with no Ollama and an
// OpenAI-compatible server where LM Studio listens, the first serve
// creates the assistant on it, a client's call gets its streamed answer,
// and the server is a provider from then on. (The test's fake stands at
// a port of its own: first start's addresses are injected.)
func TestFirstStartFindsALocalServer(t *testing.T) {
	fake := openaitest.NewServer(t, openaitest.WithModels("qwen2.5-7b-instruct"),
		openaitest.WithReplies(openaitest.Reply{Content: "Hello from the local server."}))
	dead := httptest.NewServer(nil)
	deadURL := dead.URL
	dead.Close()
	withFake := program{localServers: []agent.Provider{
		{Name: agent.OllamaProvider, Kind: agent.ProviderOllama},
		{Name: "lmstudio", Kind: agent.ProviderOpenAICompatible, BaseURL: fake.BaseURL()},
	}}

	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stderr servertest.Output
	done := make(chan error, 1)
	go func() {
		done <- withFake.run(ctx, []string{"serve", "--data", dir, "--addr", "127.0.0.1:0", "--ollama", deadURL}, strings.NewReader(""), io.Discard, &stderr)
	}()
	url := serveURL(t, &stderr)

	token, _, err := deskhand(t, "--data", dir, "token", "create", "cli")
	if err != nil {
		t.Fatal(err)
	}
	res := callAssistant(t, mcpClient(t, url, strings.TrimSpace(token)), map[string]any{"message": "Hi"})
	if res.IsError || !strings.Contains(res.Content[0].(mcp.TextContent).Text, "Hello from the local server.") {
		t.Fatalf("call on the server found at first start: %+v\n%s", res, stderr.String())
	}
	chats := fake.ChatRequests()
	if len(chats) != 1 || !chats[0].Stream || chats[0].Model != "qwen2.5-7b-instruct" {
		t.Errorf("the local server got %+v, want one streamed chat with its model", chats)
	}
	list, _, err := deskhand(t, "--data", dir, "provider", "list")
	if err != nil || !strings.Contains(list, "lmstudio") || !strings.Contains(list, fake.BaseURL()) || !strings.Contains(list, "assistant") {
		t.Errorf("provider list = %q, %v; want lmstudio at %s, used by assistant", list, err, fake.BaseURL())
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
}
