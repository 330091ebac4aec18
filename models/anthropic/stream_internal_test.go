package anthropic

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMessageAdd puts a reply together from events as the SDK's
// Message.Accumulate would: usage counts a message_delta leaves out or
// sends as null keep message_start's, a tool call's {} gives way to its
// input_json_delta pieces, input that is not JSON at the block's end
// becomes {}, and events for a block out of order are refused.
func TestMessageAdd(t *testing.T) {
	events := []string{
		`{"type":"message_start","message":{"model":"claude-x","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1,"cache_creation_input_tokens":3,"cache_read_input_tokens":4}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"He"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"llo"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"f","input":{}}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"1}"}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"t2","name":"g","input":{}}}`,
		`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"b\":"}}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_details":null},"usage":{"output_tokens":7,"input_tokens":null,"cache_read_input_tokens":5}}`,
		`{"type":"message_stop"}`,
	}
	var m message
	for _, s := range events {
		var ev event
		if err := json.Unmarshal([]byte(s), &ev); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if err := m.add(&ev); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if m.model != "claude-x" || m.stopReason != "tool_use" || m.stopExplanation != "" {
		t.Errorf("model %q, stop %q (%q)", m.model, m.stopReason, m.stopExplanation)
	}
	if u := m.usage; u.input != 10 || u.output != 7 || u.cacheCreation != 3 || u.cacheRead != 5 {
		t.Errorf("usage %+v", u)
	}
	if len(m.content) != 3 || string(m.content[0].text) != "Hello" ||
		string(m.content[1].input) != `{"a":1}` || string(m.content[2].input) != `{}` {
		t.Fatalf("content %+v %+v %+v", m.content[0], m.content[1], m.content[2])
	}

	for _, s := range []string{
		`{"type":"content_block_start","index":4,"content_block":{"type":"text"}}`,
		`{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"x"}}`,
		`{"type":"content_block_stop","index":-1}`,
	} {
		var ev event
		if err := json.Unmarshal([]byte(s), &ev); err != nil {
			t.Fatal(err)
		}
		if err := m.add(&ev); err == nil || !strings.Contains(err.Error(), "content block at index") {
			t.Errorf("%s: error %v", s, err)
		}
	}
}
