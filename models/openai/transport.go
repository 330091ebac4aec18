package openai

import "net/http"

// maxIdlePerHost is how many idle connections to a model server are kept
// for the next chats: one for each chat that may run at once, within
// reason. http.DefaultTransport keeps 2 per host, so that with more
// concurrent turns most chats opened (and closed) a TCP connection.
const maxIdlePerHost = 64

// transport is what every Model sends with unless [WithHTTPClient] gives
// another: http.DefaultTransport's settings (proxy from the environment,
// timeouts, HTTP/2) with maxIdlePerHost idle connections per host. One
// pool for the package: the models of one server share its connections.
var transport http.RoundTripper = func() http.RoundTripper {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return http.DefaultTransport
	}
	t = t.Clone()
	t.MaxIdleConnsPerHost = maxIdlePerHost
	return t
}()
