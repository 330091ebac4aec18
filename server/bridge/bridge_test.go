package bridge_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	mcpgo "github.com/mark3labs/mcp-go/server"

	"github.com/deskhand/deskhand/models/ollama"
	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/bridge"
	"github.com/deskhand/deskhand/server/mcpserver"
	"github.com/deskhand/deskhand/store/storetest"
)

// server is a running Deskhand on 127.0.0.1 with a fake Ollama.
func server(t *testing.T) (url string, core *agent.Core) {
	t.Helper()
	url, core, _ = serverWith(t, nil)
	return url, core
}

// serverWith is server with extra tools, which get the *mcpserver.Server
// through srv once it is built.
func serverWith(t *testing.T, extra func(srv **mcpserver.Server) []mcpgo.ServerTool) (url string, core *agent.Core, srv *mcpserver.Server) {
	t.Helper()
	db := storetest.Open(t)
	model, err := ollama.New(ollamatest.NewServer(t).URL)
	if err != nil {
		t.Fatal(err)
	}
	core, err = agent.New(t.Context(), agent.Config{History: db, Models: map[agent.Backend]agent.Model{agent.BackendOllama: model}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := core.Agents().EnsureDefault(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	var tools []mcpgo.ServerTool
	if extra != nil {
		tools = extra(&srv)
	}
	srv, err = mcpserver.New(mcpserver.CoreOf(core), mcpserver.Options{ExtraTools: tools, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
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
	return hs.URL + mcpserver.EndpointPath, core, srv
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
	_, token, err := core.Clients().Create(t.Context(), "claude-desktop")
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
	_, token, _ := core.Clients().Create(t.Context(), "claude-desktop")
	if err := core.Clients().Revoke(t.Context(), "claude-desktop"); err != nil {
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
	// The status travels as data, for a program to read (ui/connect).
	var resp struct {
		Error struct{ Data bridge.ErrorData }
	}
	if err := json.Unmarshal(line[:n], &resp); err != nil || resp.Error.Data.HTTPStatus != http.StatusUnauthorized {
		t.Errorf("the error's data = %+v (%v), want HTTPStatus 401", resp.Error.Data, err)
	}
}

// TestBridgeResumesAClosedStream: when Deskhand ends a call's stream before
// its answer (SEP-1699), the bridge resumes it with Last-Event-ID and the
// stdio client gets the answer as if nothing happened.
func TestBridgeResumesAClosedStream(t *testing.T) {
	url, core, _ := serverWith(t, func(srv **mcpserver.Server) []mcpgo.ServerTool {
		return []mcpgo.ServerTool{{
			Tool: mcp.NewTool("polled", mcp.WithDescription("closes its stream, then answers")),
			Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if !(*srv).CloseCallStream(ctx) {
					return mcp.NewToolResultError("the stream could not be closed"), nil
				}
				// The stream is closed now: the answer is only kept, and
				// the bridge must resume to get it.
				return mcp.NewToolResultText("answered after the close"), nil
			},
		}}
	})
	_, token, err := core.Clients().Create(t.Context(), "claude-desktop")
	if err != nil {
		t.Fatal(err)
	}
	c := bridged(t, url, token, mcp.ProtocolVersion20251125)
	var req mcp.CallToolRequest
	req.Params.Name = "polled"
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, req)
	if err != nil || res.IsError || res.Content[0].(mcp.TextContent).Text != "answered after the close" {
		t.Fatalf("call through the bridge: %+v, %v", res, err)
	}
}
