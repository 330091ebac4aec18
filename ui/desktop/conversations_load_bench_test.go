package desktop

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/store"
	"github.com/deskhand/deskhand/store/storetest"
)

// storedConversations is how many conversations the tab-opening
// benchmark stores.
const storedConversations = 100_000

// BenchmarkConversationsTabAt100k: with 100,000 conversations stored (a
// real core on a SQLite file), the time from showing the Conversations
// tab, its list gone stale while another tab showed, to the list drawn:
// the read of the recent 200 and the window's first frame after it
// (fyne's test driver paints it in software). Reported as tab-ms/op
// beside the read alone (read-ms/op); make bench fails above 100 ms.
func BenchmarkConversationsTabAt100k(b *testing.B) {
	path := filepath.Join(b.TempDir(), store.FileName)
	ids := storetest.FillConversations(b, path, storedConversations)
	core, a, u := benchWindow(b, path)
	v := a.conversations
	counting := &countingConversations{Conversations: v.core.Conversations}
	v.core.Conversations = counting
	var read, query time.Duration
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		a.tabs.SelectIndex(tabAgents)
		a.win.Canvas().Capture()
		v.stale = true // calls came while another tab showed
		v.lister.last = time.Time{}
		at := time.Now()
		if _, err := core.Conversations().Recent(b.Context(), conversationsShown); err != nil {
			b.Fatal(err)
		}
		query += time.Since(at)
		b.StartTimer()
		start := time.Now()
		a.tabs.SelectIndex(tabConversations)
		a.work.Wait() // the read
		read += time.Since(start)
		u.settle()               // the list filled
		a.win.Canvas().Capture() // its first frame
	}
	b.StopTimer()
	if got := counting.reads.Load(); int(got) != b.N {
		b.Fatalf("%d reads for %d openings", got, b.N)
	}
	if len(v.shown) != conversationsShown || v.shown[0].ID != ids[len(ids)-1] {
		b.Fatalf("listed %d, first %q", len(v.shown), v.shown[0].ID)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "tab-ms/op")
	b.ReportMetric(float64(read.Microseconds())/1000/float64(b.N), "read-ms/op")
	b.ReportMetric(float64(query.Microseconds())/1000/float64(b.N), "query-ms/op")
	tabTarget(b, float64(b.Elapsed().Microseconds())/1000/float64(b.N))
}

// tabTarget checks the tab's opening time against its target when make
// bench asks (DESKHAND_TAB_TARGET=1): a line either way, and a failure
// with MISSED when it is over.
func tabTarget(b *testing.B, ms float64) {
	if os.Getenv("DESKHAND_TAB_TARGET") == "" {
		return
	}
	if ms > tabTargetMS {
		b.Errorf("MISSED: the Conversations tab opens in %.1f ms with %d conversations stored (target under %d ms)", ms, storedConversations, tabTargetMS)
		return
	}
	fmt.Printf("met: the Conversations tab opens in %.1f ms with %d conversations stored (target under %d ms)\n", ms, storedConversations, tabTargetMS)
}

// tabTargetMS is the target for opening the tab (issue 20).
const tabTargetMS = 100

// benchWindow is the whole desktop on a real core over the SQLite file at
// path, its window shown at 1000×720 and read once.
func benchWindow(b *testing.B, path string) (*agent.Core, *App, *testUI) {
	b.Helper()
	core, err := agent.New(b.Context(), agent.Config{History: storetest.OpenAt(b, path), Desktop: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(core.Close)
	a := New(test.NewTempApp(b), CoreOf(core), testOptions())
	u := &testUI{app: a}
	u.grew = sync.NewCond(&u.mu)
	a.do = u.do
	b.Cleanup(a.Close)
	a.win.Resize(fyne.NewSize(1000, 720))
	a.win.Show()
	a.refresh()
	u.settle()
	return core, a, u
}

// longTurns and shortTurns are the turns of the long conversation and of
// the short one it is measured against.
const longTurns, shortTurns = 1000, 10

// BenchmarkConversationOf1000Turns: a conversation of 1,000 turns (a
// real core on a SQLite file), opened from another: the time from the
// click to its first frame (open-ms/op; make bench fails at 300 ms), and
// then the cost of a frame while it is open against one while a
// conversation of 10 turns is (frame-ratio; make bench fails above 1.2):
// the window draws what can be seen, not the whole conversation.
func BenchmarkConversationOf1000Turns(b *testing.B) {
	path := filepath.Join(b.TempDir(), store.FileName)
	ids := storetest.FillTurns(b, path, longTurns, shortTurns)
	long, short := ids[0], ids[1]
	_, a, u := benchWindow(b, path)
	a.tabs.SelectIndex(tabConversations)
	v := a.conversations
	open := func(id string) {
		v.open(id)
		u.settle()
		a.win.Canvas().Capture()
	}
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		open(short)
		b.StartTimer()
		open(long)
	}
	b.StopTimer()
	if n := strings.Count(v.text(), "ordinary length"); v.current != long || n != 2*longTurns {
		b.Fatalf("conversation %q open, %d messages in its text", v.current, n)
	}
	openMS := float64(b.Elapsed().Microseconds()) / 1000 / float64(b.N)
	// The cheapest frame of each, in rounds that take turns: another
	// process on the machine slows some frames, never speeds one up.
	longFrame, shortFrame := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
	for range 5 {
		longFrame = min(longFrame, frameCost(a, func() { open(long) }))
		shortFrame = min(shortFrame, frameCost(a, func() { open(short) }))
	}
	ratio := float64(longFrame) / float64(shortFrame)
	b.ReportMetric(openMS, "open-ms/op")
	b.ReportMetric(float64(longFrame.Microseconds())/1000, "frame-ms")
	b.ReportMetric(float64(shortFrame.Microseconds())/1000, "frame10-ms")
	b.ReportMetric(ratio, "frame-ratio")
	if os.Getenv("DESKHAND_TAB_TARGET") == "" {
		return
	}
	if openMS >= longOpenTargetMS {
		b.Errorf("MISSED: a conversation of %d turns opens in %.1f ms (target under %d ms)", longTurns, openMS, longOpenTargetMS)
	} else {
		fmt.Printf("met: a conversation of %d turns opens in %.1f ms (target under %d ms)\n", longTurns, openMS, longOpenTargetMS)
	}
	if ratio > longFrameTarget {
		b.Errorf("MISSED: a frame costs %v with %d turns open, %.2f× its cost with %d (target at most %.1f×)", longFrame, longTurns, ratio, shortTurns, longFrameTarget)
	} else {
		fmt.Printf("met: a frame costs %v with %d turns open, %.2f× its cost with %d (target at most %.1f×)\n", longFrame, longTurns, ratio, shortTurns, longFrameTarget)
	}
}

// The targets for a long conversation (issue 38).
const (
	longOpenTargetMS = 300
	longFrameTarget  = 1.2
)

// frameCost is the least time the window takes to draw a frame once
// open has run: of 5 frames, each drawn after the transcript is
// refreshed, as when a turn's text changes.
func frameCost(a *App, open func()) time.Duration {
	open()
	least := time.Duration(math.MaxInt64)
	for range 5 {
		a.conversations.transcript.Refresh()
		start := time.Now()
		a.win.Canvas().Capture()
		least = min(least, time.Since(start))
	}
	return least
}
