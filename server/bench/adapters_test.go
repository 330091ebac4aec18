package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	ollamaapi "github.com/ollama/ollama/api"

	"github.com/deskhand/deskhand/models/anthropic"
	"github.com/deskhand/deskhand/models/anthropic/anthropictest"
	"github.com/deskhand/deskhand/models/ollama"
	"github.com/deskhand/deskhand/models/ollama/ollamatest"
	"github.com/deskhand/deskhand/models/openai"
	"github.com/deskhand/deskhand/models/openai/openaitest"
	"github.com/deskhand/deskhand/server/agent"
)

// streamedTokens is the length of each reply the adapters are measured on.
const streamedTokens = 1000

// adapterCase is one model adapter beside its fake: floor reads the fake's
// stream of a reply with a bare HTTP client (the fake alone); model is
// the adapter on the same fake.
type adapterCase struct {
	name  string
	floor func() error
	model agent.Model
	req   agent.ChatRequest
}

// BenchmarkAdapters measures what each model adapter adds to its fake
// provider's own time: a reply of 1,000 tokens streamed as fast as the fake
// can, read whole by a bare client (the floor) and through the adapter,
// in pairs so that drift hits both.
func BenchmarkAdapters(b *testing.B) {
	words := strings.Repeat("tok ", streamedTokens-1) + "tok"
	streams := min(b.N, 200)
	timed := func(f func() error) time.Duration {
		start := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	for _, c := range adapterCases(b, words) {
		run := func() error {
			n := 0
			_, err := c.model.Chat(context.Background(), c.req, func(d agent.Delta) {
				if d.Content != "" {
					n++
				}
			})
			if err == nil && n != streamedTokens {
				err = fmt.Errorf("%d deltas, want %d", n, streamedTokens)
			}
			return err
		}
		// Warm up both (connections, the Ollama adapter's model facts).
		if err := c.floor(); err != nil {
			b.Fatalf("%s, the fake alone: %v", c.name, err)
		}
		if err := run(); err != nil {
			b.Fatalf("%s adapter: %v", c.name, err)
		}
		fakeAlone, adapter := make([]time.Duration, streams), make([]time.Duration, streams)
		for i := range streams {
			// Each goes first in every other pair, so that neither always
			// runs in the other's wake (a collection of its garbage, the
			// fake's goroutines still winding down).
			if i%2 == 0 {
				fakeAlone[i], adapter[i] = timed(c.floor), timed(run)
			} else {
				adapter[i], fakeAlone[i] = timed(run), timed(c.floor)
			}
		}
		// Medians, not sums: a collection or a preempted stream on either
		// side moved the mean by several percent from run to run.
		base, with := median(fakeAlone), median(adapter)
		added := with - base
		record(row{Name: "adapter " + c.name + ": time added per call, 1,000 tokens", Value: float64(added.Microseconds()), Unit: "µs"})
		record(row{Name: "adapter " + c.name + ": time added per streamed token", Value: float64(added.Nanoseconds()) / streamedTokens, Unit: "ns"})
		record(row{Name: "adapter " + c.name + ": over the fake alone", Value: 100 * float64(added) / float64(base), Unit: "%"})
	}
}

func median(ds []time.Duration) time.Duration {
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	return sorted[len(sorted)/2]
}

func adapterCases(b *testing.B, words string) []adapterCase {
	user := []agent.Message{{Role: agent.RoleUser, Content: "go"}}

	ol := ollamatest.NewServer(b, ollamatest.WithReplyFunc(func(ollamaapi.ChatRequest) ollamatest.Reply { return ollamatest.Reply{Content: words} }))
	olModel, err := ollama.New(ol.URL)
	if err != nil {
		b.Fatal(err)
	}
	oa := openaitest.NewServer(b, openaitest.WithReplyFunc(func(openaitest.ChatRequest) openaitest.Reply { return openaitest.Reply{Content: words} }))
	oaModel, err := openai.New(oa.BaseURL(), openai.WithKind(openai.KindCompatible))
	if err != nil {
		b.Fatal(err)
	}
	const key = "bench-key"
	an := anthropictest.NewServer(b, anthropictest.WithAPIKey(key), anthropictest.WithReplyFunc(func(anthropictest.Request) anthropictest.Reply {
		return anthropictest.Reply{Text: words}
	}))
	anModel, err := anthropic.New(an.URL, key)
	if err != nil {
		b.Fatal(err)
	}
	return []adapterCase{
		{
			name:  "ollama",
			floor: readStream(ol.URL+"/api/chat", `{"model":"`+ollamatest.DefaultModel+`","stream":true,"messages":[{"role":"user","content":"go"}]}`, nil),
			model: olModel,
			req:   agent.ChatRequest{Model: ollamatest.DefaultModel, Messages: user},
		},
		{
			name:  "openai-compatible",
			floor: readStream(oa.BaseURL()+"/chat/completions", `{"model":"`+openaitest.DefaultModel+`","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"go"}]}`, nil),
			model: oaModel,
			req:   agent.ChatRequest{Model: openaitest.DefaultModel, Messages: user},
		},
		{
			name: "anthropic",
			floor: readStream(an.URL+"/v1/messages", `{"model":"`+anthropictest.DefaultModel+`","max_tokens":8192,"stream":true,"messages":[{"role":"user","content":"go"}]}`,
				map[string]string{"x-api-key": key, "anthropic-version": anthropictest.APIVersion}),
			model: anModel,
			req:   agent.ChatRequest{Model: anthropictest.DefaultModel, Messages: user},
		},
	}
}

// readStream posts body to url and reads the streamed answer to its end,
// line by line, as the least a client must do.
func readStream(url, body string, headers map[string]string) func() error {
	return func() error {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		lines := 0
		for sc.Scan() {
			if len(bytes.TrimSpace(sc.Bytes())) > 0 {
				lines++
			}
		}
		if resp.StatusCode != http.StatusOK || lines < streamedTokens {
			return fmt.Errorf("status %d, %d lines", resp.StatusCode, lines)
		}
		return sc.Err()
	}
}
