package toolservers

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// DefaultMaxLogBytes caps a server's log file; the older half lives on
// in name.log.1 until the next rotation.
const DefaultMaxLogBytes = 1 << 20

// tailBytes is how much of a server's latest stderr its errors quote.
const tailBytes = 2048

// maxPending is the longest partial line of stderr held back for the rest
// of its line, so that a secret split across two writes is redacted whole.
const maxPending = 4096

// serverLog is a server's log: its stderr and Deskhand's lines about it,
// in a file capped at max bytes (rotated once to .1), and the last lines
// kept in memory for error messages, all redacted. Safe for concurrent use.
type serverLog struct {
	path   string // "" when there is no file
	max    int64
	redact func(string) string

	mu      sync.Mutex
	f       *os.File
	size    int64
	tail    []byte
	pending []byte // stderr's partial last line
}

func newServerLog(dir, name string, max int64, redact func(string) string) *serverLog {
	l := &serverLog{max: max, redact: redact}
	if dir != "" {
		l.path = filepath.Join(dir, name+".log")
	}
	return l
}

// Write takes the server's stderr: whole lines are kept at once, a
// partial last line once the rest of it comes (or Deskhand writes a line
// of its own, or the log closes). It never fails: a log that cannot be
// written must not stop the server.
func (l *serverLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	data := append(l.pending, p...)
	cut := bytes.LastIndexByte(data, '\n') + 1
	if len(data)-cut > maxPending {
		cut = len(data)
	}
	l.keepLocked(data[:cut])
	l.pending = append([]byte(nil), data[cut:]...)
	return len(p), nil
}

// flushLocked keeps stderr's partial last line as it is.
func (l *serverLog) flushLocked() {
	if len(l.pending) > 0 {
		l.keepLocked(append(l.pending, '\n'))
		l.pending = nil
	}
}

// keepLocked appends p, redacted, to the file, rotating it first when it
// would pass the cap, and to the in-memory tail.
func (l *serverLog) keepLocked(p []byte) {
	if len(p) == 0 {
		return
	}
	p = []byte(l.redact(string(p)))
	l.tail = append(l.tail, p...)
	if len(l.tail) > 2*tailBytes {
		l.tail = append([]byte(nil), l.tail[len(l.tail)-tailBytes:]...)
	}
	if l.path == "" {
		return
	}
	if l.f == nil {
		if err := l.open(); err != nil {
			return
		}
	}
	if l.size+int64(len(p)) > l.max {
		_ = l.f.Close()
		l.f = nil
		_ = os.Rename(l.path, l.path+".1")
		if err := l.open(); err != nil {
			return
		}
	}
	w := p
	if int64(len(w)) > l.max {
		w = w[int64(len(w))-l.max:]
	}
	n, _ := l.f.Write(w)
	l.size += int64(n)
}

func (l *serverLog) open() error {
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return err
	}
	l.f, l.size = f, st.Size()
	return nil
}

// Printf writes one line of Deskhand's own about the server.
func (l *serverLog) Printf(format string, args ...any) {
	line := fmt.Sprintf("[deskhand %s] %s\n", time.Now().Format(time.RFC3339), strings.TrimRight(fmt.Sprintf(format, args...), "\n"))
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushLocked()
	l.keepLocked([]byte(line))
}

// Tail returns the last lines written (up to n lines, about 2 KB),
// without Deskhand's own lines.
func (l *serverLog) Tail(n int) string {
	l.mu.Lock()
	l.flushLocked()
	t := bytes.Clone(l.tail)
	l.mu.Unlock()
	if len(t) > tailBytes {
		t = t[len(t)-tailBytes:]
		if i := bytes.IndexByte(t, '\n'); i >= 0 {
			t = t[i+1:]
		}
	}
	var lines []string
	for _, line := range strings.Split(strings.ToValidUTF8(string(t), "\uFFFD"), "\n") {
		if line = strings.TrimRight(line, "\r "); line != "" && !strings.HasPrefix(line, "[deskhand ") {
			lines = append(lines, line)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Close closes the file; a later Write opens it again.
func (l *serverLog) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushLocked()
	if l.f != nil {
		_ = l.f.Close()
		l.f = nil
	}
}

// resetTail forgets the stderr of an earlier run.
func (l *serverLog) resetTail() {
	l.mu.Lock()
	l.tail = l.tail[:0]
	l.mu.Unlock()
}
