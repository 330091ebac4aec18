package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/ollama/ollama/api"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver"
)

// writingWhereAsked writes the file the user's message names.
func writingWhereAsked() ollamatest.Option {
	return ollamatest.WithReplyFunc(func(req api.ChatRequest) ollamatest.Reply {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == "tool" {
			return ollamatest.Reply{Content: "result: " + last.Content}
		}
		args, _ := json.Marshal(map[string]string{"path": strings.TrimSpace(last.Content), "content": "hello"})
		return ollamatest.Reply{ToolCalls: []api.ToolCall{ollamatest.ToolCall("call_write001", "write_file", string(args))}}
	})
}

// desktopApprover answers approvals at the desktop through the core, with
// the answers the test queued; a question nobody expected is declined and
// counted.
type desktopApprover struct {
	answers    chan map[string]any
	asked      atomic.Int32
	unexpected atomic.Int32
	errs       chan error
}

func newDesktopApprover(t *testing.T, core *agent.Core) *desktopApprover {
	d := &desktopApprover{answers: make(chan map[string]any, 4), errs: make(chan error, 16)}
	events := core.Subscribe(t.Context(), agent.EventQuestionAsked)
	go func() {
		for e := range events {
			d.asked.Add(1)
			var err error
			select {
			case content := <-d.answers:
				err = core.AnswerQuestion(e.Question, content, false)
			default:
				d.unexpected.Add(1)
				err = core.AnswerQuestion(e.Question, nil, true)
			}
			if err != nil {
				d.errs <- err
			}
		}
	}()
	return d
}

// TestAlwaysAllowInFolder is the acceptance of approval rules: "always
// allow for this agent in ~/notes" skips the popup for a second write_file
// into ~/notes and still asks for ~/other, on both eras.
func TestAlwaysAllowInFolder(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{}, writingWhereAsked())
	desk := newDesktopApprover(t, h.core)
	for i, era := range eras {
		t.Run(era, func(t *testing.T) {
			home := t.TempDir()
			notes, other := filepath.Join(home, "notes"), filepath.Join(home, "other")
			for _, d := range []string{notes, other} {
				if err := os.Mkdir(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			slug := []string{"scribe", "scribe2"}[i]
			if _, err := h.core.SaveAgent(t.Context(), agent.Agent{Slug: slug, Model: ollamatest.DefaultModel, Enabled: true,
				Tools: []agent.AgentTool{{Name: "write_file", NeedsApproval: true}}, Folders: []string{home}}); err != nil {
				t.Fatal(err)
			}
			c := connect(t, h.URL, era, h.token("rules-"+era))
			write := func(path string, answer map[string]any) (asked bool, res *mcp.CallToolResult) {
				t.Helper()
				before := desk.asked.Load()
				if answer != nil {
					desk.answers <- answer
				}
				res = call(t, c, slug, map[string]any{"message": path}, nil)
				return desk.asked.Load() > before, res
			}

			first := filepath.Join(notes, "first.txt")
			if asked, res := write(first, map[string]any{"approve": true, "remember": "always", "folder": notes}); !asked || res.IsError || !strings.HasPrefix(firstText(res), "result: Created") {
				t.Fatalf("first write: asked %v, result %v", asked, texts(res))
			}
			second := filepath.Join(notes, "second.txt")
			if asked, res := write(second, nil); asked || res.IsError || !strings.HasPrefix(firstText(res), "result: Created") {
				t.Fatalf("second write into notes: asked %v, result %v; want it written without asking", asked, texts(res))
			}
			if _, err := os.Stat(second); err != nil {
				t.Errorf("the second file was not written: %v", err)
			}
			outside := filepath.Join(other, "third.txt")
			if asked, res := write(outside, map[string]any{"approve": false}); !asked || !strings.Contains(firstText(res), "denied") {
				t.Fatalf("write into other: asked %v, result %v; want the question and the denial", asked, texts(res))
			}
			if _, err := os.Stat(outside); err == nil {
				t.Error("the file in other was written")
			}
			if n := desk.unexpected.Load(); n != 0 {
				t.Errorf("%d unexpected questions", n)
			}
			select {
			case err := <-desk.errs:
				t.Errorf("desktop answer: %v", err)
			default:
			}
		})
	}
}

// TestClientAnswersAlwaysAllow: a client that may approve answers by
// elicitation with the optional "remember", and the rule it asks for
// sticks: the form stays one a client without "remember" can fill.
func TestClientAnswersAlwaysAllow(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{}, writingWhereAsked())
	for i, era := range eras {
		t.Run(era, func(t *testing.T) {
			home := t.TempDir()
			slug := []string{"scribe", "scribe2"}[i]
			if _, err := h.core.SaveAgent(t.Context(), agent.Agent{Slug: slug, Model: ollamatest.DefaultModel, Enabled: true, ClientMayApprove: true,
				Tools: []agent.AgentTool{{Name: "write_file", NeedsApproval: true}}, Folders: []string{home}}); err != nil {
				t.Fatal(err)
			}
			var elicited atomic.Int32
			var sawRemember atomic.Bool
			c := connect(t, h.URL, era, h.token("auto-"+era),
				client.WithElicitationHandler(elicitFn(func(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
					n := elicited.Add(1)
					schema, _ := json.Marshal(req.Params.RequestedSchema)
					sawRemember.Store(strings.Contains(string(schema), `"always_client"`))
					content := map[string]any{"approve": true}
					if n == 2 {
						content["remember"] = "always_client"
					}
					return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: content}}, nil
				})))
			for n, want := range []int32{1, 2, 2, 2} {
				res := call(t, c, slug, map[string]any{"message": filepath.Join(home, "f.txt")}, nil)
				if res.IsError || !strings.HasPrefix(firstText(res), "result: ") {
					t.Fatalf("call %d: %v", n+1, texts(res))
				}
				if got := elicited.Load(); got != want {
					t.Fatalf("after call %d the client was asked %d times, want %d", n+1, got, want)
				}
			}
			if !sawRemember.Load() {
				t.Error("the approval form did not offer remember")
			}
			rules, _ := h.core.ApprovalRules(t.Context())
			found := false
			for _, r := range rules {
				if r.Tool == "write_file" && r.Client != "" && r.CreatedBy == agent.ByClient {
					found = true
				}
			}
			if !found {
				t.Errorf("no rule for this client among %+v", rules)
			}
		})
	}
}
