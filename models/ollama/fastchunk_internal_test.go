package ollama

import (
	"encoding/json"
	"reflect"
	"testing"
)

// decodeChunk must read every line as json.Unmarshal does, and the usual
// one-token line without it.
func TestDecodeChunkAsUnmarshal(t *testing.T) {
	lines := []string{
		`{"model":"llama3.2:latest","created_at":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":"tok "},"done":false}`,
		` { "model" : "m" , "message" : { "content" : "é – 漢字" , "thinking":"hm" } , "done" : true } ` + "\r",
		`{"message":{"role":"assistant","content":"a\nb \"q\" \u00e9"},"done":false}`,
		`{"message":{"content":"` + "\xff" + `"},"done":false}`,
		`{"message":{"content":"tab` + "\t" + `"},"done":false}`,
		`{"model":"m","message":{"role":"assistant","content":"","tool_calls":[{"id":"call_1","function":{"index":0,"name":"f","arguments":{"b":1,"a":"x"}}}]},"done":false}`,
		`{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":123,"prompt_eval_count":12,"eval_count":34}`,
		`{"error":"boom"}`,
		`{"Model":"upper","MESSAGE":{"Content":"case"},"Done":true}`,
		`{"model":"a","model":"b","message":{"content":"x"},"message":{"thinking":"y"},"done":true,"done":false}`,
		`{"model":"m","done":null}`,
		`{"model":"m","done":tru}`,
		`{"model":"m","message":{"content":"x"},"done":false}x`,
		`{"model":"m",}`,
		`{"model":"m"`,
		`{}`,
		`[]`,
		`null`,
		``,
		`not json`,
		`{"model":"m","message":{"content":"x"}}{"done":true}`,
	}
	for _, line := range lines {
		var want chatChunk
		wantErr := json.Unmarshal([]byte(line), &want)
		var got chatChunk
		got.Model = "left over"
		gotErr := decodeChunk([]byte(line), &got)
		if (gotErr == nil) != (wantErr == nil) {
			t.Errorf("%s: error %v, json.Unmarshal's %v", line, gotErr, wantErr)
			continue
		}
		if wantErr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", line, got, want)
		}
	}
	var c chatChunk
	if !readSimpleChunk([]byte(lines[0]), &c) || c.Message.Content != "tok " || c.Model != "llama3.2:latest" {
		t.Errorf("the usual line was not read without encoding/json: %+v", c)
	}
}

// The usual one-token line costs two allocations, the model's name and the
// token: the keys and the strings not kept (created_at, role) are read in
// place. A reply pays them once per token.
func TestUsualLineAllocatesTwice(t *testing.T) {
	line := []byte(`{"model":"llama3.2:latest","created_at":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":"tok "},"done":false}`)
	var c chatChunk
	allocs := testing.AllocsPerRun(100, func() {
		if err := decodeChunk(line, &c); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 2 {
		t.Errorf("decoding the usual line allocated %v times, want at most 2 (the model and the token)", allocs)
	}
}

// FuzzDecodeChunk: whatever a server sends, decodeChunk reads a line
// exactly as json.Unmarshal does: the same chunk, and an error on the
// same lines.
func FuzzDecodeChunk(f *testing.F) {
	for _, seed := range []string{
		`{"model":"m","created_at":"t","message":{"role":"assistant","content":"hi"},"done":false}`,
		`{"model":"m","message":{"content":"a\"b"},"done":true,"done_reason":"stop","eval_count":3}`,
		`{"message":{"content":"é","thinking":"x"},"done":false}`,
		`{"done":true}x`, `{"model":1}`, `{"error":"boom"}`, `null`, `{}`, `{"Model":"m"}`,
		"{\"message\":{\"content\":\"\xff\"}}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var got, want chatChunk
		errGot := decodeChunk(line, &got)
		errWant := json.Unmarshal(line, &want)
		if (errGot == nil) != (errWant == nil) {
			t.Fatalf("decodeChunk(%q) error %v, json.Unmarshal %v", line, errGot, errWant)
		}
		if errWant == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeChunk(%q) = %+v, json.Unmarshal %+v", line, got, want)
		}
	})
}
