package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/ollama/ollama/api"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver"
)

// twoQuestions asks "Q1?" then "Q2?", then reports both answers.
func twoQuestions(req api.ChatRequest) ollamatest.Reply {
	var answers []string
	for _, m := range req.Messages {
		if m.Role == "tool" {
			answers = append(answers, m.Content)
		}
	}
	if len(answers) < 2 {
		q := fmt.Sprintf(`{"question":"Q%d?"}`, len(answers)+1)
		return ollamatest.Reply{ToolCalls: []api.ToolCall{ollamatest.ToolCall(fmt.Sprintf("call_ask%05d", len(answers)), "ask_user", q)}}
	}
	return ollamatest.Reply{Content: "answers: " + strings.Join(answers, ", ")}
}

// TestTurnAsksTwice: on both eras the client answers two questions of one
// turn, which runs once (Ollama serves one chat per round, no replays).
func TestTurnAsksTwice(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			h := newHarness(t, mcpserver.GuardOptions{}, ollamatest.WithReplyFunc(twoQuestions))
			var asked atomic.Int32
			c := connect(t, h.URL, era, h.token("alice"),
				client.WithElicitationHandler(elicitFn(func(ctx context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
					n := asked.Add(1)
					return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept,
						Content: map[string]any{"answer": fmt.Sprintf("A%d to %s", n, r.Params.Message)}}}, nil
				})))
			res := call(t, c, "assistant", map[string]any{"message": "ask me twice"}, nil)
			if res.IsError || firstText(res) != "answers: A1 to Q1?, A2 to Q2?" {
				t.Fatalf("got %v", texts(res))
			}
			if n := len(h.ollama.ChatRequests()); n != 3 {
				t.Errorf("Ollama served %d chat requests, want 3: the turn was replayed", n)
			}
			qs, err := h.db.Questions(t.Context(), handleOf(t, res))
			if err != nil || len(qs) != 2 || qs[1].Answer.By != agent.ByClient {
				t.Errorf("recorded %+v %v", qs, err)
			}
		})
	}
}

// TestDeclineRoutingFailsLoudly: an agent set to ask nobody fails its turn
// with a tool error saying so, on both eras, even for a client that could
// answer.
func TestDeclineRoutingFailsLoudly(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{}, ollamatest.WithReplyFunc(askingOllama))
	if _, err := h.core.Agents().Save(t.Context(), agent.Agent{Slug: "loner", Model: ollamatest.DefaultModel, Enabled: true, Routing: agent.RouteDecline}); err != nil {
		t.Fatal(err)
	}
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			c := connect(t, h.URL, era, h.token("l-"+era),
				client.WithElicitationHandler(elicitFn(func(ctx context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
					t.Error("a client was asked by an agent set to ask nobody")
					return nil, fmt.Errorf("unexpected")
				})))
			res := call(t, c, "loner", map[string]any{"message": "hi"}, nil)
			if !res.IsError || !strings.Contains(firstText(res), "ask nobody") {
				t.Errorf("got %v", texts(res))
			}
		})
	}
}

// rawCall sends a modern tools/call and decodes the JSON-RPC reply.
func rawCall(t *testing.T, url, token string, params map[string]any) (int, map[string]any) {
	t.Helper()
	return rawCallWith(t, url, token, params, nil)
}

// rawCallWith is rawCall with a last change to the request (nil: none).
func rawCallWith(t *testing.T, url, token string, params map[string]any, change func(*http.Request)) (int, map[string]any) {
	t.Helper()
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    mcp.ProtocolVersion20260728,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{}},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "0"},
	}
	rawParams, _ := json.Marshal(params)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": json.RawMessage(rawParams)})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion20260728)
	for k, v := range mcp.StandardHeaders(mcp.ProtocolVersion20260728, mcp.MethodToolsCall, rawParams) {
		req.Header.Set(k, v)
	}
	if change != nil {
		change(req)
	}
	resp, out := send(t, req)
	// A reply may come as SSE; the JSON-RPC message is its last data line.
	text := string(out)
	if i := strings.LastIndex(text, "data: "); i >= 0 {
		text = strings.TrimSpace(text[i+len("data: "):])
	}
	var msg map[string]any
	if err := json.Unmarshal([]byte(text), &msg); err != nil {
		t.Fatalf("reply %d is not JSON-RPC: %s", resp.StatusCode, out)
	}
	return resp.StatusCode, msg
}

func resultOf(t *testing.T, msg map[string]any) map[string]any {
	t.Helper()
	r, ok := msg["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result: %v", msg)
	}
	return r
}

func errorCode(msg map[string]any) float64 {
	e, _ := msg["error"].(map[string]any)
	code, _ := e["code"].(float64)
	return code
}

func answer(text string) map[string]any {
	return map[string]any{"q1": map[string]any{"action": "accept", "content": map[string]any{"answer": text}}}
}

func TestRequestStateIsVerified(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{}, ollamatest.WithReplyFunc(askingOllama))
	alice, mallory := h.token("alice"), h.token("mallory")

	_, first := rawCall(t, h.URL, alice, map[string]any{"name": "assistant", "arguments": map[string]any{"message": "hi"}})
	r := resultOf(t, first)
	if r["resultType"] != "input_required" {
		t.Fatalf("first reply = %v", r)
	}
	state, _ := r["requestState"].(string)
	reqs, _ := r["inputRequests"].(map[string]any)
	if state == "" || reqs["q1"] == nil {
		t.Fatalf("no state or question: %v", r)
	}
	if raw, err := base64.RawURLEncoding.DecodeString(state); err != nil || bytes.Contains(raw, []byte("assistant")) {
		t.Errorf("requestState is readable or not base64url (%v)", err)
	}
	tampered := []byte(state)
	tampered[len(tampered)/2] ^= 1
	for name, tc := range map[string]struct {
		token, state string
	}{
		"tampered":        {alice, string(tampered)},
		"other principal": {mallory, state},
		"garbage":         {alice, "not-a-state"},
	} {
		t.Run(name, func(t *testing.T) {
			status, msg := rawCall(t, h.URL, tc.token, map[string]any{"name": "assistant", "arguments": map[string]any{"message": "hi"},
				"requestState": tc.state, "inputResponses": answer("Mallory")})
			if status != http.StatusBadRequest || errorCode(msg) != mcp.INVALID_PARAMS {
				t.Errorf("got %d %v, want 400 and -32602", status, msg)
			}
		})
	}
	// Nothing resumed: the real answer still completes the turn.
	_, done := rawCall(t, h.URL, alice, map[string]any{"name": "assistant", "arguments": map[string]any{"message": "hi"},
		"requestState": state, "inputResponses": answer("Ada")})
	res := resultOf(t, done)
	content, _ := res["content"].([]any)
	if res["isError"] == true || len(content) == 0 || !strings.Contains(fmt.Sprint(content[0]), "answer was: Ada") {
		t.Fatalf("resumed turn: %v", res)
	}
	// The same state again is a replay.
	status, msg := rawCall(t, h.URL, alice, map[string]any{"name": "assistant", "arguments": map[string]any{"message": "hi"},
		"requestState": state, "inputResponses": answer("Ada")})
	if status != http.StatusBadRequest || errorCode(msg) != mcp.INVALID_PARAMS {
		t.Errorf("replay: %d %v", status, msg)
	}
	if n := len(h.ollama.ChatRequests()); n != 2 {
		t.Errorf("Ollama served %d chat requests, want 2", n)
	}
}

func TestRequestStateExpires(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{}, ollamatest.WithReplyFunc(askingOllama))
	clock := newFakeClock()
	h.opts.StateTTL, h.opts.Now = 100*time.Millisecond, clock.Now
	h.restart()
	token := h.token("alice")
	_, first := rawCall(t, h.URL, token, map[string]any{"name": "assistant", "arguments": map[string]any{"message": "hi"}})
	state := resultOf(t, first)["requestState"].(string)
	clock.Advance(150 * time.Millisecond)
	status, msg := rawCall(t, h.URL, token, map[string]any{"name": "assistant", "arguments": map[string]any{"message": "hi"},
		"requestState": state, "inputResponses": answer("late")})
	if status != http.StatusBadRequest || errorCode(msg) != mcp.INVALID_PARAMS || !strings.Contains(fmt.Sprint(msg), "expired") {
		t.Errorf("expired state: %d %v", status, msg)
	}
}

func TestPausedTurnGoneAfterRestart(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{}, ollamatest.WithReplyFunc(askingOllama))
	h.opts.StateKeys = [][]byte{bytes.Repeat([]byte("k"), 32)} // survives the restart
	h.restart()
	token := h.token("alice")
	_, first := rawCall(t, h.URL, token, map[string]any{"name": "assistant", "arguments": map[string]any{"message": "hi"}})
	state := resultOf(t, first)["requestState"].(string)
	h.restart()
	_, msg := rawCall(t, h.URL, token, map[string]any{"name": "assistant", "arguments": map[string]any{"message": "hi"},
		"requestState": state, "inputResponses": answer("Ada")})
	res := resultOf(t, msg)
	if res["isError"] != true || !strings.Contains(fmt.Sprint(res["content"]), "start over") {
		t.Errorf("after restart: %v", res)
	}
}

func TestDesktopAnswerWhileTheClientHoldsTheQuestion(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{}, ollamatest.WithReplyFunc(askingOllama))
	token := h.token("alice")
	_, first := rawCall(t, h.URL, token, map[string]any{"name": "assistant", "arguments": map[string]any{"message": "hi"}})
	state := resultOf(t, first)["requestState"].(string)
	pending := h.core.Questions().Pending()
	if len(pending) != 1 {
		t.Fatalf("the desktop does not see the question: %+v", pending)
	}
	if err := h.core.Questions().Answer(pending[0].ID, map[string]any{"answer": "Grace"}, false); err != nil {
		t.Fatal(err)
	}
	// The client's retry is no error: it attaches and gets the result.
	_, msg := rawCall(t, h.URL, token, map[string]any{"name": "assistant", "arguments": map[string]any{"message": "hi"},
		"requestState": state, "inputResponses": answer("Ada")})
	res := resultOf(t, msg)
	if res["isError"] == true || !strings.Contains(fmt.Sprint(res["content"]), "answer was: Grace") {
		t.Errorf("retry after the desktop answered: %v", res)
	}
}

func TestPausedConversationRefusesOtherCalls(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{}, ollamatest.WithReplyFunc(askingOllama))
	token := h.token("alice")
	_, first := rawCall(t, h.URL, token, map[string]any{"name": "assistant", "arguments": map[string]any{"message": "hi"}})
	if r := resultOf(t, first); r["resultType"] != "input_required" {
		t.Fatalf("first reply = %v", r)
	}
	conv := h.core.Questions().Pending()[0].ConversationID
	_, msg := rawCall(t, h.URL, token, map[string]any{"name": "assistant", "arguments": map[string]any{"message": "again", "conversation": conv}})
	res := resultOf(t, msg)
	if res["isError"] != true || !strings.Contains(fmt.Sprint(res["content"]), "waiting for the answer") {
		t.Errorf("call on a paused conversation: %v", res)
	}
}

// TestBadRetryKeepsTheRequestState: a retry refused for a fault of its own
// (Mcp-Name disagreeing with the body, arguments of the wrong shape) does
// not use up the requestState: the right retry then resumes the turn.
func TestBadRetryKeepsTheRequestState(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{}, ollamatest.WithReplyFunc(askingOllama))
	token := h.token("alice")
	_, first := rawCall(t, h.URL, token, map[string]any{"name": "assistant", "arguments": map[string]any{"message": "hi"}})
	state, _ := resultOf(t, first)["requestState"].(string)
	if state == "" {
		t.Fatalf("first reply: %v", first)
	}
	retry := func(args any) map[string]any {
		return map[string]any{"name": "assistant", "arguments": args, "requestState": state, "inputResponses": answer("Ada")}
	}

	status, msg := rawCallWith(t, h.URL, token, retry(map[string]any{"message": "hi"}), func(r *http.Request) { r.Header.Set("Mcp-Name", "other") })
	if status != http.StatusBadRequest || errorCode(msg) != mcp.HEADER_MISMATCH {
		t.Errorf("retry with a wrong Mcp-Name: %d %v, want 400 and -32020", status, msg)
	}
	for _, args := range []any{"not an object", map[string]any{"message": "something else"}} {
		status, msg = rawCall(t, h.URL, token, retry(args))
		if status != http.StatusBadRequest || errorCode(msg) != mcp.INVALID_PARAMS || !strings.Contains(fmt.Sprint(msg), "other arguments") {
			t.Errorf("retry with the arguments %v: %d %v, want 400, -32602 and why", args, status, msg)
		}
	}

	// The same arguments spelled otherwise are the same call.
	_, done := rawCall(t, h.URL, token, retry(json.RawMessage(`{ "message" : "h\u0069" }`)))
	if r := resultOf(t, done); r["isError"] == true || !strings.Contains(fmt.Sprint(r["content"]), "answer was: Ada") {
		t.Fatalf("the right retry: %v", r)
	}
	// Once used, it is used.
	if status, msg := rawCall(t, h.URL, token, retry(map[string]any{"message": "hi"})); status != http.StatusBadRequest || !strings.Contains(fmt.Sprint(msg), "already used") {
		t.Errorf("a replay: %d %v", status, msg)
	}
}

// TestUnattendedPauseIsSwept: a client that never comes back leaves a
// paused turn that expires with its requestState; it is cancelled when the
// TTL passes, recorded with one error, and its question leaves the desktop.
func TestUnattendedPauseIsSwept(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{}, ollamatest.WithReplyFunc(askingOllama))
	h.opts.StateTTL = 100 * time.Millisecond
	h.restart()
	token := h.token("alice")
	events := h.core.Events().Subscribe(t.Context())
	_, first := rawCall(t, h.URL, token, map[string]any{"name": "assistant", "arguments": map[string]any{"message": "hi"}})
	if r := resultOf(t, first); r["resultType"] != "input_required" {
		t.Fatalf("first reply = %v", r)
	}
	conv := h.core.Questions().Pending()[0].ConversationID
	// No other call comes by: the TTL alone ends the turn.
	for e := range events {
		if e.Kind == agent.EventTurnEnded && e.Conversation == conv {
			break
		}
	}
	turns, err := h.db.Turns(t.Context(), conv)
	if err != nil || len(turns) != 1 || turns[0].Status != agent.TurnCancelled || !strings.Contains(turns[0].Error, "expired") {
		t.Fatalf("swept turn recorded as %+v (%v)", turns, err)
	}
	qs, _ := h.db.Questions(t.Context(), conv)
	if len(qs) != 1 || qs[0].Status != agent.QuestionCancelled {
		t.Errorf("its question = %+v", qs)
	}
	for _, q := range h.core.Questions().Pending() {
		if q.ConversationID == conv {
			t.Error("the swept turn's question is still on the desktop")
		}
	}
}

// TestRetryWithoutTheAnswerAsksAgain: a retry that answers nothing gets the
// same question again, under a fresh state, and the turn still completes.
func TestRetryWithoutTheAnswerAsksAgain(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{}, ollamatest.WithReplyFunc(askingOllama))
	token := h.token("alice")
	_, first := rawCall(t, h.URL, token, map[string]any{"name": "assistant", "arguments": map[string]any{"message": "hi"}})
	state := resultOf(t, first)["requestState"].(string)
	_, again := rawCall(t, h.URL, token, map[string]any{"name": "assistant", "arguments": map[string]any{"message": "hi"},
		"requestState": state, "inputResponses": map[string]any{"unrelated": map[string]any{"action": "accept"}}})
	r := resultOf(t, again)
	reqs, _ := r["inputRequests"].(map[string]any)
	newState, _ := r["requestState"].(string)
	if r["resultType"] != "input_required" || reqs["q1"] == nil || newState == "" || newState == state {
		t.Fatalf("retry without the answer = %v", r)
	}
	_, done := rawCall(t, h.URL, token, map[string]any{"name": "assistant", "arguments": map[string]any{"message": "hi"},
		"requestState": newState, "inputResponses": answer("Ada")})
	if res := resultOf(t, done); !strings.Contains(fmt.Sprint(res["content"]), "answer was: Ada") {
		t.Errorf("after answering = %v", res)
	}
	if n := len(h.ollama.ChatRequests()); n != 2 {
		t.Errorf("Ollama served %d chats, want 2", n)
	}
}
