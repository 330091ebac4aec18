package bridge_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/models/ollama"
	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/bridge"
	"github.com/deskhand/deskhand/server/mcpserver"
	"github.com/deskhand/deskhand/store"
)

// server is a running Deskhand on 127.0.0.1 with a fake Ollama.
func server(t *testing.T) (url string, core *agent.Core) {
	t.Helper()
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	model, err := ollama.New(ollamatest.NewServer(t).URL)
	if err != nil {
		t.Fatal(err)
	}
	core, err = agent.New(t.Context(), agent.Config{History: db, Models: map[agent.Backend]agent.Model{agent.BackendOllama: model}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := core.EnsureDefaultAgent(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(core, mcpserver.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		core.Close()
		hs.CloseClientConnections()
		hs.Close()
		_ = srv.Close(context.Background())
	})
	return hs.URL + mcpserver.EndpointPath, core
}

type elicitFn func(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error)

func (f elicitFn) Elicit(ctx context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return f(ctx, r)
}

// bridged connects an mcp-go stdio client to the server through a bridge.
func bridged(t *testing.T, url, token, version string) *client.Client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		b := &bridge.Bridge{URL: url, Token: token}
		done <- b.Run(ctx, inR, outW)
		outW.Close()
	}()
	c := client.NewClient(transport.NewIO(outR, inW, io.NopCloser(strings.NewReader(""))),
		client.WithProtocolVersion(version),
		client.WithElicitationHandler(elicitFn(func(ctx context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
			return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept,
				Content: map[string]any{"answer": "Ada"}}}, nil
		})))
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		inW.Close()
		cancel()
		<-done
	})
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = version
	init.Params.ClientInfo = mcp.Implementation{Name: "claude-desktop", Version: "0"}
	if _, err := c.Initialize(t.Context(), init); err != nil {
		t.Fatalf("initialize through the bridge: %v", err)
	}
	return c
}

func TestBridge(t *testing.T) {
	url, core := server(t)
	_, token, err := core.CreateClient(t.Context(), "claude-desktop")
	if err != nil {
		t.Fatal(err)
	}
	for _, era := range []string{mcp.ProtocolVersion20251125, mcp.ProtocolVersion20260728} {
		t.Run(era, func(t *testing.T) {
			c := bridged(t, url, token, era)
			tools, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
			if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "assistant" {
				t.Fatalf("tools through the bridge: %+v %v", tools, err)
			}
			var req mcp.CallToolRequest
			req.Params.Name = "assistant"
			req.Params.Arguments = map[string]any{"message": ollamatest.AskPrefix + "Your name?"}
			res, err := c.CallTool(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if text := res.Content[0].(mcp.TextContent).Text; res.IsError || text != "You answered: Ada" {
				t.Errorf("the question did not travel through the bridge: %v %q", res.IsError, text)
			}
		})
	}
}

func TestBridgeWithARevokedToken(t *testing.T) {
	url, core := server(t)
	_, token, _ := core.CreateClient(t.Context(), "claude-desktop")
	if err := core.RevokeClient(t.Context(), "claude-desktop"); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		b := &bridge.Bridge{URL: url, Token: token}
		_ = b.Run(t.Context(), inR, outW)
		outW.Close()
	}()
	go func() {
		io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"0"}}}`+"\n")
	}()
	line := make([]byte, 4096)
	n, _ := outR.Read(line)
	inW.Close()
	if got := string(line[:n]); !strings.Contains(got, `"error"`) || !strings.Contains(got, "revoked") {
		t.Errorf("the client got %s", got)
	}
}
