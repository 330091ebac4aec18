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
	"flag"
	"log"
	"strings"

	"github.com/deskhand/deskhand/models/modeltest"
	"github.com/deskhand/deskhand/models/ollama/ollamatest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (port 0 picks a free one)")
	models := flag.String("models", ollamatest.DefaultModel, "installed models, comma-separated, in /api/tags order")
	delay := flag.Duration("delay", 0, "delay before each streamed chunk, e.g. 200ms")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("fakeollama: ")

	if err := modeltest.ServeCommand(*addr, ollamatest.Handler(
		ollamatest.WithModels(strings.Split(*models, ",")...),
		ollamatest.WithChunkDelay(*delay),
	)); err != nil {
		log.Fatal(err)
	}
}
