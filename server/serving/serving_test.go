package serving

import (
	"context"
	"log/slog"
	"net"
	"slices"
	"testing"
)

// recordingListener records its Close in order.
type recordingListener struct {
	net.Listener
	order *[]string
}

func (l recordingListener) Close() error { *l.order = append(*l.order, "stop accepting"); return nil }
func (l recordingListener) Addr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}
}

type recordingCore struct{ order *[]string }

func (c recordingCore) Close() { *c.order = append(*c.order, "core refuses turns") }

// TestStopInOrder: shutting down stops accepting connections first, then
// the core refuses new turns and ends the running ones, then the rest is
// waited for (the core used to close first, while connections still came).
func TestStopInOrder(t *testing.T) {
	var order []string
	step := func(name string) namedStop {
		return namedStop{name, func(context.Context) error { order = append(order, name); return nil }}
	}
	stopInOrder(t.Context(), slog.New(slog.DiscardHandler), []net.Listener{recordingListener{order: &order}, recordingListener{order: &order}},
		recordingCore{&order}, []namedStop{step("close MCP sessions"), step("shut down HTTP server")})
	want := []string{"stop accepting", "stop accepting", "core refuses turns", "close MCP sessions", "shut down HTTP server"}
	if !slices.Equal(order, want) {
		t.Errorf("order = %q, want %q", order, want)
	}
}
