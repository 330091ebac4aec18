package mcpserver_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver"
)

func TestToolsListPagesOverManyAgents(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	ctx := t.Context()
	const n = 1500
	for i := range n {
		if _, err := h.core.Agents().Save(ctx, agent.Agent{Name: fmt.Sprintf("Agent %d", i), Slug: fmt.Sprintf("agent-%04d", i),
			Backend: agent.BackendOllama, Model: "m", Enabled: true}); err != nil {
			t.Fatal(err)
		}
	}
	token := h.token("pager")
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			c := connect(t, h.URL, era, token)
			var names []string
			var hash string
			var req mcp.ListToolsRequest
			pages := 0
			for {
				res, err := c.ListToolsByPage(t.Context(), req)
				if err != nil {
					t.Fatal(err)
				}
				pages++
				for _, tool := range res.Tools {
					names = append(names, tool.Name)
				}
				got, _ := res.Meta.AdditionalFields[mcpserver.CatalogMetaKey].(string)
				if got == "" || (hash != "" && got != hash) {
					t.Fatalf("page %d catalog hash %q, first page's %q", pages, got, hash)
				}
				hash = got
				if res.NextCursor == "" {
					break
				}
				req.Params.Cursor = res.NextCursor
			}
			if pages != 2 || len(names) != n+1 || !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != n+1 {
				t.Errorf("%d pages, %d names (sorted: %v); want 2 pages of every agent once, in order", pages, len(names), slices.IsSorted(names))
			}
		})
	}
}

// rawList sends tools/list as a 2026-07-28 client would, with extra headers.
func rawList(t *testing.T, url, token, cursor string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	params := map[string]any{"_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    mcp.ProtocolVersion20260728,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "0"},
	}}
	if cursor != "" {
		params["cursor"] = cursor
	}
	rawParams, _ := json.Marshal(params)
	body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":%s}`, rawParams)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range mcp.StandardHeaders(mcp.ProtocolVersion20260728, mcp.MethodToolsList, rawParams) {
		req.Header.Set(k, v)
	}
	req.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion20260728)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return send(t, req)
}

func TestToolsListETag(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	token := h.token("etag")
	resp, body := rawList(t, h.URL, token, "", nil)
	etag := resp.Header.Get("ETag")
	if resp.StatusCode != http.StatusOK || etag == "" || !strings.Contains(string(body), `"ttlMs":2000`) {
		t.Fatalf("tools/list: %d, ETag %q\n%s", resp.StatusCode, etag, body)
	}
	if resp, _ := rawList(t, h.URL, token, "", nil); resp.Header.Get("ETag") != etag {
		t.Errorf("ETag changed with nothing changed: %q then %q", etag, resp.Header.Get("ETag"))
	}
	if resp, body := rawList(t, h.URL, token, "", map[string]string{"If-None-Match": etag}); resp.StatusCode != http.StatusNotModified || len(body) != 0 {
		t.Errorf("If-None-Match with the current ETag: %d %s", resp.StatusCode, body)
	}

	// Disabling an agent, enabling it again and adding one each change it.
	seen := map[string]bool{etag: true}
	for _, change := range []func() error{
		func() error { return h.core.Agents().SetEnabled(t.Context(), "assistant", false) },
		func() error { return h.core.Agents().SetEnabled(t.Context(), "assistant", true) },
		func() error {
			_, err := h.core.Agents().Save(t.Context(), agent.Agent{Name: "New", Slug: "new", Backend: agent.BackendOllama, Model: "m", Enabled: true})
			return err
		},
	} {
		if err := change(); err != nil {
			t.Fatal(err)
		}
		resp, body := rawList(t, h.URL, token, "", map[string]string{"If-None-Match": etag})
		got := resp.Header.Get("ETag")
		if resp.StatusCode != http.StatusOK || got == "" || seen[got] {
			t.Errorf("after a change: %d, ETag %q (seen before: %v)\n%s", resp.StatusCode, got, seen[got], body)
		}
		seen[got] = true
	}
}

func TestToolsListRefusesForeignCursors(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	token := h.token("cursor")
	forged := []string{
		base64.StdEncoding.EncodeToString([]byte("assistant")), // mcp-go's own cursor
		"not base64!",
		base64.StdEncoding.EncodeToString(append([]byte{1, 9}, "assistant1234567890123456"...)),
	}
	for _, cursor := range forged {
		resp, body := rawList(t, h.URL, token, cursor, nil)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"code":-32602`) || !strings.Contains(string(body), "not one this server gave") {
			t.Errorf("cursor %q on 2026-07-28: %d %s", cursor, resp.StatusCode, body)
		}
	}
	c := connect(t, h.URL, mcp.ProtocolVersion20251125, token)
	var req mcp.ListToolsRequest
	req.Params.Cursor = mcp.Cursor(forged[0])
	if _, err := c.ListToolsByPage(t.Context(), req); err == nil || !strings.Contains(err.Error(), "not one this server gave") {
		t.Errorf("a forged cursor on 2025-11-25: %v", err)
	}
}

// TestStdioRefusesForeignCursors: without HTTP in front, mcp-go still
// refuses a cursor we did not give, and pages with ours.
func TestStdioRefusesForeignCursors(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	c := stdioClient(t, h)
	var req mcp.ListToolsRequest
	req.Params.Cursor = mcp.Cursor(base64.StdEncoding.EncodeToString([]byte("assistant")))
	if _, err := c.ListToolsByPage(t.Context(), req); err == nil {
		t.Error("a forged cursor was accepted over stdio")
	}
	res, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil || len(res.Tools) != 1 || res.Meta.AdditionalFields[mcpserver.CatalogMetaKey] == nil {
		t.Errorf("tools/list over stdio: %+v, %v", res, err)
	}
}

// stdioClient serves the harness over in-process stdio to a legacy-era
// mcp-go client, initialized; the test's end closes both.
func stdioClient(t *testing.T, h *harness) *client.Client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- h.srv.ServeStdio(t.Context(), agent.LocalPrincipal, inR, outW)
		outW.Close()
	}()
	c := client.NewClient(transport.NewIO(outR, inW, io.NopCloser(strings.NewReader(""))))
	t.Cleanup(func() {
		inW.Close()
		c.Close()
		<-done
	})
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	init.Params.ClientInfo = mcp.Implementation{Name: "stdio", Version: "0"}
	if _, err := c.Initialize(t.Context(), init); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestToolsListSplicesTheEncodedPage: over HTTP the page's tools are
// written as the catalog encoded them, in place of a placeholder; the
// tools a client gets are the ones stdio (encoded by mcp-go) gives, and no
// placeholder ever shows.
func TestToolsListSplicesTheEncodedPage(t *testing.T) {
	h := newHarness(t, mcpserver.GuardOptions{})
	if _, err := h.core.Agents().Save(t.Context(), agent.Agent{Name: "Odd <b>\"name\"</b> & ünïcode \u2028", Slug: "odd", Description: "Says <script>&amp; \"hi\"",
		Backend: agent.BackendOllama, Model: "m", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	want, err := stdioClient(t, h).ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil || len(want.Tools) != 2 {
		t.Fatalf("tools/list over stdio: %+v, %v", want, err)
	}

	token := h.token("splice")
	for _, era := range eras {
		got, err := connect(t, h.URL, era, token).ListTools(t.Context(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want.Tools, got.Tools); diff != "" {
			t.Errorf("%s: tools over HTTP differ from stdio's (-stdio +http):\n%s", era, diff)
		}
	}
	if _, body := rawList(t, h.URL, token, "", nil); bytes.Contains(body, []byte("io.deskhand.page-")) || !bytes.Contains(body, []byte(`"name":"odd"`)) {
		t.Errorf("raw tools/list:\n%s", body)
	}
}
