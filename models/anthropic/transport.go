package anthropic

// maxIdlePerHost is how many idle connections to the API are kept for the
// next chats: one for each chat that may run at once, within reason.
// http.DefaultTransport keeps 2 per host, so that with more concurrent
// turns most chats opened (and closed) a TLS connection.
const maxIdlePerHost = 64
