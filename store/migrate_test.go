package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/google/go-cmp/cmp"
)

// schemaObject is one row of sqlite_master.
type schemaObject struct {
	Type, Name, Table, SQL string
}

// schema returns every table, index, view and trigger of the database.
func schema(t *testing.T, conn *sql.DB) []schemaObject {
	t.Helper()
	rows, err := conn.Query("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []schemaObject
	for rows.Next() {
		var (
			o   schemaObject
			def sql.NullString // NULL for automatic indexes
		)
		if err := rows.Scan(&o.Type, &o.Name, &o.Table, &def); err != nil {
			t.Fatal(err)
		}
		o.SQL = def.String
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// versions returns the recorded migrations.
func versions(t *testing.T, conn *sql.DB) []int {
	t.Helper()
	rows, err := conn.Query("SELECT version FROM schema_migrations ORDER BY version")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func allMigrations(t *testing.T) []migration {
	t.Helper()
	migs, err := embeddedMigrations()
	if err != nil {
		t.Fatalf("embedded migrations: %v", err)
	}
	if len(migs) == 0 {
		t.Fatal("no embedded migrations")
	}
	return migs
}

func TestEmbeddedMigrationsAreNumbered(t *testing.T) {
	for i, m := range allMigrations(t) {
		if m.version != i+1 {
			t.Errorf("migration %s has version %d, want %d", m.name, m.version, i+1)
		}
		if strings.TrimSpace(m.sql) == "" {
			t.Errorf("migration %s is empty", m.name)
		}
	}
}

func TestLoadMigrations(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	for _, tc := range []struct {
		name    string
		fsys    fstest.MapFS
		want    []int
		wantErr string
	}{
		{"none", fstest.MapFS{}, nil, ""},
		{"in order", fstest.MapFS{"0002_b.sql": file("B"), "0001_a.sql": file("A"), "README": file("")}, []int{1, 2}, ""},
		{"gap", fstest.MapFS{"0001_a.sql": file("A"), "0003_c.sql": file("C")}, nil, "version 3, want 2"},
		{"repeat", fstest.MapFS{"0001_a.sql": file("A"), "0001_b.sql": file("B")}, nil, "version 1, want 2"},
		{"not from one", fstest.MapFS{"0002_b.sql": file("B")}, nil, "version 2, want 1"},
		{"bad name", fstest.MapFS{"1_init.sql": file("A")}, nil, "not NNNN_name.sql"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			migs, err := loadMigrations(tc.fsys)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("loadMigrations error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("loadMigrations: %v", err)
			}
			var got []int
			for _, m := range migs {
				got = append(got, m.version)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("versions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMigrateFromEveryVersion is the "migrated schema == fresh schema"
// check: a database left at every version k (0 = empty file) and then
// opened by this build must end up exactly like a new one. Each migration
// added to migrations/ is covered by it without changes here.
func TestMigrateFromEveryVersion(t *testing.T) {
	ctx := context.Background()
	migs := allMigrations(t)
	fresh := openTest(t)
	want := schema(t, fresh.db)
	wantVersions := versions(t, fresh.db)

	for k := 0; k <= len(migs); k++ {
		t.Run(fmt.Sprintf("from %d", k), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), FileName)
			old, err := openConn(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			if err := migrate(ctx, old, path, migs[:k]); err != nil {
				t.Fatalf("migrate to %d: %v", k, err)
			}
			if got := versions(t, old); len(got) != k {
				t.Fatalf("after migrating to %d, versions = %v", k, got)
			}
			old.Close()

			db, err := Open(ctx, path)
			if err != nil {
				t.Fatalf("Open from version %d: %v", k, err)
			}
			defer db.Close()
			if diff := cmp.Diff(want, schema(t, db.db)); diff != "" {
				t.Errorf("schema migrated from version %d differs from a fresh one (-fresh +migrated):\n%s", k, diff)
			}
			if diff := cmp.Diff(wantVersions, versions(t, db.db)); diff != "" {
				t.Errorf("recorded versions (-fresh +migrated):\n%s", diff)
			}
		})
	}
}

func TestMigrateTwiceIsNoop(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	wantSchema := schema(t, db.db)
	wantRows := migrationRows(t, db.db)

	if err := migrate(ctx, db.db, db.Path(), allMigrations(t)); err != nil {
		t.Fatalf("second migrate: %v", err)
	}
	if diff := cmp.Diff(wantSchema, schema(t, db.db)); diff != "" {
		t.Errorf("schema changed by a second migrate (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(wantRows, migrationRows(t, db.db)); diff != "" {
		t.Errorf("schema_migrations changed by a second migrate (-before +after):\n%s", diff)
	}

	// Reopening is a no-op too.
	path := db.Path()
	db.Close()
	again, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer again.Close()
	if diff := cmp.Diff(wantRows, migrationRows(t, again.db)); diff != "" {
		t.Errorf("schema_migrations changed by reopening (-before +after):\n%s", diff)
	}
}

// migrationRows returns schema_migrations as "version@applied_at" strings.
func migrationRows(t *testing.T, conn *sql.DB) []string {
	t.Helper()
	rows, err := conn.Query("SELECT version, applied_at FROM schema_migrations ORDER BY version")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v, at int64
		if err := rows.Scan(&v, &at); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d@%d", v, at))
	}
	return out
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	known := len(allMigrations(t))
	db := openTest(t)
	path := db.Path()
	if _, err := db.db.Exec("INSERT INTO schema_migrations (version, applied_at) VALUES (?, 0)", known+1); err != nil {
		t.Fatal(err)
	}
	db.Close()

	newer, err := Open(ctx, path)
	if err == nil {
		newer.Close()
		t.Fatal("Open of a newer database succeeded")
	}
	var nerr *NewerSchemaError
	if !errors.As(err, &nerr) {
		t.Fatalf("Open error = %v (%T), want a *NewerSchemaError", err, err)
	}
	if diff := cmp.Diff(&NewerSchemaError{Path: path, Version: known + 1, Known: known}, nerr); diff != "" {
		t.Errorf("NewerSchemaError (-want +got):\n%s", diff)
	}
	wantMsg := fmt.Sprintf("database %s was written by a newer Deskhand (schema %d, this build knows %d); upgrade Deskhand", path, known+1, known)
	if err.Error() != wantMsg {
		t.Errorf("error = %q, want %q", err, wantMsg)
	}
}

// TestFailedMigrationLeavesWholeVersion checks that a migration runs in
// one transaction: when a statement fails, the statements before it are
// rolled back and the version is not recorded.
func TestFailedMigrationLeavesWholeVersion(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	migs := allMigrations(t)
	broken := append(migs[:len(migs):len(migs)], migration{
		version: len(migs) + 1,
		name:    "9999_broken.sql",
		sql:     "CREATE TABLE half_done (x INTEGER); INSERT INTO no_such_table VALUES (1);",
	})
	err := migrate(ctx, db.db, db.Path(), broken)
	if err == nil || !strings.Contains(err.Error(), "9999_broken.sql") {
		t.Fatalf("migrate with a broken migration: error = %v, want one naming the file", err)
	}
	var n int
	if err := db.db.QueryRow("SELECT count(*) FROM sqlite_master WHERE name = 'half_done'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Error("table of the failed migration exists: it was not rolled back")
	}
	if got, want := len(versions(t, db.db)), len(migs); got != want {
		t.Errorf("recorded versions = %d, want %d", got, want)
	}
}

// TestMigrateAgentToolsToObjects: 0002 turns a version-1 agent's tool
// names into tool objects (approval off), in order, gives it the new
// fields' defaults, and loses nothing: the agent's conversations and turns
// are still there.
func TestMigrateAgentToolsToObjects(t *testing.T) {
	ctx := context.Background()
	path := databaseAt(t, 1,
		`INSERT INTO agents (id, slug, name, backend, tools, created_at, updated_at)
			VALUES ('a1', 'reader', 'Reader', 'ollama', '["a","b"]', 1000, 2000)`,
		`INSERT INTO agents (id, slug, name, backend, tools, created_at, updated_at)
			VALUES ('a2', 'bare', 'Bare', 'ollama', '[]', 1000, 2000)`,
		`INSERT INTO agents (id, slug, name, backend, tools, created_at, updated_at)
			VALUES ('a3', 'quoted', 'Quoted', 'ollama', '["say \"hi\"", "ünï"]', 1000, 2000)`,
		`INSERT INTO conversations (id, agent_id, principal, created_at, updated_at) VALUES ('c1', 'a1', 'p', 1, 1)`,
		`INSERT INTO turns (id, conversation_id, agent_id, principal, status, started_at) VALUES ('t1', 'c1', 'a1', 'p', 'completed', 1)`,
	)

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer db.Close()
	var raw string
	if err := db.db.QueryRowContext(ctx, "SELECT tools FROM agents WHERE id = 'a1'").Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if want := `[{"name":"a","needsApproval":false},{"name":"b","needsApproval":false}]`; raw != want {
		t.Errorf("stored tools = %s, want %s", raw, want)
	}
	got, err := db.Agents(ctx)
	if err != nil {
		t.Fatalf("Agents: %v", err)
	}
	// 0005 moves agents from Ollama to the provider "ollama".
	base := agent.Agent{Backend: agent.BackendProvider, Provider: agent.OllamaProvider, Conversations: true, Enabled: true,
		CreatedAt: fromMillis(1000), UpdatedAt: fromMillis(2000)}
	with := func(id, slug, name string, tools ...agent.AgentTool) agent.Agent {
		a := base
		a.ID, a.Slug, a.Name, a.Tools = id, slug, name, tools
		return a
	}
	want := []agent.Agent{ // slug order
		with("a2", "bare", "Bare"),
		with("a3", "quoted", "Quoted", agent.AgentTool{Name: `say "hi"`}, agent.AgentTool{Name: "ünï"}),
		with("a1", "reader", "Reader", agent.AgentTool{Name: "a"}, agent.AgentTool{Name: "b"}),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("agents after migrating from version 1 (-want +got):\n%s", diff)
	}
	for _, a := range got {
		// Saved before 0004: approvals stay with the desktop, no host on
		// the person's network is reachable.
		if a.ClientMayApprove || a.ReachableHosts != nil {
			t.Errorf("agent %s migrated with ClientMayApprove %v, ReachableHosts %q; want false and none", a.Slug, a.ClientMayApprove, a.ReachableHosts)
		}
	}
	if turns, err := db.Turns(ctx, "c1"); err != nil || len(turns) != 1 {
		t.Errorf("turns of the version-1 conversation = %v, %v; want the one", turns, err)
	}
	if qs, err := db.Questions(ctx, "c1"); err != nil || len(qs) != 0 {
		t.Errorf("questions of the version-1 conversation = %v, %v; want none", qs, err)
	}
}

// TestMigrateUnpinnedClientRules: 0014 turns off, with the reason, each
// rule a client made for every client before clients' rules were pinned,
// keeps it, and leaves the person's rules and a client's own rules on;
// re-enabling one turns it on for every client.
func TestMigrateUnpinnedClientRules(t *testing.T) {
	ctx := context.Background()
	path := databaseAt(t, 13,
		`INSERT INTO agents (id, slug, name, backend, tools, created_at, updated_at) VALUES ('a1', 'scribe', 'Scribe', 'provider', '[]', 1000, 2000)`,
		`INSERT INTO approval_rules (id, agent_id, tool, client_id, created_at, created_by) VALUES ('every', 'a1', 'write_file', '', 10, 'client')`,
		`INSERT INTO approval_rules (id, agent_id, tool, client_id, created_at, created_by) VALUES ('own', 'a1', 'write_file', 'c1', 20, 'client')`,
		`INSERT INTO approval_rules (id, agent_id, tool, client_id, host, created_at, created_by) VALUES ('person', 'a1', 'fetch_url', '', 'example.com', 30, 'desktop')`,
	)

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer db.Close()
	rule := func(id, tool, client, host string, at int64, by agent.Answerer, review string) agent.ApprovalRule {
		return agent.ApprovalRule{ID: id, Agent: "a1", Tool: tool, Client: client, Host: host, CreatedAt: fromMillis(at), CreatedBy: by, Review: review}
	}
	want := []agent.ApprovalRule{
		rule("every", "write_file", "", "", 10, agent.ByClient, agent.ReviewUnpinned),
		rule("own", "write_file", "c1", "", 20, agent.ByClient, ""),
		rule("person", "fetch_url", "", "example.com", 30, agent.ByDesktop, ""),
	}
	got, err := db.ApprovalRules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rules after migrating from version 13 (-want +got):\n%s", diff)
	}
	if err := db.EnableApprovalRule(ctx, "every"); err != nil {
		t.Fatal(err)
	}
	if err := db.EnableApprovalRule(ctx, "nothing"); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("enabling a rule that does not exist: %v, want ErrNotFound", err)
	}
	want[0].Review = ""
	if got, _ = db.ApprovalRules(ctx); !cmp.Equal(want, got) {
		t.Errorf("rules after re-enabling: %+v", got)
	}
}

// databaseAt is a database file left at version k with the rows stmts
// write, as an older Deskhand left it.
func databaseAt(t *testing.T, k int, stmts ...string) (path string) {
	t.Helper()
	ctx := context.Background()
	path = filepath.Join(t.TempDir(), FileName)
	old, err := openConn(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if err := migrate(ctx, old, path, allMigrations(t)[:k]); err != nil {
		t.Fatalf("migrate to %d: %v", k, err)
	}
	for _, stmt := range stmts {
		if _, err := old.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("write a version-%d row: %v\n%s", k, err, stmt)
		}
	}
	return path
}
