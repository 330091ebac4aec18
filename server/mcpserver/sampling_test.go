package mcpserver_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver"
)

type sampleFn func(context.Context, mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error)

func (f sampleFn) CreateMessage(ctx context.Context, r mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	return f(ctx, r)
}

// TestClientModel: an agent on the client's model runs there when the
// client lends it (Ollama serves nothing), and on Ollama when it does not.
func TestClientModel(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	if _, err := h.core.Agents().Save(t.Context(), agent.Agent{Slug: "borrower", Backend: agent.BackendClient, Model: ollamatest.DefaultModel,
		Enabled: true, Conversations: true, Prompt: "be brief"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		era     string
		sample  bool
		listen  bool // legacy sampling needs the client's GET stream
		want    string
		ollamas int
	}{
		{"modern with sampling", mcp.ProtocolVersion20260728, true, false, "sampled: hello", 0},
		{"legacy with sampling", mcp.ProtocolVersion20251125, true, true, "sampled: hello", 0},
		{"legacy with sampling but no stream", mcp.ProtocolVersion20251125, true, false, "I remember: hello", 1},
		{"modern without sampling", mcp.ProtocolVersion20260728, false, false, "I remember: hello", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sampled atomic.Int32
			var opts []client.ClientOption
			if tc.sample {
				opts = append(opts, client.WithSamplingHandler(sampleFn(func(ctx context.Context, r mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					sampled.Add(1)
					if r.SystemPrompt != "be brief" || r.MaxTokens <= 0 {
						t.Errorf("sampling request: %+v", r.CreateMessageParams)
					}
					return &mcp.CreateMessageResult{SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: mcp.NewTextContent("sampled: hello")}, Model: "client-llm"}, nil
				})))
			}
			var c *client.Client
			if tc.listen {
				c = connectListening(t, h.URL, h.token("s-"+tc.name), opts...)
				waitUntil(t, 5*time.Second, "the client's GET stream never opened", func() bool { return h.srv.Listening(c.GetSessionId()) })
			} else {
				c = connect(t, h.URL, tc.era, h.token("s-"+tc.name), opts...)
			}
			before := len(h.ollama.ChatRequests())
			res := call(t, c, "borrower", map[string]any{"message": "hello"}, nil)
			if res.IsError || firstText(res) != tc.want {
				t.Fatalf("got %v", texts(res))
			}
			if n := len(h.ollama.ChatRequests()) - before; n != tc.ollamas {
				t.Errorf("Ollama served %d chats, want %d", n, tc.ollamas)
			}
			if tc.ollamas == 0 && sampled.Load() != 1 {
				t.Errorf("client sampled %d times", sampled.Load())
			}
		})
	}
}

// connectListening opens a legacy client that keeps its GET stream open.
func connectListening(t *testing.T, url, token string, opts ...client.ClientOption) *client.Client {
	t.Helper()
	//lint:ignore SA1019 the legacy GET stream is what this test exercises (2025-11-25 sampling)
	tr, err := transport.NewStreamableHTTP(url, transport.WithContinuousListening(),
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, append([]client.ClientOption{client.WithProtocolVersion(mcp.ProtocolVersion20251125)}, opts...)...)
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	var init mcp.InitializeRequest
	init.Params.ClientInfo = mcp.Implementation{Name: "e2e", Version: "0"}
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	if _, err := c.Initialize(t.Context(), init); err != nil {
		t.Fatal(err)
	}
	return c
}
