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
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/deskhand/deskhand/models/anthropic/anthropictest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (port 0 picks a free one)")
	key := flag.String("key", "", "the only API key to accept (default: any)")
	delay := flag.Duration("delay", 0, "delay before each streamed event, e.g. 200ms")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("fakeanthropic: ")

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{
		Handler:           anthropictest.Handler(anthropictest.WithAPIKey(*key), anthropictest.WithEventDelay(*delay)),
		ReadHeaderTimeout: 10 * time.Second,
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		log.Fatal(err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		log.Print(err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Print(err)
	}
}
