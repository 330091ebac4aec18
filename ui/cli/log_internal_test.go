package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deskhand/deskhand/server/agent"
)

var logLines = []agent.ActivityRow{
	{ID: 7, Time: time.Date(2026, 12, 1, 10, 0, 0, 5e6, time.UTC), Client: "id-1", Era: "2025-11-25",
		Method: "tools/call", Agent: "researcher", Conversation: "c1", Duration: 1500 * time.Microsecond,
		Outcome: agent.OutcomeToolError, BytesIn: 120, BytesOut: 300, Text: "the model \"x\" is not installed\nsecond line", ClientName: "cursor"},
	{ID: 8, Time: time.Date(2026, 12, 1, 10, 0, 1, 0, time.UTC), Method: "POST", Outcome: agent.OutcomeRefused, Reason: "bad token"},
}

// The JSON Lines export reads back as it was written.
func TestActivityJSONLinesRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	for _, l := range logLines {
		if err := printActivity(&buf, l, true); err != nil {
			t.Fatal(err)
		}
	}
	if n := bytes.Count(buf.Bytes(), []byte("\n")); n != len(logLines) {
		t.Fatalf("%d lines, want %d:\n%s", n, len(logLines), buf.String())
	}
	dec := json.NewDecoder(&buf)
	var got []agent.ActivityRow
	for {
		var l agent.ActivityRow
		err := dec.Decode(&l)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, l)
	}
	if diff := cmp.Diff(logLines, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestActivityText(t *testing.T) {
	for _, tc := range []struct {
		line agent.ActivityRow
		want []string
	}{
		{logLines[0], []string{"cursor", "tools/call", "researcher", "tool error", "1.5ms", "120B in, 300B out", "conversation c1", `is not installed second line`}},
		{logLines[1], []string{"  -  POST  refused (bad token)"}},
	} {
		got := activityText(tc.line)
		for _, w := range tc.want {
			if !bytes.Contains([]byte(got), []byte(w)) {
				t.Errorf("%q lacks %q", got, w)
			}
		}
		if bytes.Contains([]byte(got), []byte("\n")) {
			t.Errorf("%q spans lines", got)
		}
	}
}

// Text an agent or a client wrote cannot drive the terminal it is
// printed on.
func TestTerminalText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain, ünïcode ✓", "plain, ünïcode ✓"},
		{"two\nlines\tand a tab", "two lines and a tab"},
		{"red \x1b[31mtext\x1b]0;title\x07", `red \x1b[31mtext\x1b]0;title\x07`},
		{"C1 \u009b2J", `C1 \x9b2J`},
		{"evil\u202egnp.exe", `evil\u202egnp.exe`},
	} {
		if got := terminalText(tc.in); got != tc.want {
			t.Errorf("terminalText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	l := logLines[0]
	l.Text = "\x1b[2Jcleared"
	if got := activityText(l); bytes.ContainsRune([]byte(got), 0x1b) {
		t.Errorf("activityText printed an escape: %q", got)
	}
}
