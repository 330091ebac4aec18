package desktop

import (
	"fmt"
	"os"
	"path/filepath"
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
