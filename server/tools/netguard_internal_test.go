package tools

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"testing"
)

// TestFetchClientHasNoProxy: HTTP(S)_PROXY would hide the target from the
// dial check, so fetch_url's transport never asks for a proxy.
func TestFetchClientHasNoProxy(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:9")
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:9")
	tr, ok := fetchClient(Options{}.withDefaults()).Transport.(*http.Transport)
	if !ok {
		t.Fatal("fetch_url's transport is not an *http.Transport")
	}
	if tr.Proxy != nil {
		t.Error("fetch_url's transport has a proxy function")
	}
	if !tr.DisableKeepAlives {
		t.Error("fetch_url keeps connections: one agent's named host could serve another's request")
	}
}

// TestCheckDialed: the socket connects only to the address the guard
// approved.
func TestCheckDialed(t *testing.T) {
	approved := context.WithValue(context.Background(), approvedKey{}, netip.MustParseAddrPort("93.184.215.14:443"))
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		address string
		ok      bool
	}{
		{"the approved address", approved, "93.184.215.14:443", true},
		{"its mapped form", approved, "[::ffff:93.184.215.14]:443", true},
		{"another address", approved, "169.254.169.254:443", false},
		{"another port", approved, "93.184.215.14:80", false},
		{"nothing approved", context.Background(), "93.184.215.14:443", false},
	} {
		err := checkDialed(tc.ctx, "tcp", tc.address, nil)
		var refused *RefusedError
		if tc.ok != (err == nil) || !tc.ok && !errors.As(err, &refused) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func TestNonPublic(t *testing.T) {
	for _, public := range []string{"93.184.215.14", "8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"} {
		if rule := nonPublic(netip.MustParseAddr(public)); rule != "" {
			t.Errorf("%s refused: %s", public, rule)
		}
	}
	for _, private := range []string{"127.0.0.1", "::1", "0.0.0.0", "::", "0.1.2.3", "169.254.169.254", "fe80::1", "10.0.0.1",
		"172.31.255.255", "192.168.0.1", "fc00::1", "fd12::1", "100.64.0.1", "100.127.255.254", "224.0.0.1", "ff02::1",
		"255.255.255.255", "240.0.0.1", "::ffff:127.0.0.1", "::ffff:192.168.1.1", "64:ff9b::7f00:1", "2002:7f00:1::1", "198.18.0.1"} {
		if rule := nonPublic(netip.MustParseAddr(private)); rule == "" {
			t.Errorf("%s is treated as public", private)
		}
	}
}
