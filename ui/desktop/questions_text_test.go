package desktop

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/agent"
)

func TestApprovalAction(t *testing.T) {
	long := strings.Repeat("line\n", 40)
	cases := []struct {
		name, tool, args, want string
	}{
		{"no arguments", "clock", ``, "Tool: clock\nNo arguments."},
		{"empty object", "clock", `{}`, "Tool: clock\nNo arguments."},
		{"a path", "read_file", `{"path":"notes/todo.txt"}`, "Tool: read_file\nFile: notes/todo.txt"},
		{"a URL", "fetch_url", `{"url":"https://example.com/a"}`, "Tool: fetch_url\nWeb address: https://example.com/a"},
		{"short content", "write_file", `{"path":"a.txt","content":"hello\nworld\n"}`,
			"Tool: write_file\nFile: a.txt\nContent:\nhello\nworld"},
		{"long content", "write_file", `{"path":"a.txt","content":` + quote(long) + `}`,
			"Tool: write_file\nFile: a.txt\nContent (40 lines, 200 bytes), first lines:\nline\nline\nline\nline\nline\nline …"},
		{"other keys, sorted, long values cut", "search", `{"query":"` + strings.Repeat("x", 150) + `","limit":5,"deep":{"a":true}}`,
			"Tool: search\ndeep: {\"a\":true}\nlimit: 5\nquery: " + strings.Repeat("x", 99) + "…"},
		{"not JSON", "odd", `not json`, "Tool: odd\nArguments: not json"},
		{"a tool server's tool", "fs__read_text_file", `{"path":"/notes/a.txt"}`, "Tool: read_text_file, of your tool server fs\nFile: /notes/a.txt"},
	}
	for _, c := range cases {
		if got := approvalAction(c.tool, json.RawMessage(c.args)); got != c.want {
			t.Errorf("%s:\ngot  %q\nwant %q", c.name, got, c.want)
		}
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestByteSize(t *testing.T) {
	for n, want := range map[int]string{1: "1 byte", 200: "200 bytes", 2048: "2.0 KB", 3 << 20: "3.0 MB"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestTimeoutNote(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	q := agent.Question{Agent: "assistant", Kind: agent.KindQuestion, ExpiresAt: now.Add(4*time.Minute + 32*time.Second)}
	approval := agent.Question{Agent: "scribe", Kind: agent.KindApproval, Tool: "write_file", ExpiresAt: now.Add(90 * time.Minute)}
	cases := []struct{ got, want string }{
		{timeoutNote(q, "Claude Desktop", now), "If nobody answers within 4:32, assistant stops and Claude Desktop is told that nobody answered."},
		{timeoutNote(q, "this computer", now), "If nobody answers within 4:32, assistant stops and you are told that nobody answered."},
		{timeoutNote(q, "Claude Desktop", now.Add(time.Hour)), "Time is up: nobody answered, so assistant stops and Claude Desktop is told that nobody answered."},
		{timeoutNote(approval, "Cursor", now), "If nobody answers within 1:30:00, write_file is not run, scribe stops, and Cursor is told that nobody answered."},
		{clock(59 * time.Second), "0:59"},
		{clock(-time.Second), "0:00"},
		{clock(10*time.Minute + 1400*time.Millisecond), "10:01"},
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("case %d:\ngot  %q\nwant %q", i, c.got, c.want)
		}
	}
}

func TestAskedWho(t *testing.T) {
	q := agent.Question{Kind: agent.KindQuestion, Principal: "client-1", ClientAsked: true}
	approval := agent.Question{Kind: agent.KindApproval, Principal: "client-1", ClientAsked: true}
	notAsked := agent.Question{Kind: agent.KindQuestion, Principal: "client-1"}
	approvalNotAsked := agent.Question{Kind: agent.KindApproval, Principal: "client-1"}
	local := agent.Question{Kind: agent.KindQuestion, Principal: agent.LocalPrincipal}
	both := "Cursor may ask its user too: the first answer counts."
	cases := []struct {
		q     agent.Question
		a     agent.Agent
		found bool
		want  string
	}{
		{q, agent.Agent{Routing: agent.RouteClient}, true, both},
		{q, agent.Agent{}, false, both},
		{q, agent.Agent{Routing: agent.RouteDesktop}, true, "Only you are asked, here."},
		{approval, agent.Agent{Routing: agent.RouteClient}, true, "Only you can approve this, here."},
		{approval, agent.Agent{Routing: agent.RouteClient, ClientMayApprove: true}, true, both},
		{local, agent.Agent{}, true, "Only you are asked, here."},
		// A client that declared no elicitation is not asked.
		{notAsked, agent.Agent{Routing: agent.RouteClient}, true, "Only you are asked, here: Cursor cannot ask its user."},
		{approvalNotAsked, agent.Agent{Routing: agent.RouteClient, ClientMayApprove: true}, true, "Only you are asked, here: Cursor cannot ask its user."},
	}
	for i, c := range cases {
		if got := askedWho(c.q, c.a, c.found, "Cursor"); got != c.want {
			t.Errorf("case %d: got %q, want %q", i, got, c.want)
		}
	}
}

func TestLastExchange(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	msg := func(role agent.Role, text string, min int) agent.Message {
		return agent.Message{Role: role, Content: text, CreatedAt: t0.Add(time.Duration(min) * time.Minute)}
	}
	history := []agent.Message{
		msg(agent.RoleUser, "first question", 0),
		msg(agent.RoleAssistant, "first reply", 1),
		msg(agent.RoleUser, "plan my week\nwith\nmany\nlines", 2),
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{Name: "ask_user"}}, CreatedAt: t0.Add(3 * time.Minute)},
		msg(agent.RoleTool, "tool output", 3),
		msg(agent.RoleUser, "after the question", 9),
	}
	cases := []struct {
		name  string
		msgs  []agent.Message
		asked time.Time
		want  string
	}{
		{"nothing", nil, t0, ""},
		{"the reply before, then the message of the asking turn, cut to three lines",
			history, t0.Add(5 * time.Minute), "assistant: first reply\nCursor: plan my week\nwith\nmany …"},
		{"the message and its reply", history[:2], t0.Add(5 * time.Minute), "Cursor: first question\nassistant: first reply"},
		{"only a message", history[:1], time.Time{}, "Cursor: first question"},
	}
	for _, c := range cases {
		if got := lastExchange(c.msgs, c.asked, "assistant", "Cursor"); got != c.want {
			t.Errorf("%s:\ngot  %q\nwant %q", c.name, got, c.want)
		}
	}
}

func TestAnswerTextAndClip(t *testing.T) {
	cases := []struct{ got, want string }{
		{answerText("Ada\n"), "Ada"},
		{answerText("  two\nlines \n\n"), "two\nlines"},
		{clip("short", 3, 10), "short"},
		{clip("abcdefghijkl", 1, 5), "abcd…"},
		{clip("a\nb\nc", 2, 5), "a\nb …"},
		{clip("é€€€€€", 1, 3), "é€…"},
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("case %d: got %q, want %q", i, c.got, c.want)
		}
	}
}

func TestQuestionsWaiting(t *testing.T) {
	ask := agent.Question{Agent: "assistant", Kind: agent.KindQuestion}
	approve := agent.Question{Agent: "scribe", Kind: agent.KindApproval, Tool: "write_file"}
	cases := []struct {
		qs   []agent.Question
		n    int
		want string
	}{
		{nil, 0, ""},
		{[]agent.Question{ask}, 1, "assistant is waiting for your answer."},
		{[]agent.Question{approve}, 1, "scribe is waiting for your approval to run write_file."},
		{[]agent.Question{ask, approve, ask}, 3, "3 questions waiting, from assistant, scribe."},
	}
	for i, c := range cases {
		if n, got := questionsWaiting(c.qs); n != c.n || got != c.want {
			t.Errorf("case %d: got %d %q, want %d %q", i, n, got, c.n, c.want)
		}
	}
}

func TestPopupTitleAndKeys(t *testing.T) {
	cases := []struct{ got, want string }{
		{popupTitle(agent.Question{Agent: "assistant", Kind: agent.KindQuestion}), "Deskhand: assistant asks"},
		{popupTitle(agent.Question{Agent: "scribe", Kind: agent.KindApproval, Tool: "write_file"}), "Deskhand: scribe asks to run write_file"},
		{keysHint(agent.Question{}), "Enter sends. Shift+Enter starts a new line."},
		{keysHint(agent.Question{Choices: []string{"a"}}), "Press 1 to choose."},
		{keysHint(agent.Question{Choices: []string{"a", "b", "c"}}), "Press 1–3 to choose."},
		{keysHint(agent.Question{Choices: make([]string, 12)}), "Press 1–9 for the first nine choices."},
		{keysHint(agent.Question{Kind: agent.KindApproval}), "Ctrl+Enter approves. Enter in the comment starts a new line."},
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("case %d: got %q, want %q", i, c.got, c.want)
		}
	}
}
