package mcpserver

import (
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestPortUserReadsProc(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	if got := PortUser(port); !strings.HasSuffix(got, "(pid "+strconv.Itoa(os.Getpid())+")") {
		t.Errorf("PortUser(%s) = %q, want this test (pid %d)", port, got, os.Getpid())
	}
	if got := PortUser("not a port"); got != "" {
		t.Errorf("PortUser of no port = %q", got)
	}
}
