package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	_ "github.com/mattn/go-sqlite3"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver"
	"github.com/deskhand/deskhand/store"
)

// The durable floor is the bare floor's mcp-go server whose tool, before
// it answers, commits the turn the way a straightforward implementation
// would: database/sql over go-sqlite3 with the store's pragmas, Deskhand's
// schema, and one transaction per call writing the rows Deskhand writes
// for it (TestDurableFloorWritesWhatDeskhandWrites keeps the two in step).
// It is what a call must cost if its answer is acknowledged only once its
// turn is committed, with no group commit and no cache.

// durableDSN is what a straightforward implementation opens: WAL with
// synchronous=NORMAL (as the store, DESIGN §7), foreign keys, a busy
// timeout, and transactions that take the write lock when they begin.
// It writes through one connection, the usual way to use SQLite from
// database/sql: with a pool, 64 clients' transactions wait in SQLite's
// busy handler, which sleeps and lets newcomers through, so some wait past
// the busy timeout and fail ("database is locked") while others go first.
// Measured so (with a retry on that error), its p50 at 16 clients was low
// but its p99 0.3–4.5 s and its throughput below Deskhand's; one
// connection queues the calls in database/sql instead.
const durableDSN = "?_journal_mode=WAL&_synchronous=NORMAL&_foreign_keys=on&_busy_timeout=5000&_txlock=immediate"

// durableFloor serves the durable floor on a database migrated by the
// store (opened once, closed, and reopened raw), holding one agent.
func durableFloor(tb testing.TB) target {
	path := filepath.Join(tb.TempDir(), store.FileName)
	migrated, err := store.Open(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := migrated.Close(); err != nil {
		tb.Fatal(err)
	}
	db, err := sql.Open("sqlite3", path+durableDSN)
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	tb.Cleanup(func() { db.Close() })
	agentID := uuid.NewString()
	now := time.Now().UnixMilli()
	if _, err := db.Exec(`INSERT INTO agents (id, slug, name, backend, model, created_at, updated_at)
		VALUES (?, 'assistant', 'Assistant', 'ollama', 'instant', ?, ?)`, agentID, now, now); err != nil {
		tb.Fatal(err)
	}
	s := server.NewMCPServer("durable", "1", server.WithToolCapabilities(true))
	s.AddTool(agentToolDefinition(tb), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		message := req.GetString("message", "")
		handle := strings.TrimSpace(req.GetString("conversation", ""))
		const answer = "ok"
		handle, err := commitTurn(ctx, db, agentID, handle, message, answer)
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		res := mcp.NewToolResultText(answer)
		res.Meta = mcp.NewMetaFromMap(map[string]any{mcpserver.ConversationMetaKey: handle})
		return res, nil
	})
	hs := httptest.NewServer(server.NewStreamableHTTPServer(s, server.WithStateful(true), server.WithStreamableHTTPLogger(quiet)))
	tb.Cleanup(hs.Close)
	return target{name: "durable", url: hs.URL + "/mcp", tool: "assistant", raw: db, path: path}
}

// commitTurn writes one call's rows in one transaction: a new
// conversation (when handle is blank), the turn, the user's message and
// the answer, the conversation's last activity, and the call's row of the
// activity log. It returns the conversation's handle.
func commitTurn(ctx context.Context, db *sql.DB, agentID, handle, message, answer string) (string, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return "", fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	started := time.Now()
	at := started.UnixMilli()
	if handle == "" {
		handle = uuid.NewString()
		if _, err := tx.ExecContext(ctx, `INSERT INTO conversations (id, agent_id, principal, title, created_at, updated_at)
			VALUES (?, ?, 'bench', ?, ?, ?)`, handle, agentID, message, at, at); err != nil {
			return "", fmt.Errorf("insert conversation: %w", err)
		}
	} else {
		res, err := tx.ExecContext(ctx, "UPDATE conversations SET updated_at = MAX(updated_at, ?) WHERE id = ?", at, handle)
		if err != nil {
			return "", fmt.Errorf("update conversation: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return "", fmt.Errorf("conversation %s: %w", handle, errors.Join(err, errors.New("not found")))
		}
	}
	turn := uuid.NewString()
	ended := time.Now().UnixMilli()
	if _, err := tx.ExecContext(ctx, `INSERT INTO turns (id, conversation_id, agent_id, principal, status, model,
			started_at, ended_at, duration_ms) VALUES (?, ?, ?, 'bench', 'completed', 'instant', ?, ?, ?)`,
		turn, handle, agentID, at, ended, ended-at); err != nil {
		return "", fmt.Errorf("insert turn: %w", err)
	}
	for _, m := range []struct{ role, content string }{{"user", message}, {"assistant", answer}} {
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages (conversation_id, turn_id, role, content, created_at)
			VALUES (?, ?, ?, ?, ?)`, handle, turn, m.role, m.content, ended); err != nil {
			return "", fmt.Errorf("insert message: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO activity (at, client, method, agent, conversation, duration_us, outcome, size)
		VALUES (?, 'bench', 'tools/call', 'assistant', ?, ?, 'ok', 96)`, at, handle, time.Since(started).Microseconds()); err != nil {
		return "", fmt.Errorf("insert activity: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return "", fmt.Errorf("commit: %w", err)
	}
	return handle, nil
}

// tableRows counts the rows of every table of the database at path.
func tableRows(tb testing.TB, path string) map[string]int {
	tb.Helper()
	db, err := sql.Open("sqlite3", path+"?mode=ro")
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
	if err != nil {
		tb.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			tb.Fatal(err)
		}
		tables = append(tables, name)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	rows.Close()
	counts := make(map[string]int, len(tables))
	for _, t := range tables {
		var n int
		if err := db.QueryRow(`SELECT COUNT(*) FROM "` + t + `"`).Scan(&n); err != nil {
			tb.Fatal(err)
		}
		counts[t] = n
	}
	return counts
}

// settled waits until the target's writes are all committed, the
// activity log's buffered rows included.
func settled(tb testing.TB, t target) {
	tb.Helper()
	if t.db == nil {
		return
	}
	if _, err := t.db.Activity(context.Background(), agent.ActivityFilter{Limit: 1}); err != nil {
		tb.Fatal(err)
	}
}

// TestDurableFloorWritesWhatDeskhandWrites makes the same calls on
// Deskhand and on the durable floor (new conversations, then continued
// ones, on both eras) and compares the rows each call added, table by
// table, so that the floor cannot drift from what Deskhand writes.
func TestDurableFloorWritesWhatDeskhandWrites(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			added := map[string]map[string]int{}
			for _, tgt := range []target{deskhand(t, 1), durableFloor(t)} {
				c := connect(t, tgt, era)
				// A first call, not counted: a client's first use may touch
				// its record once.
				if _, err := callTool(c, tgt.tool, map[string]any{"message": "warm up", "conversation": ""}); err != nil {
					t.Fatal(err)
				}
				settled(t, tgt)
				before := tableRows(t, tgt.dbPath())
				var handles []string
				for i := range 3 {
					res, err := callTool(c, tgt.tool, map[string]any{"message": fmt.Sprintf("hello %d", i), "conversation": ""})
					if err != nil {
						t.Fatal(err)
					}
					h := conversationHandle(res)
					if h == "" {
						t.Fatalf("%s: no conversation handle in %+v", tgt.name, res.Meta)
					}
					handles = append(handles, h)
				}
				for i := range 5 {
					if _, err := callTool(c, tgt.tool, map[string]any{"message": "and then?", "conversation": handles[i%len(handles)]}); err != nil {
						t.Fatal(err)
					}
				}
				settled(t, tgt)
				after := tableRows(t, tgt.dbPath())
				diff := map[string]int{}
				for table, n := range after {
					diff[table] = n - before[table]
				}
				added[tgt.name] = diff
			}
			if d := cmp.Diff(added["deskhand"], added["durable"]); d != "" {
				t.Errorf("rows added by 3 new and 5 continued calls, per table (-deskhand +durable floor):\n%s", d)
			}
			if added["durable"]["messages"] != 16 {
				t.Errorf("the durable floor wrote %d messages for 8 calls, want 16", added["durable"]["messages"])
			}
		})
	}
}

// dbPath is the file of the target's database ("" for the bare floor).
func (t target) dbPath() string {
	if t.db != nil {
		return t.db.Path()
	}
	return t.path
}

// conversationHandle is the conversation a tool result names.
func conversationHandle(res *mcp.CallToolResult) string {
	if res == nil || res.Meta == nil {
		return ""
	}
	h, _ := res.Meta.AdditionalFields[mcpserver.ConversationMetaKey].(string)
	return h
}
