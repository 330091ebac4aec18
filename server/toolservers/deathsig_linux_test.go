package toolservers

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestChildDiesWithDeskhand: a tool server does not outlive Deskhand
// even when Deskhand is killed outright (SIGKILL, no Close).
func TestChildDiesWithDeskhand(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"=manager")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the stand-in said nothing: %v", err)
	}
	server, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || server == 0 {
		t.Fatalf("server pid %q", line)
	}
	killLater(t, server)
	exited := watchExit(t, server)
	if !alive(t, server) {
		t.Fatalf("the tool server %d is not running", server)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if !exited() || alive(t, server) {
		t.Errorf("the tool server %d outlived its killed parent", server)
	}
}
