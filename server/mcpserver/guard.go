package mcpserver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver/mcpfill"
)

// MaxBodyBytes is the largest request body accepted (413 beyond).
const MaxBodyBytes = 4 << 20

// Authenticator finds the client a bearer token belongs to.
type Authenticator interface {
	Authenticate(ctx context.Context, token string) (agent.Client, bool)
}

// GuardOptions configures the guard.
type GuardOptions struct {
	// AllowedHosts adds Host names beyond the loopback ones; "*.example.com"
	// matches subdomains of example.com, not example.com itself.
	AllowedHosts []string
	// AllowedOrigins adds origins ("https://app.example.com", or
	// "https://*.example.com") beyond the server's own loopback origin.
	AllowedOrigins []string
	// InsecureNoAuth turns bearer tokens off ("open local development"):
	// any local program, and any page that gets past Host and Origin, can
	// call the agents.
	InsecureNoAuth bool
	// MetadataPath is where the RFC 9728 metadata is served; public.
	MetadataPath string
	// Public lists paths served without a token (metadata, server card).
	Public []string
}

// withPrincipal records who is calling, where every part of the server,
// mcpfill's included, finds it.
func withPrincipal(ctx context.Context, p string) context.Context {
	return mcpfill.WithPrincipal(ctx, p)
}

// PrincipalFrom returns the caller set by the guard or the stdio server.
func PrincipalFrom(ctx context.Context) string { return mcpfill.PrincipalFrom(ctx) }

// guardRefuses answers a request the guard turns away, and tells the activity
// log why (never with the token).
func guardRefuses(w http.ResponseWriter, r *http.Request, why, text string, status int) {
	if n := noteFrom(r.Context()); n != nil {
		n.mu.Lock()
		n.refused = why
		n.mu.Unlock()
	}
	http.Error(w, text, status)
}

// securityHeaders go on every answer. The values are shared, read-only:
// their capacity is their length, so an Add elsewhere copies them.
var securityHeaders = http.Header{
	"X-Content-Type-Options": {"nosniff"},
	"X-Frame-Options":        {"DENY"},
	"Cache-Control":          {"no-store"},
}

// Guard wraps next with the localhost checks described in the package doc.
func Guard(auth Authenticator, opts GuardOptions, next http.Handler) http.Handler {
	public := make(map[string]bool, len(opts.Public)+1)
	for _, p := range append(opts.Public, opts.MetadataPath) {
		public[p] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		for k, v := range securityHeaders {
			h[k] = v
		}
		if !hostAllowed(r.Host, opts.AllowedHosts) {
			guardRefuses(w, r, "bad Host", "Forbidden: the Host header is not this computer's loopback address (DNS rebinding protection)", http.StatusForbidden)
			return
		}
		if origin, present := r.Header["Origin"]; present && !originAllowed(origin, r, opts.AllowedOrigins) {
			guardRefuses(w, r, "bad Origin", "Forbidden: requests from this Origin are not allowed", http.StatusForbidden)
			return
		}
		if public[r.URL.Path] || isBrowserVisit(r) {
			next.ServeHTTP(w, r)
			return
		}
		principal := agent.LocalPrincipal
		if !opts.InsecureNoAuth {
			token, ok := bearerToken(r.Header.Get("Authorization"))
			client, found := agent.Client{}, false
			if ok {
				client, found = auth.Authenticate(r.Context(), token)
			}
			if !found {
				metadata := (&url.URL{Scheme: "http", Host: r.Host, Path: opts.MetadataPath}).String()
				h.Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata=%q`, metadata))
				why := "bad token"
				if !ok {
					why = "missing token"
				}
				guardRefuses(w, r, why, "Unauthorized: send 'Authorization: Bearer <token>'. Create a token with 'deskhand token create NAME'.", http.StatusUnauthorized)
				return
			}
			principal = client.ID
		}
		if r.ContentLength > MaxBodyBytes {
			guardRefuses(w, r, "body too large", fmt.Sprintf("Request body too large: the limit is %d bytes", MaxBodyBytes), http.StatusRequestEntityTooLarge)
			return
		}
		if r.Body != nil && r.Body != http.NoBody && r.ContentLength < 0 {
			// Chunked: read up to the limit here, since mcp-go reads without one.
			body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
			if err != nil {
				mcpfill.BodyReadFailed(w, err)
				return
			}
			if len(body) > MaxBodyBytes {
				guardRefuses(w, r, "body too large", fmt.Sprintf("Request body too large: the limit is %d bytes", MaxBodyBytes), http.StatusRequestEntityTooLarge)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		next.ServeHTTP(w, r.WithContext(withPrincipal(r.Context(), principal)))
	})
}

// bearerToken returns the token of an "Authorization: Bearer <token>"
// header. The scheme is case-insensitive (RFC 7235 §2.1), the token is not.
func bearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// isBrowserVisit is a browser opening /mcp; it is sent to the server card.
func isBrowserVisit(r *http.Request) bool {
	accept := r.Header.Get("Accept")
	return r.Method == http.MethodGet && r.URL.Path == EndpointPath &&
		strings.Contains(accept, "text/html") && !strings.Contains(accept, "text/event-stream")
}

// hostAllowed accepts loopback names and allow-listed hosts.
func hostAllowed(hostport string, allowed []string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if host == "" {
		return false
	}
	if isLoopbackName(host) {
		return true
	}
	return matchesAny(host, allowed)
}

func isLoopbackName(host string) bool {
	if host == "localhost" {
		return true
	}
	addr, err := netip.ParseAddr(host)
	return err == nil && addr.Unmap().IsLoopback()
}

// matchesAny reports whether host equals an entry, or is a strict subdomain
// of an entry written "*.domain".
func matchesAny(host string, patterns []string) bool {
	for _, p := range patterns {
		p = strings.ToLower(strings.TrimSpace(p))
		if suffix, wild := strings.CutPrefix(p, "*."); wild {
			if strings.HasSuffix(host, "."+suffix) && len(host) > len(suffix)+1 {
				return true
			}
		} else if host == p {
			return true
		}
	}
	return false
}

// originAllowed accepts the server's own loopback origins (same port, any
// loopback name) and allow-listed ones. "null" and malformed origins fail.
func originAllowed(values []string, r *http.Request, allowed []string) bool {
	if len(values) != 1 {
		return false
	}
	u, err := url.Parse(values[0])
	if err != nil || u.Host == "" || u.Path != "" || u.User != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	host, port := u.Hostname(), u.Port()
	if u.Scheme == "http" && isLoopbackName(strings.ToLower(host)) && port != "" && port == localPort(r) {
		return true
	}
	for _, a := range allowed {
		au, err := url.Parse(strings.TrimSpace(a))
		if err != nil || au.Scheme != u.Scheme || au.Port() != port {
			continue
		}
		if matchesAny(strings.ToLower(host), []string{au.Hostname()}) {
			return true
		}
	}
	return false
}

// localPort is the port the request arrived on.
func localPort(r *http.Request) string {
	if addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if _, port, err := net.SplitHostPort(addr.String()); err == nil {
			return port
		}
	}
	return ""
}
