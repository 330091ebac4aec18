package control

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/deskhand/deskhand/server/agent"
)

// The activity log over the control channel: a page of rows, and a stream
// of rows as they are recorded (JSON Lines), for "deskhand log [--follow]".

// ActivityCore is what the log needs of the core: its rows, and the
// events that announce new ones. A Core without it answers 404 for the log.
type ActivityCore interface {
	List(ctx context.Context, f agent.ActivityFilter) ([]agent.ActivityRow, error)
	Subscribe(ctx context.Context, kinds ...agent.EventKind) <-chan agent.Event
}

// activityOf joins a core's log with its events.
type activityOf struct {
	*agent.Activity
	*agent.Events
}

// ActivityQuery selects rows: by client name, agent slug and age.
type ActivityQuery struct {
	Client string
	Agent  string
	Since  time.Time
	Limit  int
}

func (q ActivityQuery) values() url.Values {
	v := url.Values{}
	if q.Client != "" {
		v.Set("client", q.Client)
	}
	if q.Agent != "" {
		v.Set("agent", q.Agent)
	}
	if !q.Since.IsZero() {
		v.Set("since", q.Since.UTC().Format(time.RFC3339Nano))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	return v
}

// ActivityFilterOf turns a query into the core's filter, naming clients by
// name: an unknown name is an error a person can act on.
func ActivityFilterOf(clients []agent.Client, q ActivityQuery) (agent.ActivityFilter, error) {
	f := agent.ActivityFilter{Agent: q.Agent, Since: q.Since, Limit: q.Limit}
	if q.Client != "" {
		for _, c := range clients {
			if c.Name == q.Client {
				f.Client = c.ID
			}
		}
		if f.Client == "" {
			return f, agent.Userf(agent.ErrNotFound, "no client is named %q: see 'deskhand token list'", q.Client)
		}
	}
	return f, nil
}

func parseActivityQuery(r *http.Request) (ActivityQuery, error) {
	v := r.URL.Query()
	q := ActivityQuery{Client: v.Get("client"), Agent: v.Get("agent")}
	if s := v.Get("since"); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return q, agent.Userf(nil, "since must be a time like 2026-01-02T15:04:05Z, not %q", s)
		}
		q.Since = t
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return q, agent.Userf(nil, "limit must be a number, not %q", s)
		}
		q.Limit = n
	}
	return q, nil
}

func activityRoutes(mux *http.ServeMux, core Core, closing <-chan struct{}) {
	ac := core.Activity
	if ac == nil {
		return
	}
	filterOf := func(w http.ResponseWriter, r *http.Request) (agent.ActivityFilter, bool) {
		q, err := parseActivityQuery(r)
		if err == nil {
			var f agent.ActivityFilter
			if f, err = ActivityFilterOf(core.Clients.List(), q); err == nil {
				return f, true
			}
		}
		replyErr(w, err)
		return agent.ActivityFilter{}, false
	}
	mux.HandleFunc("GET /v1/activity", func(w http.ResponseWriter, r *http.Request) {
		f, ok := filterOf(w, r)
		if !ok {
			return
		}
		rows, err := ac.List(r.Context(), f)
		if err != nil {
			replyErr(w, err)
			return
		}
		reply(w, http.StatusOK, rows)
	})
	// The follower gets the page its query selects, oldest first, then
	// each row as it is recorded: subscribed before the page is read, so
	// that no row falls between the two, and none comes twice.
	mux.HandleFunc("GET /v1/activity/follow", func(w http.ResponseWriter, r *http.Request) {
		f, ok := filterOf(w, r)
		if !ok {
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		go func() {
			select {
			case <-closing:
				cancel()
			case <-ctx.Done():
			}
		}()
		events := ac.Subscribe(ctx, agent.EventActivity)
		page, err := ac.List(ctx, f)
		if err != nil {
			replyErr(w, err)
			return
		}
		w.Header().Set("Content-Type", "application/jsonl")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		enc := json.NewEncoder(w)
		var last int64
		for _, l := range slices.Backward(page) {
			if enc.Encode(l) != nil {
				return
			}
			last = max(last, l.ID)
		}
		if rc.Flush() != nil {
			return
		}
		for e := range events {
			if e.Activity == nil || e.Activity.ID <= last || !f.Matches(*e.Activity) {
				continue
			}
			row := []agent.ActivityRow{*e.Activity}
			agent.NameClients(row, core.Clients.List())
			if enc.Encode(row[0]) != nil || rc.Flush() != nil {
				return
			}
		}
	})
}

// Activity lists the log, newest first.
func (c *Client) Activity(ctx context.Context, q ActivityQuery) ([]agent.ActivityRow, error) {
	var out []agent.ActivityRow
	err := c.do(ctx, http.MethodGet, "/v1/activity?"+q.values().Encode(), nil, &out)
	return out, err
}

// FollowActivity calls fn with each row of the page q selects, oldest
// first, then with each row recorded from then on, until ctx ends (nil) or
// fn fails. subscribed, when set, is called once the app follows.
func (c *Client) FollowActivity(ctx context.Context, q ActivityQuery, subscribed func(), fn func(agent.ActivityRow) error) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://deskhand/v1/activity/follow?"+q.values().Encode(), nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("control channel: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var p problem
		if json.NewDecoder(resp.Body).Decode(&p) == nil && p.Error != "" {
			return &agent.UserError{Msg: p.Error}
		}
		return fmt.Errorf("control channel: %s", resp.Status)
	}
	if subscribed != nil {
		subscribed()
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var line agent.ActivityRow
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return fmt.Errorf("control channel: decode a log row: %w", err)
		}
		if err := fn(line); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("control channel: %w", err)
	}
	return nil
}
