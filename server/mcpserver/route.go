package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver/mcpfill"
)

// protocol does, ahead of mcp-go, what it leaves to us: it verifies
// requestState and serves the Tasks extension (2026-07-28 only).
func (s *Server) protocol(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && s.streams.Resume(w, r) {
			return
		}
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body) // bounded by the guard
		if err != nil {
			http.Error(w, "Bad request: could not read the body", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg mcpfill.Peek
		if json.Unmarshal(body, &msg) != nil {
			next.ServeHTTP(w, r) // mcp-go answers malformed JSON-RPC
			return
		}
		s.noteRPC(r, &msg) // the activity log (activity.go)
		if msg.Method == string(mcp.MethodToolsCall) {
			if err := checkCallArguments(msg); err != nil {
				res := mcp.NewToolResultError(agent.UserMessage(err))
				if mcp.IsModernProtocol(r.Header.Get("Mcp-Protocol-Version")) {
					res.ResultType = mcp.ResultTypeComplete
				}
				mcpfill.WriteResult(w, msg.ID, res)
				return
			}
			// Streams of 2025-11-25 sessions are resumable; 2026-07-28
			// dropped resumption (SEP-2575).
			var streams *mcpfill.Resumables
			if !mcp.IsModernProtocol(r.Header.Get("Mcp-Protocol-Version")) && r.Header.Get(server.HeaderKeySessionID) != "" {
				streams = s.streams
			}
			mcpfill.WithCallStream(w, r, s.keepAlive(), streams, func(w http.ResponseWriter, r *http.Request) { s.route(w, r, msg, next) })
			return
		}
		s.route(w, r, msg, next)
	})
}

// route sends one JSON-RPC message where it goes: our handling of what
// mcp-go lacks, else mcp-go.
func (s *Server) route(w http.ResponseWriter, r *http.Request, msg mcpfill.Peek, next http.Handler) {
	r, settle, ok := s.sealer.Verify(w, r, msg)
	if !ok {
		return
	}
	defer settle()
	if msg.Method == string(mcp.MethodToolsList) {
		if !s.listTools(w, r, msg) {
			return
		}
		sp := newToolSplice(w)
		defer sp.finish()
		w, r = sp, sp.bind(r)
	}
	if msg.Method == string(mcp.MethodResourcesRead) {
		if !s.readResource(w, r, msg) {
			return
		}
		u := &unmarking{w: w, status: http.StatusOK}
		defer u.finish()
		w = u
	}
	if !mcp.IsModernProtocol(r.Header.Get("Mcp-Protocol-Version")) {
		if msg.Method == string(mcp.MethodInitialize) {
			// mcp-go mints a session for it: within the limits only.
			var done func()
			if r, done, ok = s.sessions.Admit(w, r, msg.ID); !ok {
				return
			}
			defer done()
		}
		next.ServeHTTP(w, s.legacyCalls.Follow(r, msg))
		return
	}
	principal := PrincipalFrom(r.Context())
	switch msg.Method {
	case "tasks/get", "tasks/update", "tasks/cancel":
		s.tasks.Serve(w, r, msg)
		return
	case string(mcp.MethodToolsCall):
		if tool, ok := s.extraTool(msg.Params.Name); ok && mcpfill.TaskSupport(tool) == mcp.TaskSupportRequired && !msg.DeclaresTasks() {
			mcpfill.WriteErrorData(w, msg.ID, mcp.MISSING_REQUIRED_CLIENT_CAPABILITY,
				fmt.Sprintf("the tool %q runs only as a task: declare the %s extension", msg.Params.Name, mcpfill.TasksExtension), mcpfill.RequiresTasks)
			return
		}
		if msg.DeclaresTasks() && r.Header.Get("Mcp-Method") == msg.Method {
			// A retry of a parked turn resumes it (callModern); any other
			// call on an agent becomes a task.
			a, isAgent := s.core.Agents.Served(msg.Params.Name)
			isAgent = isAgent && !s.toolHidden(r.Context(), msg.Params.Name) // mcp-go answers it "not found"
			_, resuming := mcpfill.ClaimsFrom(r.Context())
			tool, isTool := s.extraTool(msg.Params.Name)
			agentTask := isAgent && !resuming
			toolTask := !agentTask && isTool && mcpfill.TaskSupport(tool) != mcp.TaskSupportForbidden
			if agentTask || toolTask {
				// mcp-go, which checks the headers, never sees a task.
				if err := mcpfill.CheckCallHeaders(r, msg); err != nil {
					mcpfill.WriteError(w, msg.ID, mcp.HEADER_MISMATCH, err.Error())
					return
				}
				if agentTask {
					s.agentTask(w, msg, a, principal)
				} else {
					s.tasks.RunTool(w, r, msg, tool, principal)
				}
				return
			}
		}
	}
	next.ServeHTTP(w, r)
}

// checkCallArguments refuses a tools/call whose arguments give a key twice
// anywhere: decoding would keep the last silently, and what two readers
// of the same bytes take for the call must not differ. Arguments that are
// absent or not an object are left to the tool's own checks.
func checkCallArguments(msg mcpfill.Peek) error {
	if !bytes.HasPrefix(msg.Params.Arguments, []byte("{")) { // json.RawMessage holds no leading space
		return nil
	}
	return agent.CheckArgumentKeys(msg.Params.Name, msg.Params.Arguments, nil)
}
