// Package servertest helps tests that run Deskhand's server, in their own
// process or as a child one, and read what it writes: [Output] collects
// the output safely while it is written, and a test waits on it for a line
// instead of polling.
package servertest

import (
	"bytes"
	"regexp"
	"sync"
	"testing"
	"time"
)

// Output is an io.Writer that keeps everything written to it, safe for
// writers and readers in different goroutines (as exec.Cmd's Stdout and
// Stderr, or a logger, and the test). The zero value is ready to use.
type Output struct {
	mu      sync.Mutex
	b       bytes.Buffer
	written chan struct{} // closed and replaced on every write
}

// Write implements io.Writer.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.written != nil {
		close(o.written)
		o.written = nil
	}
	return o.b.Write(p)
}

// String returns everything written so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// Next returns everything written so far and a channel closed at the next
// write.
func (o *Output) Next() (string, <-chan struct{}) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.written == nil {
		o.written = make(chan struct{})
	}
	return o.b.String(), o.written
}

// WaitFor waits until re matches the output, checking at every write, and
// returns the match and its submatches (as FindStringSubmatch). After
// timeout it stops the test with the output, so call it only from the
// test's goroutine.
func (o *Output) WaitFor(tb testing.TB, re *regexp.Regexp, timeout time.Duration) []string {
	tb.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		text, written := o.Next()
		if m := re.FindStringSubmatch(text); m != nil {
			return m
		}
		select {
		case <-written:
		case <-deadline.C:
			tb.Fatalf("no %q in the output within %s:\n%s", re, timeout, o.String())
		}
	}
}
