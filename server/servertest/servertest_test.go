package servertest_test

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/servertest"
)

// TestWaitForSeesLaterWrites: WaitFor returns once a write from another
// goroutine completes the match, and String holds every write.
func TestWaitForSeesLaterWrites(t *testing.T) {
	var out servertest.Output
	fmt.Fprintln(&out, "starting")
	go func() {
		fmt.Fprint(&out, "serving your agents ")
		fmt.Fprintln(&out, "at http://127.0.0.1:1/mcp")
	}()
	m := out.WaitFor(t, regexp.MustCompile(`serving your agents at (\S+)`), 10*time.Second)
	if m[1] != "http://127.0.0.1:1/mcp" {
		t.Errorf("match = %q", m)
	}
	if got := out.String(); got != "starting\nserving your agents at http://127.0.0.1:1/mcp\n" {
		t.Errorf("String() = %q", got)
	}
}

// TestNextIsClosedByTheNextWrite: the channel Next returns is open until
// something is written.
func TestNextIsClosedByTheNextWrite(t *testing.T) {
	var out servertest.Output
	text, written := out.Next()
	select {
	case <-written:
		t.Fatal("closed before any write")
	default:
	}
	out.Write([]byte("x"))
	<-written
	if text != "" || out.String() != "x" {
		t.Errorf("text %q, then %q", text, out.String())
	}
}
