package mcpserver_test

import (
	"net"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver"
)

// TestListen: loopback by default, on one port for both loopbacks; a
// non-loopback address is refused without tokens; a port taken names its
// holder where the system tells; a listener closes twice quietly.
func TestListen(t *testing.T) {
	lns, err := mcpserver.Listen("localhost:0", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(lns[0].Addr().String())
	for _, ln := range lns {
		host, p, _ := net.SplitHostPort(ln.Addr().String())
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() || p != port {
			t.Errorf("listening on %s, want a loopback on port %s", ln.Addr(), port)
		}
	}
	if _, err := mcpserver.Listen("0.0.0.0:0", true, nil); err == nil || !strings.Contains(agent.UserMessage(err), "refusing to serve on 0.0.0.0:0 without tokens") {
		t.Errorf("a non-loopback address without tokens: %v", err)
	}
	holder := func(string) string { return "the holder (pid 7)" }
	if _, err := mcpserver.Listen(lns[0].Addr().String(), false, holder); err == nil || !strings.Contains(agent.UserMessage(err), "taken by the holder (pid 7)") {
		t.Errorf("a port taken: %v", err)
	}
	for _, ln := range lns {
		if err := ln.Close(); err != nil {
			t.Error(err)
		}
		if err := ln.Close(); err != nil {
			t.Errorf("a second close: %v", err)
		}
	}
}
