package tools

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// What fetch_url may reach: public unicast addresses, the agent's named
// hosts on the person's network besides, and never Deskhand's own
// endpoint or the servers it uses. The address checked is the one
// dialed, after DNS, at every redirect hop; there is no proxy (it would
// hide the target) and no kept connection (one agent's exception must not
// serve another agent's request).

// RefusedError is a dial the guard refused, with the rule that refused it.
type RefusedError struct {
	Addr string // host:port as asked
	IP   netip.Addr
	Rule string // why, for the model and the person
	// Always: no setting opens it (Deskhand's own endpoint, its servers).
	Always bool
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s is %s", e.Where(), e.Rule)
}

// Where is the address as asked, with the one it resolved to when that
// differs: "localhost:80 (127.0.0.1)".
func (e *RefusedError) Where() string {
	if host, _, err := net.SplitHostPort(e.Addr); err == nil && e.IP.IsValid() {
		if ip, err := netip.ParseAddr(host); err != nil || ip.Unmap() != e.IP {
			return fmt.Sprintf("%s (%s)", e.Addr, e.IP)
		}
	}
	return e.Addr
}

// netGuard dials for fetch_url.
type netGuard struct {
	resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	dial    func(ctx context.Context, network, address string) (net.Conn, error)
	never   func() []string
	// local lists this computer's own addresses (its interfaces).
	local func() []netip.Addr
}

func newNetGuard(o Options) *netGuard {
	g := &netGuard{resolve: o.Resolve, dial: o.Dial, never: o.Never, local: interfaceAddrs}
	if g.resolve == nil {
		g.resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if g.dial == nil {
		d := &net.Dialer{Timeout: 10 * time.Second, ControlContext: checkDialed}
		g.dial = d.DialContext
	}
	if g.never == nil {
		g.never = func() []string { return nil }
	}
	return g
}

type reachKey struct{}
type approvedKey struct{}

// withReach carries an agent's named hosts to the dialer.
func withReach(ctx context.Context, hosts []string) context.Context {
	return context.WithValue(ctx, reachKey{}, hosts)
}

// DialContext resolves addr, checks every address it resolves to and
// dials the first one allowed.
func (g *netGuard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("port %q: %w", portText, err)
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else if ips, err = g.resolve(ctx, host); err != nil {
		return nil, err
	}
	named := slices.Contains(reachOf(ctx), strings.ToLower(addr))
	never := g.neverReached(ctx)
	var firstErr error
	for _, ip := range ips {
		to := netip.AddrPortFrom(ip.Unmap(), uint16(port))
		if err := g.check(to, addr, named, never); err != nil {
			firstErr = cmpErr(firstErr, err)
			continue
		}
		conn, err := g.dial(context.WithValue(ctx, approvedKey{}, to), network, to.String())
		if err == nil {
			return conn, nil
		}
		firstErr = cmpErr(firstErr, err)
	}
	if firstErr == nil {
		firstErr = &net.DNSError{Err: "no address found", Name: host, IsNotFound: true}
	}
	return nil, firstErr
}

func cmpErr(first, next error) error {
	if first != nil {
		return first
	}
	return next
}

// check says whether to may be dialed for addr.
func (g *netGuard) check(to netip.AddrPort, addr string, named bool, never []netip.AddrPort) error {
	for _, n := range never {
		if n.Port() == to.Port() && (n.Addr() == to.Addr() || isLocal(n.Addr(), nil) && isLocal(to.Addr(), g.local)) {
			return &RefusedError{Addr: addr, IP: to.Addr(), Always: true,
				Rule: "Deskhand's own endpoint, or a model or tool server Deskhand uses, which no agent may reach"}
		}
	}
	if named {
		return nil
	}
	if rule := nonPublic(to.Addr()); rule != "" {
		return &RefusedError{Addr: addr, IP: to.Addr(), Rule: rule}
	}
	return nil
}

// neverReached resolves the endpoints no agent may reach; one that does
// not resolve is left out (nothing can be dialed there either).
func (g *netGuard) neverReached(ctx context.Context) []netip.AddrPort {
	var out []netip.AddrPort
	for _, hp := range g.never() {
		host, portText, err := net.SplitHostPort(hp)
		port, perr := strconv.ParseUint(portText, 10, 16)
		if err != nil || perr != nil {
			continue
		}
		ips := []netip.Addr{}
		if ip, err := netip.ParseAddr(host); err == nil {
			ips = append(ips, ip)
		} else if ips, err = g.resolve(ctx, host); err != nil {
			continue
		}
		for _, ip := range ips {
			out = append(out, netip.AddrPortFrom(ip.Unmap(), uint16(port)))
		}
	}
	return out
}

// isLocal reports whether ip reaches this computer: loopback, unspecified
// (0.0.0.0 and :: reach local listeners), or one of its own addresses.
func isLocal(ip netip.Addr, own func() []netip.Addr) bool {
	if ip.IsLoopback() || ip.IsUnspecified() {
		return true
	}
	return own != nil && slices.Contains(own(), ip)
}

func interfaceAddrs() []netip.Addr {
	addrs, _ := net.InterfaceAddrs()
	var out []netip.Addr
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr().Unmap())
		}
	}
	return out
}

// nonPublic says which rule keeps ip from being reached, or "" for a
// public unicast address.
func nonPublic(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case ip.IsLoopback():
		return "a loopback address (this computer)"
	case ip.IsUnspecified():
		return "an unspecified address (0.0.0.0 or ::, which reaches this computer)"
	case ip.IsLinkLocalUnicast():
		return "a link-local address (169.254.0.0/16 or fe80::/10, where cloud metadata services answer)"
	case ip.IsPrivate():
		return "a private network address (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16 or fc00::/7)"
	case ip.IsMulticast() || ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast():
		return "a multicast address"
	}
	for _, r := range specialRanges {
		if r.prefix.Contains(ip) {
			return r.rule
		}
	}
	if !ip.IsGlobalUnicast() {
		return "not a public unicast address"
	}
	return ""
}

// specialRanges are further ranges that are not the public internet, or
// that carry an address that may not be (NAT64, 6to4).
var specialRanges = []struct {
	prefix netip.Prefix
	rule   string
}{
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared address (100.64.0.0/10, carrier-grade NAT)"},
	{netip.MustParsePrefix("0.0.0.0/8"), "a \"this network\" address (0.0.0.0/8)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "a reserved address (192.0.0.0/24)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address (192.0.2.0/24)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address (198.51.100.0/24)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address (203.0.113.0/24)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address (198.18.0.0/15)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved or broadcast address (240.0.0.0/4)"},
	{netip.MustParsePrefix("::/96"), "an IPv4-compatible address (::/96)"},
	{netip.MustParsePrefix("64:ff9b::/96"), "a NAT64 address (64:ff9b::/96), which may lead to a private network"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a NAT64 address (64:ff9b:1::/48), which may lead to a private network"},
	{netip.MustParsePrefix("2002::/16"), "a 6to4 address (2002::/16), which may lead to a private network"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address (2001:db8::/32)"},
}

func reachOf(ctx context.Context) []string {
	hosts, _ := ctx.Value(reachKey{}).([]string)
	return hosts
}

// checkDialed is the last check, on the socket about to connect: the
// address must be the one the guard approved.
func checkDialed(ctx context.Context, network, address string, _ syscall.RawConn) error {
	approved, _ := ctx.Value(approvedKey{}).(netip.AddrPort)
	to, err := netip.ParseAddrPort(address)
	if err != nil || !approved.IsValid() || to.Addr().Unmap() != approved.Addr() || to.Port() != approved.Port() {
		return &RefusedError{Addr: address, IP: to.Addr(), Always: true, Rule: "not the address the guard approved"}
	}
	return nil
}

// Unreachable lists the endpoints no agent may reach, by what they are
// (Deskhand's endpoint, a model server); its List is Options.Never. It is
// safe for concurrent use.
type Unreachable struct {
	mu     sync.Mutex
	byName map[string][]string
}

// Set replaces the endpoints ("host:port", or URLs) kept under name.
func (u *Unreachable) Set(name string, endpoints ...string) {
	var hps []string
	for _, e := range endpoints {
		if hp := hostPort(e); hp != "" {
			hps = append(hps, hp)
		}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.byName == nil {
		u.byName = make(map[string][]string)
	}
	u.byName[name] = hps
}

// List returns every endpoint kept.
func (u *Unreachable) List() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []string
	for _, hps := range u.byName {
		out = append(out, hps...)
	}
	return out
}

// hostPort reads "host:port" or a URL as host:port, the scheme's port
// when it names none; "" when it is neither.
func hostPort(s string) string {
	if _, _, err := net.SplitHostPort(s); err == nil && !strings.Contains(s, "/") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil || u.Hostname() == "" {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if port == "" {
		return ""
	}
	return net.JoinHostPort(u.Hostname(), port)
}
