package mcpserver_test

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver"
)

// activityFollower collects the rows the core records, as they happen.
type activityFollower struct {
	mu   sync.Mutex
	rows []agent.ActivityRow
	more chan struct{} // signalled at each row
}

func followActivity(t *testing.T, core *agent.Core) *activityFollower {
	f := &activityFollower{more: make(chan struct{}, 1)}
	events := core.Events().Subscribe(t.Context(), agent.EventActivity)
	go func() {
		for e := range events {
			f.mu.Lock()
			f.rows = append(f.rows, *e.Activity)
			f.mu.Unlock()
			select {
			case f.more <- struct{}{}:
			default:
			}
		}
	}()
	return f
}

// waitFor waits until n rows match, and returns them.
func (f *activityFollower) waitFor(t *testing.T, n int, match func(agent.ActivityRow) bool) []agent.ActivityRow {
	t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		f.mu.Lock()
		var got []agent.ActivityRow
		for _, r := range f.rows {
			if match(r) {
				got = append(got, r)
			}
		}
		f.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-f.more:
		case <-deadline.C:
			t.Fatalf("%d matching activity rows, want %d", len(got), n)
		}
	}
}

func TestActivityRecordsGuardRefusalsWithoutTheToken(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			h := newHarness(t, mcpserver.GuardOptions{})
			f := followActivity(t, h.core)
			token := h.token("alice")
			clients, err := h.core.Clients().List(), error(nil)
			if err != nil || len(clients) != 1 {
				t.Fatalf("clients: %v, %v", clients, err)
			}
			const badToken = "not-a-token-but-a-secret-Zq7"
			for _, tc := range []struct {
				name       string
				host, auth string
				origin     string
				wantStatus int
				want       agent.ActivityRow
			}{
				{"bad Host", "evil.example", "Bearer " + token, "", http.StatusForbidden,
					agent.ActivityRow{Outcome: agent.OutcomeRefused, Reason: "bad Host"}},
				{"bad Origin", "", "Bearer " + token, "https://evil.example", http.StatusForbidden,
					agent.ActivityRow{Outcome: agent.OutcomeRefused, Reason: "bad Origin"}},
				{"missing token", "", "", "", http.StatusUnauthorized,
					agent.ActivityRow{Outcome: agent.OutcomeRefused, Reason: "missing token"}},
				{"bad token", "", "Bearer " + badToken, "", http.StatusUnauthorized,
					agent.ActivityRow{Outcome: agent.OutcomeRefused, Reason: "bad token"}},
				{"good token", "", "Bearer " + token, "", http.StatusOK,
					agent.ActivityRow{Outcome: agent.OutcomeOK, Client: clients[0].ID}},
			} {
				req := rawRequest(t, h.URL, era)
				if tc.host != "" {
					req.Host = tc.host
				}
				if tc.auth != "" {
					req.Header.Set("Authorization", tc.auth)
				}
				if tc.origin != "" {
					req.Header.Set("Origin", tc.origin)
				}
				seq := len(f.waitFor(t, 0, func(agent.ActivityRow) bool { return true }))
				if resp, _ := send(t, req); resp.StatusCode != tc.wantStatus {
					t.Fatalf("%s: status %d, want %d", tc.name, resp.StatusCode, tc.wantStatus)
				}
				rows := f.waitFor(t, seq+1, func(agent.ActivityRow) bool { return true })
				got := rows[len(rows)-1]
				wantEra := era
				if era == mcp.ProtocolVersion20251125 && tc.wantStatus != http.StatusOK {
					wantEra = "" // in the initialize's body, which a refusal does not read
				}
				if got.Outcome != tc.want.Outcome || got.Reason != tc.want.Reason || got.Client != tc.want.Client || got.Era != wantEra {
					t.Errorf("%s: row %+v, want outcome %q, reason %q, client %q, era %q", tc.name, got, tc.want.Outcome, tc.want.Reason, tc.want.Client, wantEra)
				}
				if got.BytesIn == 0 && tc.wantStatus == http.StatusOK || got.BytesOut == 0 {
					t.Errorf("%s: bytes in %d, out %d: not counted", tc.name, got.BytesIn, got.BytesOut)
				}
			}
			rows, err := h.core.Activity().List(t.Context(), agent.ActivityFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 5 {
				t.Errorf("%d rows in the log, want 5: %+v", len(rows), rows)
			}
			for _, r := range rows {
				if s := fmt.Sprintf("%+v", r); bytes.Contains([]byte(s), []byte(token)) || bytes.Contains([]byte(s), []byte(badToken)) {
					t.Errorf("a row holds a token: %s", s)
				}
			}
			// Nor does the database file, once written.
			h.stop()
			files, _ := filepath.Glob(h.dbPath + "*")
			for _, name := range files {
				data, err := os.ReadFile(name)
				if err != nil {
					t.Fatal(err)
				}
				if bytes.Contains(data, []byte(badToken)) || bytes.Contains(data, []byte(token)) {
					t.Errorf("%s holds a token", name)
				}
			}
		})
	}
}

// Every call of many concurrent clients is one row: none lost, none twice.
func TestActivityOneRowPerCall(t *testing.T) {
	const clients, calls = 50, 4
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			h := newHarness(t, mcpserver.GuardOptions{})
			f := followActivity(t, h.core)
			token := h.token("load")
			cs := make([]*client.Client, clients)
			for i := range cs {
				cs[i] = connect(t, h.URL, era, token)
			}
			var wg sync.WaitGroup
			errs := make(chan error, clients*calls)
			for _, c := range cs {
				wg.Go(func() {
					for j := range calls {
						res, err := tryCall(t.Context(), c, "assistant", map[string]any{"message": fmt.Sprint("hello ", j)}, nil)
						if err == nil && res.IsError {
							err = fmt.Errorf("tool error: %v", texts(res))
						}
						if err != nil {
							errs <- err
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			isCall := func(r agent.ActivityRow) bool { return r.Method == string(mcp.MethodToolsCall) }
			f.waitFor(t, clients*calls, isCall)
			rows, err := h.core.Activity().List(t.Context(), agent.ActivityFilter{Agent: "assistant", Limit: 10_000})
			if err != nil {
				t.Fatal(err)
			}
			convs := make(map[string]bool)
			var n int
			for _, r := range rows {
				if !isCall(r) {
					continue
				}
				n++
				if r.Outcome != agent.OutcomeOK || r.Conversation == "" || r.Era != era {
					t.Errorf("row %+v: want ok, a conversation, era %s", r, era)
				}
				convs[r.Conversation] = true
			}
			if n != clients*calls {
				t.Errorf("%d tools/call rows, want %d", n, clients*calls)
			}
			// Legacy sessions continue their conversation; modern calls
			// start one each.
			if len(convs) < clients {
				t.Errorf("the rows name %d conversations, want at least %d", len(convs), clients)
			}
		})
	}
}

// A call of an unknown tool is logged as it ended, with mcp-go's answer.
func TestActivityOutcomes(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			h := newHarness(t, mcpserver.GuardOptions{})
			f := followActivity(t, h.core)
			c := connect(t, h.URL, era, h.token("alice"))
			if _, err := tryCall(t.Context(), c, "no-such-agent", map[string]any{"message": "hi"}, nil); err == nil {
				t.Log("an unknown tool answered without a protocol error")
			}
			res := call(t, c, "assistant", map[string]any{"message": "hi", "conversation": "not-a-handle"}, nil)
			if !res.IsError {
				t.Fatalf("an unknown handle succeeded: %v", texts(res))
			}
			rows := f.waitFor(t, 2, func(r agent.ActivityRow) bool { return r.Method == string(mcp.MethodToolsCall) })
			if rows[0].Outcome == agent.OutcomeOK || rows[0].Agent != "" {
				t.Errorf("unknown tool: row %+v, want an error and no agent", rows[0])
			}
			if rows[1].Outcome != agent.OutcomeToolError || rows[1].Agent != "assistant" || rows[1].Text == "" {
				t.Errorf("tool error: row %+v, want a tool error of assistant with its text", rows[1])
			}
		})
	}
}

// A call's arguments are kept only for an agent that logs them, and what
// looks like a secret never is.
func TestActivityKeepsArgumentsOnlyWhenAsked(t *testing.T) {
	const secret = "sk-ant-api03-abcdefghijklmnopqrstuv"
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			h := newHarness(t, mcpserver.GuardOptions{})
			f := followActivity(t, h.core)
			c := connect(t, h.URL, era, h.token("alice"))
			isCall := func(r agent.ActivityRow) bool { return r.Method == string(mcp.MethodToolsCall) }
			call(t, c, "assistant", map[string]any{"message": "first, my key is " + secret}, nil)
			a, ok := h.core.Agents().BySlug("assistant")
			if !ok {
				t.Fatal("no assistant")
			}
			a.LogArguments = true
			if _, err := h.core.Agents().Save(t.Context(), a); err != nil {
				t.Fatal(err)
			}
			call(t, c, "assistant", map[string]any{"message": "second, my key is " + secret}, nil)
			rows := f.waitFor(t, 2, isCall)
			if rows[0].Arguments != "" {
				t.Errorf("arguments kept while the agent does not log them: %q", rows[0].Arguments)
			}
			if !strings.Contains(rows[1].Arguments, `"message":"second, my key is [redacted]"`) {
				t.Errorf("arguments = %q, want the message with the key redacted", rows[1].Arguments)
			}
			stored, err := h.core.Activity().List(t.Context(), agent.ActivityFilter{Agent: "assistant"})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range stored {
				if strings.Contains(r.Arguments+r.Text, secret) {
					t.Errorf("the key reached the stored log: %+v", r)
				}
			}
		})
	}
}

// Over stdio every request is a row of the local principal, with its
// agent, conversation and outcome.
func TestActivityOverStdio(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	f := followActivity(t, h.core)
	c := stdioClient(t, h)
	call(t, c, "assistant", map[string]any{"message": "hi"}, nil)
	res := call(t, c, "assistant", map[string]any{"message": "hi", "conversation": "not-a-handle"}, nil)
	if !res.IsError {
		t.Fatalf("an unknown handle succeeded: %v", texts(res))
	}
	if _, err := c.ListTools(t.Context(), mcp.ListToolsRequest{}); err != nil {
		t.Fatal(err)
	}
	// A row is recorded once its answer is written: the client may read
	// the answer first.
	calls := f.waitFor(t, 4, func(r agent.ActivityRow) bool {
		return r.Client == agent.LocalPrincipal && r.Method != string(mcp.MethodNotificationInitialized)
	})
	want := []struct {
		method  string
		outcome agent.ActivityOutcome
	}{
		{string(mcp.MethodInitialize), agent.OutcomeOK},
		{string(mcp.MethodToolsCall), agent.OutcomeOK},
		{string(mcp.MethodToolsCall), agent.OutcomeToolError},
		{string(mcp.MethodToolsList), agent.OutcomeOK},
	}
	if len(calls) != len(want) {
		t.Fatalf("rows = %+v, want %d requests", calls, len(want))
	}
	for i, w := range want {
		r := calls[i]
		if r.Method != w.method || r.Outcome != w.outcome || r.Era != mcp.ProtocolVersion20251125 || r.BytesIn == 0 || r.BytesOut == 0 {
			t.Errorf("row %d = %+v, want %s %s of era 2025-11-25 with bytes", i, r, w.method, w.outcome)
		}
	}
	if calls[1].Agent != "assistant" || calls[1].Conversation == "" || calls[2].Text == "" {
		t.Errorf("calls = %+v, want the agent, the conversation of the first, the error of the second", calls[1:3])
	}
}

// Reading an agent's description is a row of that agent.
func TestActivityNamesTheAgentOfAResource(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			h := newHarness(t, mcpserver.GuardOptions{})
			f := followActivity(t, h.core)
			c := connect(t, h.URL, era, h.token("alice"))
			var req mcp.ReadResourceRequest
			req.Params.URI = mcpserver.AgentResourcePrefix + "assistant"
			if _, err := c.ReadResource(t.Context(), req); err != nil {
				t.Fatal(err)
			}
			rows := f.waitFor(t, 1, func(r agent.ActivityRow) bool { return r.Method == string(mcp.MethodResourcesRead) })
			if rows[0].Agent != "assistant" || rows[0].Outcome != agent.OutcomeOK {
				t.Errorf("row %+v, want the assistant's read", rows[0])
			}
		})
	}
}

// A call made while serving is paused is a tool error of the agent it
// was for.
func TestActivityNamesThePausedAgent(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	f := followActivity(t, h.core)
	c := connect(t, h.URL, mcp.ProtocolVersion20260728, h.token("alice"))
	h.core.Settings().SetPaused(true)
	if res := call(t, c, "assistant", map[string]any{"message": "hi"}, nil); !res.IsError {
		t.Fatalf("a paused call succeeded: %v", texts(res))
	}
	rows := f.waitFor(t, 1, func(r agent.ActivityRow) bool { return r.Method == string(mcp.MethodToolsCall) })
	if rows[0].Agent != "assistant" || rows[0].Outcome != agent.OutcomeToolError || !strings.Contains(rows[0].Text, "paused") {
		t.Errorf("row %+v, want the assistant's tool error saying it is paused", rows[0])
	}
}
