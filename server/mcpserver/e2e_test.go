package mcpserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/goleak"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// net/http keeps idle client connections' loops for a while.
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}

func TestEndToEndLegacyEra(t *testing.T) { endToEnd(t, mcp.ProtocolVersion20251125) }

func TestEndToEndModernEra(t *testing.T) { endToEnd(t, mcp.ProtocolVersion20260728) }

// endToEnd is the whole conversation story over real HTTP on one era.
func endToEnd(t *testing.T, era string) {
	h := newHarness(t, mcpserver.GuardOptions{})
	alice, mallory := h.token("alice"), h.token("mallory")
	c := connect(t, h.URL, era, alice)

	tools, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 1 || tools.Tools[0].Name != "assistant" {
		t.Fatalf("tools = %+v", tools.Tools)
	}

	first := call(t, c, "assistant", map[string]any{"message": "My name is Ada."}, nil)
	if first.IsError {
		t.Fatalf("first call failed: %v", texts(first))
	}
	handle := handleOf(t, first)
	if _, err := uuid.Parse(handle); err != nil {
		t.Errorf("handle %q is not a UUID", handle)
	}
	if got := firstText(first); got != "I remember: My name is Ada." {
		t.Errorf("first answer = %q", got)
	}

	second := call(t, c, "assistant", map[string]any{"message": "What is my name?", "conversation": handle}, nil)
	if got := firstText(second); got != "I remember: My name is Ada. | What is my name?" {
		t.Errorf("follow-up did not remember: %q", got)
	}
	if handleOf(t, second) != handle {
		t.Error("follow-up returned another handle")
	}

	// The handle may come in the request's _meta instead.
	viaMeta := call(t, c, "assistant", map[string]any{"message": "And now?"}, map[string]any{mcpserver.ConversationMetaKey: handle})
	if !strings.Contains(firstText(viaMeta), "My name is Ada.") || handleOf(t, viaMeta) != handle {
		t.Errorf("_meta handle ignored: %q", firstText(viaMeta))
	}

	fresh := call(t, c, "assistant", map[string]any{"message": "Who am I?", "conversation": "   "}, nil)
	if strings.Contains(firstText(fresh), "Ada") || handleOf(t, fresh) == handle {
		t.Errorf("blank handle did not start afresh: %q", firstText(fresh))
	}

	unknown := call(t, c, "assistant", map[string]any{"message": "hi", "conversation": uuid.NewString()}, nil)
	other := connect(t, h.URL, era, mallory)
	foreign := call(t, other, "assistant", map[string]any{"message": "hi", "conversation": handle}, nil)
	if !unknown.IsError || !foreign.IsError {
		t.Fatalf("unknown/foreign handle not an isError result: %v / %v", texts(unknown), texts(foreign))
	}
	if firstText(unknown) != firstText(foreign) || !strings.Contains(firstText(unknown), "unknown conversation") {
		t.Errorf("unknown %q and foreign %q differ", firstText(unknown), firstText(foreign))
	}

	h.restart()
	c = connect(t, h.URL, era, alice)
	after := call(t, c, "assistant", map[string]any{"message": "Still there?", "conversation": handle}, nil)
	if after.IsError || !strings.Contains(firstText(after), "My name is Ada.") {
		t.Errorf("handle lost across a restart: %v", texts(after))
	}
}

func TestBusyConversationIsAToolError(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			h := newHarness(t, mcpserver.GuardOptions{}, ollamatest.WithChunkDelay(150*time.Millisecond))
			token := h.token("alice")
			c := connect(t, h.URL, era, token)
			handle := handleOf(t, call(t, c, "assistant", map[string]any{"message": "start"}, nil))

			events := h.core.Events().Subscribe(t.Context(), agent.EventTurnStarted)
			slow := connect(t, h.URL, era, token)
			first := goCall(t.Context(), slow, "assistant", map[string]any{"message": "a long question", "conversation": handle})
		wait:
			for {
				select {
				case e := <-events:
					if e.Conversation == handle {
						break wait
					}
				case r := <-first:
					t.Fatalf("the first call ended before its turn started: %v %v", r.res, r.err)
				}
			}
			busy := call(t, c, "assistant", map[string]any{"message": "me too", "conversation": handle}, nil)
			if !busy.IsError || !strings.Contains(firstText(busy), "busy") {
				t.Errorf("concurrent call = %v", texts(busy))
			}
			if r := <-first; r.err != nil || r.res.IsError {
				t.Errorf("first call failed: %v %v", r.err, r.res)
			}
		})
	}
}

func TestLegacySessionContinuesWithoutHandle(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	c := connect(t, h.URL, mcp.ProtocolVersion20251125, h.token("alice"))
	first := call(t, c, "assistant", map[string]any{"message": "My name is Ada."}, nil)
	second := call(t, c, "assistant", map[string]any{"message": "What is my name?"}, nil)
	if handleOf(t, second) != handleOf(t, first) || !strings.Contains(firstText(second), "Ada") {
		t.Errorf("legacy session lost its conversation: %q", firstText(second))
	}
	// A modern client has no session: each call without a handle is new.
	m := connect(t, h.URL, mcp.ProtocolVersion20260728, h.token("bob"))
	a := call(t, m, "assistant", map[string]any{"message": "My name is Ada."}, nil)
	b := call(t, m, "assistant", map[string]any{"message": "What is my name?"}, nil)
	if handleOf(t, a) == handleOf(t, b) || strings.Contains(firstText(b), "Ada") {
		t.Error("modern calls without a handle shared a conversation")
	}
}

func TestBadArgumentsAreToolErrors(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	if _, err := h.core.Agents().Save(t.Context(), agent.Agent{Slug: "oneshot", Model: ollamatest.DefaultModel, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			c := connect(t, h.URL, era, h.token("c-"+era))
			cases := []struct {
				tool string
				args map[string]any
				want string
			}{
				{"assistant", map[string]any{"message": 42}, "must be a string"},
				{"assistant", map[string]any{"context": "x"}, "'message' is required"},
				{"assistant", map[string]any{"message": "hi", "colour": "red"}, "unknown argument"},
				{"assistant", map[string]any{"message": "hi", "conversation": "not-a-handle"}, "unknown conversation"},
				{"assistant", map[string]any{"message": "  "}, "empty"},
				{"oneshot", map[string]any{"message": "hi", "conversation": uuid.NewString()}, "does not keep conversations"},
			}
			for _, tc := range cases {
				res := call(t, c, tc.tool, tc.args, nil)
				if !res.IsError || !strings.Contains(firstText(res), tc.want) {
					t.Errorf("%s %v: got %v, want isError mentioning %q", tc.tool, tc.args, texts(res), tc.want)
				}
			}
		})
	}
}

func TestDisabledAgentLeavesTheList(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	c := connect(t, h.URL, mcp.ProtocolVersion20251125, h.token("alice"))
	if err := h.core.Agents().SetEnabled(t.Context(), "assistant", false); err != nil {
		t.Fatal(err)
	}
	// Every request syncs the tools with the core first: no wait for the
	// change event.
	tools, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 0 {
		t.Fatalf("disabled agent still listed: %+v", tools.Tools)
	}
	var req mcp.CallToolRequest
	req.Params.Name = "assistant"
	req.Params.Arguments = map[string]any{"message": "hi"}
	if _, err := c.CallTool(t.Context(), req); err == nil {
		t.Error("a disabled agent was callable")
	}
}

func TestOllamaDownIsAToolError(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	c := connect(t, h.URL, mcp.ProtocolVersion20260728, h.token("alice"))
	h.ollama.Close()
	res := call(t, c, "assistant", map[string]any{"message": "hi"}, nil)
	if !res.IsError || !strings.Contains(firstText(res), "Ollama is not running at") {
		t.Errorf("got %v", texts(res))
	}
}

// TestClosedCall: a modern client that closes its call cancels the turn; a
// legacy client that drops its connection does not (the turn finishes and
// is recorded).
func TestClosedCall(t *testing.T) {
	want := map[string]agent.TurnStatus{
		mcp.ProtocolVersion20260728: agent.TurnCancelled,
		mcp.ProtocolVersion20251125: agent.TurnCompleted,
	}
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			h := newHarness(t, mcpserver.GuardOptions{}, ollamatest.WithChunkDelay(100*time.Millisecond))
			c := connect(t, h.URL, era, h.token("alice"))
			events := h.core.Events().Subscribe(t.Context())
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			go func() {
				var req mcp.CallToolRequest
				req.Params.Name = "assistant"
				req.Params.Arguments = map[string]any{"message": "one two three four five"}
				_, _ = c.CallTool(ctx, req)
			}()
			var ended agent.Event
			for e := range events {
				if e.Kind == agent.EventTurnStarted {
					cancel()
				}
				if e.Kind == agent.EventTurnEnded {
					ended = e
					break
				}
			}
			if ended.Status != want[era] {
				t.Errorf("turn ended %s, want %s", ended.Status, want[era])
			}
			turns, err := h.db.Turns(t.Context(), ended.Conversation)
			if err != nil || len(turns) != 1 || turns[0].Status != want[era] {
				t.Errorf("recorded %+v, %v", turns, err)
			}
		})
	}
}

func TestPausedServingListsNoTools(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	c := connect(t, h.URL, mcp.ProtocolVersion20260728, h.token("alice"))
	h.core.Settings().SetPaused(true)
	tools, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil || len(tools.Tools) != 0 {
		t.Fatalf("tools while paused = %+v, %v", tools, err)
	}
	h.core.Settings().SetPaused(false)
	if tools, _ := c.ListTools(t.Context(), mcp.ListToolsRequest{}); len(tools.Tools) != 1 {
		t.Errorf("tools after resuming = %+v", tools)
	}
}
