package agent

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// The activity log: every MCP request and every question, recorded in the
// background. The MCP surface hands each finished request to
// [Activity.Record], which neither blocks nor writes: the store keeps
// the row in a bounded buffer and commits it with its next group of writes
// (a full buffer counts the rows it drops, and the log says so). Followers
// see each row as it is recorded through EventActivity.

// ActivityOutcome is how a request ended.
type ActivityOutcome string

const (
	OutcomeOK            ActivityOutcome = "ok"
	OutcomeToolError     ActivityOutcome = "tool error"     // an isError result
	OutcomeProtocolError ActivityOutcome = "protocol error" // a JSON-RPC error, or an HTTP error past the guard
	OutcomeRefused       ActivityOutcome = "refused"        // by the guard; Reason says why
	// OutcomeDropped marks the row that counts rows the log lost.
	OutcomeDropped ActivityOutcome = "dropped"
)

// Methods of rows that are not MCP requests.
const (
	ActivityQuestion = "question" // an agent asked a person
	ActivityApproval = "approval" // an agent asked to run a tool
)

// ActivityRow is one request, or one question, in the log. It never holds
// a token, an Authorization header or a provider key.
type ActivityRow struct {
	ID   int64     `json:"id,omitempty"` // set by the store; 0 until written
	Time time.Time `json:"time"`
	// Client is the principal's id; "" when refused before it was known.
	Client       string          `json:"client,omitempty"`
	Era          string          `json:"era,omitempty"`   // the protocol version the client spoke, or ""
	Method       string          `json:"method"`          // JSON-RPC method, or ActivityQuestion/ActivityApproval
	Agent        string          `json:"agent,omitempty"` // slug, when the request concerns one agent
	Conversation string          `json:"conversation,omitempty"`
	Duration     time.Duration   `json:"durationNs"`
	Outcome      ActivityOutcome `json:"outcome"`
	// Reason says why a request was refused or failed, or who answered a
	// question ("desktop", "client").
	Reason   string `json:"reason,omitempty"`
	BytesIn  int64  `json:"bytesIn"`
	BytesOut int64  `json:"bytesOut"`
	// Text is what a person reads: a question's prompt, a tool error.
	Text string `json:"text,omitempty"`
	// Arguments are a call's arguments or a question's answer, kept only
	// for agents that log arguments (Agent.LogArguments), secrets redacted.
	Arguments string `json:"arguments,omitempty"`
	// ClientName is the client's name, set when rows are listed
	// (NameClients); not stored.
	ClientName string `json:"clientName,omitempty"`
}

// NameClients sets the ClientName of each row from clients.
func NameClients(rows []ActivityRow, clients []Client) {
	names := make(map[string]string, len(clients))
	for _, c := range clients {
		names[c.ID] = c.Name
	}
	for i := range rows {
		rows[i].ClientName = names[rows[i].Client]
	}
}

// ActivityFilter selects rows, newest first; its zero value selects the
// most recent.
type ActivityFilter struct {
	Client string // principal id
	Agent  string // slug
	Since  time.Time
	Limit  int // default 1000
}

// Matches reports whether a row passes the filter's client, agent and
// time (not Limit).
func (f ActivityFilter) Matches(r ActivityRow) bool {
	return (f.Client == "" || r.Client == f.Client) &&
		(f.Agent == "" || r.Agent == f.Agent) &&
		(f.Since.IsZero() || !r.Time.Before(f.Since))
}

// ActivityRecorder keeps the log (store/). History implementations that
// also implement it get a log; others record nothing.
type ActivityRecorder interface {
	// RecordActivity queues a row for the next commit, without blocking or
	// writing, and returns the ID it gave it; false when the buffer is full
	// and the row was dropped.
	RecordActivity(row ActivityRow) (int64, bool)
	// Activity lists rows (see ActivityFilter), the queued ones committed
	// first.
	Activity(ctx context.Context, f ActivityFilter) ([]ActivityRow, error)
	// PruneActivity deletes rows older than before, then the oldest until
	// the rest take at most maxBytes; it returns how many went.
	PruneActivity(ctx context.Context, before time.Time, maxBytes int64) (int64, error)
	// ClientCalls counts each client's tool calls since a time, by ID.
	ClientCalls(ctx context.Context, since time.Time) (map[string]int, error)
}

// Retention settings and their defaults.
const (
	SettingLogEnabled  = "log.enabled" // "false" turns the log off, from the next start
	SettingLogMaxAge   = "log.max_age" // a Go duration, or days ("30d")
	SettingLogMaxMB    = "log.max_mb"
	DefaultLogMaxAge   = 30 * 24 * time.Hour
	DefaultLogMaxMB    = 100
	activitySweepEvery = 10 * time.Minute
)

// activity is the core's part of the log.
// Activity is the activity log: every call and tool use, kept for the
// person to read back, swept by age.
type Activity struct {
	c *Core
	activity
}

type activity struct {
	rec  ActivityRecorder // nil: no log
	stop context.CancelFunc
	done sync.WaitGroup
}

// What the log keeps of a row's text and arguments, at most, once every
// secret is taken out (secrets first: a cut must not leave part of one).
const (
	maxActivityText      = 300
	maxActivityArguments = 4 << 10
)

// Record records a row in the background and tells followers, its
// text and arguments redacted and bounded. It never blocks and never
// writes on the caller's goroutine. With the log off it does nothing.
func (al *Activity) Record(row ActivityRow) {
	c := al.c
	if al.rec == nil {
		return
	}
	if row.Time.IsZero() {
		row.Time = c.now()
	}
	row.Reason = c.redact.Redact(row.Reason)
	row.Text = bounded(c.redact.Redact(row.Text), maxActivityText)
	row.Arguments = bounded(c.redact.Redact(row.Arguments), maxActivityArguments)
	id, ok := al.rec.RecordActivity(row)
	if !ok {
		return // dropped: the store counts it and says so in the log
	}
	row.ID = id
	c.publish(Event{Kind: EventActivity, Time: row.Time, Agent: row.Agent, Conversation: row.Conversation, Activity: &row})
}

// Enabled reports whether the core keeps an activity log: the MCP
// surface records nothing when it does not.
func (al *Activity) Enabled() bool {
	return al.rec != nil
}

// List lists the log, with the clients' names; with no log, nothing.
func (al *Activity) List(ctx context.Context, f ActivityFilter) ([]ActivityRow, error) {
	c := al.c
	if al.rec == nil {
		return nil, nil
	}
	rows, err := al.rec.Activity(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("read the activity log: %w", err)
	}
	NameClients(rows, c.clients.List())
	return rows, nil
}

// Calls counts each client's tool calls since a time, by client ID;
// with no log, none.
func (cs *Clients) Calls(ctx context.Context, since time.Time) (map[string]int, error) {
	c := cs.c
	if c.activity.rec == nil {
		return nil, nil
	}
	counts, err := c.activity.rec.ClientCalls(ctx, since)
	if err != nil {
		return nil, fmt.Errorf("count the calls of clients: %w", err)
	}
	return counts, nil
}

// Sweep prunes the log now, by the retention settings.
func (al *Activity) Sweep(ctx context.Context) error {
	c := al.c
	if al.rec == nil {
		return nil
	}
	maxAge, maxBytes := c.logRetention(ctx)
	n, err := al.rec.PruneActivity(ctx, c.now().Add(-maxAge), maxBytes)
	if err != nil {
		return fmt.Errorf("prune the activity log: %w", err)
	}
	if n > 0 {
		c.log.Info("activity log pruned", "rows", n)
	}
	return nil
}

// logRetention reads the retention settings; a bad value is logged and the
// default used.
func (c *Core) logRetention(ctx context.Context) (time.Duration, int64) {
	maxAge, maxMB := DefaultLogMaxAge, int64(DefaultLogMaxMB)
	if v, err := c.settings.Get(ctx, SettingLogMaxAge, ""); err == nil && v != "" {
		if d, err := ParseLogAge(v); err == nil {
			maxAge = d
		} else {
			c.log.Warn("bad setting, using the default", "key", SettingLogMaxAge, "value", v, "err", err)
		}
	}
	if v, err := c.settings.Get(ctx, SettingLogMaxMB, ""); err == nil && v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
			maxMB = n
		} else {
			c.log.Warn("bad setting, using the default", "key", SettingLogMaxMB, "value", v)
		}
	}
	return maxAge, maxMB << 20
}

// ParseLogAge reads a retention age: "30d" (days) or a Go duration.
func ParseLogAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("%q is not a number of days, like 30d", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not an age, like 30d or 720h", s)
	}
	return d, nil
}

// startActivity finds the log in history and starts its sweeper;
// stopActivity (from Close) ends it.
func (c *Core) startActivity() {
	rec, ok := c.history.(ActivityRecorder)
	if !ok {
		return
	}
	c.activity.rec = rec
	ctx, cancel := context.WithCancel(context.Background())
	c.activity.stop = cancel
	c.activity.done.Add(1)
	go func() {
		defer c.activity.done.Done()
		ticker := time.NewTicker(activitySweepEvery)
		defer ticker.Stop()
		for {
			if err := c.activity.Sweep(ctx); err != nil && ctx.Err() == nil {
				c.log.Warn("activity log retention", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
		}
	}()
}

func (c *Core) stopActivity() {
	if c.activity.stop != nil {
		c.activity.stop()
		c.activity.done.Wait()
	}
}

// recordQuestion logs a question when it is asked (its prompt) and when it
// closes (how, and who answered). The answer itself, and an approval's
// arguments, are kept only for agents that log arguments.
func (c *Core) recordQuestion(a Agent, q Question) {
	row := ActivityRow{Time: q.AskedAt, Client: q.Principal, Agent: a.Slug, Conversation: q.ConversationID,
		Method: ActivityQuestion, Outcome: OutcomeOK}
	if q.Kind == KindApproval {
		row.Method = ActivityApproval
	}
	switch {
	case q.Status == QuestionPending:
		row.Reason, row.Text = "asked", q.Prompt()
		if a.LogArguments && q.Kind == KindApproval {
			row.Arguments = string(q.Arguments)
		}
	default:
		row.Time, row.Reason = c.now(), string(q.Status)
		if q.Answer != nil && q.Answer.By != "" {
			row.Reason += " by " + string(q.Answer.By)
		}
		if a.LogArguments && q.Answer != nil {
			row.Arguments = answerText(q)
		}
	}
	c.activity.Record(row)
}

// bounded cuts s to at most max bytes, on a character's boundary.
func bounded(s string, max int) string {
	if len(s) <= max {
		return s
	}
	s = s[:max]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

// answerText is an answer as the log keeps it.
func answerText(q Question) string {
	switch {
	case q.Answer.Declined:
		return ""
	case q.Kind == KindApproval && q.Answer.Approve:
		return strings.TrimSpace("approved " + q.Answer.Comment)
	case q.Kind == KindApproval:
		return strings.TrimSpace("denied " + q.Answer.Comment)
	}
	return q.Answer.Text
}
