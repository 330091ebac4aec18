// Command fakeopenai serves the fake OpenAI-compatible server of package
// openaitest (memory echo: every chat is answered "I remember: " and the
// request's user messages joined with " | ") until SIGINT or SIGTERM. It
// prints "listening on http://ADDR" once it accepts connections; the base
// URL to give a client is that address and "/v1".
//
//	go run ./models/openai/openaitest/testdata/fakeopenai -addr 127.0.0.1:1234 -lmstudio
package main

import (
	"flag"
	"log"
	"strings"

	"github.com/deskhand/deskhand/models/modeltest"
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

	if err := modeltest.ServeCommand(*addr, openaitest.Handler(opts...)); err != nil {
		log.Fatal(err)
	}
}
