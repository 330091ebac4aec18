package modeltest

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
)

// ClosedAddr is the address of a listener that no longer listens: a
// server that is not there.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// UserMessage returns the Msg of err's *agent.UserError, failing the test
// if there is none or it carries no cause for the log.
func UserMessage(t testing.TB, err error) string {
	t.Helper()
	var ue *agent.UserError
	if !errors.As(err, &ue) {
		t.Fatalf("error %v (%T) is not an *agent.UserError", err, err)
	}
	if ue.Err == nil {
		t.Errorf("UserError %q has no cause for the log", ue.Msg)
	}
	return ue.Msg
}

// JSONEqual compares two JSON texts by value: what an adapter put on the
// wire (got) and what the provider's format wants.
func JSONEqual(t testing.TB, name string, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v in %s", name, err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad want: %v", name, err)
	}
	if !reflect.DeepEqual(g, w) {
		canonical, _ := json.Marshal(g)
		wanted, _ := json.Marshal(w)
		t.Errorf("%s on the wire:\n got %s\nwant %s", name, canonical, wanted)
	}
}

// Do sends a raw request to a fake through c, with header set on it, and
// returns the answer with its body read, for tests of the fake's wire.
func Do(t testing.TB, c *http.Client, method, url, body string, header http.Header) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// BaseURL is a case of an adapter's base URL parsing: In is read as Want,
// or refused (WantErr).
type BaseURL struct {
	In, Want string
	WantErr  bool
}

// CheckBaseURLs runs each case through parse (the adapter's
// ParseBaseURL; its URL shown with any password redacted) and, unless
// made is nil, through the adapter made with it (made returns its
// BaseURL), which must agree.
func CheckBaseURLs(t *testing.T, cases []BaseURL, parse func(string) (*url.URL, error), made func(string) (string, error)) {
	for _, tt := range cases {
		t.Run(tt.In, func(t *testing.T) {
			parsed, err := parse(tt.In)
			var u string
			if parsed != nil {
				u = parsed.Redacted()
			}
			if tt.WantErr {
				if err == nil {
					t.Fatalf("ParseBaseURL(%q) = %s, want an error", tt.In, u)
				}
				if made == nil {
					return
				}
				if _, err := made(tt.In); err == nil {
					t.Errorf("New(%q) accepted it", tt.In)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseBaseURL(%q): %v", tt.In, err)
			}
			if u != tt.Want {
				t.Errorf("ParseBaseURL(%q) = %s, want %s", tt.In, u, tt.Want)
			}
			if made == nil {
				return
			}
			if got, err := made(tt.In); err != nil || got != tt.Want {
				t.Errorf("New(%q).BaseURL() = %s, %v; want %s", tt.In, got, err, tt.Want)
			}
		})
	}
}

// ConnCounter starts h on an httptest.Server that counts the connections
// opened to it, closed when the test ends.
func ConnCounter(t testing.TB, h http.Handler) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var opened atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &opened
}

// ChatInRounds has turns chats at once with m, rounds times, each
// "hello" to model, and fails the test on the first error.
func ChatInRounds(t *testing.T, m agent.Model, model string, rounds, turns int) {
	t.Helper()
	errs := make([]error, turns)
	for range rounds {
		var wg sync.WaitGroup
		for i := range turns {
			wg.Go(func() {
				_, errs[i] = m.Chat(t.Context(), agent.ChatRequest{Model: model, Messages: []agent.Message{{Role: agent.RoleUser, Content: "hello"}}}, func(agent.Delta) {})
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
	}
}

// RoundTripTools are the tools the adapters' tool round-trip tests offer:
// read_file, whose schema's properties must keep their order on the wire,
// and now, with no schema at all.
func RoundTripTools() []agent.ToolSpec {
	return []agent.ToolSpec{
		{
			Name:        "read_file",
			Description: "Read a file",
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"file path"},
				"max_bytes":{"type":"integer"}},"required":["path"],"additionalProperties":false}`),
		},
		{Name: "now", Description: "Current time"},
	}
}

// Conversation is the conversation the adapters' streaming tests send:
// a system prompt, then two user messages around an assistant's.
func Conversation() []agent.Message {
	return []agent.Message{
		{Role: agent.RoleSystem, Content: "Be brief."},
		{Role: agent.RoleUser, Content: "My name is Ada."},
		{Role: agent.RoleAssistant, Content: "Hello Ada."},
		{Role: agent.RoleUser, Content: "What is my name?"},
	}
}

// ConversationEcho is the fakes' memory echo of [Conversation] as it
// streams, a word a delta; ConversationEchoText is its text.
func ConversationEcho() []agent.Delta {
	var out []agent.Delta
	for _, w := range strings.SplitAfter(ConversationEchoText, " ") {
		out = append(out, agent.Delta{Content: w})
	}
	return out
}

// ConversationEchoText is the text of [ConversationEcho].
const ConversationEchoText = "I remember: My name is Ada. | What is my name?"

// Chat has m answer req, failing the test on an error, and returns the
// answer with the deltas streamed on the way.
func Chat(t testing.TB, m agent.Model, req agent.ChatRequest) (agent.ChatResponse, []agent.Delta) {
	t.Helper()
	var deltas []agent.Delta
	res, err := m.Chat(t.Context(), req, func(d agent.Delta) { deltas = append(deltas, d) })
	if err != nil {
		t.Fatal(err)
	}
	return res, deltas
}
