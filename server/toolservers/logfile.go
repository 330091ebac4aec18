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

// serverLog is a server's log: its stderr and Deskhand's lines about it,
// in a file capped at max bytes (rotated once to .1), and the last lines
// kept in memory for error messages. Safe for concurrent use.
type serverLog struct {
	path string // "" when there is no file
	max  int64

	mu   sync.Mutex
	f    *os.File
	size int64
	tail []byte
}

func newServerLog(dir, name string, max int64) *serverLog {
	l := &serverLog{max: max}
	if dir != "" {
		l.path = filepath.Join(dir, name+".log")
	}
	return l
}

// Write appends p to the file, rotating it first when it would pass the
// cap, and to the in-memory tail. It never fails: a log that cannot be
// written must not stop the server.
func (l *serverLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tail = append(l.tail, p...)
	if len(l.tail) > 2*tailBytes {
		l.tail = append([]byte(nil), l.tail[len(l.tail)-tailBytes:]...)
	}
	if l.path == "" {
		return len(p), nil
	}
	if l.f == nil {
		if err := l.open(); err != nil {
			return len(p), nil
		}
	}
	if l.size+int64(len(p)) > l.max {
		_ = l.f.Close()
		l.f = nil
		_ = os.Rename(l.path, l.path+".1")
		if err := l.open(); err != nil {
			return len(p), nil
		}
	}
	w := p
	if int64(len(w)) > l.max {
		w = w[int64(len(w))-l.max:]
	}
	n, _ := l.f.Write(w)
	l.size += int64(n)
	return len(p), nil
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
	_, _ = l.Write([]byte(line))
}

// Tail returns the last lines written (up to n lines, about 2 KB),
// without Deskhand's own lines.
func (l *serverLog) Tail(n int) string {
	l.mu.Lock()
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
