package bench

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	_ "github.com/mattn/go-sqlite3"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/store"
	"github.com/deskhand/deskhand/store/storetest"
)

const (
	millionMessages = 1_000_000
	conversations   = 10_000 // of 100 messages, 50 turns each
	vocabulary      = 50_000 // words the messages are written in
)

// filled is the million-message store and what searching it needs: the
// conversations, and words held by about 0.1% and about 10% of the
// messages, with how many messages hold each.
type filled struct {
	path             string
	ids              []string
	rare, common     string
	rareIn, commonIn int
}

// word is the vocabulary's word of rank i, a made-up word of two or more
// syllables, distinct for each i.
func word(i int) string {
	const syllables = "ka lo mi ne su ta re vo pi da gu be zo fa hi ju co we xi ly"
	syl := strings.Fields(syllables)
	var b strings.Builder
	for n := i + len(syl); n > 0; n /= len(syl) {
		b.WriteString(syl[n%len(syl)])
	}
	return b.String()
}

// fillMillion writes a store holding a million messages, directly in one
// transaction (the store's API commits each turn, too slow to fill). The
// text is drawn from a vocabulary with a Zipf-like spread, as in real
// language: a few words in most messages, most words in few. The
// full-text index is built at the end, as migration 0012 builds it.
func fillMillion(b *testing.B) filled {
	path := filepath.Join(b.TempDir(), store.FileName)
	storetest.OpenAt(b, path).Close() // migrated, then filled directly
	raw, err := sql.Open("sqlite3", path+"?_journal_mode=WAL&_synchronous=NORMAL")
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	tx, err := raw.Begin()
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now().UnixMilli()
	exec := func(q string, args ...any) {
		if _, err := tx.Exec(q, args...); err != nil {
			b.Fatal(err)
		}
	}
	exec(`INSERT INTO agents (id, slug, name, backend, created_at, updated_at) VALUES ('a', 'assistant', 'Assistant', 'ollama', ?, ?)`, now, now)
	convStmt, _ := tx.Prepare(`INSERT INTO conversations (id, agent_id, principal, created_at, updated_at) VALUES (?, 'a', 'p', ?, ?)`)
	turnStmt, _ := tx.Prepare(`INSERT INTO turns (id, conversation_id, agent_id, principal, status, started_at, ended_at) VALUES (?, ?, 'a', 'p', 'completed', ?, ?)`)
	msgStmt, _ := tx.Prepare(`INSERT INTO messages (conversation_id, turn_id, role, content, created_at) VALUES (?, ?, ?, ?, ?)`)
	ids := make([]string, conversations)
	for c := range conversations {
		ids[c] = uuid.NewString()
		if _, err := convStmt.Exec(ids[c], now, now); err != nil {
			b.Fatal(err)
		}
	}
	words := make([]string, vocabulary)
	for i := range words {
		words[i] = word(i)
	}
	rng := rand.New(rand.NewPCG(20, 6))
	zipf := rand.NewZipf(rng, 1.1, 2, vocabulary-1)
	heldBy := make([]int, vocabulary) // messages holding each word
	var (
		text  strings.Builder
		ranks []int
	)
	message := func() string {
		text.Reset()
		ranks = ranks[:0]
		for i := range 4 + rng.IntN(17) { // 4 to 20 words, 12 on average
			r := int(zipf.Uint64())
			if i > 0 {
				text.WriteByte(' ')
			}
			text.WriteString(words[r])
			if !slices.Contains(ranks, r) {
				ranks = append(ranks, r)
				heldBy[r]++
			}
		}
		text.WriteByte('.')
		return text.String()
	}
	// Interleaved as real use writes them: turn by turn across conversations.
	for turn := range millionMessages / conversations / 2 {
		for c := range conversations {
			tid := fmt.Sprintf("%s-%d", ids[c], turn)
			if _, err := turnStmt.Exec(tid, ids[c], now, now); err != nil {
				b.Fatal(err)
			}
			for _, role := range []string{"user", "assistant"} {
				if _, err := msgStmt.Exec(ids[c], tid, role, message(), now); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	// Indexed as migration 0012 indexes the history it finds.
	exec(`INSERT INTO messages_fts (docid, content) SELECT id, content FROM messages WHERE role IN ('user', 'assistant')`)
	exec(`UPDATE messages_fts_state SET indexed_upto = (SELECT MAX(id) FROM messages)`)
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	f := filled{path: path, ids: ids}
	closest := func(share float64) (string, int) {
		best := 0
		for r, n := range heldBy {
			if abs(float64(n)-share*millionMessages) < abs(float64(heldBy[best])-share*millionMessages) {
				best = r
			}
		}
		return words[best], heldBy[best]
	}
	f.rare, f.rareIn = closest(0.001)
	f.common, f.commonIn = closest(0.10)
	return f
}

func abs(x float64) float64 { return max(x, -x) }

// withoutIndex copies the store at path to a second one that never
// indexes: its triggers dropped, and its index marked as holding every
// message to come, so that the writer's batches find nothing to add. The
// same data, appended to without the index.
func withoutIndex(b *testing.B, path string) string {
	bare := filepath.Join(b.TempDir(), store.FileName)
	src, err := os.Open(path) // closed cleanly: the WAL is in the file
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(bare)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		b.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		b.Fatal(err)
	}
	raw, err := sql.Open("sqlite3", bare+"?_journal_mode=WAL&_synchronous=NORMAL")
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	for _, stmt := range []string{"DROP TRIGGER messages_fts_delete", "DROP TRIGGER messages_fts_before_update",
		"DROP TRIGGER messages_fts_after_update", "UPDATE messages_fts_state SET indexed_upto = 9223372036854775807"} {
		if _, err := raw.Exec(stmt); err != nil {
			b.Fatal(err)
		}
	}
	return bare
}

// appendTurn writes a turn (question and answer, committed together as
// the core does when the model answers at once) to a random conversation.
func appendTurn(ctx context.Context, db *store.DB, ids []string) error {
	conv := ids[rand.IntN(len(ids))]
	t := agent.Turn{ID: uuid.NewString(), ConversationID: conv, AgentID: "a", Principal: "p", Status: agent.TurnRunning, StartedAt: time.Now()}
	begun := db.BeginTurn(ctx, agent.TurnStart{Turn: t, User: agent.Message{Role: agent.RoleUser,
		Content: "Could you find the notes about the quarterly budget review?", TurnID: t.ID, CreatedAt: t.StartedAt}})
	t.Status = agent.TurnCompleted
	err := db.EndTurn(ctx, t, []agent.Message{{Role: agent.RoleAssistant,
		Content: "The budget review notes are in the finance folder, dated last Tuesday.", TurnID: t.ID, CreatedAt: time.Now()}})
	return cmp.Or(begun(), err)
}

// BenchmarkStoreAtAMillionMessages: a turn appended, with the full-text
// index and without it (interleaved, in the same run), the last 50
// messages of a conversation loaded, and a word searched, with a million
// messages stored.
func BenchmarkStoreAtAMillionMessages(b *testing.B) {
	f := fillMillion(b) // once: a benchmark with sub-benchmarks runs once
	bare := withoutIndex(b, f.path)
	db, noIndex := storetest.OpenAt(b, f.path), storetest.OpenAt(b, bare)
	for _, d := range []*store.DB{db, noIndex} {
		if n, _ := d.CountMessages(context.Background()); n != millionMessages {
			b.Fatalf("%d messages stored", n)
		}
	}
	ctx := context.Background()
	b.Run("append a turn", func(b *testing.B) {
		// Interleaved, the order alternating, so that both see the same
		// machine.
		with, without := make([]time.Duration, b.N), make([]time.Duration, b.N)
		var took [2]time.Duration
		b.ResetTimer()
		for i := range b.N {
			for k := range 2 {
				d, lat := db, with
				if (i+k)%2 == 1 {
					d, lat = noIndex, without
				}
				start := time.Now()
				if err := appendTurn(ctx, d, f.ids); err != nil {
					b.Fatal(err)
				}
				lat[i] = time.Since(start)
				took[(i+k)%2] += lat[i]
			}
		}
		// The batches of the index not run yet are work the turns made:
		// a search runs them, counted in the mean (on both stores alike).
		for k, d := range []*store.DB{db, noIndex} {
			start := time.Now()
			if _, err := d.SearchMessages(ctx, agent.SearchQuery{Text: "nothingmatches", Limit: 1}); err != nil {
				b.Fatal(err)
			}
			took[k] += time.Since(start)
		}
		b.StopTimer()
		r := summarize("deskhand", "", "store: append a turn at 1M messages", 1, with, took[0])
		r0 := summarize("deskhand", "", "store: append a turn at 1M messages, no full-text index", 1, without, took[1])
		record(r)
		record(r0)
		record(row{Name: "store: append a turn, with the index over without", Value: r.P50Micros / r0.P50Micros, Unit: "×"})
		// The index's whole cost, its batches included, shows in the mean
		// (information, beside the p50 the target is set on): calls/s is
		// the turns over the time they and the last batch took.
		record(row{Name: "store: append a turn, mean with the index over without", Value: r0.CallsPerSec / r.CallsPerSec, Unit: "×"})
		b.ReportMetric(r.P50Micros, "p50-µs")
		b.ReportMetric(r0.P50Micros, "p50-µs-no-index")
	})
	b.Run("load the last 50", func(b *testing.B) {
		lat, elapsed := load(b, 1, func(int) error {
			msgs, err := db.LastMessages(ctx, f.ids[rand.IntN(len(f.ids))], 50)
			if err == nil && len(msgs) != 50 {
				err = fmt.Errorf("%d messages", len(msgs))
			}
			return err
		})
		r := summarize("deskhand", "", "store: load the last 50 at 1M messages", 1, lat, elapsed)
		record(r)
		b.ReportMetric(r.P50Micros, "p50-µs")
	})
	for _, s := range []struct {
		name, word string
		heldBy     int
	}{
		{"a word in 0.1% of", f.rare, f.rareIn},
		{"a word in 10% of", f.common, f.commonIn},
	} {
		b.Run("search "+s.name, func(b *testing.B) {
			b.Logf("%q is in %d of %d messages", s.word, s.heldBy, millionMessages)
			lat, elapsed := load(b, 1, func(int) error {
				hits, err := db.SearchMessages(ctx, agent.SearchQuery{Text: s.word, Limit: agent.DefaultSearchLimit})
				if err == nil && len(hits) != agent.DefaultSearchLimit {
					err = fmt.Errorf("%d hits for %q, want %d", len(hits), s.word, agent.DefaultSearchLimit)
				}
				return err
			})
			r := summarize("deskhand", "", "store: search "+s.name+" 1M messages", 1, lat, elapsed)
			record(r)
			b.ReportMetric(r.P50Micros, "p50-µs")
		})
	}
}
