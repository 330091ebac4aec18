// Command fakeanthropic serves the fake Anthropic API of package
// anthropictest (memory echo: every message request is answered
// "I remember: " and the request's user messages joined with " | ") until
// SIGINT or SIGTERM. It prints "listening on http://ADDR" once it accepts
// connections. Any API key is accepted unless -key sets the one to accept.
//
//	go run ./models/anthropic/anthropictest/testdata/fakeanthropic -addr 127.0.0.1:8555
//
// Then point Deskhand's Anthropic provider at http://127.0.0.1:8555.
package main

import (
	"flag"
	"log"

	"github.com/deskhand/deskhand/models/anthropic/anthropictest"
	"github.com/deskhand/deskhand/models/modeltest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (port 0 picks a free one)")
	key := flag.String("key", "", "the only API key to accept (default: any)")
	delay := flag.Duration("delay", 0, "delay before each streamed event, e.g. 200ms")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("fakeanthropic: ")

	if err := modeltest.ServeCommand(*addr, anthropictest.Handler(anthropictest.WithAPIKey(*key), anthropictest.WithEventDelay(*delay))); err != nil {
		log.Fatal(err)
	}
}
