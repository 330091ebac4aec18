package cli

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/store/storetest"
)

// columns separates the columns of a table printed by tabwriter.
var columns = regexp.MustCompile(` {2,}`)

// TestSearchCommand: 'search' finds words in any stored conversation,
// by agent and client, through the core and through the running app's
// control channel; nothing found, no word and bad flags say so.
func TestSearchCommand(t *testing.T) {
	for _, running := range []bool{false, true} {
		name := map[bool]string{false: "core", true: "control channel"}[running]
		t.Run(name, func(t *testing.T) {
			db := storetest.Open(t)
			core, err := agent.New(t.Context(), agent.Config{History: db})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(core.Close)
			cl, _, err := core.Clients().Create(t.Context(), "cursor")
			if err != nil {
				t.Fatal(err)
			}
			day := time.Date(2026, 3, 1, 9, 30, 0, 0, time.Local)
			for i, c := range []struct{ slug, principal, title, text string }{
				{"helper", cl.ID, "Budget talk", "the quarterly budget is due"},
				{"scribe", agent.LocalPrincipal, "", "budget notes,\nsecond line"},
			} {
				a, err := core.Agents().Save(t.Context(), agent.Agent{Slug: c.slug, Model: "m", Enabled: true, Conversations: true})
				if err != nil {
					t.Fatal(err)
				}
				at := day.Add(time.Duration(i) * time.Hour)
				id := fmt.Sprint("c", i)
				conv := agent.Conversation{ID: id, AgentID: a.ID, Principal: c.principal, Title: c.title, CreatedAt: at, UpdatedAt: at}
				turn := agent.Turn{ID: "t" + id, ConversationID: id, AgentID: a.ID, Principal: c.principal, Status: agent.TurnRunning, StartedAt: at}
				if err := db.BeginTurn(t.Context(), agent.TurnStart{Turn: turn, NewConversation: &conv,
					User: agent.Message{Role: agent.RoleUser, Content: c.text, CreatedAt: at}})(); err != nil {
					t.Fatal(err)
				}
			}
			env := coreEnv(t, core, running)
			for _, tt := range []struct {
				args   []string
				status int
				lines  []string // printed, in order, after the header
				say    string   // printed otherwise
			}{
				{[]string{"search", "budget"}, 0, []string{
					"2026-03-01 | scribe | this computer | (untitled) | [budget] notes, second line",
					"2026-03-01 | helper | cursor | Budget talk | the quarterly [budget] is due"}, ""},
				{[]string{"search", "QUARTERLY", "Budget"}, 0, []string{"2026-03-01 | helper | cursor | Budget talk | the [quarterly] [budget] is due"}, ""},
				{[]string{"search", "budget", "--agent", "helper"}, 0, []string{"2026-03-01 | helper | cursor | Budget talk | the quarterly [budget] is due"}, ""},
				{[]string{"search", "budget", "--client", "local"}, 0, []string{"2026-03-01 | scribe | this computer | (untitled) | [budget] notes, second line"}, ""},
				{[]string{"search", "budget", "--limit", "1"}, 0, []string{"2026-03-01 | scribe | this computer | (untitled) | [budget] notes, second line"}, ""},
				{[]string{"search", "elephant"}, 0, nil, `No conversation holds "elephant".`},
				{[]string{"search", `"*"`}, 1, nil, "type a word to search for"},
				{[]string{"search", "budget", "--agent", "nobody"}, 1, nil, `there is no agent "nobody"`},
				{[]string{"search", "budget", "--client", "nobody"}, 1, nil, `there is no client "nobody"`},
				{[]string{"search"}, 2, nil, "search what?"},
				{[]string{"search", "budget", "--limit", "0"}, 2, nil, "--limit must be at least 1"},
			} {
				status, stdout, stderr := runLine(t, env, tt.args...)
				if status != tt.status || !strings.Contains(stdout+stderr, tt.say) {
					t.Errorf("%q: status %d, want %d saying %q\n%s%s", tt.args, status, tt.status, tt.say, stdout, stderr)
					continue
				}
				if tt.lines == nil {
					continue
				}
				got := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
				for i := range got {
					got[i] = columns.ReplaceAllString(got[i], " | ")
				}
				if !strings.HasPrefix(got[0], "WHEN") || strings.Join(got[1:], "\n") != strings.Join(tt.lines, "\n") {
					t.Errorf("%q printed:\n%s\nwant after the header:\n%s", tt.args, stdout, strings.Join(tt.lines, "\n"))
				}
			}
		})
	}
}
