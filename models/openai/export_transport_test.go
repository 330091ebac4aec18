package openai

import "net/http"

// CloseIdleConnections closes the idle connections of the transport every
// Model sends with by default, so that a test using it leaks no goroutine.
func CloseIdleConnections() {
	if t, ok := transport.(*http.Transport); ok {
		t.CloseIdleConnections()
	}
}
