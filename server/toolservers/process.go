package toolservers

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"
)

// process is a stdio server's child: Deskhand owns its pipes and waits
// for it, so that it knows at once when the child exits and can stop its
// whole process group.
type process struct {
	cmd    *exec.Cmd
	pid    int
	stdin  *os.File // our end of the child's stdin
	stdout *os.File // our end of the child's stdout
	done   chan struct{}
	err    error // cmd.Wait's, once done is closed
	group  group // what kills the child's descendants too

	stopOnce sync.Once
}

// waitDelay bounds how long Wait waits for the stderr copy once the
// child has exited (a grandchild may still hold the pipe).
const waitDelay = 2 * time.Second

// startProcess runs the server's command in a process group of its own
// (on Linux, killed should Deskhand die), its stderr going to log.
func startProcess(cfg Config, log io.Writer) (*process, error) {
	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Dir = cfg.Dir
	cmd.Env = os.Environ()
	for _, k := range slices.Sorted(maps.Keys(cfg.Env)) {
		cmd.Env = append(cmd.Env, k+"="+cfg.Env[k])
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("make stdin pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		_ = inR.Close()
		_ = inW.Close()
		return nil, fmt.Errorf("make stdout pipe: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, log
	cmd.WaitDelay = waitDelay
	setProcessGroup(cmd)
	err = cmd.Start()
	_ = inR.Close()
	_ = outW.Close()
	if err != nil {
		_ = inW.Close()
		_ = outR.Close()
		return nil, err
	}
	p := &process{cmd: cmd, pid: cmd.Process.Pid, stdin: inW, stdout: outR, done: make(chan struct{})}
	p.group = joinGroup(cmd)
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// exited reports how the child ended, in words; "" while it runs.
func (p *process) exited() string {
	select {
	case <-p.done:
	default:
		return ""
	}
	var exit *exec.ExitError
	switch {
	case p.err == nil:
		return "it exited with status 0"
	case errors.As(p.err, &exit):
		return "it " + exitWords(exit)
	case errors.Is(p.err, exec.ErrWaitDelay):
		return "it exited, leaving a process that kept its output open"
	}
	return "it ended: " + p.err.Error()
}

// stop ends the child: its stdin closed (most servers exit then), then
// after grace the group is asked to terminate, then killed; whatever is
// left of the group is killed once the child is gone. It waits for the
// child and is safe to call more than once.
func (p *process) stop(grace time.Duration) {
	p.stopOnce.Do(func() {
		_ = p.stdin.Close()
		select {
		case <-p.done:
		case <-time.After(grace):
			terminateGroup(p.cmd, p.group)
			select {
			case <-p.done:
			case <-time.After(grace):
				killGroup(p.cmd, p.group)
				<-p.done
			}
		}
		killGroup(p.cmd, p.group) // descendants that outlived the child
		p.group.release()
		_ = p.stdout.Close()
	})
	<-p.done
}

// badOutput watches a child's stdout for lines that are not JSON-RPC (a
// server that prints its banner there breaks the protocol; mcp-go skips
// such lines silently) and remembers the first.
type badOutput struct {
	r io.Reader

	mu    sync.Mutex
	line  []byte // the current line's start, up to 200 bytes
	first string // the first line that was not JSON
	inMid bool   // the current line has started
}

func (b *badOutput) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.mu.Lock()
	for _, c := range p[:n] {
		if c == '\n' {
			b.check()
			b.line, b.inMid = b.line[:0], false
			continue
		}
		b.inMid = true
		if len(b.line) < 200 {
			b.line = append(b.line, c)
		}
	}
	b.mu.Unlock()
	return n, err
}

func (b *badOutput) check() {
	line := bytes.TrimSpace(b.line)
	if b.first == "" && len(line) > 0 && line[0] != '{' {
		b.first = string(bytes.ToValidUTF8(line, []byte("\uFFFD")))
	}
}

// First is the first line seen that was not JSON ("" if none).
func (b *badOutput) First() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.first
}
