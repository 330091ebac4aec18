package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/server/mcpserver/mcpfill"
)

// DefaultPageSize is how many tools one tools/list page holds.
const DefaultPageSize = 1000

// CatalogMetaKey names the catalog's hash in a tools/list result's _meta.
const CatalogMetaKey = "io.deskhand/catalog"

// CatalogTTLMs is the cache hint (ttlMs) on tools/list: how long a client
// may keep the list without asking again; list_changed says sooner.
const CatalogTTLMs = 2000

// errForeignCursor answers a cursor this server did not give.
var errForeignCursor = errors.New("the cursor is not one this server gave (or the server restarted since): list again without a cursor")

// catalog is the tool list as served: every tool, in name order, a hash
// of the whole list, and the revision of the agents it reflects, which
// moves with any edit (a tool taken off the list and put back included).
type catalog struct {
	tools []mcp.Tool
	// encoded holds each tool as JSON, so that a page is served without
	// encoding it again (a thousand tools take milliseconds to encode).
	encoded  [][]byte
	hash     string
	revision uint64
	// pages keeps the pages served, encoded and joined, by their bounds:
	// those that start at a multiple of the page size, so at most one per
	// page (a cursor of an earlier catalog can start anywhere).
	pages sync.Map // [2]int → []byte
}

func newCatalog(tools []mcp.Tool, revision uint64) *catalog {
	tools = slices.Clone(tools)
	slices.SortFunc(tools, func(a, b mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	encoded := make([][]byte, len(tools))
	h := sha256.New()
	for i, t := range tools {
		encoded[i], _ = json.Marshal(t) // a tool that cannot marshal fails tools/list anyway
		h.Write(encoded[i])
		h.Write([]byte{0})
	}
	return &catalog{tools: tools, encoded: encoded, hash: hex.EncodeToString(h.Sum(nil)[:16]), revision: revision}
}

// page returns the tools after the cursor's last name (as the index of
// the first and past the last), and the cursor of the next page when
// more follow.
func (c *catalog) page(after string, size int, cursors *mcpfill.Cursors) (start, end int, next mcp.Cursor) {
	start = sort.Search(len(c.tools), func(i int) bool { return c.tools[i].Name > after })
	end = min(start+size, len(c.tools))
	if end < len(c.tools) {
		next = mcp.Cursor(cursors.Encode(c.tools[end-1].Name))
	}
	return start, end, next
}

// pageJSON is the tools from start to end, encoded and joined by commas.
func (c *catalog) pageJSON(start, end, size int) []byte {
	key := [2]int{start, end}
	if b, ok := c.pages.Load(key); ok {
		return b.([]byte)
	}
	b := bytes.Join(c.encoded[start:end], []byte{','})
	if start%size == 0 {
		c.pages.Store(key, b)
	}
	return b
}

// etag names one page of one catalog, for HTTP caching.
func (c *catalog) etag(cursor string, size int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%d\x00%s\x00%s\x00%d", c.revision, c.hash, cursor, size))
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}

func (s *Server) pageSize() int {
	if s.opts.PageSize > 0 {
		return s.opts.PageSize
	}
	return DefaultPageSize
}

// beforeListTools turns a foreign cursor into one mcp-go refuses with
// -32602: a hook cannot answer an error itself. HTTP clients get a
// clearer message from listTools first.
func (s *Server) beforeListTools(_ context.Context, _ any, req *mcp.ListToolsRequest) {
	if _, ok := s.cursors.Decode(string(req.Params.Cursor)); !ok {
		req.Params.Cursor = "!" + mcp.Cursor(errForeignCursor.Error())
	}
}

// afterListTools serves the page from our catalog, with its hash. Over
// HTTP, the page's tools are left to the splice (already encoded); mcp-go
// encodes the rest of the answer.
func (s *Server) afterListTools(ctx context.Context, _ any, req *mcp.ListToolsRequest, res *mcp.ListToolsResult) {
	cat := s.catalogFor(ctx)
	after, _ := s.cursors.Decode(string(req.Params.Cursor))
	var start, end int
	size := s.pageSize()
	start, end, res.NextCursor = cat.page(after, size, s.cursors)
	if sp, ok := ctx.Value(toolSpliceKey{}).(*toolSplice); ok {
		sp.tools = cat.pageJSON(start, end, size)
		res.Tools = placeholderPage[:1:1]
	} else {
		res.Tools = append([]mcp.Tool{}, cat.tools[start:end]...)
	}
	if res.Meta == nil {
		res.Meta = &mcp.Meta{}
	}
	if res.Meta.AdditionalFields == nil {
		res.Meta.AdditionalFields = map[string]any{}
	}
	res.Meta.AdditionalFields[CatalogMetaKey] = cat.hash
}

type toolSpliceKey struct{}

// pagePlaceholder stands for a page's tools in mcp-go's answer: a tool no
// agent can be (slugs have no dots), with a name of this process.
var (
	pagePlaceholder     = mcp.Tool{Name: "io.deskhand.page-" + rand.Text(), InputSchema: mcp.ToolInputSchema{Type: "object"}}
	pagePlaceholderJSON = func() []byte { b, _ := json.Marshal(pagePlaceholder); return b }()
	placeholderPage     = []mcp.Tool{pagePlaceholder} // read only, mcp-go encodes it
)

// toolSplice holds a tools/list answer as mcp-go writes it, with the
// placeholder where the page's tools go, and writes it with the page's
// tools as the catalog encoded them: mcp-go still checks the request and
// writes everything else (session, era, cache hints).
type toolSplice struct {
	w      http.ResponseWriter
	status int
	body   bytes.Buffer
	tools  []byte // the page's tools, encoded and joined; nil until listed
}

func newToolSplice(w http.ResponseWriter) *toolSplice {
	return &toolSplice{w: w, status: http.StatusOK}
}

func (sp *toolSplice) bind(r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), toolSpliceKey{}, sp))
}

func (sp *toolSplice) Header() http.Header         { return sp.w.Header() }
func (sp *toolSplice) WriteHeader(status int)      { sp.status = status }
func (sp *toolSplice) Write(b []byte) (int, error) { return sp.body.Write(b) }
func (sp *toolSplice) Flush()                      {} // written whole by finish

// finish writes the answer, the page's tools in place of the placeholder.
func (sp *toolSplice) finish() {
	body := sp.body.Bytes()
	i := bytes.Index(body, pagePlaceholderJSON)
	if sp.tools == nil || i < 0 {
		sp.w.WriteHeader(sp.status)
		_, _ = sp.w.Write(body)
		return
	}
	sp.w.Header().Del("Content-Length")
	sp.w.WriteHeader(sp.status)
	for _, part := range [][]byte{body[:i], sp.tools, body[i+len(pagePlaceholderJSON):]} {
		if _, err := sp.w.Write(part); err != nil {
			return
		}
	}
}

// listTools answers what HTTP can before mcp-go lists: a foreign cursor,
// and a page the client already has (If-None-Match). It sets the page's
// ETag. ok is false when it has answered.
func (s *Server) listTools(w http.ResponseWriter, r *http.Request, msg mcpfill.Peek) bool {
	s.syncTools()
	cursor := msg.Params.Cursor
	if _, ok := s.cursors.Decode(cursor); !ok {
		mcpfill.WriteErrorStatus(w, mcpfill.ErrorStatus(r), msg.ID, mcp.INVALID_PARAMS, errForeignCursor.Error(), nil)
		return false
	}
	etag := s.catalogFor(r.Context()).etag(cursor, s.pageSize())
	w.Header().Set("ETag", etag)
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatches(inm, etag) {
		// Not RFC 9110's 412 for POST: a client that sends If-None-Match
		// on tools/list asks to revalidate, like a GET.
		w.WriteHeader(http.StatusNotModified)
		return false
	}
	return true
}

func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}
