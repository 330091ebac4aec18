package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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
	events := core.Events().Subscribe(t.Context(), agent.EventQuestionAsked)
	go func() {
		for e := range events {
			d.asked.Add(1)
			var err error
			select {
			case content := <-d.answers:
				err = core.Questions().Answer(e.Question, content, false)
			default:
				d.unexpected.Add(1)
				err = core.Questions().Answer(e.Question, nil, true)
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
			if _, err := h.core.Agents().Save(t.Context(), agent.Agent{Slug: slug, Model: ollamatest.DefaultModel, Enabled: true,
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
			if _, err := h.core.Agents().Save(t.Context(), agent.Agent{Slug: slug, Model: ollamatest.DefaultModel, Enabled: true, ClientMayApprove: true,
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
			rules, _ := h.core.Approvals().Rules(t.Context())
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

// callingTheNamedTool calls the tool the user's message names with the
// argument after it: "write_file PATH" or "fetch_url URL".
func callingTheNamedTool() ollamatest.Option {
	return ollamatest.WithReplyFunc(func(req api.ChatRequest) ollamatest.Reply {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == "tool" {
			return ollamatest.Reply{Content: "result: " + last.Content}
		}
		tool, arg, _ := strings.Cut(strings.TrimSpace(last.Content), " ")
		args, _ := json.Marshal(map[string]string{"path": arg, "content": "hello"})
		if tool == "fetch_url" {
			args, _ = json.Marshal(map[string]string{"url": arg})
		}
		return ollamatest.Reply{ToolCalls: []api.ToolCall{ollamatest.ToolCall("call_named001", tool, string(args))}}
	})
}

// TestClientsAlwaysIsItsOwn: whatever "always" a client answers (always,
// always_client, always_folder, always_host), the rule covers that client
// only: its own next call runs without asking, another client's is asked,
// on both eras.
func TestClientsAlwaysIsItsOwn(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{}, callingTheNamedTool())
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "a page") }))
	t.Cleanup(page.Close)
	host := strings.TrimPrefix(page.URL, "http://")
	n := 0
	for _, era := range eras {
		for _, remember := range []string{"always", "always_client", "always_folder", "always_host"} {
			t.Run(era+"/"+remember, func(t *testing.T) {
				n++
				home, slug := t.TempDir(), fmt.Sprintf("pinned%d", n)
				if _, err := h.core.Agents().Save(t.Context(), agent.Agent{Slug: slug, Model: ollamatest.DefaultModel, Enabled: true, ClientMayApprove: true,
					Tools:   []agent.AgentTool{{Name: "write_file", NeedsApproval: true}, {Name: "fetch_url", NeedsApproval: true}},
					Folders: []string{home}, ReachableHosts: []string{host}}); err != nil {
					t.Fatal(err)
				}
				message := "write_file " + filepath.Join(home, "f.txt")
				if remember == "always_host" {
					message = "fetch_url " + page.URL + "/x"
				}
				approver := func(asked *atomic.Int32, content map[string]any) *client.Client {
					return connect(t, h.URL, era, h.token(fmt.Sprintf("%s-%d", content["remember"], n)),
						client.WithElicitationHandler(elicitFn(func(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
							asked.Add(1)
							return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: content}}, nil
						})))
				}
				var firstAsked, secondAsked atomic.Int32
				first := approver(&firstAsked, map[string]any{"approve": true, "remember": remember})
				second := approver(&secondAsked, map[string]any{"approve": true})
				for i, c := range []*client.Client{first, first, second} {
					if res := call(t, c, slug, map[string]any{"message": message}, nil); res.IsError || !strings.HasPrefix(firstText(res), "result: ") {
						t.Fatalf("call %d: %v", i+1, texts(res))
					}
				}
				if firstAsked.Load() != 1 || secondAsked.Load() != 1 {
					t.Errorf("the client that answered %q was asked %d times (want 1), the other client %d (want 1)", remember, firstAsked.Load(), secondAsked.Load())
				}
				rules, _ := h.core.Approvals().Rules(t.Context())
				for _, r := range rules {
					if r.CreatedBy == agent.ByClient && r.Client == "" {
						t.Errorf("a client's rule for every client: %+v", r)
					}
				}
			})
		}
	}
}

// TestRuleToReviewAsks: a rule that waits for review (as migration 0014
// leaves a client's rule for every client) covers nothing until the person
// re-enables it; then it covers every client's calls.
func TestRuleToReviewAsks(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{}, callingTheNamedTool())
	home := t.TempDir()
	a, err := h.core.Agents().Save(t.Context(), agent.Agent{Slug: "scribe", Model: ollamatest.DefaultModel, Enabled: true, ClientMayApprove: true,
		Tools: []agent.AgentTool{{Name: "write_file", NeedsApproval: true}}, Folders: []string{home}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.db.PutApprovalRule(t.Context(), agent.ApprovalRule{ID: "old", Agent: a.ID, Tool: "write_file",
		CreatedAt: time.Now(), CreatedBy: agent.ByClient, Review: agent.ReviewUnpinned}); err != nil {
		t.Fatal(err)
	}
	h.restart()
	var asked atomic.Int32
	c := connect(t, h.URL, mcp.ProtocolVersion20251125, h.token("cursor"),
		client.WithElicitationHandler(elicitFn(func(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
			asked.Add(1)
			return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"approve": true}}}, nil
		})))
	message := map[string]any{"message": "write_file " + filepath.Join(home, "f.txt")}
	for _, want := range []int32{1, 2} {
		if res := call(t, c, "scribe", message, nil); res.IsError || asked.Load() != want {
			t.Fatalf("with the rule off: %v, asked %d times, want %d", texts(res), asked.Load(), want)
		}
	}
	if err := h.core.Approvals().Enable(t.Context(), "old"); err != nil {
		t.Fatal(err)
	}
	if res := call(t, c, "scribe", message, nil); res.IsError || asked.Load() != 2 {
		t.Errorf("with the rule re-enabled: %v, asked %d times, want 2", texts(res), asked.Load())
	}
}
