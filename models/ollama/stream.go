package ollama

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/envconfig"
	"github.com/ollama/ollama/version"
)

// chatChunk is one line of /api/chat's stream, only the fields Chat uses,
// with the error fields a line may carry instead. Decoding into it instead
// of api.ChatResponse (whose Message decodes itself twice, and which the
// client decodes after a first pass for errors) is most of what Chat
// costs per token.
type chatChunk struct {
	Error     string `json:"error"`
	SigninURL string `json:"signin_url"`
	Model     string `json:"model"`
	Message   struct {
		Content   string         `json:"content"`
		Thinking  string         `json:"thinking"`
		ToolCalls []api.ToolCall `json:"tool_calls"`
	} `json:"message"`
	Done            bool   `json:"done"`
	DoneReason      string `json:"done_reason"`
	PromptEvalCount int    `json:"prompt_eval_count"`
	EvalCount       int    `json:"eval_count"`
}

// streamLineMax is the longest line read, as api.Client reads them; a
// longer one ends the stream as if it were cut.
const streamLineMax = 8 << 20

// chatStream posts req to /api/chat and hands each chunk to fn, as
// api.Client.Chat does (same body, headers and errors, and like it nil
// when the stream is cut or ctx ends), without its per-stream 8 MB buffer
// and double decoding of every line. When the client would sign the
// request (OLLAMA_AUTH, or ollama.com without an API key), it is left to
// the client.
func (m *Model) chatStream(ctx context.Context, req *api.ChatRequest, fn func(*chatChunk) error) error {
	if envconfig.UseAuth() || m.clientBase.Hostname() == "ollama.com" {
		return m.client.Chat(ctx, req, func(r api.ChatResponse) error {
			c := chatChunk{Model: r.Model, Done: r.Done, DoneReason: r.DoneReason, PromptEvalCount: r.PromptEvalCount, EvalCount: r.EvalCount}
			c.Message.Content, c.Message.Thinking, c.Message.ToolCalls = r.Message.Content, r.Message.Thinking, r.Message.ToolCalls
			return fn(&c)
		})
	}
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, m.clientBase.JoinPath("/api/chat").String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/x-ndjson")
	hreq.Header.Set("User-Agent", userAgent)
	// A chat is safe to send again when no answer came: marked so (the
	// key's nil value is not sent), net/http retries it on a new connection
	// when the kept one turns out closed by the server, as after Ollama
	// restarts, instead of failing with EOF.
	hreq.Header["Idempotency-Key"] = nil
	resp, err := m.hc.Do(hreq)
	if err != nil {
		return err
	}
	defer resp.Body.Close()

	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 4<<10), streamLineMax)
	var c chatChunk
	for sc.Scan() {
		line := sc.Bytes()
		if err := decodeChunk(line, &c); err != nil {
			return lineError(resp, line)
		}
		switch {
		case resp.StatusCode == http.StatusUnauthorized:
			return api.AuthorizationError{StatusCode: resp.StatusCode, Status: resp.Status, SigninURL: c.SigninURL}
		case resp.StatusCode >= http.StatusBadRequest:
			return api.StatusError{StatusCode: resp.StatusCode, Status: resp.Status, ErrorMessage: c.Error}
		case c.Error != "":
			return errors.New(c.Error)
		}
		if err := fn(&c); err != nil {
			return err
		}
	}
	return nil // a read error is a cut stream, as for api.Client
}

var userAgent = fmt.Sprintf("ollama/%s (%s %s) Go/%s", version.Version, runtime.GOARCH, runtime.GOOS, runtime.Version())

// lineError is what api.Client returns for a line that chatChunk does
// not decode: the error in it, or the line itself when it is not JSON,
// or the decoder's error when the line has the wrong shape for a chunk.
func lineError(resp *http.Response, line []byte) error {
	var e struct {
		Error     string `json:"error,omitempty"`
		SigninURL string `json:"signin_url,omitempty"`
	}
	if err := json.Unmarshal(line, &e); err != nil {
		if resp.StatusCode >= http.StatusBadRequest {
			return api.StatusError{StatusCode: resp.StatusCode, Status: resp.Status, ErrorMessage: string(line)}
		}
		return errors.New(string(line))
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return api.AuthorizationError{StatusCode: resp.StatusCode, Status: resp.Status, SigninURL: e.SigninURL}
	case resp.StatusCode >= http.StatusBadRequest:
		return api.StatusError{StatusCode: resp.StatusCode, Status: resp.Status, ErrorMessage: e.Error}
	case e.Error != "":
		return errors.New(e.Error)
	}
	var r api.ChatResponse
	if err := json.Unmarshal(line, &r); err != nil {
		return err
	}
	return fmt.Errorf("ollama: a chunk of the chat stream could not be read: %s", shorten(string(line))) // not reached: what api.ChatResponse takes, chatChunk takes
}
