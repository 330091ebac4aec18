package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/ollama/ollama/api"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/control"
	"github.com/deskhand/deskhand/store"
	"github.com/deskhand/deskhand/store/storetest"
)

// TestApprovalRulesFromTheCommandLine: "answer ID approve --always
// --folder DIR" adds a rule that skips the next question inside DIR;
// "approvals list" shows it, through the running app and on the store
// alike, and "approvals revoke" removes it.
func TestApprovalRulesFromTheCommandLine(t *testing.T) {
	fake := ollamatest.NewServer(t, ollamatest.WithReplyFunc(func(req api.ChatRequest) ollamatest.Reply {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == "tool" {
			return ollamatest.Reply{Content: "result: " + last.Content}
		}
		args, _ := json.Marshal(map[string]string{"path": strings.TrimSpace(last.Content), "content": "hello"})
		return ollamatest.Reply{ToolCalls: []api.ToolCall{ollamatest.ToolCall("call_write001", "write_file", string(args))}}
	}))
	srv := startServe(t, fake)
	dir := srv.dir
	home := t.TempDir()
	notes := filepath.Join(home, "notes")
	if err := os.Mkdir(notes, 0o700); err != nil {
		t.Fatal(err)
	}
	ctl, err := control.Dial(control.SocketPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	// A question nobody answers ends the turn after 10 s, so that a rule
	// that failed to apply fails the test instead of hanging it.
	if _, err := ctl.SaveAgent(t.Context(), agent.Agent{Slug: "scribe", Model: ollamatest.DefaultModel, Enabled: true, Folders: []string{home},
		QuestionTimeout: 10 * time.Second, Tools: []agent.AgentTool{{Name: "write_file", NeedsApproval: true}}}); err != nil {
		t.Fatal(err)
	}
	token, _, err := deskhand(t, "--data", dir, "token", "create", "cli")
	if err != nil {
		t.Fatal(err)
	}
	c := mcpClient(t, srv.url, strings.TrimSpace(token))
	write := func(path string) (*mcp.CallToolResult, error) {
		var req mcp.CallToolRequest
		req.Params.Name = "scribe"
		req.Params.Arguments = map[string]any{"message": path}
		return c.CallTool(t.Context(), req)
	}
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	result := make(chan outcome, 1)
	go func() {
		res, err := write(filepath.Join(notes, "first.txt"))
		result <- outcome{res, err}
	}()
	// As in TestQuestionsFromTheCommandLine, a separate command line can
	// only poll "questions".
	idPattern := regexp.MustCompile(`(?m)^([0-9a-f-]{36})  approval from scribe`)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	var listing string
poll:
	for {
		if listing, _, err = deskhand(t, "--data", dir, "questions"); err != nil {
			t.Fatal(err)
		}
		if idPattern.MatchString(listing) {
			break
		}
		select {
		case <-tick.C:
		case <-deadline:
			break poll
		}
	}
	m := idPattern.FindStringSubmatch(listing)
	if m == nil {
		t.Fatalf("questions printed:\n%s", listing)
	}
	for _, args := range [][]string{
		{"answer", m[1], "deny", "--always"},
		{"answer", m[1], "approve", "--folder", notes},
	} {
		if _, _, err := deskhand(t, append([]string{"--data", dir}, args...)...); err == nil {
			t.Errorf("%v was accepted", args)
		}
	}
	if _, _, err := deskhand(t, "--data", dir, "answer", m[1], "approve", "--always", "--folder", notes); err != nil {
		t.Fatal(err)
	}
	if out := <-result; out.err != nil || out.res.IsError || !strings.HasPrefix(out.res.Content[0].(mcp.TextContent).Text, "result: Created") {
		t.Fatalf("first write: %+v, %v", out.res, out.err)
	}
	res, err := write(filepath.Join(notes, "second.txt"))
	if err != nil || res.IsError || !strings.HasPrefix(res.Content[0].(mcp.TextContent).Text, "result: Created") {
		t.Fatalf("second write, which the rule covers: %+v, %v", res, err)
	}

	list, _, err := deskhand(t, "--data", dir, "approvals", "list")
	if err != nil {
		t.Fatal(err)
	}
	rule := regexp.MustCompile(`(?m)^([0-9a-f-]{36})\s+scribe\s+write_file\s+any\s+` + regexp.QuoteMeta(notes) + `\s+any\s`).FindStringSubmatch(list)
	if rule == nil {
		t.Fatalf("approvals list printed:\n%s", list)
	}
	srv.stop(t)

	// The app stopped: the list comes from the store, and so does a revoke.
	if list, _, err = deskhand(t, "--data", dir, "approvals", "list"); err != nil || !strings.Contains(list, rule[1]) {
		t.Fatalf("approvals list without the app: %v\n%s", err, list)
	}
	if _, _, err := deskhand(t, "--data", dir, "approvals", "revoke", rule[1]); err != nil {
		t.Fatal(err)
	}
	if _, _, err := deskhand(t, "--data", dir, "approvals", "revoke", rule[1]); err == nil || !strings.Contains(agent.UserMessage(err), "no approval rule") {
		t.Errorf("revoking it again: %v", err)
	}
	if list, _, _ = deskhand(t, "--data", dir, "approvals", "list"); strings.Contains(list, rule[1]) {
		t.Errorf("the revoked rule is still listed:\n%s", list)
	}
}

// TestApprovalsToReviewFromTheCommandLine: a rule left off for review is
// listed as off, with why, and "approvals enable" turns it on.
func TestApprovalsToReviewFromTheCommandLine(t *testing.T) {
	dir := t.TempDir()
	if _, stderr, err := deskhand(t, "--data", dir, "agent", "add", "scribe", "--model", "m"); err != nil {
		t.Fatalf("agent add: %v %s", err, stderr)
	}
	db := storetest.OpenAt(t, filepath.Join(dir, store.FileName))
	agents, err := db.Agents(t.Context())
	if err != nil || len(agents) != 1 {
		t.Fatalf("agents %+v, %v", agents, err)
	}
	if err := db.PutApprovalRule(t.Context(), agent.ApprovalRule{ID: "old-rule", Agent: agents[0].ID, Tool: "write_file",
		CreatedAt: time.Now(), CreatedBy: agent.ByClient, Review: agent.ReviewUnpinned}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if list, _, _ := deskhand(t, "--data", dir, "approvals", "list"); !strings.Contains(list, "off, "+agent.ReviewUnpinned) {
		t.Errorf("approvals list:\n%s", list)
	}
	if _, stderr, err := deskhand(t, "--data", dir, "approvals", "enable", "old-rule"); err != nil || !strings.Contains(stderr, "Enabled old-rule") {
		t.Fatalf("approvals enable: %v %s", err, stderr)
	}
	if list, _, _ := deskhand(t, "--data", dir, "approvals", "list"); strings.Contains(list, "off, ") || !strings.Contains(list, " on") {
		t.Errorf("approvals list after enable:\n%s", list)
	}
}
