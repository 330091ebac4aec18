package openai

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deskhand/deskhand/server/agent"
)

// feed puts a reply together from chunks as they come on the wire.
func feed(t *testing.T, chunks ...string) (*reply, []agent.Delta) {
	t.Helper()
	var r reply
	var deltas []agent.Delta
	for _, c := range chunks {
		var ch chunk
		if err := json.Unmarshal([]byte(c), &ch); err != nil {
			t.Fatalf("%v in %s", err, c)
		}
		if err := r.add(&ch, func(d agent.Delta) { deltas = append(deltas, d) }); err != nil {
			t.Fatal(err)
		}
	}
	return &r, deltas
}

type call struct{ ID, Name, Args string }

func calls(r *reply) []call {
	var out []call
	for _, c := range r.calls {
		out = append(out, call{c.id, c.name, c.args.String()})
	}
	return out
}

func TestReplyToolCallQuirks(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		want   []call
	}{
		{
			name: "OpenAI: opened with id and name, arguments in pieces, two calls",
			chunks: []string{
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":""}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"x\":"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"g","arguments":"{}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}]}`,
			},
			want: []call{{"call_a", "f", `{"x":1}`}, {"call_b", "g", `{}`}},
		},
		{
			name: "index -1 for a single call",
			chunks: []string{
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":-1,"id":"c1","function":{"name":"f","arguments":"{\"a\""}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":-1,"function":{"arguments":":2}"}}]}}]}`,
			},
			want: []call{{"c1", "f", `{"a":2}`}},
		},
		{
			name: "every call at index 0, each with its own id, name repeated",
			chunks: []string{
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"f","arguments":"{}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c2","function":{"name":"g","arguments":"{\"q\":"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c2","function":{"name":"g","arguments":"3}"}}]}}]}`,
			},
			want: []call{{"c1", "f", `{}`}, {"c2", "g", `{"q":3}`}},
		},
		{
			name: "no index at all, no id",
			chunks: []string{
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}}]}`,
			},
			want: []call{{"", "f", `{}`}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := feed(t, tt.chunks...)
			if diff := cmp.Diff(tt.want, calls(r)); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReplyTextAndUsage(t *testing.T) {
	r, deltas := feed(t,
		`{"model":"m-1","choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":"Hm, \"quotes\"."},"finish_reason":null}],"usage":null}`,
		`{"choices":[{"index":0,"delta":{"reasoning":"Ollama's way."}}]}`,
		`{"choices":[{"index":0,"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"Mistral thinks."}]},{"type":"text","text":"A"}]}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"é\n"}},{"index":1,"delta":{"content":"other choice"}}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}`,
	)
	want := []agent.Delta{{Thinking: `Hm, "quotes".`}, {Thinking: "Ollama's way."}, {Content: "A", Thinking: "Mistral thinks."}, {Content: "é\n"}}
	if diff := cmp.Diff(want, deltas); diff != "" {
		t.Errorf("deltas (-want +got):\n%s", diff)
	}
	if r.content.String() != "Aé\n" || r.model != "m-1" || r.finish != "stop" || r.prompt != 3 || r.output != 4 {
		t.Errorf("reply: content %q, model %q, finish %q, usage %d/%d", r.content.String(), r.model, r.finish, r.prompt, r.output)
	}
}

func TestStrictable(t *testing.T) {
	tests := []struct {
		schema string
		want   bool
	}{
		{`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`, true},
		{`{"type":"object","properties":{},"required":[],"additionalProperties":false}`, true},
		{`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, false},
		{`{"type":"object","properties":{"a":{"type":"string"}},"required":["b"],"additionalProperties":false}`, false},
		{`{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}}},"required":["a"],"additionalProperties":false}`, false},
		{`{"type":"object","properties":{"a":{"$ref":"#/$defs/n"}},"required":["a"],"additionalProperties":false,"$defs":{"n":{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"null"}]}},"required":["v"],"additionalProperties":false}}}`, true},
		{`{"type":"string"}`, true},
		{`not json`, false},
	}
	for _, tt := range tests {
		if got := strictable(json.RawMessage(tt.schema)); got != tt.want {
			t.Errorf("strictable(%s) = %v, want %v", tt.schema, got, tt.want)
		}
	}
}

func TestParseError(t *testing.T) {
	tests := []struct {
		body string
		want HTTPError
	}{
		{`{"error":{"message":"m","type":"invalid_request_error","param":null,"code":"model_not_found"}}`, HTTPError{Message: "m", Type: "invalid_request_error", Code: "model_not_found"}},
		{`{"error":"'response_format.type' must be 'json_schema' or 'text'"}`, HTTPError{Message: "'response_format.type' must be 'json_schema' or 'text'"}},
		{`{"error":{"code":400,"message":"too long","type":"exceed_context_size_error"}}`, HTTPError{Message: "too long", Type: "exceed_context_size_error", Code: "400"}},
		{`{"object":"error","message":"The model x does not exist.","type":"NotFoundError","param":null,"code":404}`, HTTPError{Message: "The model x does not exist.", Type: "NotFoundError", Code: "404"}},
		{`{"detail":"Not authenticated"}`, HTTPError{Message: "Not authenticated"}},
		{`upstream connect error`, HTTPError{Message: "upstream connect error"}},
		{`<html><body>502</body></html>`, HTTPError{}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(&tt.want, parseError([]byte(tt.body))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.body, diff)
		}
	}
}
