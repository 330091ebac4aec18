package bridge

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestReadEventsJoinsDataLines: an event's data lines are joined with
// "\n" (HTML Living Standard, "interpreting an event stream"), whatever
// the line ends.
func TestReadEventsJoinsDataLines(t *testing.T) {
	type got struct {
		Data  string
		ID    string
		Retry time.Duration
	}
	for _, tc := range []struct {
		name, stream string
		want         []got
	}{
		{"two data lines", "data: a\ndata: b\n\n", []got{{Data: "a\nb", Retry: -1}}},
		{"one space stripped", "data:  a\ndata:b\n\n", []got{{Data: " a\nb", Retry: -1}}},
		{"empty data line", "data: a\ndata\ndata: b\n\n", []got{{Data: "a\n\nb", Retry: -1}}},
		{"CRLF and CR", "data: a\r\ndata: b\rdata: c\r\n\r\n", []got{{Data: "a\nb\nc", Retry: -1}}},
		{"comments and unknown fields", ": keep-alive\nevent: message\ndata: a\n\n", []got{{Data: "a", Retry: -1}}},
		{"priming event", "id: 7\nretry: 250\n\n", []got{{ID: "7", Retry: 250 * time.Millisecond}}},
		{"two events", "id: 1\ndata: a\n\nid: 2\ndata: b\ndata: c\n\n", []got{{Data: "a", ID: "1", Retry: -1}, {Data: "b\nc", ID: "2", Retry: -1}}},
		{"unfinished event dropped", "data: a\n\ndata: b", []got{{Data: "a", Retry: -1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var events []got
			err := readEvents(strings.NewReader(tc.stream), func(ev event) {
				g := got{Data: string(ev.data), Retry: ev.retry}
				if ev.id != nil {
					g.ID = *ev.id
				}
				events = append(events, g)
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}
