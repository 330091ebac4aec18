package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/ollama/ollama/api"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
)

// waitQuestion polls "deskhand questions" (the question lives in the
// serving process) until one of the kind from the agent is listed, and
// returns its ID and the listing.
func waitQuestion(t *testing.T, dir, kind string, ended <-chan struct{}) (id, listing string) {
	t.Helper()
	idPattern := regexp.MustCompile(`(?m)^([0-9a-f-]{36})  ` + kind + ` from assistant`)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(60 * time.Second)
	for {
		out, _, err := deskhand(t, "--data", dir, "questions")
		if err != nil {
			t.Fatal(err)
		}
		if m := idPattern.FindStringSubmatch(out); m != nil {
			return m[1], out
		}
		select {
		case <-ended:
			t.Fatalf("the call ended before a %s was asked", kind)
		case <-deadline:
			t.Fatalf("no %s asked; questions printed:\n%s", kind, out)
		case <-tick.C:
		}
	}
}

// TestAgentAnswersServerEverythingsQuestionAndSampling: the real
// server-everything over stdio, registered with --allow-sampling and
// attached to an agent: the agent (a scripted fake model) calls its
// elicitation tool, whose question reaches the person like ask_user and
// is answered from the command line, then its sampling tool, answered by
// the agent's own model; both results reach the MCP client.
func TestAgentAnswersServerEverythingsQuestionAndSampling(t *testing.T) {
	command, fsArgs := filesystemServer(t, t.TempDir()) // installs the pinned servers
	everything := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(fsArgs[0]))), "server-everything", "dist", "index.js")
	fake := ollamatest.NewServer(t, ollamatest.WithReplyFunc(func(req api.ChatRequest) ollamatest.Reply {
		if len(req.Messages) > 0 && req.Messages[0].Content == "You are a helpful test server." {
			return ollamatest.Reply{Content: "tools hum softly"}
		}
		var results []string
		for _, m := range req.Messages {
			if m.Role == "tool" {
				results = append(results, m.Content)
			}
		}
		switch len(results) {
		case 0:
			return ollamatest.Reply{ToolCalls: []api.ToolCall{ollamatest.ToolCall("call_elic0001", "ev__trigger-elicitation-request", `{}`)}}
		case 1:
			return ollamatest.Reply{ToolCalls: []api.ToolCall{ollamatest.ToolCall("call_samp0001", "ev__trigger-sampling-request", `{"prompt":"a haiku","maxTokens":50}`)}}
		}
		return ollamatest.Reply{Content: strings.Join(results, "\n---\n")}
	}))
	srv := startServe(t, fake)
	dir := srv.dir
	for _, args := range [][]string{
		{"toolserver", "add", "ev", "--allow-sampling", "--command", command, "--", everything, "stdio"},
		{"agent", "edit", "assistant", "--toolserver", "ev:trigger-elicitation-request,trigger-sampling-request"},
	} {
		if _, errOut, err := deskhandIn(t, "", append([]string{"--data", dir}, args...)...); err != nil {
			t.Fatalf("deskhand %v: %v\n%s", args, err, errOut)
		}
	}
	token, _, err := deskhand(t, "--data", dir, "token", "create", "e2e")
	if err != nil {
		t.Fatal(err)
	}
	c := mcpClient(t, srv.url, strings.TrimSpace(token))
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	result := make(chan outcome, 1)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		var req mcp.CallToolRequest
		req.Params.Name = "assistant"
		req.Params.Arguments = map[string]any{"message": "Ask me my name, then write a haiku."}
		res, err := c.CallTool(t.Context(), req)
		result <- outcome{res, err}
	}()
	answer := func(args ...string) {
		t.Helper()
		if _, _, err := deskhand(t, append([]string{"--data", dir, "answer"}, args...)...); err != nil {
			t.Fatal(err)
		}
	}
	// Neither tool is read-only: each asks first.
	id, _ := waitQuestion(t, dir, "approval", ended)
	answer(id, "approve")
	id, listing := waitQuestion(t, dir, "question", ended)
	if !strings.Contains(listing, "tool server ev") {
		t.Errorf("the server's question does not name it:\n%s", listing)
	}
	answer(id, "Ada Lovelace")
	id, _ = waitQuestion(t, dir, "approval", ended)
	answer(id, "approve")

	var out outcome
	select {
	case out = <-result:
	case <-time.After(60 * time.Second):
		t.Fatal("the call did not end")
	}
	if out.err != nil {
		t.Fatal(out.err)
	}
	got := out.res.Content[0].(mcp.TextContent).Text
	for _, want := range []string{"- Name: Ada Lovelace", "tools hum softly"} {
		if out.res.IsError || !strings.Contains(got, want) {
			t.Errorf("the client got %q, want it to contain %q", got, want)
		}
	}
	srv.stop(t)
}
