package ollamatest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/types/model"

	"github.com/deskhand/deskhand/models/modeltest"
	"github.com/deskhand/deskhand/models/ollama/ollamatest"
)

// do sends a raw request to the fake and returns status, content type and body.
func do(t *testing.T, srv *ollamatest.Server, method, path, body string) (int, string, string) {
	t.Helper()
	resp, b := modeltest.Do(t, srv.Client(), method, srv.URL+path, body, nil)
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

func TestWireFormat(t *testing.T) {
	tests := []struct {
		name, method, path, body string
		wantStatus               int
		wantType                 string
		wantBody                 string // exact, unless empty
	}{
		{name: "GET /", method: "GET", path: "/", wantStatus: 200, wantType: "text/plain; charset=utf-8", wantBody: "Ollama is running"},
		{name: "HEAD /", method: "HEAD", path: "/", wantStatus: 200, wantType: "text/plain; charset=utf-8"},
		{name: "version", method: "GET", path: "/api/version", wantStatus: 200, wantType: "application/json; charset=utf-8", wantBody: `{"version":"0.17.4"}` + "\n"},
		{name: "unknown route", method: "GET", path: "/api/nope", wantStatus: 404, wantType: "text/plain; charset=utf-8", wantBody: "404 page not found\n"},
		{name: "chat unknown model", method: "POST", path: "/api/chat", body: `{"model":"llama9:70b","messages":[]}`,
			wantStatus: 404, wantType: "application/json; charset=utf-8", wantBody: `{"error":"model 'llama9:70b' not found"}` + "\n"},
		{name: "show unknown model", method: "POST", path: "/api/show", body: `{"model":"llama9:70b"}`,
			wantStatus: 404, wantType: "application/json; charset=utf-8", wantBody: `{"error":"model 'llama9:70b' not found"}` + "\n"},
		{name: "chat without model", method: "POST", path: "/api/chat", body: `{"messages":[]}`,
			wantStatus: 400, wantType: "application/json; charset=utf-8", wantBody: `{"error":"model is required"}` + "\n"},
		{name: "show", method: "POST", path: "/api/show", body: `{"model":"llama3.2"}`, wantStatus: 200, wantType: "application/json; charset=utf-8"},
		{name: "tags", method: "GET", path: "/api/tags", wantStatus: 200, wantType: "application/json; charset=utf-8"},
		{name: "streamed chat", method: "POST", path: "/api/chat", body: `{"model":"llama3.2","messages":[{"role":"user","content":"hi"}]}`,
			wantStatus: 200, wantType: "application/x-ndjson"},
		{name: "whole chat", method: "POST", path: "/api/chat", body: `{"model":"llama3.2","stream":false,"messages":[{"role":"user","content":"hi"}]}`,
			wantStatus: 200, wantType: "application/json; charset=utf-8"},
	}
	srv := ollamatest.NewServer(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, ctype, body := do(t, srv, tt.method, tt.path, tt.body)
			if status != tt.wantStatus || ctype != tt.wantType {
				t.Errorf("%d %q, want %d %q", status, ctype, tt.wantStatus, tt.wantType)
			}
			if tt.wantBody != "" && body != tt.wantBody {
				t.Errorf("body = %q, want %q", body, tt.wantBody)
			}
		})
	}
}

func TestStreamedChatLines(t *testing.T) {
	tests := []struct {
		name     string
		opts     []ollamatest.Option
		want     []string // per line: content, "error: …" or "done: reason"
		wantDone bool
	}{
		{
			name:     "memory echo",
			want:     []string{"I ", "remember: ", "My ", "name ", "is ", "Ada. ", "| ", "Who ", "am ", "I?", "done: stop"},
			wantDone: true,
		},
		{
			name: "mid-stream error",
			opts: []ollamatest.Option{ollamatest.WithMidStreamError("an error was encountered while running the model")},
			want: []string{"I ", "error: an error was encountered while running the model"},
		},
		{
			name: "cut",
			opts: []ollamatest.Option{ollamatest.WithCutStream()},
			want: []string{"I "},
		},
		{
			name: "tool call",
			opts: []ollamatest.Option{ollamatest.WithReplies(ollamatest.Reply{
				ToolCalls: []api.ToolCall{ollamatest.ToolCall("call_k3j4h5g6", "read_file", `{"path":"/home/u/a.txt","max_bytes":100}`)},
			})},
			want:     []string{`tool_calls: [{"id":"call_k3j4h5g6","function":{"index":0,"name":"read_file","arguments":{"path":"/home/u/a.txt","max_bytes":100}}}]`, "done: stop"},
			wantDone: true,
		},
		{
			name: "reply hook",
			opts: []ollamatest.Option{ollamatest.WithReplyFunc(func(req api.ChatRequest) ollamatest.Reply {
				r := ollamatest.EchoReply(req)
				r.Content = strings.ToUpper(r.Content)
				return r
			})},
			want:     []string{"I ", "REMEMBER: ", "MY ", "NAME ", "IS ", "ADA. ", "| ", "WHO ", "AM ", "I?", "done: stop"},
			wantDone: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := ollamatest.NewServer(t, tt.opts...)
			resp, err := srv.Client().Post(srv.URL+"/api/chat", "application/json", strings.NewReader(
				`{"model":"llama3.2:latest","messages":[{"role":"user","content":"My name is Ada."},{"role":"user","content":"Who am I?"}]}`))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var got []string
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				var line struct {
					api.ChatResponse
					Error string `json:"error"`
				}
				if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
					t.Fatalf("line %q: %v", sc.Bytes(), err)
				}
				switch m := line.Message; {
				case line.Error != "":
					got = append(got, "error: "+line.Error)
				case line.Done:
					got = append(got, "done: "+line.DoneReason)
					if line.PromptEvalCount == 0 || line.EvalCount == 0 || line.TotalDuration == 0 {
						t.Errorf("done chunk without metrics: %s", sc.Bytes())
					}
				case len(m.ToolCalls) > 0:
					b, _ := json.Marshal(m.ToolCalls)
					got = append(got, "tool_calls: "+string(b))
					if m.Content != "" {
						t.Errorf("tool call chunk with content %q", m.Content)
					}
				default:
					got = append(got, m.Content)
				}
				if line.Error == "" && (line.Model != "llama3.2:latest" || line.Message.Role != "assistant" || line.CreatedAt.IsZero()) {
					t.Errorf("chunk lacks model, role or created_at: %s", sc.Bytes())
				}
			}
			if cut := sc.Err() != nil; cut != (tt.name == "cut") {
				t.Errorf("read error %v", sc.Err())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRecorder(t *testing.T) {
	srv := ollamatest.NewServer(t)
	do(t, srv, "POST", "/api/chat", `{"model":"llama3.2","messages":[{"role":"user","content":"hi"}],"format":{"type":"object"}}`)
	reqs := srv.ChatRequests()
	if len(reqs) != 1 || reqs[0].Model != "llama3.2" || string(reqs[0].Format) != `{"type":"object"}` {
		t.Fatalf("recorded %+v", reqs)
	}
	if bodies := srv.ChatBodies(); len(bodies) != 1 || !strings.Contains(string(bodies[0]), `"format":{"type":"object"}`) {
		t.Errorf("bodies = %q", bodies)
	}
	if n := srv.Aborted(); n != 0 {
		t.Errorf("Aborted = %d after a whole reply", n)
	}
}

func TestEchoScript(t *testing.T) {
	msgs := func(ms ...api.Message) api.ChatRequest { return api.ChatRequest{Messages: ms} }
	ask := ollamatest.EchoReply(msgs(api.Message{Role: "user", Content: "ask: What is your name?"}))
	if len(ask.ToolCalls) != 1 || ask.ToolCalls[0].Function.Name != "ask_user" {
		t.Fatalf("ask: %+v", ask)
	}
	if q, _ := ask.ToolCalls[0].Function.Arguments.Get("question"); q != "What is your name?" {
		t.Errorf("question = %v", q)
	}
	after := ollamatest.EchoReply(msgs(api.Message{Role: "user", Content: "ask: x"}, api.Message{Role: "tool", Content: "Ada"}))
	if after.Content != "You answered: Ada" {
		t.Errorf("after the tool: %q", after.Content)
	}
	srv := ollamatest.NewServer(t)
	resp, err := http.Get(srv.URL + "/_fake/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var stats map[string]int
	if err := json.NewDecoder(resp.Body).Decode(&stats); err != nil || stats["chats"] != 0 {
		t.Errorf("stats = %v %v", stats, err)
	}
}

// TestWaitChatRequests: WaitChatRequests returns once the nth chat request
// has arrived, and the context's error while it has not.
func TestWaitChatRequests(t *testing.T) {
	srv := ollamatest.NewServer(t)
	go func() { // no t.Fatal off the test's goroutine: the wait below reports
		resp, err := srv.Client().Post(srv.URL+"/api/chat", "application/json", strings.NewReader(`{"model":"llama3.2","stream":false,"messages":[{"role":"user","content":"hi"}]}`))
		if err == nil {
			resp.Body.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := srv.WaitChatRequests(ctx, 1); err != nil {
		t.Fatalf("first chat: %v", err)
	}
	short, cancelShort := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancelShort()
	if err := srv.WaitChatRequests(short, 2); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a second chat that never comes: %v", err)
	}
}

// TestShow: /api/show answers as Ollama does (the keys of docs/api.md's
// example, decoded by api.ShowResponse), with each model's capabilities
// and context length.
func TestShow(t *testing.T) {
	srv := ollamatest.NewServer(t,
		ollamatest.WithModels("llama3.2:latest", "gemma:2b", "old:latest", "odd:latest"),
		ollamatest.WithCapabilities("gemma:2b", model.CapabilityCompletion),
		ollamatest.WithContextLength("gemma:2b", 8192),
		ollamatest.WithCapabilities("old"), // too old to list them
		ollamatest.WithContextLength("odd", 0),
	)
	tests := []struct {
		model    string
		wantCaps []model.Capability
		wantArch string
		wantCtx  any // model_info["<arch>.context_length"] as decoded; nil: absent
	}{
		{model: "llama3.2", wantCaps: ollamatest.DefaultCapabilities, wantArch: "llama", wantCtx: float64(ollamatest.DefaultContextLength)},
		{model: "gemma:2b", wantCaps: []model.Capability{model.CapabilityCompletion}, wantArch: "gemma", wantCtx: float64(8192)},
		{model: "old", wantArch: "old", wantCtx: float64(ollamatest.DefaultContextLength)},
		{model: "odd", wantCaps: ollamatest.DefaultCapabilities, wantArch: "odd"},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			status, _, body := do(t, srv, "POST", "/api/show", `{"model":"`+tt.model+`"}`)
			if status != http.StatusOK {
				t.Fatalf("status %d: %s", status, body)
			}
			var raw map[string]json.RawMessage
			if err := json.Unmarshal([]byte(body), &raw); err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{"modelfile", "parameters", "template", "details", "model_info", "modified_at"} {
				if _, ok := raw[key]; !ok {
					t.Errorf("no %q in %s", key, body)
				}
			}
			if _, ok := raw["capabilities"]; ok != (tt.wantCaps != nil) {
				t.Errorf("capabilities present = %v, want %v", ok, tt.wantCaps != nil)
			}
			var sr api.ShowResponse
			if err := json.Unmarshal([]byte(body), &sr); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantCaps, sr.Capabilities); diff != "" {
				t.Errorf("capabilities (-want +got):\n%s", diff)
			}
			if got := sr.ModelInfo["general.architecture"]; got != tt.wantArch {
				t.Errorf("general.architecture = %v, want %s", got, tt.wantArch)
			}
			if got := sr.ModelInfo[tt.wantArch+".context_length"]; got != tt.wantCtx {
				t.Errorf("context_length = %v, want %v", got, tt.wantCtx)
			}
		})
	}
}

// TestToolsRefusedAndNumCtx: tools sent to a model without the capability are
// refused as Ollama refuses them, and the recorder keeps each num_ctx.
func TestToolsRefusedAndNumCtx(t *testing.T) {
	srv := ollamatest.NewServer(t, ollamatest.WithModels("gemma:2b", "llama3.2:latest"),
		ollamatest.WithCapabilities("gemma:2b", model.CapabilityCompletion))
	tools := `"tools":[{"type":"function","function":{"name":"now","parameters":{"type":"object","properties":{}}}}]`
	status, _, body := do(t, srv, "POST", "/api/chat", `{"model":"gemma:2b","messages":[{"role":"user","content":"hi"}],`+tools+`}`)
	if want := `{"error":"registry.ollama.ai/library/gemma:2b does not support tools"}` + "\n"; status != http.StatusBadRequest || body != want {
		t.Errorf("tools to gemma: %d %s", status, body)
	}
	if status, _, body := do(t, srv, "POST", "/api/chat", `{"model":"gemma:2b","messages":[{"role":"user","content":"hi"}],"options":{"num_ctx":8192}}`); status != http.StatusOK {
		t.Errorf("no tools to gemma: %d %s", status, body)
	}
	if status, _, body := do(t, srv, "POST", "/api/chat", `{"model":"llama3.2","messages":[{"role":"user","content":"hi"}],`+tools+`}`); status != http.StatusOK {
		t.Errorf("tools to llama3.2: %d %s", status, body)
	}
	if diff := cmp.Diff([]int{0, 8192, 0}, srv.NumCtx()); diff != "" {
		t.Errorf("num_ctx (-want +got):\n%s", diff)
	}
}
