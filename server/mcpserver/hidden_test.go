package mcpserver_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// spelling is one way a client may write a name or URI: how the name it
// stands for is changed (decoded), how that is written in the body's
// JSON, and what the 2026-07-28 Mcp-Name header carries.
type spelling struct {
	what    string
	decoded func(name string) string
	literal func(decoded string) string
	header  func(decoded string) string
}

func same(s string) string { return s }

func quoted(s string) string { return fmt.Sprintf("%q", s) }

// escapedLetters writes every character as a JSON \u escape.
func escapedLetters(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	b.WriteByte('"')
	return b.String()
}

func base64Header(s string) string {
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

// percentEncoded writes every letter as %XX: a name no agent has, which
// must not be decoded into one.
func percentEncoded(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' {
			fmt.Fprintf(&b, "%%%02X", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

var spellings = []spelling{
	{"plain", same, quoted, same},
	{"escaped letters", same, escapedLetters, same},
	{"escaped slashes", same, func(s string) string { return strings.ReplaceAll(quoted(s), "/", `\/`) }, same},
	{"base64 Mcp-Name", same, quoted, base64Header},
	{"escaped letters, base64 Mcp-Name", same, escapedLetters, base64Header},
	{"percent-encoded", percentEncoded, quoted, same},
	{"upper case", strings.ToUpper, quoted, same},
	{"upper-case scheme and host", func(s string) string {
		i := strings.LastIndex(s, "/") + 1
		return strings.ToUpper(s[:i]) + s[i:]
	}, quoted, same},
}

// namings are the requests that name an agent, by its tool, resource or
// prompt: the hidden one's name, one no agent has of the same length, and
// the request's params around the name's JSON literal.
var namings = []struct {
	method          string
	hidden, unknown string
	params          func(literal string) string
}{
	{"tools/call", "scribe", "zcribe", func(l string) string { return `"name":` + l + `,"arguments":{"message":"hi"}` }},
	{"resources/read", "deskhand://agents/scribe", "deskhand://agents/zcribe", func(l string) string { return `"uri":` + l }},
	{"prompts/get", "scribe.1", "zcribe.1", func(l string) string { return `"name":` + l }},
}

// swapped is answer with every form of the unknown name replaced by the
// hidden one's: what the hidden name's answer must be, byte for byte.
func swapped(answer []byte, sp spelling, hidden, unknown string) []byte {
	for _, f := range []func(string) string{sp.decoded, func(s string) string { return sp.header(sp.decoded(s)) }} {
		answer = bytes.ReplaceAll(answer, []byte(f(unknown)), []byte(f(hidden)))
	}
	return answer
}

// TestHiddenIsMissingHoweverSpelled: a client limited to researcher that
// names scribe, however it spells the name (JSON escapes, a base64
// Mcp-Name, percent-encoding, upper case), gets the very bytes it gets
// for an agent that does not exist, on both eras over HTTP and over
// stdio, and never scribe's description or starter prompt.
func TestHiddenIsMissingHoweverSpelled(t *testing.T) {
	h, cursorToken, _ := visibilityHarness(t)
	for _, era := range eras {
		session := ""
		if era == mcp.ProtocolVersion20251125 {
			session = legacySession(t, h.URL, cursorToken)
		}
		for _, n := range namings {
			for _, sp := range spellings {
				t.Run(era+"/"+n.method+"/"+sp.what, func(t *testing.T) {
					ask := func(name string) (int, string, []byte) {
						d := sp.decoded(name)
						body := rawRPC(era, n.method, n.params(sp.literal(d)))
						return rawAnswerNamed(t, h.URL, cursorToken, era, session, body, sp.header(d))
					}
					hs, hct, hidden := ask(n.hidden)
					us, uct, unknown := ask(n.unknown)
					unknown = swapped(unknown, sp, n.hidden, n.unknown)
					if hs != us || hct != uct || !bytes.Equal(hidden, unknown) {
						t.Errorf("hidden: %d %s %s\nunknown: %d %s %s", hs, hct, hidden, us, uct, unknown)
					}
					if bytes.Contains(hidden, []byte("Call the tool")) || bytes.Contains(hidden, []byte("Begin")) || !bytes.Contains(hidden, []byte(`"error"`)) {
						t.Errorf("a hidden agent answered %s", hidden)
					}
				})
			}
		}
	}

	var cursorID string
	for _, c := range h.core.Clients().List() {
		if c.Name == "cursor" {
			cursorID = c.ID
		}
	}
	ask := stdioAs(t, h, cursorID)
	for _, n := range namings {
		for _, sp := range spellings {
			t.Run("stdio/"+n.method+"/"+sp.what, func(t *testing.T) {
				hidden := ask(rawRPC(mcp.ProtocolVersion20251125, n.method, n.params(sp.literal(sp.decoded(n.hidden)))))
				unknown := ask(rawRPC(mcp.ProtocolVersion20251125, n.method, n.params(sp.literal(sp.decoded(n.unknown)))))
				unknown = swapped(unknown, sp, n.hidden, n.unknown)
				if !bytes.Equal(hidden, unknown) || !bytes.Contains(hidden, []byte(`"error"`)) {
					t.Errorf("hidden: %s\nunknown: %s", hidden, unknown)
				}
			})
		}
	}
	t.Run("stdio/researcher", func(t *testing.T) {
		got := ask(rawRPC(mcp.ProtocolVersion20251125, "resources/read", `"uri":"deskhand:\/\/agents\/researcher"`))
		if !bytes.Contains(got, []byte("Call the tool `researcher`")) {
			t.Errorf("cursor's own agent over stdio: %s", got)
		}
	})
}

// stdioAs serves the harness over in-process stdio as principal, to a raw
// client already initialized; ask sends one request line (id 8) and
// returns its answer's line.
func stdioAs(t *testing.T, h *harness, principal string) (ask func(line string) []byte) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- h.srv.ServeStdio(t.Context(), principal, inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
		<-done
	})
	lines := bufio.NewReader(outR)
	exchange := func(line, id string) []byte {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
		for {
			got, err := lines.ReadBytes('\n')
			if err != nil {
				t.Fatalf("stdio ended: %v", err)
			}
			if bytes.Contains(got, []byte(`"id":`+id+`,`)) {
				return got
			}
		}
	}
	exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`, "1")
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	return func(line string) []byte { return exchange(line, "8") }
}

// TestHiddenAgentsTasksAreUnknown: a task that cursor started on scribe
// while it saw scribe answers tasks/get, tasks/update and tasks/cancel
// exactly as a task that does not exist once scribe is hidden from it.
func TestHiddenAgentsTasksAreUnknown(t *testing.T) {
	h, cursorToken, _ := visibilityHarness(t)
	if err := h.core.Clients().SetAgents(t.Context(), "cursor", true, nil); err != nil {
		t.Fatal(err)
	}
	_, created := rpc(t, h.URL, cursorToken, "tools/call", "scribe", map[string]any{"name": "scribe",
		"arguments": map[string]any{"message": "hello"}}, withTasks)
	id, _ := resultOf(t, created)["taskId"].(string)
	pollTask(t, h.URL, cursorToken, id, "completed")
	if err := h.core.Clients().SetAgents(t.Context(), "cursor", false, []string{"researcher"}); err != nil {
		t.Fatal(err)
	}
	unknownID := strings.Repeat("Z", len(id))
	meta := `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` +
		`{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"}}`
	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		t.Run(method, func(t *testing.T) {
			body := func(id string) string {
				params := fmt.Sprintf(`"taskId":%q`, id)
				if method == "tasks/update" {
					params += `,"inputResponses":{"q":{"action":"accept","content":{"answer":"x"}}}`
				}
				return fmt.Sprintf(`{"jsonrpc":"2.0","id":8,"method":%q,"params":{%s%s}}`, method, params, meta)
			}
			hs, hct, hidden := rawAnswer(t, h.URL, cursorToken, mcp.ProtocolVersion20260728, "", body(id))
			us, uct, unknown := rawAnswer(t, h.URL, cursorToken, mcp.ProtocolVersion20260728, "", body(unknownID))
			unknown = bytes.ReplaceAll(unknown, []byte(unknownID), []byte(id))
			if hs != us || hct != uct || !bytes.Equal(hidden, unknown) {
				t.Errorf("hidden agent's task: %d %s %s\nunknown task: %d %s %s", hs, hct, hidden, us, uct, unknown)
			}
		})
	}
	if err := h.core.Clients().SetAgents(t.Context(), "cursor", true, nil); err != nil {
		t.Fatal(err)
	}
	if got := pollTask(t, h.URL, cursorToken, id, "completed"); got["result"] == nil {
		t.Errorf("the task once scribe is visible again: %v", got)
	}
}
