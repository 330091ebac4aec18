package modeltest

import (
	"encoding/json"
	"errors"
	"net"
	"reflect"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
)

// ClosedAddr is the address of a listener that no longer listens: a
// server that is not there.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// UserMessage returns the Msg of err's *agent.UserError, failing the test
// if there is none or it carries no cause for the log.
func UserMessage(t testing.TB, err error) string {
	t.Helper()
	var ue *agent.UserError
	if !errors.As(err, &ue) {
		t.Fatalf("error %v (%T) is not an *agent.UserError", err, err)
	}
	if ue.Err == nil {
		t.Errorf("UserError %q has no cause for the log", ue.Msg)
	}
	return ue.Msg
}

// JSONEqual compares two JSON texts by value: what an adapter put on the
// wire (got) and what the provider's format wants.
func JSONEqual(t testing.TB, name string, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v in %s", name, err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad want: %v", name, err)
	}
	if !reflect.DeepEqual(g, w) {
		canonical, _ := json.Marshal(g)
		wanted, _ := json.Marshal(w)
		t.Errorf("%s on the wire:\n got %s\nwant %s", name, canonical, wanted)
	}
}
