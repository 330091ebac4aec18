package tools_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/tools"
)

// countingServer is a loopback server that counts the requests it saw.
func countingServer(t *testing.T, h http.Handler) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if h == nil {
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("canary"))
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// dialRecorder records every address the guard lets through, and
// connects only to loopback ones, so no test traffic leaves the machine.
type dialRecorder struct {
	mu    sync.Mutex
	dials []string
}

func (d *dialRecorder) dial(ctx context.Context, network, address string) (net.Conn, error) {
	d.mu.Lock()
	d.dials = append(d.dials, address)
	d.mu.Unlock()
	if ap, err := netip.ParseAddrPort(address); err != nil || !ap.Addr().IsLoopback() {
		return nil, errors.New("test dialer: not a loopback address")
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, address)
}

func (d *dialRecorder) seen() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.dials...)
}

// fakeDNS answers from a table; other names do not exist.
func fakeDNS(table map[string][]string) func(context.Context, string) ([]netip.Addr, error) {
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		var out []netip.Addr
		for _, a := range table[host] {
			out = append(out, netip.MustParseAddr(a))
		}
		if len(out) == 0 {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		return out, nil
	}
}

// TestFetchRefusesWhatIsNotPublic: with no named hosts, every address that
// is not public unicast is refused before any connection, whether the URL
// names it, DNS answers it, or it hides in an IPv4-mapped form; the error
// names the rule.
func TestFetchRefusesWhatIsNotPublic(t *testing.T) {
	srv, hits := countingServer(t, nil)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	rec := &dialRecorder{}
	fetch := tool(t, tools.NameFetchURL, tools.Options{Dial: rec.dial, Resolve: fakeDNS(map[string][]string{
		"localhost":        {"127.0.0.1", "::1"},
		"rebind.test":      {"127.0.0.1"},
		"metadata.test":    {"169.254.169.254"},
		"mapped.test":      {"::ffff:10.1.2.3"},
		"intranet.test":    {"192.168.1.20", "10.0.0.7"},
		"deskhand-ui.test": {"0.0.0.0"},
	})})
	for _, tc := range []struct{ url, rule string }{
		{"http://127.0.0.1:" + port + "/", "a loopback address"},
		{"http://localhost:" + port + "/", "a loopback address"},
		{"http://[::1]:" + port + "/", "a loopback address"},
		{"http://127.9.9.9:" + port + "/", "a loopback address"},
		{"http://0.0.0.0:" + port + "/", "an unspecified address"},
		{"http://[::]:" + port + "/", "an unspecified address"},
		{"http://[::ffff:127.0.0.1]:" + port + "/", "a loopback address"},
		{"http://rebind.test:" + port + "/", "a loopback address"},
		{"http://169.254.169.254/latest/meta-data/", "a link-local address"},
		{"http://metadata.test/", "a link-local address"},
		{"http://[::ffff:169.254.169.254]/", "a link-local address"},
		{"http://[fe80::1]/", "a link-local address"},
		{"http://10.0.0.1/", "a private network address"},
		{"http://172.16.5.4/", "a private network address"},
		{"http://192.168.1.1/", "a private network address"},
		{"http://intranet.test/", "a private network address"},
		{"http://mapped.test/", "a private network address"},
		{"http://[fd00::5]/", "a private network address"},
		{"http://100.64.0.1/", "a shared address (100.64.0.0/10"},
		{"http://224.0.0.251/", "a multicast address"},
		{"http://[ff02::1]/", "a multicast address"},
		{"http://255.255.255.255/", "a reserved or broadcast address"},
		{"http://[64:ff9b::a00:1]/", "a NAT64 address"},
		{"http://deskhand-ui.test:" + port + "/", "an unspecified address"},
	} {
		t.Run(tc.url, func(t *testing.T) {
			_, err := call(t, fetch, agent.Agent{}, args("url", tc.url))
			wantUserError(t, err, "cannot fetch", tc.rule, "reaches public internet addresses only", "May reach these hosts on my network")
		})
	}
	if d := rec.seen(); len(d) != 0 {
		t.Errorf("the guard let these through to the dialer: %q", d)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the loopback server saw %d requests", n)
	}
}

// TestFetchNamedHosts: a host the agent names is reached, by exact
// host:port only; a redirect from it to a host it does not name is
// refused at that hop, and the second server sees nothing.
func TestFetchNamedHosts(t *testing.T) {
	other, otherHits := countingServer(t, nil)
	canary, canaryHits := countingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-other":
			http.Redirect(w, r, other.URL+"/", http.StatusFound)
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		default:
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("canary"))
		}
	}))
	rec := &dialRecorder{}
	fetch := tool(t, tools.NameFetchURL, tools.Options{Dial: rec.dial, Resolve: fakeDNS(map[string][]string{"canary.test": {"127.0.0.1"}})})
	a := reaching(canary)
	canaryAddr := canary.Listener.Addr().String()
	_, canaryPort, _ := net.SplitHostPort(canaryAddr)

	got, err := call(t, fetch, a, args("url", canary.URL+"/"))
	if err != nil || !strings.HasSuffix(got, "canary") {
		t.Fatalf("named host: %q, %v", got, err)
	}
	_, err = call(t, fetch, a, args("url", canary.URL+"/to-other"))
	wantUserError(t, err, other.Listener.Addr().String(), "a loopback address")
	_, err = call(t, fetch, a, args("url", canary.URL+"/to-metadata"))
	wantUserError(t, err, "169.254.169.254:80", "a link-local address")
	// Another name for the same address is not the named host.
	_, err = call(t, fetch, a, args("url", "http://canary.test:"+canaryPort+"/"))
	wantUserError(t, err, "a loopback address")

	if n := canaryHits.Load(); n != 3 {
		t.Errorf("the named host saw %d requests, want 3", n)
	}
	if n := otherHits.Load(); n != 0 {
		t.Errorf("the host reached by a redirect saw %d requests", n)
	}
	for _, d := range rec.seen() {
		if d != canaryAddr {
			t.Errorf("dialed %s; only %s is allowed", d, canaryAddr)
		}
	}
}

// TestFetchNeverReachesDeskhand: Deskhand's own endpoint and its model
// servers stay refused even where an agent names them, under any name
// of this computer.
func TestFetchNeverReachesDeskhand(t *testing.T) {
	own, hits := countingServer(t, nil)
	ownAddr := own.Listener.Addr().String()
	_, port, _ := net.SplitHostPort(ownAddr)
	rec := &dialRecorder{}
	var never tools.Unreachable
	never.Set("deskhand", "http://localhost:"+port+"/mcp")
	never.Set("ollama", "http://10.0.0.9:11434")
	fetch := tool(t, tools.NameFetchURL, tools.Options{Dial: rec.dial, Never: never.List,
		Resolve: fakeDNS(map[string][]string{"localhost": {"127.0.0.1", "::1"}, "gpu.test": {"10.0.0.9"}})})
	a := agent.Agent{ReachableHosts: []string{ownAddr, "localhost:" + port, "[::1]:" + port, "gpu.test:11434"}}
	for _, u := range []string{own.URL + "/mcp", "http://localhost:" + port + "/", "http://[::1]:" + port + "/", "http://gpu.test:11434/api/tags"} {
		_, err := call(t, fetch, a, args("url", u))
		wantUserError(t, err, "Deskhand's own endpoint, or a model or tool server Deskhand uses, which no agent may reach")
		if err != nil && strings.Contains(agent.UserMessage(err), "May reach these hosts") {
			t.Errorf("%s: the error suggests a setting that cannot open it: %q", u, agent.UserMessage(err))
		}
	}
	if d := rec.seen(); len(d) != 0 || hits.Load() != 0 {
		t.Errorf("dialed %q; Deskhand saw %d requests", d, hits.Load())
	}
}
