package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/ollama/ollama/api"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/server/servertest"
)

// filesystemServer installs the pinned @modelcontextprotocol/server-filesystem
// (server/toolservers/testdata) and returns the command that runs it on
// folder.
func filesystemServer(t *testing.T, folder string) (command string, args []string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs npm and a Node.js server; skipped with -short")
	}
	n, err := servertest.FindNodeJS()
	if err != nil {
		servertest.SkipOrFail(t, "%v", err)
	}
	if n.Major < 20 {
		servertest.SkipOrFail(t, "%s is Node.js %d; server-filesystem needs Node.js >= 20 (run make node22)", n.Node, n.Major)
	}
	dir, err := filepath.Abs(filepath.Join("server", "toolservers", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.InstallModules(dir); err != nil {
		t.Fatal(err)
	}
	return n.Node, []string{filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js"), folder}
}

// TestAgentUsesServerFilesystem is issue 19's acceptance: server-filesystem
// registered on a folder and attached to an agent, with "ask me first" on
// read_text_file; an MCP client's call makes the agent (a scripted fake
// model) list the folder and read the file through it, the approval is
// answered from the command line, and the file's content reaches the
// client. Denied, the model reads the denial and the file is not read.
func TestAgentUsesServerFilesystem(t *testing.T) {
	for _, tc := range []struct {
		answer string
		want   string
	}{
		{"approve", "the file says: the secret ingredient is basil"},
		{"deny", "the file says: The person denied this call; it was not run."},
	} {
		t.Run(tc.answer, func(t *testing.T) {
			folder, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			note := filepath.Join(folder, "notes.txt")
			if err := os.WriteFile(note, []byte("the secret ingredient is basil"), 0o600); err != nil {
				t.Fatal(err)
			}
			command, args := filesystemServer(t, folder)
			fake := ollamatest.NewServer(t, ollamatest.WithReplyFunc(func(req api.ChatRequest) ollamatest.Reply {
				var results []string
				for _, m := range req.Messages {
					if m.Role == "tool" {
						results = append(results, m.Content)
					}
				}
				switch len(results) {
				case 0:
					return ollamatest.Reply{ToolCalls: []api.ToolCall{ollamatest.ToolCall("call_list0001", "fs__list_directory", `{"path":"`+folder+`"}`)}}
				case 1:
					if !strings.Contains(results[0], "notes.txt") {
						return ollamatest.Reply{Content: "the listing lacks the file: " + results[0]}
					}
					return ollamatest.Reply{ToolCalls: []api.ToolCall{ollamatest.ToolCall("call_read0001", "fs__read_text_file", `{"path":"`+note+`"}`)}}
				}
				return ollamatest.Reply{Content: "the file says: " + results[1]}
			}))

			// Register the server and attach it on the running app, from the command line.
			srv := startServe(t, fake)
			dir := srv.dir
			for _, args := range [][]string{
				append([]string{"toolserver", "add", "fs", "--command", command, "--"}, args...),
				{"agent", "edit", "assistant", "--toolserver", "fs:list_directory,read_text_file", "--ask-first", "read_text_file"},
			} {
				if _, errOut, err := deskhandIn(t, "", append([]string{"--data", dir}, args...)...); err != nil {
					t.Fatalf("deskhand %v: %v\n%s", args, err, errOut)
				}
			}
			token, _, err := deskhand(t, "--data", dir, "token", "create", "e2e")
			if err != nil {
				t.Fatal(err)
			}
			c := mcpClient(t, srv.url, strings.TrimSpace(token))
			type outcome struct {
				res *mcp.CallToolResult
				err error
			}
			result := make(chan outcome, 1)
			go func() {
				var req mcp.CallToolRequest
				req.Params.Name = "assistant"
				req.Params.Arguments = map[string]any{"message": "What is in my notes?"}
				res, err := c.CallTool(t.Context(), req)
				result <- outcome{res, err}
			}()

			// The approval lives in the serving process: poll "questions".
			idPattern := regexp.MustCompile(`(?m)^([0-9a-f-]{36})  approval from assistant`)
			var listing string
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			deadline := time.After(60 * time.Second)
		poll:
			for !idPattern.MatchString(listing) {
				select {
				case out := <-result:
					t.Fatalf("the call ended before asking: %+v, %v", out.res, out.err)
				case <-tick.C:
				case <-deadline:
					break poll
				}
				if listing, _, err = deskhand(t, "--data", dir, "questions"); err != nil {
					t.Fatal(err)
				}
			}
			m := idPattern.FindStringSubmatch(listing)
			if m == nil {
				t.Fatalf("no approval asked; questions printed:\n%s", listing)
			}
			// The approval shows the server, the tool and the exact arguments.
			for _, want := range []string{`"read_text_file"`, "tool server fs", `{"path":"` + note + `"}`} {
				if !strings.Contains(listing, want) {
					t.Errorf("the approval lacks %q:\n%s", want, listing)
				}
			}
			if _, _, err := deskhand(t, "--data", dir, "answer", m[1], tc.answer); err != nil {
				t.Fatal(err)
			}
			var out outcome
			select {
			case out = <-result:
			case <-time.After(60 * time.Second):
				t.Fatal("the call did not end")
			}
			if out.err != nil {
				t.Fatal(out.err)
			}
			if got := out.res.Content[0].(mcp.TextContent).Text; out.res.IsError || !strings.Contains(got, tc.want) {
				t.Errorf("the client got %+v, want %q", out.res, tc.want)
			}
			srv.stop(t)
		})
	}
}
