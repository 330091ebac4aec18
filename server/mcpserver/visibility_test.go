package mcpserver_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver"
)

// visibilityHarness is a server with the agents researcher and scribe
// (each with a starter prompt) beside the default one, and the clients
// cursor and claude; cursor sees only researcher.
func visibilityHarness(t *testing.T) (h *harness, cursor, claude string) {
	t.Helper()
	h = newHarness(t, mcpserver.GuardOptions{})
	model := h.core.Agents().List()[0].Model // the default agent's, which the fake Ollama has
	for _, slug := range []string{"researcher", "scribe"} {
		if _, err := h.core.Agents().Save(t.Context(), agent.Agent{Name: slug, Slug: slug, Backend: agent.BackendOllama, Model: model,
			Enabled: true, StarterPrompts: []string{"Begin"}}); err != nil {
			t.Fatal(err)
		}
	}
	cursor, claude = h.token("cursor"), h.token("claude")
	if err := h.core.Clients().SetAgents(t.Context(), "cursor", false, []string{"researcher"}); err != nil {
		t.Fatal(err)
	}
	return h, cursor, claude
}

// TestVisibilityLists: with cursor limited to researcher, cursor's
// tools/list, resources/list and prompts/list hold researcher only, while
// claude still sees every agent, on both eras.
func TestVisibilityLists(t *testing.T) {
	h, cursorToken, claudeToken := visibilityHarness(t)
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			cursor, claude := connect(t, h.URL, era, cursorToken), connect(t, h.URL, era, claudeToken)
			if got := toolNames(t, cursor); !slices.Equal(got, []string{"researcher"}) {
				t.Errorf("cursor lists %v, want [researcher]", got)
			}
			all := toolNames(t, claude)
			for _, want := range []string{"researcher", "scribe"} {
				if !slices.Contains(all, want) {
					t.Errorf("claude lists %v, without %s", all, want)
				}
			}
			if len(all) < 3 {
				t.Errorf("claude lists %v, want the default agent too", all)
			}

			resources := func(c *client.Client) (uris []string) {
				res, err := c.ListResources(t.Context(), mcp.ListResourcesRequest{})
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range res.Resources {
					uris = append(uris, r.URI)
				}
				return uris
			}
			if got := resources(cursor); !slices.Equal(got, []string{"deskhand://agents/researcher"}) {
				t.Errorf("cursor's resources: %v", got)
			}
			if got := resources(claude); !slices.Contains(got, "deskhand://agents/scribe") {
				t.Errorf("claude's resources: %v, without scribe's", got)
			}
			prompts := func(c *client.Client) (names []string) {
				res, err := c.ListPrompts(t.Context(), mcp.ListPromptsRequest{})
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range res.Prompts {
					names = append(names, p.Name)
				}
				return names
			}
			if got := prompts(cursor); !slices.Equal(got, []string{"researcher.1"}) {
				t.Errorf("cursor's prompts: %v", got)
			}
			if got := prompts(claude); !slices.Contains(got, "scribe.1") {
				t.Errorf("claude's prompts: %v, without scribe.1", got)
			}
		})
	}
}

// rawAnswer posts body and returns the status, the content type and the
// JSON-RPC answer's bytes (the answer event's data on a stream).
func rawAnswer(t *testing.T, url, token, era, session, body string) (int, string, []byte) {
	t.Helper()
	return rawAnswerNamed(t, url, token, era, session, body, "")
}

// rawAnswerNamed is rawAnswer with this Mcp-Name on 2026-07-28 ("": the
// name or URI the body carries, decoded).
func rawAnswerNamed(t *testing.T, url, token, era, session, body, mcpName string) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", era)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	if era == mcp.ProtocolVersion20260728 {
		var msg struct {
			Method string
			Params struct{ Name, URI, TaskID string }
		}
		if err := json.Unmarshal([]byte(body), &msg); err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Mcp-Method", msg.Method)
		req.Header.Set("Mcp-Name", cmp.Or(mcpName, msg.Params.Name+msg.Params.URI+msg.Params.TaskID))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	ctype := resp.Header.Get("Content-Type")
	if !strings.HasPrefix(ctype, "text/event-stream") {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, ctype, b
	}
	events := readEvents(resp.Body)
	for {
		ev := next(t, events)
		if strings.Contains(ev.data, `"id":`) && (strings.Contains(ev.data, `"result"`) || strings.Contains(ev.data, `"error"`)) {
			return resp.StatusCode, ctype, []byte(ev.data)
		}
	}
}

// TestHiddenIsMissing: calling, reading or getting a hidden agent is
// answered with the very bytes of asking for one that does not exist
// (same-length names, swapped back), on both eras; claude, which sees
// all, calls scribe fine.
func TestHiddenIsMissing(t *testing.T) {
	h, cursorToken, claudeToken := visibilityHarness(t)
	requests := []struct {
		what            string
		hidden, unknown string // the hidden name and one no agent has, as long
		body            func(era, name string) string
	}{
		{"tools/call", "scribe", "zcribe", func(era, name string) string {
			return toolCall(era, 7, name, `{"message":"hi"}`, "")
		}},
		{"resources/read", "deskhand://agents/scribe", "deskhand://agents/zcribe", func(era, uri string) string {
			return rawRPC(era, "resources/read", fmt.Sprintf(`"uri":%q`, uri))
		}},
		{"prompts/get", "scribe.1", "zcribe.1", func(era, name string) string {
			return rawRPC(era, "prompts/get", fmt.Sprintf(`"name":%q`, name))
		}},
	}
	for _, era := range eras {
		session := ""
		if era == mcp.ProtocolVersion20251125 {
			session = legacySession(t, h.URL, cursorToken)
		}
		for _, req := range requests {
			t.Run(era+"/"+req.what, func(t *testing.T) {
				hs, hct, hidden := rawAnswer(t, h.URL, cursorToken, era, session, req.body(era, req.hidden))
				us, uct, unknown := rawAnswer(t, h.URL, cursorToken, era, session, req.body(era, req.unknown))
				unknown = bytes.ReplaceAll(unknown, []byte(req.unknown), []byte(req.hidden))
				if hs != us || hct != uct || !bytes.Equal(hidden, unknown) {
					t.Errorf("hidden: %d %s %s\nunknown: %d %s %s", hs, hct, hidden, us, uct, unknown)
				}
				if !bytes.Contains(hidden, []byte(`"error"`)) {
					t.Errorf("a hidden agent answered %s, want an error", hidden)
				}
			})
		}
		t.Run(era+"/claude", func(t *testing.T) {
			claude := connect(t, h.URL, era, claudeToken)
			res, err := claude.CallTool(t.Context(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "scribe", Arguments: map[string]any{"message": "hi"}}})
			if err != nil || res.IsError {
				t.Errorf("claude's call of scribe: %v %+v", err, res)
			}
		})
	}
}

// rawRPC is a raw request of the era with the params given (inside braces).
func rawRPC(era, method, params string) string {
	if era == mcp.ProtocolVersion20260728 {
		params += `,"_meta":{` + modernMeta + `}`
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":8,"method":%q,"params":{%s}}`, method, params)
}

// TestVisibilityListChanged: changing cursor's agents sends list_changed
// to cursor's sessions and listen streams only; claude hears nothing of
// it, as its next notification, that of a change every client hears,
// shows. Both eras.
func TestVisibilityListChanged(t *testing.T) {
	h, cursorToken, claudeToken := visibilityHarness(t)
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			cursor, cursorNotes := notified(t, h, era, cursorToken)
			_, claudeNotes := notified(t, h, era, claudeToken)

			if err := h.core.Clients().SetAgents(t.Context(), "cursor", false, []string{"researcher", "scribe"}); err != nil {
				t.Fatal(err)
			}
			if got := nextNote(t, cursorNotes); got != mcp.MethodNotificationToolsListChanged {
				t.Errorf("cursor first heard %s, want tools list_changed", got)
			}
			if got := toolNames(t, cursor); !slices.Equal(got, []string{"researcher", "scribe"}) {
				t.Errorf("cursor lists %v after the change", got)
			}

			// A new agent changes every client's list: claude's first
			// notification since must be of that change (mcp-go sends
			// resources' first), not a tools list_changed of cursor's.
			slug := "late" + strings.ReplaceAll(era, "-", "")
			if _, err := h.core.Agents().Save(t.Context(), agent.Agent{Name: slug, Slug: slug, Backend: agent.BackendOllama, Model: "m", Enabled: true}); err != nil {
				t.Fatal(err)
			}
			if got := nextNote(t, claudeNotes); got != mcp.MethodNotificationResourcesListChanged {
				t.Errorf("claude first heard %s, want the new agent's resources list_changed", got)
			}
			if err := h.core.Clients().SetAgents(t.Context(), "cursor", true, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// notified connects a client of the era that hears list_changed (on a GET
// stream, or a subscriptions/listen stream) and returns the methods of
// the list_changed notifications it hears, once its stream is open.
func notified(t *testing.T, h *harness, era, token string) (*client.Client, <-chan string) {
	t.Helper()
	notes, acked := make(chan string, 64), make(chan struct{}, 1)
	onNote := func(n mcp.JSONRPCNotification) {
		switch {
		case strings.HasSuffix(n.Method, "/list_changed"):
			notes <- n.Method
		case n.Method == mcp.MethodNotificationSubscriptionsAcknowledged:
			acked <- struct{}{}
		}
	}
	if era == mcp.ProtocolVersion20260728 {
		c := connect(t, h.URL, era, token)
		c.OnNotification(onNote)
		stop, err := c.ListenAsync(t.Context(), mcp.SubscriptionFilter{ToolsListChanged: true, ResourcesListChanged: true, PromptsListChanged: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
		select {
		case <-acked:
		case <-time.After(10 * time.Second):
			t.Fatal("the listen stream was not acknowledged within 10 s")
		}
		return c, notes
	}
	c := connectListening(t, h.URL, token)
	c.OnNotification(onNote)
	sid := c.GetTransport().GetSessionId()
	waitUntil(t, 10*time.Second, "the GET stream never opened", func() bool { return h.srv.Listening(sid) })
	return c, notes
}

func nextNote(t *testing.T, notes <-chan string) string {
	t.Helper()
	select {
	case n := <-notes:
		return n
	case <-time.After(10 * time.Second):
		t.Fatal("no notification within 10 s")
	}
	return ""
}

// TestVisibilityCatalogs: each visible set has its own catalog: its own
// hash and ETag, so a client limited to some agents never revalidates
// against the page of one that sees all, and the same page again is 304.
func TestVisibilityCatalogs(t *testing.T) {
	h, cursorToken, claudeToken := visibilityHarness(t)
	const era = mcp.ProtocolVersion20260728
	list := func(token, ifNoneMatch string) (status int, etag, hash string) {
		t.Helper()
		body := rawRPC(era, "tools/list", `"cursor":""`)
		body = strings.Replace(body, `"cursor":"",`, "", 1)
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, h.URL, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json",
			"Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": era, "Mcp-Method": "tools/list"} {
			req.Header.Set(k, v)
		}
		if ifNoneMatch != "" {
			req.Header.Set("If-None-Match", ifNoneMatch)
		}
		resp, raw := send(t, req)
		var res struct {
			Result struct {
				Meta map[string]any `json:"_meta"`
			} `json:"result"`
		}
		if resp.StatusCode == http.StatusOK {
			if err := json.Unmarshal(raw, &res); err != nil {
				t.Fatalf("tools/list: %v: %s", err, raw)
			}
		}
		h, _ := res.Result.Meta[mcpserver.CatalogMetaKey].(string)
		return resp.StatusCode, resp.Header.Get("ETag"), h
	}
	_, cursorTag, cursorHash := list(cursorToken, "")
	_, claudeTag, claudeHash := list(claudeToken, "")
	if cursorTag == "" || cursorTag == claudeTag || cursorHash == "" || cursorHash == claudeHash {
		t.Errorf("cursor's catalog (ETag %s, hash %s) is not its own (claude's: %s, %s)", cursorTag, cursorHash, claudeTag, claudeHash)
	}
	if status, _, _ := list(cursorToken, claudeTag); status != http.StatusOK {
		t.Errorf("cursor with claude's ETag: %d, want 200", status)
	}
	if status, _, _ := list(cursorToken, cursorTag); status != http.StatusNotModified {
		t.Errorf("cursor with its own ETag: %d, want 304", status)
	}
	if _, tag, hash := list(cursorToken, ""); tag != cursorTag || hash != cursorHash {
		t.Errorf("cursor's catalog changed between two lists: %s %s, then %s %s", cursorTag, cursorHash, tag, hash)
	}
}
