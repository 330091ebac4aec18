// Command fakeollama serves the fake Ollama of package ollamatest (memory
// echo: every chat is answered "I remember: " and the request's user
// messages joined with " | ") until SIGINT or SIGTERM. It prints
// "listening on http://ADDR" once it accepts connections.
//
//	go run ./models/ollama/ollamatest/testdata/fakeollama -addr 127.0.0.1:11555
//
// Then point Deskhand at it, for example with OLLAMA_HOST=127.0.0.1:11555.
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
	"strings"
	"syscall"
	"time"

	"github.com/deskhand/deskhand/models/ollama/ollamatest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (port 0 picks a free one)")
	models := flag.String("models", ollamatest.DefaultModel, "installed models, comma-separated, in /api/tags order")
	delay := flag.Duration("delay", 0, "delay before each streamed chunk, e.g. 200ms")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("fakeollama: ")

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{
		Handler: ollamatest.Handler(
			ollamatest.WithModels(strings.Split(*models, ",")...),
			ollamatest.WithChunkDelay(*delay),
		),
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
