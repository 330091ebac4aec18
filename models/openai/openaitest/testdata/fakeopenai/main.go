// Command fakeopenai serves the fake OpenAI-compatible server of package
// openaitest (memory echo: every chat is answered "I remember: " and the
// request's user messages joined with " | ") until SIGINT or SIGTERM. It
// prints "listening on http://ADDR" once it accepts connections; the base
// URL to give a client is that address and "/v1".
//
//	go run ./models/openai/openaitest/testdata/fakeopenai -addr 127.0.0.1:1234 -lmstudio
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

	"github.com/deskhand/deskhand/models/openai/openaitest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (port 0 picks a free one)")
	models := flag.String("models", openaitest.DefaultModel, "models served, comma-separated, in /v1/models order")
	delay := flag.Duration("delay", 0, "delay before each streamed chunk, e.g. 200ms")
	key := flag.String("key", "", "API key the fake requires (none by default)")
	lmstudio := flag.Bool("lmstudio", false, "also serve LM Studio's /api/v1/models and /api/v0/models (models trained for tool use, 32768 tokens)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("fakeopenai: ")

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	opts := []openaitest.Option{
		openaitest.WithModels(strings.Split(*models, ",")...),
		openaitest.WithChunkDelay(*delay),
	}
	if *key != "" {
		opts = append(opts, openaitest.WithAPIKey(*key))
	}
	if *lmstudio {
		var lms []openaitest.LMStudioModel
		for _, id := range strings.Split(*models, ",") {
			lms = append(lms, openaitest.LMStudioModel{ID: id, MaxContextLength: 32768, ToolUse: true})
		}
		opts = append(opts, openaitest.WithLMStudio(lms...))
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: openaitest.Handler(opts...), ReadHeaderTimeout: 10 * time.Second}
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
