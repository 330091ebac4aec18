package mcpserver_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver"
)

// progressLog keeps the progress notifications a client got, by token.
type progressLog struct {
	mu  sync.Mutex
	got map[string][]string
}

func (p *progressLog) observe(c *client.Client) {
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method != string(mcp.MethodNotificationProgress) {
			return
		}
		token := fmt.Sprint(n.Params.AdditionalFields["progressToken"])
		msg, _ := n.Params.AdditionalFields["message"].(string)
		p.mu.Lock()
		p.got[token] = append(p.got[token], msg)
		p.mu.Unlock()
	})
}

func (p *progressLog) of(token string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.got[token]
}

// lostProgress calls tool runs times, each with a progress token of its
// own, and counts the calls whose progress was not exactly want; the
// first such call is reported.
func lostProgress(t *testing.T, c *client.Client, log *progressLog, prefix, tool string, args map[string]any, runs int, want ...string) int {
	t.Helper()
	lost := 0
	for i := range runs {
		tok := fmt.Sprintf("%s-%d", prefix, i)
		var req mcp.CallToolRequest
		req.Params.Name, req.Params.Arguments = tool, args
		req.Params.Meta = &mcp.Meta{ProgressToken: tok}
		res, err := c.CallTool(t.Context(), req)
		if err != nil || res.IsError {
			t.Fatalf("call %d: %v %+v", i, err, res)
		}
		if got := log.of(tok); strings.Join(got, "|") != strings.Join(want, "|") {
			lost++
			if lost == 1 {
				t.Errorf("call %d got progress %q, want %q", i, got, want)
			}
		}
	}
	return lost
}

// TestProgressIsNeverLost: every call with a progress token gets its
// progress before its answer, the last notification included, on both
// eras, run after run (mcp-go alone loses about a third of last-moment
// notifications; see mcpfill.WithCallStream).
func TestProgressIsNeverLost(t *testing.T) {
	const runs = 200
	h := newHarness(t, mcpserver.GuardOptions{})
	token := h.token("progress")
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			log := &progressLog{got: map[string][]string{}}
			c := connect(t, h.URL, era, token)
			log.observe(c)
			lost := lostProgress(t, c, log, era, "assistant", map[string]any{"message": "hi", "conversation": ""}, runs,
				"thinking (model round 1)")
			if lost > 0 {
				t.Errorf("%d of %d calls lost their progress", lost, runs)
			}
			// A call without a token gets none.
			before := len(log.got)
			call(t, c, "assistant", map[string]any{"message": "hi"}, nil)
			if len(log.got) != before {
				t.Error("progress sent to a call that asked for none")
			}
		})
	}
}

// TestProgressFollowsTheTurn: a turn that asks a question reports each
// step: the model round, the question, the next round.
func TestProgressFollowsTheTurn(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	log := &progressLog{got: map[string][]string{}}
	c := connect(t, h.URL, mcp.ProtocolVersion20251125, h.token("steps"), client.WithElicitationHandler(answerWith("Ada")))
	log.observe(c)
	var req mcp.CallToolRequest
	req.Params.Name = "assistant"
	req.Params.Arguments = map[string]any{"message": "ask: What is your name?"}
	req.Params.Meta = &mcp.Meta{ProgressToken: "steps"}
	res, err := c.CallTool(t.Context(), req)
	if err != nil || res.IsError || !strings.Contains(firstText(res), "Ada") {
		t.Fatalf("call: %v %+v", err, res)
	}
	want := []string{"thinking (model round 1)", "calling the tool ask_user", "waiting for an answer: What is your name?", "thinking (model round 2)"}
	if got := log.of("steps"); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("progress = %q\nwant       %q", got, want)
	}
}

// TestKeepAliveWhileACallWaits: a call that waits gets SSE comments on its
// stream, and its answer still arrives as an event.
func TestKeepAliveWhileACallWaits(t *testing.T) {
	h := newHarnessWith(t, mcpserver.Options{KeepAlive: 20 * time.Millisecond})
	token := h.token("keepalive")
	// A question nobody answers for a while: the desktop answers it later.
	body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"assistant","arguments":{"message":"ask: Ready?"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"}}}}`
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "assistant"} {
		req.Header.Set(k, v)
	}
	// The desktop answers once the question is asked and a few keep-alives
	// went out while it waited.
	asked := h.core.Events().Subscribe(ctx, agent.EventQuestionAsked)
	kept := make(chan struct{}) // closed at the third keep-alive
	replied := make(chan error, 1)
	go func() {
		e, ok := <-asked
		if !ok {
			replied <- errors.New("the call asked no question")
			return
		}
		select {
		case <-kept:
			replied <- h.core.Questions().Answer(e.Question, map[string]any{"answer": "yes"}, false)
		case <-ctx.Done():
			replied <- ctx.Err()
		}
	}()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("Content-Type %q, want an event stream", ct)
	}
	comments, answered := 0, false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, ": keep-alive"):
			if comments++; comments == 3 {
				close(kept)
			}
		case strings.HasPrefix(line, "data: ") && strings.Contains(line, `"id":3`):
			answered = strings.Contains(line, "You answered: yes")
		}
	}
	cancel() // the stream ended: a desktop still waiting gives up
	if err := <-replied; err != nil {
		t.Errorf("the desktop's answer: %v", err)
	}
	if comments < 3 || !answered {
		t.Errorf("%d keep-alive comments, answered %v", comments, answered)
	}
}

// TestLastMomentNotificationsArrive: a tool that sends notifications just
// before it answers, the case mcp-go loses about a third of (notes:
// mcp-go §6), gets every one delivered ahead of its answer, run after run.
func TestLastMomentNotificationsArrive(t *testing.T) {
	const runs, each = 200, 3
	var h *harness
	tool := server.ServerTool{
		Tool: mcp.NewTool("burst", mcp.WithDescription("sends progress, then answers at once")),
		Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for i := range each {
				_ = h.srv.Notify(ctx, string(mcp.MethodNotificationProgress), map[string]any{
					"progressToken": req.Params.Meta.ProgressToken, "progress": i + 1, "total": each, "message": fmt.Sprint(i + 1)})
			}
			return mcp.NewToolResultText("done"), nil
		},
	}
	h = newHarnessWith(t, mcpserver.Options{ExtraTools: []server.ServerTool{tool}})
	token := h.token("burst")
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			log := &progressLog{got: map[string][]string{}}
			c := connect(t, h.URL, era, token)
			log.observe(c)
			if lost := lostProgress(t, c, log, era, "burst", nil, runs, "1", "2", "3"); lost > 0 {
				t.Errorf("%d of %d calls lost notifications", lost, runs)
			}
		})
	}
}
