package tools_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/tools"
)

var png = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01"

func fetchServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	reply := func(path, contentType string, status int, body string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet {
				t.Errorf("%s %s, want GET", r.Method, r.URL)
			}
			if contentType == "" {
				w.Header()["Content-Type"] = nil // no sniffing by the server
			} else {
				w.Header().Set("Content-Type", contentType)
			}
			w.WriteHeader(status)
			w.Write([]byte(body))
		})
	}
	reply("/text", "text/plain; charset=utf-8", http.StatusOK, "hello, world")
	reply("/html", "text/html; charset=utf-8", http.StatusOK, "<h1>Title</h1>")
	reply("/json", "application/json", http.StatusOK, `{"ok":true}`)
	reply("/problem", "application/problem+json", http.StatusBadRequest, `{"title":"bad"}`)
	reply("/image", "image/png", http.StatusOK, png)
	reply("/zip", "application/zip", http.StatusOK, "PK\x03\x04")
	reply("/big", "text/plain", http.StatusOK, strings.Repeat("0123456789", 10))
	reply("/error", "text/plain", http.StatusInternalServerError, "boom")
	reply("/teapot", "text/plain", 599, "odd")
	reply("/untyped", "", http.StatusOK, "just some words")
	reply("/untyped-png", "", http.StatusOK, png)
	reply("/lying", "text/plain", http.StatusOK, "text\x00binary")
	reply("/latin1", "text/plain; charset=iso-8859-1", http.StatusOK, "caf\xe9")
	mux.Handle("/redirect", http.RedirectHandler("/text", http.StatusFound))
	mux.Handle("/to-file", http.RedirectHandler("file:///etc/passwd", http.StatusFound))
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// reaching is an agent that may reach srv, on loopback, by name.
func reaching(srvs ...*httptest.Server) agent.Agent {
	var a agent.Agent
	for _, srv := range srvs {
		a.ReachableHosts = append(a.ReachableHosts, srv.Listener.Addr().String())
	}
	return a
}

func TestFetchURL(t *testing.T) {
	srv := fetchServer(t)
	fetch := tool(t, tools.NameFetchURL, tools.Options{MaxFetchBytes: 32})
	a := reaching(srv)
	tests := []struct {
		name, url string
		want      string // the whole result, with $srv for the server's URL
		wantErr   []string
	}{
		{name: "text", url: "/text", want: "URL: $srv/text\nStatus: 200 OK\nContent-Type: text/plain; charset=utf-8\n\nhello, world"},
		{name: "html", url: "/html", want: "URL: $srv/html\nStatus: 200 OK\nContent-Type: text/html; charset=utf-8\n\n<h1>Title</h1>"},
		{name: "json", url: "/json", want: "URL: $srv/json\nStatus: 200 OK\nContent-Type: application/json\n\n{\"ok\":true}"},
		{name: "client error with a +json body", url: "/problem", want: "URL: $srv/problem\nStatus: 400 Bad Request\nContent-Type: application/problem+json\n\n{\"title\":\"bad\"}"},
		{name: "server error reported", url: "/error", want: "URL: $srv/error\nStatus: 500 Internal Server Error\nContent-Type: text/plain\n\nboom"},
		{name: "unknown status", url: "/teapot", want: "URL: $srv/teapot\nStatus: 599\nContent-Type: text/plain\n\nodd"},
		{name: "capped", url: "/big", want: "URL: $srv/big\nStatus: 200 OK\nContent-Type: text/plain\n\n" + strings.Repeat("0123456789", 3) + "01" +
			"\n\n[truncated: the body is longer than the 32-byte limit; only the first 32 bytes are shown]"},
		{name: "redirect", url: "/redirect", want: "URL: $srv/text\nStatus: 200 OK\nContent-Type: text/plain; charset=utf-8\n\nhello, world"},
		{name: "untyped text", url: "/untyped", want: "URL: $srv/untyped\nStatus: 200 OK\nContent-Type: (none given; looks like text/plain)\n\njust some words"},
		{name: "invalid UTF-8", url: "/latin1", want: "URL: $srv/latin1\nStatus: 200 OK\nContent-Type: text/plain; charset=iso-8859-1\n\ncaf\uFFFD"},
		{name: "image", url: "/image", wantErr: []string{"image content (image/png)", "not text"}},
		{name: "zip", url: "/zip", wantErr: []string{"binary content (application/zip)"}},
		{name: "untyped binary", url: "/untyped-png", wantErr: []string{"no content type", "image/png"}},
		{name: "binary claiming text", url: "/lying", wantErr: []string{"binary", "NUL"}},
		{name: "redirect to file", url: "/to-file", wantErr: []string{"cannot fetch", "unsupported protocol scheme"}},
		{name: "file scheme", url: "file:///etc/passwd", wantErr: []string{`"file:///etc/passwd"`, "only http and https"}},
		{name: "ftp scheme", url: "ftp://example.com/x", wantErr: []string{"only http and https"}},
		{name: "javascript scheme", url: "javascript:alert(1)", wantErr: []string{"only http and https"}},
		{name: "no scheme", url: "example.com/page", wantErr: []string{"only http and https"}},
		{name: "no host", url: "http:///path", wantErr: []string{"no host"}},
		{name: "not a URL", url: "http://exa mple.com/%zz", wantErr: []string{"not a valid URL"}},
		{name: "unreachable", url: "http://127.0.0.1:1/", wantErr: []string{"cannot fetch", "127.0.0.1:1", "a loopback address", `adding "127.0.0.1:1"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := tt.url
			if strings.HasPrefix(u, "/") {
				u = srv.URL + u
			}
			got, err := call(t, fetch, a, args("url", u))
			if tt.wantErr != nil {
				wantUserError(t, err, tt.wantErr...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.ReplaceAll(tt.want, "$srv", srv.URL); got != want {
				t.Errorf("got\n%q\nwant\n%q", got, want)
			}
		})
	}
}

func TestFetchURLTimeoutAndCancel(t *testing.T) {
	srv := fetchServer(t)
	fetch := tool(t, tools.NameFetchURL, tools.Options{HTTPTimeout: 50 * time.Millisecond})
	_, err := call(t, fetch, reaching(srv), args("url", srv.URL+"/slow"))
	wantUserError(t, err, "timed out")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = tool(t, tools.NameFetchURL, tools.Options{}).Call(ctx, reaching(srv), []byte(args("url", srv.URL+"/text")))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v, want context.Canceled", err)
	}
}

func TestFetchURLDefaults(t *testing.T) {
	srv := fetchServer(t)
	// The default client and cap: 100 bytes fit in 1 MiB.
	got, err := call(t, tool(t, tools.NameFetchURL, tools.Options{}), reaching(srv), args("url", srv.URL+"/big"))
	if err != nil || strings.Contains(got, "truncated") || !strings.HasSuffix(got, strings.Repeat("0123456789", 10)) {
		t.Errorf("got %q, %v", got, err)
	}
}
