package ollama_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ollama/ollama/api"

	"github.com/deskhand/deskhand/models/modeltest"
	"github.com/deskhand/deskhand/models/ollama"
	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/agent"
)

const model = "llama3.2:latest"

// newModel points a Model at the fake, through the fake's own client so
// its connections close with it.
func newModel(t *testing.T, srv *ollamatest.Server, opts ...ollama.Option) *ollama.Model {
	t.Helper()
	m, err := ollama.New(srv.URL, append([]ollama.Option{ollama.WithHTTPClient(srv.Client())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestParseBaseURL(t *testing.T) {
	modeltest.CheckBaseURLs(t, []modeltest.BaseURL{
		{In: "", Want: "http://127.0.0.1:11434"},
		{In: "  ", Want: "http://127.0.0.1:11434"},
		{In: "127.0.0.1:11434", Want: "http://127.0.0.1:11434"},
		{In: " 127.0.0.1:11555 ", Want: "http://127.0.0.1:11555"},
		{In: "0.0.0.0", Want: "http://0.0.0.0:11434"},
		{In: "myhost", Want: "http://myhost:11434"},
		{In: "localhost:8080", Want: "http://localhost:8080"},
		{In: ":11555", Want: "http://127.0.0.1:11555"},
		{In: "http://example.com", Want: "http://example.com:80"},
		{In: "https://example.com", Want: "https://example.com:443"},
		{In: "HTTP://example.com:8080/", Want: "http://example.com:8080"},
		{In: "http://host:1234", Want: "http://host:1234"},
		{In: "example.com:1234/prefix", Want: "http://example.com:1234/prefix"},
		{In: "https://example.com/ollama/", Want: "https://example.com:443/ollama"},
		{In: "ollama.com", Want: "https://ollama.com:443"},
		{In: "[::1]:11434", Want: "http://[::1]:11434"},
		{In: "::1", Want: "http://[::1]:11434"},
		{In: "ftp://example.com", WantErr: true},
		{In: "localhost:0", WantErr: true},
		{In: "localhost:99999", WantErr: true},
		{In: "localhost:http", WantErr: true},
	}, ollama.ParseBaseURL, func(in string) (string, error) {
		m, err := ollama.New(in)
		if err != nil {
			return "", err
		}
		return m.BaseURL(), nil
	})
}

func TestChatStreamsReply(t *testing.T) {
	modeltest.Chats(t, model, func(t *testing.T, opts []ollamatest.Option) (modeltest.Model, func(*testing.T, error)) {
		srv := ollamatest.NewServer(t, opts...)
		return newModel(t, srv), func(t *testing.T, _ error) {
			reqs := srv.ChatRequests()
			if len(reqs) != 1 {
				t.Fatalf("the fake got %d chat requests, want 1", len(reqs))
			}
			if reqs[0].Stream == nil || !*reqs[0].Stream {
				t.Errorf("stream = %v, want true", reqs[0].Stream)
			}
			var roles []string
			for _, msg := range reqs[0].Messages {
				roles = append(roles, msg.Role+": "+msg.Content)
			}
			wantRoles := []string{"system: Be brief.", "user: My name is Ada.", "assistant: Hello Ada.", "user: What is my name?"}
			if diff := cmp.Diff(wantRoles, roles); diff != "" {
				t.Errorf("messages on the wire (-want +got):\n%s", diff)
			}
		}
	}, []modeltest.ChatCase[[]ollamatest.Option]{
		modeltest.EchoCase[[]ollamatest.Option](model, 11, "stop"), // output: chunks
		{
			Name:   "scripted reply with thinking, untagged model name",
			Setup:  []ollamatest.Option{ollamatest.WithReplies(ollamatest.Reply{Thinking: "Easy.", Content: "Hel lo!", PromptTokens: 42, OutputTokens: 7, DoneReason: "length"})},
			Req:    agent.ChatRequest{Model: "llama3.2"},
			Deltas: []agent.Delta{{Thinking: "Easy."}, {Content: "Hel "}, {Content: "lo!"}},
			Want: agent.ChatResponse{
				Message:      agent.Message{Role: agent.RoleAssistant, Content: "Hel lo!"},
				Model:        "llama3.2",
				PromptTokens: 42,
				OutputTokens: 7,
				DoneReason:   "length",
			},
		},
	})
}

func TestChatNilOnDelta(t *testing.T) {
	srv := ollamatest.NewServer(t)
	got, err := newModel(t, srv).Chat(context.Background(), agent.ChatRequest{
		Model: model, Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Message.Content != "I remember: hi" {
		t.Errorf("content = %q", got.Message.Content)
	}
}

func TestChatToolCallRoundTrip(t *testing.T) {
	srv := ollamatest.NewServer(t, ollamatest.WithReplies(
		ollamatest.Reply{ToolCalls: []api.ToolCall{
			ollamatest.ToolCall("call_k3j4h5g6", "read_file", `{"path":"/home/u/a.txt","max_bytes":100}`),
		}},
		ollamatest.Reply{Content: "The file says hello."},
	))
	modeltest.ToolRoundTrip(t, newModel(t, srv), modeltest.RoundTrip{
		Req: agent.ChatRequest{Model: model, Messages: []agent.Message{{Role: agent.RoleUser, Content: "read /home/u/a.txt"}}, Tools: modeltest.RoundTripTools()},
		First: agent.ChatResponse{
			Message: agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
				{ID: "call_k3j4h5g6", Name: "read_file", Arguments: json.RawMessage(`{"path":"/home/u/a.txt","max_bytes":100}`)},
			}},
			Model:        model,
			PromptTokens: 2,
			OutputTokens: 1,
			DoneReason:   "stop",
		},
		Results: []agent.Message{{Role: agent.RoleTool, Content: "hello", ToolCallID: "call_k3j4h5g6", ToolName: "read_file"}},
		Final:   "The file says hello.",
		Sent:    srv.ChatBodies,
		Wire: map[string]string{
			"messages": `[
				{"role":"user","content":"read /home/u/a.txt"},
				{"role":"assistant","content":"","tool_calls":[{"id":"call_k3j4h5g6","function":{"index":0,"name":"read_file","arguments":{"path":"/home/u/a.txt","max_bytes":100}}}]},
				{"role":"tool","content":"hello","tool_name":"read_file","tool_call_id":"call_k3j4h5g6"}]`,
			"tools": `[
				{"type":"function","function":{"name":"read_file","description":"Read a file","parameters":{"type":"object","required":["path"],
					"properties":{"path":{"type":"string","description":"file path"},"max_bytes":{"type":"integer"}}}}},
				{"type":"function","function":{"name":"now","description":"Current time","parameters":{"type":"object","properties":{}}}}]`,
		},
		InOrder: []string{`"arguments":{"path":"/home/u/a.txt","max_bytes":100}`},
	})
}

func TestChatToolCallWithoutIDGetsOne(t *testing.T) {
	srv := ollamatest.NewServer(t, ollamatest.WithReplies(ollamatest.Reply{ToolCalls: []api.ToolCall{
		ollamatest.ToolCall("", "now", `{}`),
		ollamatest.ToolCall("", "now", `{"tz":"UTC"}`),
	}}))
	got, err := newModel(t, srv).Chat(context.Background(), agent.ChatRequest{
		Model: model, Messages: []agent.Message{{Role: agent.RoleUser, Content: "time?"}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := got.Message.ToolCalls
	if len(calls) != 2 {
		t.Fatalf("got %d tool calls, want 2", len(calls))
	}
	idShape := regexp.MustCompile(`^call_[a-z0-9]{8}$`)
	for _, c := range calls {
		if !idShape.MatchString(c.ID) {
			t.Errorf("generated ID %q is not shaped like Ollama's", c.ID)
		}
	}
	if calls[0].ID == calls[1].ID {
		t.Errorf("two calls got the same ID %q", calls[0].ID)
	}
	if string(calls[0].Arguments) != `{}` || string(calls[1].Arguments) != `{"tz":"UTC"}` {
		t.Errorf("arguments = %s, %s", calls[0].Arguments, calls[1].Arguments)
	}
}

func TestChatStructuredOutput(t *testing.T) {
	schema := `{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name"]}`
	srv := ollamatest.NewServer(t, ollamatest.WithReplies(ollamatest.Reply{Content: `{"name":"Ada","age":36}`}))
	got, err := newModel(t, srv).Chat(context.Background(), agent.ChatRequest{
		Model:    model,
		Messages: []agent.Message{{Role: agent.RoleUser, Content: "Who wrote the first program?"}},
		Format:   json.RawMessage(schema),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Message.Content != `{"name":"Ada","age":36}` {
		t.Errorf("content = %q", got.Message.Content)
	}
	var wire struct {
		Format json.RawMessage `json:"format"`
		Stream *bool           `json:"stream"`
	}
	if err := json.Unmarshal(srv.ChatBodies()[0], &wire); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(wire.Format, []byte("{")) {
		t.Fatalf("format on the wire = %s, want the schema object", wire.Format)
	}
	modeltest.JSONEqual(t, "format", wire.Format, schema)
	if wire.Stream == nil || !*wire.Stream {
		t.Errorf("stream = %v, want true", wire.Stream)
	}
}

// TestChatErrors: the failures only Ollama has (those every adapter has
// are the conformance suite's).
func TestChatErrors(t *testing.T) {
	modeltest.ChatErrors(t, model, func(t *testing.T, fake []ollamatest.Option) (modeltest.Model, func(*testing.T, error)) {
		return newModel(t, ollamatest.NewServer(t, fake...)), nil
	}, []modeltest.ErrorCase[[]ollamatest.Option]{
		{
			Name:  "API key missing",
			Setup: []ollamatest.Option{ollamatest.WithAPIKey("sekret")},
			Want: modeltest.Want{
				Says:  "Ollama at {base} did not accept the request: the API key is missing or wrong — set it in Settings",
				Check: modeltest.As[api.AuthorizationError](nil),
			},
		},
	})
}

func TestNotRunning(t *testing.T) {
	m, err := ollama.New(modeltest.ClosedAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	want := "Ollama is not running at " + m.BaseURL() + " — start it or change the host in Settings"
	calls := map[string]func(context.Context) error{
		"Ping": m.Ping,
		"ListModels": func(ctx context.Context) error {
			_, err := m.ListModels(ctx)
			return err
		},
		"Version": func(ctx context.Context) error {
			_, err := m.Version(ctx)
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			err := call(context.Background())
			if err == nil {
				t.Fatal("succeeded against a closed port")
			}
			if msg := modeltest.UserMessage(t, err); msg != want {
				t.Errorf("message = %q, want %q", msg, want)
			}
		})
	}
}

func TestListModels(t *testing.T) {
	tests := []struct {
		name string
		opts []ollamatest.Option
		want []string
	}{
		{name: "default", want: []string{"llama3.2:latest"}},
		{name: "in Ollama's order", opts: []ollamatest.Option{ollamatest.WithModels("qwen3:8b", "llama3.2:latest", "gemma3:4b")}, want: []string{"qwen3:8b", "llama3.2:latest", "gemma3:4b"}},
		{name: "none installed", opts: []ollamatest.Option{ollamatest.WithModels()}, want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := newModel(t, ollamatest.NewServer(t, tt.opts...)).ListModels(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("models (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVersionAndPing(t *testing.T) {
	srv := ollamatest.NewServer(t, ollamatest.WithVersion("0.17.4"))
	m := newModel(t, srv)
	if err := m.Ping(context.Background()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	v, err := m.Version(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if v != "0.17.4" {
		t.Errorf("Version = %q", v)
	}
	var got []string
	for _, c := range srv.Calls() {
		got = append(got, c.Method+" "+c.Path)
	}
	if diff := cmp.Diff([]string{"HEAD /", "GET /api/version"}, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestAPIKeySent(t *testing.T) {
	srv := ollamatest.NewServer(t, ollamatest.WithAPIKey("sekret"))
	hc := srv.Client()
	transport := hc.Transport
	m := newModel(t, srv, ollama.WithAPIKey("sekret"))
	if _, err := m.ListModels(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Chat(context.Background(), agent.ChatRequest{Model: model, Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}}, nil); err != nil {
		t.Fatal(err)
	}
	calls := srv.Calls()
	if len(calls) != 3 { // tags, show, chat
		t.Fatalf("the fake got %d requests, want 3", len(calls))
	}
	for _, c := range calls {
		if got := c.Header.Get("Authorization"); got != "Bearer sekret" {
			t.Errorf("%s %s: Authorization = %q", c.Method, c.Path, got)
		}
	}
	if hc.Transport != transport {
		t.Error("New changed the caller's http.Client")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Requests to ollama.com are signed with ~/.ollama/id_ed25519 by the client;
// with an API key they must go out with the key even when that file is
// missing.
func TestAPIKeyToOllamaComNeedsNoKeyFile(t *testing.T) {
	noKeyFile(t)
	var seen []*http.Request
	stub := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		seen = append(seen, r)
		return &http.Response{
			StatusCode: http.StatusOK,
			Status:     "200 OK",
			Header:     http.Header{"Content-Type": {"application/json"}},
			Body:       io.NopCloser(strings.NewReader(`{"version":"0.17.4"}`)),
			Request:    r,
		}, nil
	})
	m, err := ollama.New("ollama.com", ollama.WithAPIKey("k"), ollama.WithHTTPClient(&http.Client{Transport: stub}))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.BaseURL(); got != "https://ollama.com:443" {
		t.Errorf("BaseURL = %s", got)
	}
	v, err := m.Version(context.Background())
	if err != nil {
		t.Fatalf("Version: %v", err)
	}
	if v != "0.17.4" || len(seen) != 1 {
		t.Fatalf("Version = %q after %d requests", v, len(seen))
	}
	r := seen[0]
	if got := r.URL.String(); got != "https://ollama.com:443/api/version" {
		t.Errorf("URL = %s", got)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer k" {
		t.Errorf("Authorization = %q", got)
	}
}

// Chat reads /api/chat's stream itself; its request must go out as the
// client's do: to the real host, with the key and the client's headers.
func TestChatToOllamaComWithAPIKey(t *testing.T) {
	noKeyFile(t)
	var chat *http.Request
	var body []byte
	stub := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		status, reply := http.StatusNotFound, `{"error":"not here"}`
		if r.URL.Path == "/api/chat" {
			chat = r
			body, _ = io.ReadAll(r.Body)
			status, reply = http.StatusOK, `{"model":"gpt-oss:120b","message":{"role":"assistant","content":"hi"},"done":false}`+"\n"+
				`{"model":"gpt-oss:120b","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":3,"eval_count":1}`+"\n"
		}
		return &http.Response{
			StatusCode: status,
			Status:     http.StatusText(status),
			Header:     http.Header{"Content-Type": {"application/x-ndjson"}},
			Body:       io.NopCloser(strings.NewReader(reply)),
			Request:    r,
		}, nil
	})
	m, err := ollama.New("ollama.com", ollama.WithAPIKey("k"), ollama.WithHTTPClient(&http.Client{Transport: stub}))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Chat(t.Context(), agent.ChatRequest{Model: "gpt-oss:120b", Messages: []agent.Message{{Role: agent.RoleUser, Content: "hello"}}}, nil)
	if err != nil {
		t.Fatalf("Chat: %v", err)
	}
	if resp.Message.Content != "hi" || resp.DoneReason != "stop" || resp.PromptTokens != 3 || resp.OutputTokens != 1 {
		t.Errorf("reply = %+v", resp)
	}
	if chat == nil {
		t.Fatal("no request to /api/chat")
	}
	if got := chat.URL.String(); got != "https://ollama.com:443/api/chat" {
		t.Errorf("URL = %s", got)
	}
	for k, want := range map[string]string{"Authorization": "Bearer k", "Content-Type": "application/json", "Accept": "application/x-ndjson"} {
		if got := chat.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if got := chat.Header.Get("User-Agent"); !strings.HasPrefix(got, "ollama/") {
		t.Errorf("User-Agent = %q", got)
	}
	var sent api.ChatRequest
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	if sent.Model != "gpt-oss:120b" || sent.Stream == nil || !*sent.Stream || len(sent.Messages) != 1 || sent.Messages[0].Content != "hello" {
		t.Errorf("body = %s", body)
	}
}

// Without an API key, requests to ollama.com, chats among them, are
// signed by the client; with no key file to sign with, none goes out.
func TestOllamaComWithoutAPIKeyOrKeyFile(t *testing.T) {
	for name, call := range map[string]func(context.Context, *ollama.Model) error{
		"Chat": func(ctx context.Context, m *ollama.Model) error {
			_, err := m.Chat(ctx, agent.ChatRequest{Model: "gpt-oss:120b", Messages: []agent.Message{{Role: agent.RoleUser, Content: "hello"}}}, nil)
			return err
		},
		"Version": func(ctx context.Context, m *ollama.Model) error {
			_, err := m.Version(ctx)
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			noKeyFile(t)
			stub := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				t.Errorf("unsigned request sent to %s", r.URL)
				return nil, errors.New("not sent")
			})
			m, err := ollama.New("ollama.com", ollama.WithHTTPClient(&http.Client{Transport: stub}))
			if err != nil {
				t.Fatal(err)
			}
			msg := modeltest.UserMessage(t, call(t.Context(), m))
			if !strings.HasPrefix(msg, "could not sign the request to Ollama at https://ollama.com:443: ") ||
				!strings.Contains(msg, "id_ed25519") {
				t.Errorf("message = %q", msg)
			}
		})
	}
}

// noKeyFile gives the test a home without ~/.ollama/id_ed25519, and no
// OLLAMA_AUTH.
func noKeyFile(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home)
	t.Setenv("OLLAMA_AUTH", "")
}

func TestPullModel(t *testing.T) {
	srv := ollamatest.NewServer(t)
	m, err := ollama.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var seen []agent.PullProgress
	if err := m.PullModel(t.Context(), "qwen3:8b", func(p agent.PullProgress) { seen = append(seen, p) }); err != nil {
		t.Fatal(err)
	}
	if len(seen) < 3 || seen[len(seen)-1].Status != "success" || seen[2].Total != 1000 {
		t.Errorf("progress = %+v", seen)
	}
	err = m.PullModel(t.Context(), "missing-model", nil)
	if err == nil || !strings.Contains(agent.UserMessage(err), "could not pull") || !strings.Contains(agent.UserMessage(err), "file does not exist") {
		t.Errorf("unknown model: %v", err)
	}

	slow := ollamatest.NewServer(t, ollamatest.WithChunkDelay(time.Second))
	m, _ = ollama.New(slow.URL)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if err := m.PullModel(ctx, "qwen3:8b", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled pull: %v", err)
	}
}

// TestChatsAreBounded: no more chats stream at once than WithMaxChats
// allows (each may hold 8 MB); the others wait their turn
// and all complete. The server holds every stream open until the test
// lets one go, one per new arrival, so two are surely in flight together
// (the sleep it replaces only made that likely).
func TestChatsAreBounded(t *testing.T) {
	const chats, bound = 6, 2
	var (
		mu             sync.Mutex
		inFlight, most int
	)
	arrived := make(chan struct{}, chats)
	release := make(chan struct{}, chats)
	stop := make(chan struct{}) // lets every stream go if the test fails early
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/show" { // read before each chat; not a chat
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintln(w, `{"model_info":{},"capabilities":["completion"]}`)
			return
		}
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		arrived <- struct{}{}
		select {
		case <-release:
		case <-stop:
		case <-r.Context().Done():
		}
		mu.Lock()
		inFlight--
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-ndjson")
		fmt.Fprintln(w, `{"model":"m","message":{"role":"assistant","content":"ok"},"done":true,"done_reason":"stop"}`)
	}))
	defer srv.Close()
	defer close(stop)
	m, err := ollama.New(srv.URL, ollama.WithMaxChats(bound))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, chats)
	for range chats {
		wg.Go(func() {
			_, err := m.Chat(t.Context(), agent.ChatRequest{Model: "m", Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}}, func(agent.Delta) {})
			errs <- err
		})
	}
	timeout := time.After(10 * time.Second)
	for n := range chats {
		if n == bound {
			// Two streams are open. That no third one starts can only be
			// shown by giving it the chance: a bounded window, which a
			// correct bound never fails (most would show a third anyway).
			select {
			case <-arrived:
				t.Fatalf("a chat started while %d were streaming", bound)
			case <-time.After(100 * time.Millisecond):
			}
		}
		if n >= bound {
			release <- struct{}{} // one stream ends, so one more may start
		}
		select {
		case <-arrived:
		case <-timeout:
			t.Fatalf("%d of %d chats reached the server", n, chats)
		}
	}
	for range bound {
		release <- struct{}{}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if most != bound {
		t.Errorf("%d chats streamed at once, want %d", most, bound)
	}
}
