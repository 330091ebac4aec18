package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/store/storetest"
)

func newLogCore(t *testing.T) *agent.Core {
	t.Helper()
	core, err := agent.New(t.Context(), agent.Config{History: storetest.Open(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(core.Close)
	return core
}

// TestLogCommand: 'deskhand log' filters by client, agent and age, prints
// JSON Lines, and says what is wrong with its flags, through the core and
// through the running app.
func TestLogCommand(t *testing.T) {
	for _, running := range []bool{false, true} {
		t.Run(map[bool]string{false: "core", true: "control channel"}[running], func(t *testing.T) {
			core := newLogCore(t)
			env := coreEnv(t, core, running)
			cursor, _, err := core.Clients().Create(t.Context(), "cursor")
			if err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			core.Activity().Record(agent.ActivityRow{Time: now.Add(-3 * time.Hour), Client: cursor.ID, Method: "tools/call", Agent: "old", Outcome: agent.OutcomeOK})
			core.Activity().Record(agent.ActivityRow{Time: now, Client: cursor.ID, Method: "tools/call", Agent: "researcher", Outcome: agent.OutcomeToolError, Text: "no model"})
			core.Activity().Record(agent.ActivityRow{Time: now, Method: "POST", Outcome: agent.OutcomeRefused, Reason: "bad token"})
			for _, tc := range []struct {
				args        []string
				status      int
				say, notSay []string
			}{
				{[]string{"log"}, 0, []string{"old", "researcher", "refused (bad token)"}, nil},
				{[]string{"log", "--client", "cursor"}, 0, []string{"cursor  tools/call  researcher  tool error", "old"}, []string{"bad token"}},
				{[]string{"log", "--agent", "researcher"}, 0, []string{"no model"}, []string{"old", "bad token"}},
				{[]string{"log", "--since", "1h"}, 0, []string{"researcher", "bad token"}, []string{"old"}},
				{[]string{"log", "--agent", "nobody"}, 0, []string{"The log has no such request yet."}, nil},
				{[]string{"log", "--client", "nobody"}, 1, []string{`no client is named "nobody"`}, nil},
				{[]string{"log", "--since", "soon"}, 2, []string{`--since: "soon" is not an age`}, nil},
				{[]string{"log", "extra"}, 2, []string{"log takes no arguments"}, nil},
			} {
				status, stdout, stderr := runLine(t, env, tc.args...)
				if status != tc.status {
					t.Errorf("%q: status %d, want %d\n%s%s", tc.args, status, tc.status, stdout, stderr)
				}
				for _, s := range tc.say {
					if !strings.Contains(stdout+stderr, s) {
						t.Errorf("%q does not say %q:\n%s%s", tc.args, s, stdout, stderr)
					}
				}
				for _, s := range tc.notSay {
					if strings.Contains(stdout, s) {
						t.Errorf("%q says %q:\n%s", tc.args, s, stdout)
					}
				}
			}
			status, stdout, stderr := runLine(t, env, "log", "--json")
			var lines []agent.ActivityRow
			dec := json.NewDecoder(strings.NewReader(stdout))
			for dec.More() {
				var l agent.ActivityRow
				if err := dec.Decode(&l); err != nil {
					t.Fatalf("--json printed what is not JSON Lines: %v\n%s", err, stdout)
				}
				lines = append(lines, l)
			}
			if status != 0 || len(lines) != 3 || lines[0].Agent != "old" || lines[2].Reason != "bad token" || lines[1].ClientName != "cursor" {
				t.Errorf("--json: status %d, %+v\n%s", status, lines, stderr)
			}
		})
	}
}

// lineWriter signals each line written.
type lineWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	lines chan string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		line, err := w.buf.ReadString('\n')
		if err != nil {
			w.buf.Reset()
			w.buf.WriteString(line)
			return len(p), nil
		}
		w.lines <- strings.TrimSuffix(line, "\n")
	}
}

// 'deskhand log --follow' prints each row of its filter as it is recorded,
// and ends quietly at Ctrl-C; without the app running it says to start it.
func TestLogFollow(t *testing.T) {
	core := newLogCore(t)
	env := coreEnv(t, core, true)
	cursor, _, err := core.Clients().Create(t.Context(), "cursor")
	if err != nil {
		t.Fatal(err)
	}
	for i := range followPage + 5 {
		core.Activity().Record(agent.ActivityRow{Client: cursor.ID, Method: fmt.Sprintf("old-%d", i), Outcome: agent.OutcomeOK})
	}
	ctx, interrupt := context.WithCancel(t.Context())
	out := &lineWriter{lines: make(chan string, 100)}
	var errOut bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Exit(Run(ctx, env, []string{"log", "--follow", "--client", "cursor"}, strings.NewReader(""), out, &errOut), io.Discard)
	}()
	// The page first (its last rows), then each row as it is recorded;
	// none falls between the two.
	wait := time.NewTimer(20 * time.Second)
	defer wait.Stop()
	select {
	case l := <-out.lines:
		if !strings.Contains(l, "  old-5  ") {
			t.Errorf("--follow began with %q, want the 20th newest row", l)
		}
	case <-wait.C:
		t.Fatalf("--follow printed nothing; stderr: %s", errOut.String())
	}
	core.Activity().Record(agent.ActivityRow{Client: "someone-else", Method: "tools/call", Agent: "hidden", Outcome: agent.OutcomeOK})
	core.Activity().Record(agent.ActivityRow{Client: cursor.ID, Method: "tools/call", Agent: "researcher", Outcome: agent.OutcomeOK, Text: "\x1b[2Jcleared"})
	for {
		var l string
		select {
		case l = <-out.lines:
		case <-wait.C:
			t.Fatal("--follow did not print the call")
		}
		if strings.Contains(l, "  old-") {
			continue
		}
		if strings.Contains(l, "hidden") {
			t.Errorf("--follow --client cursor printed another client's row: %q", l)
			continue
		}
		if !strings.Contains(l, "cursor  tools/call  researcher  ok") || strings.ContainsRune(l, 0x1b) {
			t.Errorf("followed %q, want cursor's call with the escape shown, not sent", l)
		}
		break
	}
	interrupt()
	if status := <-done; status != 0 {
		t.Errorf("--follow ended with status %d at Ctrl-C: %s", status, errOut.String())
	}

	status, _, stderr := runLine(t, coreEnv(t, core, false), "log", "--follow")
	if status != 1 || !strings.Contains(stderr, "--follow needs Deskhand running") {
		t.Errorf("--follow without the app: status %d, %s", status, stderr)
	}
}

func TestAgentLogArgumentsFlag(t *testing.T) {
	core := newLogCore(t)
	env := coreEnv(t, core, true)
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"agent", "add", "fox", "--model", "m", "--log-arguments"}, true},
		{[]string{"agent", "edit", "fox", "--name", "Fox"}, true},
		{[]string{"agent", "edit", "fox", "--log-arguments=false"}, false},
	} {
		if status, stdout, stderr := runLine(t, env, tc.args...); status != 0 {
			t.Fatalf("%q: status %d\n%s%s", tc.args, status, stdout, stderr)
		}
		if a, _ := core.Agents().BySlug("fox"); a.LogArguments != tc.want {
			t.Errorf("after %q: LogArguments = %v, want %v", tc.args, a.LogArguments, tc.want)
		}
	}
}
