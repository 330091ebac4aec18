package mcpfill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The Tasks extension (SEP-2663) for 2026-07-28 clients that declare it:
// a tools/call returns a task at once, and the client follows it with
// tasks/get, answers its questions with tasks/update and stops it with
// tasks/cancel. mcp-go does not implement it, so it is HTTP middleware
// ahead of mcp-go; stdio has no tasks.

const (
	taskWorking       = "working"
	taskInputRequired = "input_required"
	taskCompleted     = "completed"
	taskFailed        = "failed"
	taskCancelled     = "cancelled"

	// DefaultTaskTTL keeps a finished task readable this long, within the
	// limits on finished tasks.
	DefaultTaskTTL = time.Hour
	taskPollMs     = 500
)

// Task is one call run as a task.
type Task struct {
	id        string
	principal string
	owner     string // what the task runs, as the server names it (Tasks.Hidden); "" for none
	workID    string // the caller's id of the work
	created   time.Time
	cancel    context.CancelCauseFunc

	mu      sync.Mutex
	updated time.Time
	status  string
	message string
	pending map[string]*openQuestion // questions out with the client, by their keys
	inputs  *inputRound              // a tool's input requests, by its keys
	result  *mcp.CallToolResult
	failure *jsonrpcError
}

// WorkID is the id the caller gave the task's work (Tasks.Start).
func (t *Task) WorkID() string { return t.workID }

type jsonrpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Tasks holds the tasks of all clients. Unfinished ones are bounded by
// waits (with the paused turns); finished ones are kept ttl for their
// clients to read, within the limits of the finished shelf, and each one
// dropped to stay within them leaves a note (on a shelf of the same
// limits) so that a tasks/get of it says what happened.
type Tasks struct {
	// Hidden reports whether the caller no longer sees a task's owner:
	// the task is then as unknown as one never started.
	Hidden func(ctx context.Context, owner string) bool
	// WaitingElsewhere is the status message of a working task whose
	// question waits for someone other than the client (the client cannot
	// answer it), by the task's work id; "" when none waits.
	WaitingElsewhere func(workID string) string
	// Cancelled is the cause a task's work is cancelled with on
	// tasks/cancel.
	Cancelled error
	// Log reports the faults of tools run as tasks.
	Log *slog.Logger

	waits *Quota
	ttl   time.Duration
	now   func() time.Time

	mu       sync.Mutex
	tasks    map[string]*Task
	finished *Shelf                 // ids of the finished tasks in tasks
	dropped  map[string]droppedTask // id → why it is no longer kept
	notes    *Shelf                 // ids of the dropped tasks
	onFinish func(id string)        // tests: called once a task is finished and shelved
}

// droppedTask is what is known of a finished task dropped to stay within
// the limits: whose it was and which limit it hit.
type droppedTask struct {
	principal string
	hit       LimitHit
}

// NewTasks keeps unfinished tasks within waits, and finished ones ttl by
// the clock now, within the limits of finished. Set the func fields
// before serving.
func NewTasks(waits *Quota, ttl time.Duration, now func() time.Time, finished *Shelf) *Tasks {
	return &Tasks{waits: waits, ttl: ttl, now: now, tasks: make(map[string]*Task), finished: finished,
		dropped: make(map[string]droppedTask), notes: NewShelf(finished.Total, finished.PerClient),
		Hidden:           func(context.Context, string) bool { return false },
		WaitingElsewhere: func(string) string { return "" },
		Cancelled:        errors.New("the client cancelled the task"),
		Log:              slog.New(slog.DiscardHandler)}
}

// OnFinish calls f with the id of each task once it has finished and is
// kept (or not) within the limits on finished tasks (tests).
func (tt *Tasks) OnFinish(f func(id string)) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.onFinish = f
}

func (tt *Tasks) add(t *Task) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.expireLocked()
	tt.tasks[t.id] = t
}

// expireLocked forgets the finished tasks, and the notes of dropped ones,
// older than the TTL.
func (tt *Tasks) expireLocked() {
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
func (tt *Tasks) finish(t *Task) {
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
func (tt *Tasks) get(id, principal string) (_ *Task, hit LimitHit) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if t := tt.tasks[id]; t != nil && t.principal == principal {
		return t, WithinLimits
	}
	if d, ok := tt.dropped[id]; ok && d.principal == principal {
		return nil, d.hit
	}
	return nil, WithinLimits
}

// droppedMessage says that a task was dropped, which limit did it, and
// what to do.
func (tt *Tasks) droppedMessage(id string, hit LimitHit) (msg, limit string) {
	what := fmt.Sprintf("Deskhand keeps at most %d finished tasks for each client, its oldest going first", tt.finished.PerClient)
	limit = "finished tasks per client"
	if hit == TotalLimit {
		what = fmt.Sprintf("Deskhand keeps at most %d finished tasks for all clients together, the oldest of the client holding the most going first", tt.finished.Total)
		limit = "finished tasks"
	}
	return fmt.Sprintf("task %q finished, but was dropped to stay within the limit on finished tasks (%s), and its result is lost. Read a task's result soon after it finishes, or run fewer tasks at once.", id, what), limit
}

// openQuestion is an elicitation of the task's work waiting for
// tasks/update.
type openQuestion struct {
	request  mcp.InputRequest
	accept   func(mcp.ElicitationResponse) error
	answered chan struct{} // closed once accept took an answer
}

// Ask puts an elicitation on the task, under key, for tasks/update, and
// waits until accept takes an answer; an answer accept refuses is refused
// to the client, with accept's error, and the question stays open.
func (t *Task) Ask(ctx context.Context, key string, request mcp.InputRequest, accept func(mcp.ElicitationResponse) error) error {
	h := &openQuestion{request: request, accept: accept, answered: make(chan struct{})}
	t.mu.Lock()
	t.pending[key] = h
	t.setStatusLocked(taskInputRequired, "")
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		delete(t.pending, key)
		if len(t.pending) == 0 && t.status == taskInputRequired {
			t.setStatusLocked(taskWorking, "")
		}
		t.mu.Unlock()
	}()
	select {
	case <-h.answered:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (t *Task) setStatusLocked(status, message string) {
	t.status, t.message, t.updated = status, message, time.Now().UTC()
}

// Serve answers tasks/get, tasks/update and tasks/cancel for the
// requesting principal's tasks.
func (tt *Tasks) Serve(w http.ResponseWriter, r *http.Request, msg Peek) {
	switch {
	case r.Header.Get(mcp.HeaderMethod) != msg.Method:
		WriteError(w, msg.ID, mcp.HEADER_MISMATCH, "the Mcp-Method header must equal the request's method")
		return
	case r.Header.Get(mcp.HeaderName) != msg.Params.TaskID:
		WriteError(w, msg.ID, mcp.HEADER_MISMATCH, "the Mcp-Name header must carry the taskId")
		return
	case !msg.DeclaresTasks():
		WriteErrorData(w, msg.ID, mcp.MISSING_REQUIRED_CLIENT_CAPABILITY, "declare the "+TasksExtension+" extension in this request's client capabilities to use tasks", RequiresTasks)
		return
	}
	t, dropped := tt.get(msg.Params.TaskID, PrincipalFrom(r.Context()))
	if t != nil && t.owner != "" && tt.Hidden(r.Context(), t.owner) {
		t = nil // hidden from this client since: as unknown
	}
	if t == nil && dropped != WithinLimits {
		text, limit := tt.droppedMessage(msg.Params.TaskID, dropped)
		WriteErrorData(w, msg.ID, mcp.INVALID_PARAMS, text, map[string]any{"limit": limit})
		return
	}
	if t == nil {
		WriteError(w, msg.ID, mcp.INVALID_PARAMS, fmt.Sprintf("no task %q", msg.Params.TaskID))
		return
	}
	switch msg.Method {
	case "tasks/get":
		d := t.detail()
		if d["status"] == taskWorking {
			// A client that cannot answer sees who is asked instead.
			if elsewhere := tt.WaitingElsewhere(t.workID); elsewhere != "" {
				d["statusMessage"] = elsewhere
			}
		}
		WriteResult(w, msg.ID, d)
	case "tasks/update":
		if err := t.update(msg.Params.InputResponses); err != nil {
			WriteError(w, msg.ID, mcp.INVALID_PARAMS, err.Error())
			return
		}
		WriteResult(w, msg.ID, map[string]any{"resultType": "complete"})
	case "tasks/cancel":
		t.cancel(tt.Cancelled)
		WriteResult(w, msg.ID, map[string]any{"resultType": "complete"})
	}
}

// Hold takes the place an unfinished task holds among the waiting turns
// (waits): it can wait for an answer at any moment, with no call open to
// bound it. When that is refused it answers the call with a tool error
// naming the limit, as an ordinary result: the server decides whether a
// call becomes a task.
func (tt *Tasks) Hold(w http.ResponseWriter, msg Peek, principal string) bool {
	hit := tt.waits.Take(principal)
	if hit == WithinLimits {
		return true
	}
	res := mcp.NewToolResultError(WaitRefusal(tt.waits, hit))
	res.ResultType = mcp.ResultTypeComplete
	WriteResult(w, msg.ID, res)
	return false
}

// Context is where a task of the principal's runs: not the HTTP
// request's, which ends with the answer.
func Context(principal string) (context.Context, context.CancelCauseFunc) {
	return context.WithCancelCause(WithPrincipal(context.Background(), principal))
}

// Start makes the call a task, answers with the task at once, and runs
// run under ctx (cancel ends it, on tasks/cancel). A nil result means a
// fault inside the server: the task fails. The task's place (Hold) is
// given back when it ends. owner is what the task runs, for Hidden;
// workID the caller's id of the work, for WorkID and WaitingElsewhere.
func (tt *Tasks) Start(w http.ResponseWriter, msg Peek, principal, owner, workID string, ctx context.Context, cancel context.CancelCauseFunc,
	run func(ctx context.Context, t *Task) *mcp.CallToolResult) {
	now := time.Now().UTC()
	t := &Task{id: newID(), principal: principal, owner: owner, workID: workID, created: now, updated: now, status: taskWorking,
		pending: make(map[string]*openQuestion), cancel: cancel}
	tt.add(t)
	WriteResult(w, msg.ID, t.envelope())

	go func() {
		defer tt.waits.Give(principal)
		defer cancel(nil)
		res := run(ctx, t)
		t.mu.Lock()
		switch {
		case errors.Is(context.Cause(ctx), tt.Cancelled):
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
		tt.finish(t)
	}()
}

// toolRequest is the call as a tool's handler receives it.
func toolRequest(msg Peek) mcp.CallToolRequest {
	var req mcp.CallToolRequest
	req.Params.Name, req.Params.Arguments = msg.Params.Name, msg.Arguments()
	req.Params.InputResponses, req.Params.RequestState = msg.Params.InputResponses, msg.Params.RequestState
	return req
}

// taskOnlyGrace is how long a task-only tool may take to ask for input
// (answered as ordinary retries) before its call becomes a task.
const taskOnlyGrace = 200 * time.Millisecond

// RunTool runs an mcp-go tool's call as a task. A task-only tool gathers
// its input first with ordinary InputRequiredResults and becomes a task
// once it stops asking; any other tool is a task from the start, and its
// input rounds wait in input_required for tasks/update.
func (tt *Tasks) RunTool(w http.ResponseWriter, r *http.Request, msg Peek, tool server.ServerTool, principal string) {
	if !tt.Hold(w, msg, principal) {
		return
	}
	ctx, cancel := Context(principal)
	if c, ok := ClaimsFrom(r.Context()); ok {
		// The call goes on in the task: its state is used.
		KeepState(r.Context())
		ctx = WithClaims(ctx, c)
	}
	req := toolRequest(msg)
	first := make(chan *mcp.CallToolResult, 1)
	go func() { first <- tt.callTool(ctx, tool, req) }()
	if TaskSupport(tool) == mcp.TaskSupportRequired {
		select {
		case out := <-first:
			if out != nil && out.ResultType == mcp.ResultTypeInputRequired {
				cancel(nil)
				tt.waits.Give(principal) // no task after all
				WriteResult(w, msg.ID, out)
				return
			}
			first <- out
		case <-time.After(taskOnlyGrace):
		}
	}
	tt.Start(w, msg, principal, "", "", ctx, cancel, func(ctx context.Context, t *Task) *mcp.CallToolResult {
		out := <-first
		for out != nil && out.ResultType == mcp.ResultTypeInputRequired {
			got, err := t.awaitInput(ctx, out.InputRequests)
			if err != nil {
				return mcp.NewToolResultError("the task ended while waiting for input")
			}
			req.Params.InputResponses, req.Params.RequestState = got, out.RequestState
			out = tt.callTool(ctx, tool, req)
		}
		return out
	})
}

// callTool runs a tool's handler once; nil means it failed (an error or
// a panic: a fault, not a tool error).
func (tt *Tasks) callTool(ctx context.Context, tool server.ServerTool, req mcp.CallToolRequest) (res *mcp.CallToolResult) {
	defer func() {
		if p := recover(); p != nil {
			tt.Log.Error("tool panicked", "tool", tool.Tool.Name, "panic", p)
			res = nil
		}
	}()
	out, err := tool.Handler(ctx, req)
	if err != nil {
		tt.Log.Error("tool failed", "tool", tool.Tool.Name, "err", err)
		return nil
	}
	return out
}

// awaitInput parks the task in input_required until tasks/update has
// answered every request (one at a time if the client likes).
func (t *Task) awaitInput(ctx context.Context, requests mcp.InputRequests) (mcp.InputResponses, error) {
	r := newInputRound(requests)
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

// update delivers answers to the task's open questions. An answer that
// does not fit its question is refused and the question stays open.
func (t *Task) update(responses mcp.InputResponses) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.inputs; r != nil && r.answer(responses) {
		t.inputs = nil
		t.setStatusLocked(taskWorking, "")
		r.reply <- r.got
	}
	ids := make([]string, 0, len(responses))
	for id := range responses {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		h := t.pending[id]
		if h == nil {
			continue // already answered (perhaps elsewhere), or never asked
		}
		resp := server.ElicitationResponse(responses, id)
		if resp == nil {
			continue
		}
		if err := h.accept(resp.ElicitationResponse); err != nil {
			return fmt.Errorf("the answer to %s does not fit its question: %w", id, err)
		}
		close(h.answered)
		delete(t.pending, id)
	}
	return nil
}

// envelope is the task as CreateTaskResult and tasks/get share it.
func (t *Task) envelope() map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.envelopeLocked()
}

func (t *Task) envelopeLocked() map[string]any {
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
func (t *Task) detail() map[string]any {
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
			reqs[id] = h.request
		}
		d["inputRequests"] = reqs
	case taskCompleted:
		d["result"] = t.result
	case taskFailed:
		d["error"] = t.failure
	}
	return d
}

// TaskSupport is whether a tool may, must or must not run as a task.
func TaskSupport(t server.ServerTool) mcp.TaskSupport {
	if t.Tool.Execution == nil || t.Tool.Execution.TaskSupport == "" {
		return mcp.TaskSupportForbidden
	}
	return t.Tool.Execution.TaskSupport
}

// RequiresTasks is the data of a -32021 error for the extension.
var RequiresTasks = map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{}}}}

// CheckCallHeaders checks a tools/call's Mcp-Method and Mcp-Name headers
// against its body, as mcp-go does for the calls it serves: a call served
// ahead of mcp-go (a task) is never checked by it.
func CheckCallHeaders(r *http.Request, msg Peek) error {
	params, err := json.Marshal(map[string]string{"name": msg.Params.Name})
	if err != nil {
		return fmt.Errorf("encode the call's name: %w", err)
	}
	return mcp.ValidateStandardHeaders(r.Header.Get, r.Header.Get(mcp.HeaderProtocolVersion), mcp.MCPMethod(msg.Method), params)
}
