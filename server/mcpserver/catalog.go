package mcpserver

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
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
	tools    []mcp.Tool
	hash     string
	revision uint64
}

func newCatalog(tools []mcp.Tool, revision uint64) *catalog {
	tools = slices.Clone(tools)
	slices.SortFunc(tools, func(a, b mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	h := sha256.New()
	for _, t := range tools {
		raw, _ := json.Marshal(t) // a tool that cannot marshal fails tools/list anyway
		h.Write(raw)
		h.Write([]byte{0})
	}
	return &catalog{tools: tools, hash: hex.EncodeToString(h.Sum(nil)[:16]), revision: revision}
}

// page returns the tools after the cursor's last name, and the cursor of
// the next page when more follow.
func (c *catalog) page(after string, size int, cursors *cursorCodec) ([]mcp.Tool, mcp.Cursor) {
	start := sort.Search(len(c.tools), func(i int) bool { return c.tools[i].Name > after })
	end := min(start+size, len(c.tools))
	page := c.tools[start:end]
	if page == nil {
		page = []mcp.Tool{}
	}
	var next mcp.Cursor
	if end < len(c.tools) {
		next = mcp.Cursor(cursors.encode(page[len(page)-1].Name))
	}
	return page, next
}

// etag names one page of one catalog, for HTTP caching.
func (c *catalog) etag(cursor string, size int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%d\x00%s\x00%s\x00%d", c.revision, c.hash, cursor, size))
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}

// cursorCodec makes opaque cursors: the last name listed, with an HMAC
// under a key of this process, so a cursor is valid only here and until a
// restart. They are standard base64, which mcp-go insists on.
type cursorCodec struct{ key []byte }

func newCursorCodec() *cursorCodec {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand.Read never fails
	return &cursorCodec{key: key}
}

const cursorVersion = 1

func (c *cursorCodec) mac(name string) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte{cursorVersion})
	m.Write([]byte(name))
	return m.Sum(nil)[:16]
}

func (c *cursorCodec) encode(last string) string {
	b := []byte{cursorVersion}
	b = binary.AppendUvarint(b, uint64(len(last)))
	b = append(b, last...)
	b = append(b, c.mac(last)...)
	return base64.StdEncoding.EncodeToString(b)
}

// decode returns the cursor's last name; "" with ok for no cursor.
func (c *cursorCodec) decode(cursor string) (last string, ok bool) {
	if cursor == "" {
		return "", true
	}
	b, err := base64.StdEncoding.DecodeString(cursor)
	if err != nil || len(b) < 1 || b[0] != cursorVersion {
		return "", false
	}
	n, k := binary.Uvarint(b[1:])
	if k <= 0 || n > uint64(len(b)) {
		return "", false
	}
	rest := b[1+k:]
	if uint64(len(rest)) != n+16 {
		return "", false
	}
	name, mac := string(rest[:n]), rest[n:]
	if !hmac.Equal(mac, c.mac(name)) {
		return "", false
	}
	return name, true
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
	if _, ok := s.cursors.decode(string(req.Params.Cursor)); !ok {
		req.Params.Cursor = "!" + mcp.Cursor(errForeignCursor.Error())
	}
}

// afterListTools serves the page from our catalog, with its hash.
func (s *Server) afterListTools(_ context.Context, _ any, req *mcp.ListToolsRequest, res *mcp.ListToolsResult) {
	cat := s.cat.Load()
	after, _ := s.cursors.decode(string(req.Params.Cursor))
	res.Tools, res.NextCursor = cat.page(after, s.pageSize(), s.cursors)
	if res.Meta == nil {
		res.Meta = &mcp.Meta{}
	}
	if res.Meta.AdditionalFields == nil {
		res.Meta.AdditionalFields = map[string]any{}
	}
	res.Meta.AdditionalFields[CatalogMetaKey] = cat.hash
}

// listTools answers what HTTP can before mcp-go lists: a foreign cursor,
// and a page the client already has (If-None-Match). It sets the page's
// ETag. ok is false when it has answered.
func (s *Server) listTools(w http.ResponseWriter, r *http.Request, msg rpcPeek) bool {
	s.syncTools()
	cursor := msg.Params.Cursor
	if _, ok := s.cursors.decode(cursor); !ok {
		writeJSONRPCErrorStatus(w, errorStatus(r), msg.ID, mcp.INVALID_PARAMS, errForeignCursor.Error(), nil)
		return false
	}
	etag := s.cat.Load().etag(cursor, s.pageSize())
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
