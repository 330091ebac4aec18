package openai_test

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/models/openai/openaitest"
	"github.com/deskhand/deskhand/server/agent"
)

// BenchmarkStream1000Tokens measures a reply of 1,000 streamed tokens
// (chunks) from the fake, as fast as it can send them: read by a bare SSE
// reader ("fake alone"), and through Chat ("adapter"). The difference per
// token is what the SDK and this package add.
func BenchmarkStream1000Tokens(b *testing.B) {
	const tokens = 1000
	reply := openaitest.Reply{Content: strings.Repeat("tok ", tokens-1) + "tok"}
	srv := openaitest.NewServer(b, openaitest.WithReplyFunc(func(openaitest.ChatRequest) openaitest.Reply { return reply }))
	body := []byte(`{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"go"}]}`)

	b.Run("fake alone", func(b *testing.B) {
		for b.Loop() {
			resp, err := srv.Client().Post(srv.BaseURL()+"/chat/completions", "application/json", bytes.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			sc := bufio.NewScanner(resp.Body)
			n := 0
			for sc.Scan() {
				if bytes.HasPrefix(sc.Bytes(), []byte("data: ")) {
					n++
				}
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || n != tokens+4 { // role, tokens, finish, usage, [DONE]
				b.Fatalf("%d events, status %d", n, resp.StatusCode)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tokens), "ns/token")
	})
	b.Run("adapter", func(b *testing.B) {
		m := newModel(b, srv)
		req := agent.ChatRequest{Model: "gpt-4o-mini", Messages: []agent.Message{{Role: agent.RoleUser, Content: "go"}}}
		for b.Loop() {
			n := 0
			resp, err := m.Chat(context.Background(), req, func(agent.Delta) { n++ })
			if err != nil || n != tokens || resp.OutputTokens == 0 {
				b.Fatalf("%d deltas, %v", n, err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tokens), "ns/token")
	})
}
