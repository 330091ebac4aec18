package mcpfill

import (
	"encoding/json"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
)

// TasksExtension is the identifier of the Tasks extension (SEP-2663).
const TasksExtension = "io.modelcontextprotocol/tasks"

// Peek is what the middleware ahead of mcp-go reads of a JSON-RPC
// request: the method, what the fill-ins act on (the task methods, a
// tools/call's requestState), and what the server's own handling reads.
type Peek struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name           string             `json:"name"`
		Arguments      json.RawMessage    `json:"arguments"` // decoded where used (Arguments)
		RequestState   string             `json:"requestState"`
		TaskID         string             `json:"taskId"`
		Cursor         string             `json:"cursor"`
		RequestID      json.RawMessage    `json:"requestId"`
		URI            string             `json:"uri"`
		InputResponses mcp.InputResponses `json:"inputResponses"`
		// Meta is decoded only where it is read (MetaField): most
		// requests never look into it.
		Meta json.RawMessage `json:"_meta"`
		// ProtocolVersion is an initialize's.
		ProtocolVersion string `json:"protocolVersion"`
	} `json:"params"`
}

// Arguments is the call's arguments, decoded; nil when absent or null.
func (m Peek) Arguments() any {
	var args any
	_ = json.Unmarshal(m.Params.Arguments, &args) // it decoded once already, as part of the request
	return args
}

// MetaField decodes one entry of the request's _meta into v, keys
// matched exactly as mcp-go matches them (a struct would match any case).
func (m Peek) MetaField(key string, v any) bool {
	var meta map[string]json.RawMessage
	if json.Unmarshal(m.Params.Meta, &meta) != nil {
		return false
	}
	raw, ok := meta[key]
	return ok && json.Unmarshal(raw, v) == nil
}

// capabilities is this request's client capabilities, each left encoded
// (declared per request on 2026-07-28).
func (m Peek) capabilities() map[string]json.RawMessage {
	var caps map[string]json.RawMessage
	m.MetaField(mcp.MetaKeyClientCapabilities, &caps)
	return caps
}

// DeclaresTasks reports whether the request's client capabilities carry
// the Tasks extension.
func (m Peek) DeclaresTasks() bool {
	var ext map[string]json.RawMessage
	_ = json.Unmarshal(m.capabilities()["extensions"], &ext)
	_, ok := ext[TasksExtension]
	return ok
}

// DeclaresElicitation reports whether the request's client capabilities
// carry elicitation.
func (m Peek) DeclaresElicitation() bool {
	_, ok := m.capabilities()["elicitation"]
	return ok
}

// WriteResult answers a request ahead of mcp-go with a result.
func WriteResult(w http.ResponseWriter, id json.RawMessage, result any) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

// WriteError answers a request refused ahead of mcp-go, with HTTP 400 as
// the 2026-07-28 mapping has it for the codes used here.
func WriteError(w http.ResponseWriter, id json.RawMessage, code int, message string) {
	WriteErrorData(w, id, code, message, nil)
}

// WriteErrorData is WriteError with the error's data.
func WriteErrorData(w http.ResponseWriter, id json.RawMessage, code int, message string, data any) {
	WriteErrorStatus(w, http.StatusBadRequest, id, code, message, data)
}

// ErrorStatus is the HTTP status of a JSON-RPC error answered for an
// invalid request: 400 on 2026-07-28; before, the error travels in a 200.
func ErrorStatus(r *http.Request) int {
	if mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// WriteErrorStatus answers a request with a JSON-RPC error in an HTTP
// response of the given status.
func WriteErrorStatus(w http.ResponseWriter, status int, id json.RawMessage, code int, message string, data any) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	e := map[string]any{"code": code, "message": message}
	if data != nil {
		e["data"] = data
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
}
