package bench

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver"
	"github.com/deskhand/deskhand/store"
	"github.com/deskhand/deskhand/store/storetest"
)

// row is one measured figure of the report.
type row struct {
	Name        string  `json:"name"`
	Server      string  `json:"server,omitempty"` // floor (bare), durable (floor) or deskhand
	Op          string  `json:"op,omitempty"`
	Era         string  `json:"era,omitempty"`
	Clients     int     `json:"clients,omitempty"`
	Calls       int     `json:"calls,omitempty"`
	P50Micros   float64 `json:"p50Micros,omitempty"`
	P99Micros   float64 `json:"p99Micros,omitempty"`
	CallsPerSec float64 `json:"callsPerSec,omitempty"`
	Value       float64 `json:"value,omitempty"`
	Unit        string  `json:"unit,omitempty"`
	// RowsWritten are the messages the calls stored: two per call.
	RowsWritten int `json:"rowsWritten,omitempty"`
}

var (
	reportMu sync.Mutex
	report   []row
)

// record keeps a figure; a benchmark run again with a larger b.N replaces
// its earlier figure.
func record(r row) {
	reportMu.Lock()
	defer reportMu.Unlock()
	for i := range report {
		if report[i].Name == r.Name {
			report[i] = r
			return
		}
	}
	report = append(report, r)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if len(report) > 0 {
		if !printReport(os.Stdout) && code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// instantModel answers at once, so what is measured is Deskhand.
type instantModel struct{}

func (instantModel) Chat(_ context.Context, req agent.ChatRequest, onDelta func(agent.Delta)) (agent.ChatResponse, error) {
	onDelta(agent.Delta{Content: "ok"})
	return agent.ChatResponse{Message: agent.Message{Role: agent.RoleAssistant, Content: "ok"}, Model: "instant"}, nil
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// target is a server under load: its URL, a token, and the tool to call.
type target struct {
	name, url, token, tool string
	db                     *store.DB // Deskhand's, to count rows
	raw                    *sql.DB   // the durable floor's (durablefloor_test.go)
	path                   string    // the durable floor's database file
}

// floor is a bare mcp-go Streamable HTTP server whose tool returns its
// input. The tool is defined exactly as Deskhand's agent tool (same name,
// schema and descriptions), so the two differ only in what Deskhand does.
func floor(b testing.TB) target {
	s := server.NewMCPServer("floor", "1", server.WithToolCapabilities(true))
	s.AddTool(agentToolDefinition(b), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(req.GetString("message", "")), nil
	})
	hs := httptest.NewServer(server.NewStreamableHTTPServer(s, server.WithStateful(true), server.WithStreamableHTTPLogger(quiet)))
	b.Cleanup(hs.Close)
	return target{name: "floor", url: hs.URL + "/mcp", tool: "assistant"}
}

var (
	definitionOnce sync.Once
	definition     mcp.Tool
)

// agentToolDefinition is the tool Deskhand serves for its agent, as a
// client lists it.
func agentToolDefinition(b testing.TB) mcp.Tool {
	definitionOnce.Do(func() {
		c := connect(b, deskhand(b, 1), mcp.ProtocolVersion20251125)
		res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
		if err != nil || len(res.Tools) != 1 {
			b.Fatalf("list Deskhand's tool: %v", err)
		}
		definition = res.Tools[0]
	})
	return definition
}

// deskhand is the real server stack: guard with a token, mcp-go, the core,
// SQLite on disk, with an instant model port. The activity log is on, as
// shipped; DESKHAND_BENCH_NO_LOG=1 turns it off, to measure its cost.
func deskhand(b testing.TB, agents int) target { return deskhandWith(b, agents, 1) }

// deskhandWith is deskhand serving agents agents to clients clients (the
// bench's, and others that never call).
func deskhandWith(b testing.TB, agents, clients int) target {
	db := storetest.Open(b) // closed after the cleanup below, which closes the core first
	core, err := agent.New(context.Background(), agent.Config{History: db, Logger: quiet,
		Models:        map[agent.Backend]agent.Model{agent.BackendOllama: instantModel{}},
		NoActivityLog: os.Getenv("DESKHAND_BENCH_NO_LOG") == "1"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := core.Agents().Save(context.Background(), agent.Agent{Name: "Assistant", Slug: "assistant", Model: "instant", Conversations: true, Enabled: true}); err != nil {
		b.Fatal(err)
	}
	for i := 1; i < agents; i++ {
		if _, err := core.Agents().Save(context.Background(), agent.Agent{Slug: fmt.Sprintf("agent-%04d", i), Model: "instant", Enabled: true}); err != nil {
			b.Fatal(err)
		}
	}
	_, token, err := core.Clients().Create(context.Background(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	for i := 1; i < clients; i++ {
		if _, _, err := core.Clients().Create(context.Background(), fmt.Sprintf("client-%04d", i)); err != nil {
			b.Fatal(err)
		}
	}
	srv, err := mcpserver.New(mcpserver.CoreOf(core), mcpserver.Options{Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	b.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		_ = srv.Close(context.Background())
		core.Close()
	})
	return target{name: "deskhand", url: hs.URL + mcpserver.EndpointPath, token: token, tool: "assistant", db: db}
}

func connect(b testing.TB, t target, era string) *client.Client {
	// Connections of its own, kept between requests, as an MCP client's
	// process has: sharing http.DefaultTransport's two idle connections,
	// 16 clients dialled anew for most requests.
	conns := http.DefaultTransport.(*http.Transport).Clone()
	b.Cleanup(conns.CloseIdleConnections)
	tr, err := transport.NewStreamableHTTP(t.url, transport.WithHTTPLogger(quiet),
		transport.WithHTTPBasicClient(&http.Client{Transport: &withToken{token: t.token, base: conns}}))
	if err != nil {
		b.Fatal(err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(era))
	if err := c.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = era
	init.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "0"}
	if _, err := c.Initialize(context.Background(), init); err != nil {
		b.Fatal(err)
	}
	return c
}

func callTool(c *client.Client, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	var req mcp.CallToolRequest
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := c.CallTool(context.Background(), req)
	if err == nil && res.IsError {
		err = fmt.Errorf("tool error: %v", res.Content)
	}
	return res, err
}

// ops are the requests measured, each a function of one worker's client
// and its conversation handle, made perN times for each of b.N.
var ops = []struct {
	name string
	// perN is more than one for a request that costs a fraction of a
	// call: measured b.N times, a tools/list cell at 64 clients had three
	// rounds of three lists a client, and its p50 over the bare floor's
	// went from 0.95× to 1.14× between two runs of the same code.
	perN int
	do   func(c *client.Client, tool, handle string) error
}{
	{"tools/list", 10, func(c *client.Client, _, _ string) error {
		_, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
		return err
	}},
	{"call, new conversation", 1, func(c *client.Client, tool, _ string) error {
		_, err := callTool(c, tool, map[string]any{"message": "hello", "conversation": ""})
		return err
	}},
	{"call, continue 50 messages", 1, func(c *client.Client, tool, handle string) error {
		_, err := callTool(c, tool, map[string]any{"message": "and then?", "conversation": handle})
		return err
	}},
}

var eras = []string{mcp.ProtocolVersion20251125, mcp.ProtocolVersion20260728}

// visits is how often each prepared conversation is continued: they grow
// from 50 messages to 60 while measured.
const visits = 5

// conversations50 makes n conversations of 50 messages (25 calls each) for
// a worker; the floor keeps none.
func conversations50(c *client.Client, t target, n int) ([]string, error) {
	handles := make([]string, n)
	for i := range handles {
		handles[i] = "floor"
		if t.db == nil && t.raw == nil {
			continue
		}
		res, err := callTool(c, t.tool, map[string]any{"message": "start", "conversation": ""})
		if err != nil {
			return nil, err
		}
		handles[i], _ = res.Meta.AdditionalFields[mcpserver.ConversationMetaKey].(string)
		for range 24 {
			if _, err := callTool(c, t.tool, map[string]any{"message": "more", "conversation": handles[i]}); err != nil {
				return nil, err
			}
		}
	}
	return handles, nil
}

func messageRows(b *testing.B, t target) int {
	if t.raw != nil {
		var n int
		if err := t.raw.QueryRow("SELECT COUNT(*) FROM messages").Scan(&n); err != nil {
			b.Fatal(err)
		}
		return n
	}
	if t.db == nil {
		return 0
	}
	n, err := t.db.CountMessages(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkSideBySide runs each request on the bare floor, the durable
// floor (calls only) and Deskhand, on both eras, at 1, 16 and 64
// concurrent clients, b.N times the op's perN on each. The servers take
// turns in rounds, so that what the machine does meanwhile (another
// process, the host of this VM) weighs on each alike: measured one after
// the other, the same server's p50 varied up to 1.7× from one minute to
// the next.
func BenchmarkSideBySide(b *testing.B) {
	for _, era := range eras {
		for _, op := range ops {
			for _, clients := range []int{1, 16, 64} {
				name := fmt.Sprintf("%s/%s/clients=%d", era, op.name, clients)
				b.Run(strings.ReplaceAll(name, " ", "_"), func(b *testing.B) {
					makers := []func(testing.TB) target{floor, durableFloor, func(b testing.TB) target { return deskhand(b, 1) }}
					if op.name == "tools/list" {
						makers = slices.Delete(makers, 1, 2) // the durable floor lists as the bare one
					}
					var sides []*side
					for _, mk := range makers {
						if tgt := mk(b); onlyServer == "" || tgt.name == onlyServer {
							sides = append(sides, prepareSide(b, tgt, era, op.name, clients))
						}
					}
					requests := b.N * op.perN
					rounds := max(1, min(10, requests/(8*clients)))
					b.ResetTimer()
					for round := range rounds {
						n := requests/rounds + btoi(round < requests%rounds)
						for j := range sides {
							// Each server goes first in turn.
							if err := sides[(round+j)%len(sides)].run(clients, n, op.do); err != nil {
								b.Fatal(err)
							}
						}
					}
					b.StopTimer()
					for _, s := range sides {
						r := summarize(s.tgt.name, era, op.name, clients, s.lat, s.elapsed)
						if op.name != "tools/list" {
							r.RowsWritten = messageRows(b, s.tgt) - s.rows
						}
						record(r)
						b.ReportMetric(r.P50Micros, s.tgt.name+"-p50-µs")
					}
				})
			}
		}
	}
}

// onlyServer, when set, keeps one server of the side-by-side runs (make
// bench-profile profiles Deskhand alone).
var onlyServer = os.Getenv("DESKHAND_BENCH_ONLY")

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// side is one server of a side-by-side measurement: its clients, the
// conversations each continues, and the latencies and time of its calls.
type side struct {
	tgt     target
	cs      []*client.Client
	handles [][]string
	calls   []int
	rows    int // messages stored before the measured calls
	lat     []time.Duration
	elapsed time.Duration
}

func prepareSide(b *testing.B, tgt target, era, op string, clients int) *side {
	s := &side{tgt: tgt, cs: make([]*client.Client, clients), handles: make([][]string, clients), calls: make([]int, clients)}
	for i := range s.cs {
		s.cs[i] = connect(b, tgt, era)
	}
	// Each worker continues its own conversations in turn, each a few
	// times, so that every call continues one of about 50 messages.
	if strings.HasPrefix(op, "call, continue") {
		var wg sync.WaitGroup
		errs := make([]error, clients)
		for i := range s.cs {
			wg.Go(func() { s.handles[i], errs[i] = conversations50(s.cs[i], tgt, b.N/clients/visits+1) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			b.Fatal(err)
		}
	}
	s.rows = messageRows(b, tgt)
	return s
}

// run makes n calls of do spread over clients workers.
func (s *side) run(clients, n int, do func(c *client.Client, tool, handle string) error) error {
	lat, elapsed, err := loadN(clients, n, func(i int) error {
		handle := ""
		if len(s.handles[i]) > 0 {
			handle = s.handles[i][s.calls[i]%len(s.handles[i])]
			s.calls[i]++
		}
		return do(s.cs[i], s.tgt.tool, handle)
	})
	s.lat = append(s.lat, lat...)
	s.elapsed += elapsed
	return err
}

// BenchmarkToolsList1000Agents lists a catalog of 1,000 agents (one page
// of 1,000 tools, about 1.3 MB) with a plain HTTP client that reads the
// whole answer: the figure is the server's. Decoding the page is the
// client's own cost; mcp-go's client, which also re-encodes every schema to
// validate it, takes tens of milliseconds over it.
func BenchmarkToolsList1000Agents(b *testing.B) {
	tgt := deskhand(b, 1000)
	const era = mcp.ProtocolVersion20260728
	params, _ := json.Marshal(map[string]any{"_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    era,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "bench", "version": "0"},
	}})
	body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":%s}`, params)
	// The answer is read whole into buf, which the timed lists reuse: a
	// buffer grown from nothing for 1.3 MB is zeroed on every growth, a
	// cost of the client (about 0.4 ms a list).
	list := func(buf *bytes.Buffer) error {
		req, err := http.NewRequest(http.MethodPost, tgt.url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		for k, v := range mcp.StandardHeaders(era, mcp.MethodToolsList, params) {
			req.Header.Set(k, v)
		}
		req.Header.Set("Mcp-Protocol-Version", era)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+tgt.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		buf.Reset()
		_, err = buf.ReadFrom(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("tools/list: %s: %s", resp.Status, buf)
		}
		return err
	}
	// Checked before and after, not while timed: one page of every tool.
	check := func() {
		var raw bytes.Buffer
		err := list(&raw)
		var res struct {
			Result mcp.ListToolsResult `json:"result"`
		}
		if err == nil {
			err = json.Unmarshal(raw.Bytes(), &res)
		}
		if err != nil || len(res.Result.Tools) != 1000 || res.Result.NextCursor != "" {
			b.Fatalf("tools/list of 1,000 agents: %d tools, next cursor %q, %v", len(res.Result.Tools), res.Result.NextCursor, err)
		}
	}
	check()
	var buf bytes.Buffer
	lat, elapsed := load(b, 1, func(int) error { return list(&buf) })
	check()
	r := summarize("deskhand", era, "tools/list, 1,000 agents", 1, lat, elapsed)
	record(r)
	b.ReportMetric(r.P50Micros, "p50-µs")
}

// load runs b.N calls spread over workers and returns their latencies and
// the wall time they took.
func load(b *testing.B, workers int, call func(worker int) error) ([]time.Duration, time.Duration) {
	b.ResetTimer()
	lat, elapsed, err := loadN(workers, b.N, call)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	return lat, elapsed
}

// loadN runs n calls spread over workers and returns their latencies and
// the wall time they took.
func loadN(workers, n int, call func(worker int) error) ([]time.Duration, time.Duration, error) {
	lat := make([]time.Duration, n)
	var next sync.Mutex
	i := 0
	var wg sync.WaitGroup
	var failed error
	start := time.Now()
	for w := range workers {
		wg.Go(func() {
			for {
				next.Lock()
				k := i
				i++
				next.Unlock()
				if k >= n {
					return
				}
				start := time.Now()
				if err := call(w); err != nil {
					next.Lock()
					failed = err
					next.Unlock()
					return
				}
				lat[k] = time.Since(start)
			}
		})
	}
	wg.Wait()
	return lat, time.Since(start), failed
}

func summarize(srv, era, op string, clients int, lat []time.Duration, elapsed time.Duration) row {
	sorted := slices.Clone(lat)
	slices.Sort(sorted)
	pct := func(p float64) float64 {
		return float64(sorted[min(len(sorted)-1, int(p*float64(len(sorted))))].Nanoseconds()) / 1e3
	}
	perSec := float64(len(lat)) / elapsed.Seconds()
	name := strings.Join(slices.DeleteFunc([]string{srv, era, op}, func(s string) bool { return s == "" }), " ")
	return row{Name: fmt.Sprintf("%s ×%d", name, clients), Server: srv, Op: op, Era: era, Clients: clients,
		Calls: len(lat), P50Micros: pct(0.50), P99Micros: pct(0.99), CallsPerSec: perSec}
}

// printReport prints the side-by-side table and the targets, writes the
// JSON, and says whether every target is met and every call's rows were
// written. Calls are held to the durable floor (durablefloor_test.go),
// which commits each turn as Deskhand does; tools/list to the bare floor;
// a call's ratio to the bare floor is printed as information.
func printReport(w io.Writer) bool {
	reportMu.Lock()
	defer reportMu.Unlock()
	ok := true
	type key struct {
		era, op string
		clients int
	}
	floors, durables := map[key]row{}, map[key]row{}
	for _, r := range report {
		switch r.Server {
		case "floor":
			floors[key{r.Era, r.Op, r.Clients}] = r
		case "durable":
			durables[key{r.Era, r.Op, r.Clients}] = r
		}
	}
	// ratio is a/b, printed as "-" when there is no b.
	ratio := func(a, b float64) string {
		if b == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", a/b)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "request\tera\tclients\tbare p50 µs\tdurable p50 µs\tdeskhand p50 µs\tp50 × bare\tp50 × durable\tdeskhand p99 µs\tbare calls/s\tdurable calls/s\tdeskhand calls/s\tthroughput × bare\tthroughput × durable\t")
	var checks []string
	rowsWritten := func(r row) {
		if r.Op != "tools/list" && r.RowsWritten != 2*r.Calls {
			ok = false
			checks = append(checks, fmt.Sprintf("ROWS %s %s %s ×%d: %d calls wrote %d messages, want %d", r.Server, r.Op, r.Era, r.Clients, r.Calls, r.RowsWritten, 2*r.Calls))
		}
	}
	for _, r := range report {
		k := key{r.Era, r.Op, r.Clients}
		f, sideBySide := floors[k]
		if r.Server == "durable" {
			rowsWritten(r)
		}
		if r.Server != "deskhand" || !sideBySide {
			continue
		}
		d := durables[k]
		durableP50, durableCalls := "-", "-"
		if d.Calls > 0 {
			durableP50, durableCalls = fmt.Sprintf("%.0f", d.P50Micros), fmt.Sprintf("%.0f", d.CallsPerSec)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f\t%s\t%.0f\t%s\t%s\t%.0f\t%.0f\t%s\t%.0f\t%s\t%s\t\n", r.Op, r.Era, r.Clients,
			f.P50Micros, durableP50, r.P50Micros, ratio(r.P50Micros, f.P50Micros), ratio(r.P50Micros, d.P50Micros),
			r.P99Micros, f.CallsPerSec, durableCalls, r.CallsPerSec, ratio(r.CallsPerSec, f.CallsPerSec), ratio(r.CallsPerSec, d.CallsPerSec))
		rowsWritten(r)
		if r.Op == "tools/list" {
			// Listing writes nothing: the bare floor is its floor.
			if p50x := r.P50Micros / f.P50Micros; p50x > 1.1 {
				checks = append(checks, fmt.Sprintf("MISSED p50 %s %s ×%d: %.2f× the bare floor (target ≤ 1.1×)", r.Op, r.Era, r.Clients, p50x))
			}
			if thrx := r.CallsPerSec / f.CallsPerSec; r.Clients == 64 && thrx < 0.75 {
				checks = append(checks, fmt.Sprintf("MISSED throughput %s %s ×64: %.2f× the bare floor (target ≥ 0.75×)", r.Op, r.Era, thrx))
			}
			continue
		}
		if d.Calls == 0 {
			checks = append(checks, fmt.Sprintf("MISSED %s %s ×%d: no durable floor to compare with", r.Op, r.Era, r.Clients))
			continue
		}
		if p50x := r.P50Micros / d.P50Micros; r.Clients <= 16 && p50x > 1.25 {
			checks = append(checks, fmt.Sprintf("MISSED p50 %s %s ×%d: %.2f× the durable floor (target ≤ 1.25×)", r.Op, r.Era, r.Clients, p50x))
		}
		if thrx := r.CallsPerSec / d.CallsPerSec; r.Clients == 64 && thrx < 1.0 {
			checks = append(checks, fmt.Sprintf("MISSED throughput %s %s ×64: %.2f× the durable floor (target ≥ 1.0×)", r.Op, r.Era, thrx))
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, r := range report {
		if r.Server == "floor" || r.Server == "durable" {
			continue
		}
		if _, sideBySide := floors[key{r.Era, r.Op, r.Clients}]; sideBySide {
			continue
		}
		fmt.Fprintf(w, "%s: %s\n", r.Name, figure(r))
		value := r.Value
		if r.Unit == "" {
			value = r.P50Micros
		}
		if lim, has := limits[strings.SplitN(r.Name, " ×", 2)[0]]; has && value > lim {
			checks = append(checks, fmt.Sprintf("MISSED %s: %s (target under %v)", r.Name, figure(r), lim))
		}
	}
	checks = append(checks, processChecks(w, report)...)
	sort.Strings(checks)
	if len(checks) == 0 {
		fmt.Fprintln(w, "\nEvery target met; every call's rows written.")
	}
	for _, c := range checks {
		fmt.Fprintln(w, c)
		if strings.HasPrefix(c, "MISSED") {
			ok = false
		}
	}
	raw, _ := json.MarshalIndent(report, "", "  ")
	if path := os.Getenv("DESKHAND_BENCH_JSON"); path != "" {
		if err := os.WriteFile(path, append(raw, '\n'), 0o644); err != nil {
			fmt.Fprintln(w, "write", path+":", err)
			ok = false
		}
	}
	return ok
}

// limits are the targets of the other figures: the most a figure (its
// Value, or its p50 in µs) may be, by name.
var limits = map[string]float64{
	"deskhand 2026-07-28 tools/list, 1,000 agents":    2000,
	"deskhand store: load the last 50 at 1M messages": 2000,
	"process: start to first answered request":        150,
	// Memory the process owns, idle. The whole resident set (recorded
	// beside it, 64–68 MB on this machine) is mostly the binary's own
	// file pages: the kernel maps its 110 MB file in 2 MB blocks, and
	// fyne's text/template keeps every exported method of the model SDKs
	// linked. Those pages are clean and shared, so the target is on the
	// anonymous part; the whole RSS after 10,000 conversations is held to
	// twice the whole idle (processChecks).
	"process: anonymous resident memory, idle": 16,
	// What each model adapter adds to its provider's own time (issue 15).
	"adapter ollama: over the fake alone":            5,
	"adapter openai-compatible: over the fake alone": 5,
	"adapter anthropic: over the fake alone":         5,

	// Search over all history (issue 20): a word's p50 under 50 ms at a
	// million messages, and appending a turn at most 20% slower with the
	// full-text index than without it.
	"deskhand store: search a word in 0.1% of 1M messages": 50_000,
	"deskhand store: search a word in 10% of 1M messages":  50_000,
	"store: append a turn, with the index over without":    1.2,
}

func figure(r row) string {
	if r.Unit != "" {
		return fmt.Sprintf("%.2f %s", r.Value, r.Unit)
	}
	return fmt.Sprintf("p50 %.0f µs, p99 %.0f µs", r.P50Micros, r.P99Micros)
}
