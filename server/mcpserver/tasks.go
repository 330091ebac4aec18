package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver/mcpfill"
)

// The Tasks extension (SEP-2663) for 2026-07-28 clients that declare it:
// a tools/call on an agent returns a task at once, and the client follows
// it with tasks/get, answers its questions with tasks/update and stops it
// with tasks/cancel. mcp-go does not implement it, so it is HTTP
// middleware ahead of mcp-go; stdio has no tasks.

const (
	taskWorking       = "working"
	taskInputRequired = "input_required"
	taskCompleted     = "completed"
	taskFailed        = "failed"
	taskCancelled     = "cancelled"

	// DefaultTaskTTL keeps a finished task readable this long, within the
	// limits on finished tasks (Options.MaxFinishedTasks).
	DefaultTaskTTL  = time.Hour
	taskPollMs      = 500
	protocolVersion = mcp.ProtocolVersion20260728
)

type task struct {
	id        string
	principal string
	agent     string // the agent's slug; "" for an extra tool's task
	turn      string // the turn's ID, to find its questions for the desktop
	created   time.Time
	cancel    context.CancelCauseFunc

	mu      sync.Mutex
	updated time.Time
	status  string
	message string
	pending map[string]*openQuestion // questions out with the client, by question ID
	inputs  *inputRound              // an extra tool's input requests, by its keys
	result  *mcp.CallToolResult
	failure *jsonrpcError
}

type jsonrpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// taskTable holds the tasks of all clients. Unfinished ones are bounded
// by Server.waits (with the paused turns); finished ones are kept ttl
// for their clients to read, within the limits of the finished shelf,
// and each one dropped to stay within them leaves a note (on a shelf of
// the same limits) so that a tasks/get of it says what happened.
type taskTable struct {
	ttl time.Duration
	now func() time.Time

	mu       sync.Mutex
	tasks    map[string]*task
	finished *mcpfill.Shelf         // ids of the finished tasks in tasks
	dropped  map[string]droppedTask // id → why it is no longer kept
	notes    *mcpfill.Shelf         // ids of the dropped tasks
	onFinish func(id string)        // tests: called once a task is finished and shelved
}

// droppedTask is what is known of a finished task dropped to stay within
// the limits: whose it was and which limit it hit.
type droppedTask struct {
	principal string
	hit       mcpfill.LimitHit
}

func newTaskTable(ttl time.Duration, now func() time.Time, finished *mcpfill.Shelf) *taskTable {
	return &taskTable{ttl: ttl, now: now, tasks: make(map[string]*task), finished: finished,
		dropped: make(map[string]droppedTask), notes: mcpfill.NewShelf(finished.Total, finished.PerClient)}
}

func (tt *taskTable) add(t *task) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.expireLocked()
	tt.tasks[t.id] = t
}

// expireLocked forgets the finished tasks, and the notes of dropped ones,
// older than the TTL.
func (tt *taskTable) expireLocked() {
	now := tt.now()
	for _, id := range tt.finished.Expire(now) {
		delete(tt.tasks, id)
	}
	for _, id := range tt.notes.Expire(now) {
		delete(tt.dropped, id)
	}
}

// finish shelves a task that has just finished; to stay within the
// limits, the oldest finished tasks of its client, or of the client
// holding the most, are dropped.
func (tt *taskTable) finish(t *task) {
	tt.mu.Lock()
	tt.expireLocked()
	for _, out := range tt.finished.Put(t.principal, t.id, tt.now().Add(tt.ttl)) {
		delete(tt.tasks, out.ID)
		tt.dropped[out.ID] = droppedTask{principal: out.Principal, hit: out.Hit}
		for _, old := range tt.notes.Put(out.Principal, out.ID, out.Until) {
			delete(tt.dropped, old.ID)
		}
	}
	onFinish := tt.onFinish
	tt.mu.Unlock()
	if onFinish != nil {
		onFinish(t.id)
	}
}

// get finds a task of the principal; another's is as unknown as none.
// When the principal's task was dropped to stay within the limits, hit
// says which limit.
func (tt *taskTable) get(id, principal string) (_ *task, hit mcpfill.LimitHit) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if t := tt.tasks[id]; t != nil && t.principal == principal {
		return t, mcpfill.WithinLimits
	}
	if d, ok := tt.dropped[id]; ok && d.principal == principal {
		return nil, d.hit
	}
	return nil, mcpfill.WithinLimits
}

// droppedMessage says that a task was dropped, which limit did it, and
// what to do.
func (tt *taskTable) droppedMessage(id string, hit mcpfill.LimitHit) (msg, limit string) {
	what := fmt.Sprintf("Deskhand keeps at most %d finished tasks for each client, its oldest going first", tt.finished.PerClient)
	limit = "finished tasks per client"
	if hit == mcpfill.TotalLimit {
		what = fmt.Sprintf("Deskhand keeps at most %d finished tasks for all clients together, the oldest of the client holding the most going first", tt.finished.Total)
		limit = "finished tasks"
	}
	return fmt.Sprintf("task %q finished, but was dropped to stay within the limit on finished tasks (%s), and its result is lost. Read a task's result soon after it finishes, or run fewer tasks at once.", id, what), limit
}

// openQuestion is a question of the task's turn waiting for tasks/update.
type openQuestion struct {
	q     agent.Question
	reply chan agent.Answer // buffered: the first fitting answer
}

// taskAsker puts the turn's questions on the task for tasks/update.
type taskAsker struct{ t *task }

func (a taskAsker) Ask(ctx context.Context, q agent.Question) (agent.Answer, error) {
	h := &openQuestion{q: q, reply: make(chan agent.Answer, 1)}
	a.t.mu.Lock()
	a.t.pending[q.ID] = h
	a.t.setStatusLocked(taskInputRequired, "")
	a.t.mu.Unlock()
	defer func() {
		a.t.mu.Lock()
		delete(a.t.pending, q.ID)
		if len(a.t.pending) == 0 && a.t.status == taskInputRequired {
			a.t.setStatusLocked(taskWorking, "")
		}
		a.t.mu.Unlock()
	}()
	select {
	case answer := <-h.reply:
		return answer, nil
	case <-ctx.Done():
		return agent.Answer{}, ctx.Err()
	}
}

func (t *task) setStatusLocked(status, message string) {
	t.status, t.message, t.updated = status, message, time.Now().UTC()
}

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
		s.taskMethod(w, r, msg, principal)
		return
	case string(mcp.MethodToolsCall):
		if tool, ok := s.extraTool(msg.Params.Name); ok && taskSupport(tool) == mcp.TaskSupportRequired && !msg.DeclaresTasks() {
			mcpfill.WriteErrorData(w, msg.ID, mcp.MISSING_REQUIRED_CLIENT_CAPABILITY,
				fmt.Sprintf("the tool %q runs only as a task: declare the %s extension", msg.Params.Name, mcpfill.TasksExtension), requiresTasks)
			return
		}
		if msg.DeclaresTasks() && r.Header.Get("Mcp-Method") == msg.Method {
			// A retry of a parked turn resumes it (paused.go); any other
			// call on an agent becomes a task.
			a, isAgent := s.core.ServedAgent(msg.Params.Name)
			isAgent = isAgent && !s.toolHidden(r.Context(), msg.Params.Name) // mcp-go answers it "not found"
			_, resuming := mcpfill.ClaimsFrom(r.Context())
			tool, isTool := s.extraTool(msg.Params.Name)
			agentTask := isAgent && !resuming
			toolTask := !agentTask && isTool && taskSupport(tool) != mcp.TaskSupportForbidden
			if agentTask || toolTask {
				// mcp-go, which checks the headers, never sees a task.
				if err := checkHeaders(r, msg); err != nil {
					mcpfill.WriteError(w, msg.ID, mcp.HEADER_MISMATCH, err.Error())
					return
				}
				if agentTask {
					s.agentTask(w, msg, a, principal)
				} else {
					s.toolTask(w, r, msg, tool, principal)
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

// checkHeaders checks a tools/call's Mcp-Method and Mcp-Name headers
// against its body, as mcp-go does for the calls it serves.
func checkHeaders(r *http.Request, msg mcpfill.Peek) error {
	params, err := json.Marshal(map[string]string{"name": msg.Params.Name})
	if err != nil {
		return err
	}
	return mcp.ValidateStandardHeaders(r.Header.Get, r.Header.Get(mcp.HeaderProtocolVersion), mcp.MCPMethod(msg.Method), params)
}

func (s *Server) taskMethod(w http.ResponseWriter, r *http.Request, msg mcpfill.Peek, principal string) {
	switch {
	case r.Header.Get("Mcp-Method") != msg.Method:
		mcpfill.WriteError(w, msg.ID, mcp.HEADER_MISMATCH, "the Mcp-Method header must equal the request's method")
		return
	case r.Header.Get("Mcp-Name") != msg.Params.TaskID:
		mcpfill.WriteError(w, msg.ID, mcp.HEADER_MISMATCH, "the Mcp-Name header must carry the taskId")
		return
	case !msg.DeclaresTasks():
		mcpfill.WriteErrorData(w, msg.ID, mcp.MISSING_REQUIRED_CLIENT_CAPABILITY, "declare the "+mcpfill.TasksExtension+" extension in this request's client capabilities to use tasks", requiresTasks)
		return
	}
	t, dropped := s.tasks.get(msg.Params.TaskID, principal)
	if t != nil && t.agent != "" && s.toolHidden(r.Context(), t.agent) {
		t = nil // the agent was hidden from this client since: as unknown
	}
	if t == nil && dropped != mcpfill.WithinLimits {
		text, limit := s.tasks.droppedMessage(msg.Params.TaskID, dropped)
		mcpfill.WriteErrorData(w, msg.ID, mcp.INVALID_PARAMS, text, map[string]any{"limit": limit})
		return
	}
	if t == nil {
		mcpfill.WriteError(w, msg.ID, mcp.INVALID_PARAMS, fmt.Sprintf("no task %q", msg.Params.TaskID))
		return
	}
	switch msg.Method {
	case "tasks/get":
		d := t.detail()
		if d["status"] == taskWorking {
			// A client that cannot answer sees who is asked instead.
			for _, q := range s.core.Pending() {
				if q.TurnID == t.turn {
					d["statusMessage"] = "waiting for an answer on the Deskhand desktop: " + q.Prompt()
				}
			}
		}
		mcpfill.WriteResult(w, msg.ID, d)
	case "tasks/update":
		if err := t.update(msg.Params.InputResponses); err != nil {
			mcpfill.WriteError(w, msg.ID, mcp.INVALID_PARAMS, err.Error())
			return
		}
		mcpfill.WriteResult(w, msg.ID, map[string]any{"resultType": "complete"})
	case "tasks/cancel":
		t.cancel(errTaskCancelled)
		mcpfill.WriteResult(w, msg.ID, map[string]any{"resultType": "complete"})
	}
}

var errTaskCancelled = &agent.UserError{Msg: "the client cancelled the task"}

// holdTask takes the place an unfinished task holds among the waiting
// turns (Server.waits): it can wait for an answer at any moment, with no
// call open to bound it. When that is refused it answers the call with a
// tool error naming the limit, as an ordinary result: the server decides
// whether a call becomes a task.
func (s *Server) holdTask(w http.ResponseWriter, msg mcpfill.Peek, principal string) bool {
	hit := s.waits.Take(principal)
	if hit == mcpfill.WithinLimits {
		return true
	}
	res := mcp.NewToolResultError(s.waitRefusal(hit))
	res.ResultType = mcp.ResultTypeComplete
	mcpfill.WriteResult(w, msg.ID, res)
	return false
}

// startTask makes the call a task, answers with the task at once, and runs
// run under ctx (cancel ends it, on tasks/cancel). A nil result means a
// fault inside Deskhand: the task fails. The task's place (holdTask) is
// given back when it ends.
func (s *Server) startTask(w http.ResponseWriter, msg mcpfill.Peek, principal, agentSlug string, ctx context.Context, cancel context.CancelCauseFunc,
	run func(ctx context.Context, t *task) *mcp.CallToolResult) {
	now := time.Now().UTC()
	t := &task{id: newID(), principal: principal, agent: agentSlug, turn: uuid.NewString(), created: now, updated: now, status: taskWorking,
		pending: make(map[string]*openQuestion), cancel: cancel}
	s.tasks.add(t)
	mcpfill.WriteResult(w, msg.ID, t.envelope())

	go func() {
		defer s.waits.Give(principal)
		defer cancel(nil)
		res := run(ctx, t)
		t.mu.Lock()
		switch {
		case errors.Is(context.Cause(ctx), errTaskCancelled):
			t.setStatusLocked(taskCancelled, "")
		case res == nil:
			t.failure = &jsonrpcError{Code: mcp.INTERNAL_ERROR, Message: "the task failed inside Deskhand; the log has the details"}
			t.setStatusLocked(taskFailed, "")
		default:
			t.result = res
			t.setStatusLocked(taskCompleted, "")
		}
		t.inputs = nil
		t.mu.Unlock()
		s.tasks.finish(t)
	}()
}

// taskContext is where a task runs: not the HTTP request's, which ends
// with the answer.
func taskContext(principal string) (context.Context, context.CancelCauseFunc) {
	return context.WithCancelCause(withPrincipal(context.Background(), principal))
}

// agentTask runs an agent's turn as a task; its questions wait for
// tasks/update when the client can answer them.
func (s *Server) agentTask(w http.ResponseWriter, msg mcpfill.Peek, a agent.Agent, principal string) {
	if !s.holdTask(w, msg, principal) {
		return
	}
	ctx, cancel := taskContext(principal)
	s.startTask(w, msg, principal, a.Slug, ctx, cancel, func(ctx context.Context, t *task) *mcp.CallToolResult {
		if msg.DeclaresElicitation() {
			ctx = agent.WithAsker(ctx, taskAsker{t})
		}
		return s.runTask(ctx, t, msg, a, principal)
	})
}

// toolRequest is the call as an extra tool's handler receives it.
func toolRequest(msg mcpfill.Peek) mcp.CallToolRequest {
	var req mcp.CallToolRequest
	req.Params.Name, req.Params.Arguments = msg.Params.Name, msg.Arguments()
	req.Params.InputResponses, req.Params.RequestState = msg.Params.InputResponses, msg.Params.RequestState
	return req
}

// taskOnlyGrace is how long a task-only tool may take to ask for input
// (answered as ordinary retries) before its call becomes a task.
const taskOnlyGrace = 200 * time.Millisecond

// toolTask runs an extra tool as a task. A task-only tool gathers its
// input first with ordinary InputRequiredResults and becomes a task once
// it stops asking; any other tool is a task from the start, and its input
// rounds wait in input_required for tasks/update.
func (s *Server) toolTask(w http.ResponseWriter, r *http.Request, msg mcpfill.Peek, tool server.ServerTool, principal string) {
	if !s.holdTask(w, msg, principal) {
		return
	}
	ctx, cancel := taskContext(principal)
	if c, ok := mcpfill.ClaimsFrom(r.Context()); ok {
		// The call goes on in the task: its state is used.
		mcpfill.KeepState(r.Context())
		ctx = mcpfill.WithClaims(ctx, c)
	}
	req := toolRequest(msg)
	first := make(chan *mcp.CallToolResult, 1)
	go func() { first <- s.callExtra(ctx, tool, req) }()
	if taskSupport(tool) == mcp.TaskSupportRequired {
		select {
		case out := <-first:
			if out != nil && out.ResultType == mcp.ResultTypeInputRequired {
				cancel(nil)
				s.waits.Give(principal) // no task after all
				mcpfill.WriteResult(w, msg.ID, out)
				return
			}
			first <- out
		case <-time.After(taskOnlyGrace):
		}
	}
	s.startTask(w, msg, principal, "", ctx, cancel, func(ctx context.Context, t *task) *mcp.CallToolResult {
		out := <-first
		for out != nil && out.ResultType == mcp.ResultTypeInputRequired {
			got, err := t.awaitInput(ctx, out.InputRequests)
			if err != nil {
				return mcp.NewToolResultError("the task ended while waiting for input")
			}
			req.Params.InputResponses, req.Params.RequestState = got, out.RequestState
			out = s.callExtra(ctx, tool, req)
		}
		return out
	})
}

// callExtra runs an extra tool's handler once; nil means it failed (an
// error or a panic: a fault, not a tool error).
func (s *Server) callExtra(ctx context.Context, tool server.ServerTool, req mcp.CallToolRequest) (res *mcp.CallToolResult) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("tool panicked", "tool", tool.Tool.Name, "panic", p)
			res = nil
		}
	}()
	out, err := tool.Handler(ctx, req)
	if err != nil {
		s.log.Error("tool failed", "tool", tool.Tool.Name, "err", err)
		return nil
	}
	return out
}

// awaitInput parks the task in input_required until tasks/update has
// answered every request (one at a time if the client likes).
func (t *task) awaitInput(ctx context.Context, requests mcp.InputRequests) (mcp.InputResponses, error) {
	r := &inputRound{requests: requests, got: make(mcp.InputResponses), reply: make(chan mcp.InputResponses, 1)}
	t.mu.Lock()
	t.inputs = r
	t.setStatusLocked(taskInputRequired, "")
	t.mu.Unlock()
	select {
	case got := <-r.reply:
		return got, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// runTask is the call the task stands for; nil means a fault in Deskhand.
func (s *Server) runTask(ctx context.Context, t *task, msg mcpfill.Peek, a agent.Agent, principal string) (res *mcp.CallToolResult) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("task panicked", "agent", a.Slug, "panic", p)
			res = nil
		}
	}()
	decoded := msg.Arguments()
	raw, ok := decoded.(map[string]any)
	if !ok && decoded != nil {
		return mcp.NewToolResultError("arguments must be a JSON object")
	}
	args, err := parseArgs(raw, a.Conversations)
	if err != nil {
		return mcp.NewToolResultError(agent.UserMessage(err))
	}
	if !args.HasConversation && a.Conversations {
		msg.MetaField(ConversationMetaKey, &args.Conversation)
	}
	run, err := s.core.Run(ctx, agent.RunRequest{Agent: a.Slug, Principal: principal, Conversation: args.Conversation,
		Message: args.Message, Context: args.Context, TurnID: t.turn})
	if err != nil && !isUserError(err) {
		s.log.Error("task failed", "agent", a.Slug, "err", err)
		return nil
	}
	return s.finish(a, args.Conversation, run, err)
}

func isUserError(err error) bool {
	var ue *agent.UserError
	return errors.As(err, &ue)
}

// update delivers answers to the task's open questions. An answer that
// does not fit its question is refused and the question stays open.
func (t *task) update(responses mcp.InputResponses) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.inputs; r != nil {
		for k, v := range responses {
			if _, asked := r.requests[k]; asked {
				r.got[k] = v
			}
		}
		if len(r.missing()) == 0 {
			t.inputs = nil
			t.setStatusLocked(taskWorking, "")
			r.reply <- r.got
		}
	}
	ids := make([]string, 0, len(responses))
	for id := range responses {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		h := t.pending[id]
		if h == nil {
			continue // already answered (perhaps on the desktop), or never asked
		}
		resp := server.ElicitationResponse(responses, id)
		if resp == nil {
			continue
		}
		ans, err := answerFrom(h.q, resp.ElicitationResponse)
		if err != nil {
			return fmt.Errorf("the answer to %s does not fit its question: %s", id, agent.UserMessage(err))
		}
		h.reply <- ans
		delete(t.pending, id)
	}
	return nil
}

// envelope is the task as CreateTaskResult and tasks/get share it.
func (t *task) envelope() map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.envelopeLocked()
}

func (t *task) envelopeLocked() map[string]any {
	e := map[string]any{
		"resultType":     "task",
		"taskId":         t.id,
		"status":         t.status,
		"createdAt":      t.created.Format(time.RFC3339Nano),
		"lastUpdatedAt":  t.updated.Format(time.RFC3339Nano),
		"ttlMs":          DefaultTaskTTL.Milliseconds(),
		"pollIntervalMs": taskPollMs,
	}
	if t.message != "" {
		e["statusMessage"] = t.message
	}
	return e
}

// detail is the tasks/get answer: the envelope with what the status needs.
func (t *task) detail() map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := t.envelopeLocked()
	d["resultType"] = "complete"
	switch t.status {
	case taskInputRequired:
		reqs := make(map[string]any, len(t.pending))
		if t.inputs != nil {
			for k, v := range t.inputs.missing() {
				reqs[k] = v
			}
		}
		for id, h := range t.pending {
			reqs[id] = mcp.NewElicitationInputRequest(elicitation(h.q))
		}
		d["inputRequests"] = reqs
	case taskCompleted:
		d["result"] = t.result
	case taskFailed:
		d["error"] = t.failure
	}
	return d
}

func (s *Server) extraTool(name string) (server.ServerTool, bool) {
	for _, t := range s.opts.ExtraTools {
		if t.Tool.Name == name {
			return t, true
		}
	}
	return server.ServerTool{}, false
}

func taskSupport(t server.ServerTool) mcp.TaskSupport {
	if t.Tool.Execution == nil || t.Tool.Execution.TaskSupport == "" {
		return mcp.TaskSupportForbidden
	}
	return t.Tool.Execution.TaskSupport
}

// requiresTasks is the data of a -32021 error for the extension.
var requiresTasks = map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{mcpfill.TasksExtension: map[string]any{}}}}
